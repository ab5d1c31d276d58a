"""``stable=True``: rule sets that independent samples agree on (issue 39).

FIRE chooses among thousands of nearly equal rules, and which one depends on
the sample (``docs/stability.rst``).  SIRUS (Bénard, Biau, Da Veiga, Scornet
2021) gets its stability from a pool of few candidates that every sample
agrees on: rules of one or two conditions, ranked by how many trees of a
forest hold them.  ``stable=True`` takes that pool and FIRE's selection and
weights within it (the default forest: ``N_TREES`` (2,000) trees of depth 2, a third
of the features per split):

* **the pool** (:func:`stable_pool`): the rules at depths 1 and 2 of the
  trees (single conditions and pairs), equal rules of different trees as
  one, ranked by the fraction of the trees that hold them (each tree is fit
  on a bootstrap sample: the rule's selection frequency over those fits);
  left out: a rule equal to a more frequent one up to each feature's
  training deciles (``DISTINCT_DECILES``: ``x2 <= 0.0051`` beside
  ``x2 <= 0.0094``), and one that is a linear combination of more frequent
  ones and the constant (the same training rows, their complement, the two
  halves of a pair beside its parent: SIRUS's filter, which also makes the
  weights below unique); a one-condition rule and its complement
  (``x <= t``, ``x > t``: the two sides of one split) count as one rule,
  written on its lower side, and a pair taken beside its parent is written
  as its node's lower child (``CANONICAL_SIDE``); the
  ``POOL_PER_RULE * max_rules`` most frequent (``max_rules="auto"``: 10
  when the pool is kept, below; 14 otherwise);
* **kept as they come** when linear terms are offered and the loss is in
  ``KEEP_POOL_LOSSES`` (the squared and the binary logistic loss): the
  pool's rules have no sparsity penalty, only a small fixed ridge
  (:class:`~firecy.penalties.Unpenalised` ``(ridge=0.1)``, on the rule
  columns centred, ``CENTRE_KEPT``), and the path and cross-validation
  choose only the linear terms beside them;
* **or FIRE's selection** among them (rules only; the multinomial, Poisson
  and Cox losses):
  the regularisation path and cross-validation of the estimator's
  parameters, on the pool's columns, each rule's column scaled by
  ``(f / f_max) ** FREQUENCY_POWER`` (its frequency ``f`` against the most
  frequent rule's; under L1 its penalty is multiplied by the inverse), so
  that the path takes rules in about the order of their frequency, as SIRUS
  does, and the data decide how many and with what weights;
* **the path's stability** (:func:`path_stability`): the path refitted on
  ``N_SUBSAMPLES`` random halves of the rows, and at each point the mean
  Dice index of pairs of halves' terms (rules and linear terms), beside the
  validation error.

The pool's frequencies are the kept rules' ``stability`` column.  What each
piece is worth is measured in ``benchmarks/stability/RESULTS.md``: SIRUS's
split points on each feature's deciles made the rule sets less stable here
(on 10 of 12 data sets, more accurate on 9) and were left out; the
frequency-weighted penalty (power 1) against
one penalty for all: mean Dice of the rules-only fits 0.370 against 0.306,
error within noise; keeping the pool (third run): the rules' Dice at or
above SIRUS's on 5 of 8 regression sets (2 of 8 before, with 0-4 rules
kept), error 0.87-1.04 times the defaults' on all twelve with the ridge
(without it up to 1.085 under the squared loss, and 1.8-2.0 under the
logistic loss, where a rule runs off); leaving out rules equal up to the
deciles: the same goal counts for the Dice, fewer near-duplicates to read;
a split's two sides counted as one, pairs beside their parent written as
the lower child, the kept columns centred: mean Dice 0.434 against 0.396,
at or above SIRUS's on 9 of 12 sets against 6, error within 1.05 times the
defaults' on 12 (benchmarks/stability/RESULTS.md, "Third run"); a pool of
10 rules (``max_rules="auto"`` with ``stable=True``, SIRUS's size) from
2,000 trees, features of at most ``DISCRETE_LIMIT`` values compared
threshold by threshold: mean Dice 0.471, at or above SIRUS's on 12 of 12,
error 0.83-1.03 times the defaults', 2.8-3.5 times their CPU ("Fourth
run"); ranking rules by the trees that hold them up to the deciles was
less stable on 11 of 12 and is left out.
"""
import dataclasses

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed

from firecy._threads import effective_n_jobs
from firecy.ensembles import simplify_conditions
from firecy.estimators._params import STABLE_MAX_RULES
from firecy.estimators._selection import SquaredLossPaths
from firecy.estimators._stability import decile_grid, dice, numeric_columns, rule_signature
from firecy.solver import BlockDesign

__all__ = ["PoolDesign", "stable_pool", "keeps_pool_rules", "path_stability",
           "N_TREES", "POOL_PER_RULE", "N_SUBSAMPLES", "KEEP_POOL_LOSSES"]

N_TREES = 2000
POOL_PER_RULE = 1
N_SUBSAMPLES = 20
#: with linear terms beside the pool, keep the pool's rules (no sparsity
#: penalty) and let the path choose only the lines, for these losses, with
#: this fixed ridge on the rules (``Unpenalised(ridge=...)``, scaled by each
#: column's curvature). Without it, under the logistic loss a rule that
#: holds rows of one class runs off (log-loss 1.8-2.0 times the defaults'
#: on Biopsy and Breast cancer), and under the squared loss 14 rules fitted
#: freely on a small sample overfit (error up to 1.085 times the defaults');
#: with ridge 0.1 the error is 0.87-1.04 times the defaults' on all twelve
#: sets (benchmarks/stability/RESULTS.md, "Third run"). Poisson and Cox,
#: whose losses can separate the same way, were not measured and select in
#: the pool.
KEEP_POOL_LOSSES = {"squared": 0.1, "logistic": 0.1}
#: in the penalised pool, each rule's penalty is multiplied by this factor
#: (its column divided by it): below 1 the rules are cheaper than the lines
RULE_PENALTY_FACTOR = 1.0
#: leave out a pool rule equal to a more frequent one up to each feature's
#: training deciles (``_stability.rule_signature``): near-duplicates such as
#: ``x2 <= 0.0051`` and ``x2 <= 0.0094`` would otherwise both be kept, often
#: with weights of opposite signs
DISTINCT_DECILES = True
#: a feature with at most this many distinct training values is compared
#: threshold by threshold, not up to the deciles (0: every feature up to them)
DISCRETE_LIMIT = 10
#: how the two sides of a split are written: True counts a one-condition
#: rule and its complement (``x <= t``, ``x > t``) as one pool rule, on its
#: lower side; "parent" also writes a pair taken beside its parent as its
#: node's lower child (``A and x <= t`` for ``A and x > t``, equivalent with
#: ``A`` in the model); "node" (an ablation) counts the two children of every
#: node as one, the lower child, even without the parent; False: apart
CANONICAL_SIDE = "parent"
#: centre a kept pool's rule columns (the intercept absorbs the means), so
#: that the ridge on them weighs each column's variance
CENTRE_KEPT = True
#: a pool rule's column is scaled by (f / f_ref) ** FREQUENCY_POWER, f_ref
#: the most frequent rule's frequency ("max") or the pool's median ("median",
#: an ablation: benchmarks/stability/RESULTS.md)
FREQUENCY_POWER = 1.0
FREQUENCY_REFERENCE = "max"


class PoolDesign:
    """The pool's columns (one block each), then any linear terms' (``extra``,
    one block each), for any subset of the training rows: the ``FitDesign``
    of a stable fit (see ``_fit_design``)."""

    def __init__(self, matrix, extra=None, block_class=None, keep_rules=None,
                 column_means=None):
        self.matrix = sp.csr_matrix(matrix)
        # the training means taken off the rule columns (a kept pool's), for
        # the intercepts (see ``uncentre``); None: not centred
        self.column_means = column_means
        self.extra = None if extra is None or extra.shape[1] == 0 else extra
        # the class (output) each pool rule speaks for: a multinomial fit's blocks
        self.block_class = block_class
        # None, or the rules kept unpenalised (this fixed ridge on them), the
        # path choosing only the linear terms
        self.keep_rules = None if keep_rules is None or self.extra is None else float(keep_rules)
        # each pool column's design column in the ensemble (the sign bounds' index)
        self.rule_columns = None

    @property
    def n_samples(self):
        return self.matrix.shape[0]

    @property
    def n_rule_columns(self):
        return self.matrix.shape[1]

    @property
    def n_columns(self):
        return self.n_rule_columns + (0 if self.extra is None else self.extra.shape[1])

    def rows(self, rows):
        out = PoolDesign(self.matrix[rows], None if self.extra is None else self.extra[rows],
                         self.block_class, self.keep_rules, self.column_means)
        out.rule_columns = self.rule_columns
        return out

    def uncentre(self, path):
        """``path`` (on these columns) with the intercepts of the rule columns
        as they are, uncentred: ``b - coefs @ means``."""
        if self.column_means is not None:
            n = self.n_rule_columns
            path.intercepts = (np.asarray(path.intercepts)
                               - np.asarray(path.coefs)[:, :n] @ self.column_means)
        return path

    def fitter(self, fitter):
        """``fitter`` (the ensemble's) on the pool's rule columns: a
        multinomial fitter gets each pool rule's class."""
        for_blocks = getattr(fitter, "for_blocks", None)
        return fitter if for_blocks is None else for_blocks(self.block_class)

    def rule_penalty(self, penalty):
        """The penalty of the pool's rules: ``penalty``, or none when the
        pool's rules are kept."""
        from firecy.penalties import Unpenalised

        return penalty if self.keep_rules is None else Unpenalised(ridge=self.keep_rules)

    def block_design(self):
        design = BlockDesign.from_matrix(self.matrix.tocsc(),
                                         np.arange(self.n_rule_columns + 1))
        if self.extra is None:
            return design
        return design.with_general_blocks(self.extra, np.arange(self.extra.shape[1] + 1))


class _Span:
    """An orthonormal basis of the constant and the columns added so far."""

    def __init__(self, n_rows):
        self.basis = np.full((n_rows, 1), 1 / np.sqrt(n_rows))

    def add(self, column):
        """Add ``column`` unless it lies in the span (relative residual below
        1e-9); return whether it was added."""
        v = np.asarray(column, dtype=np.float64)
        norm = np.linalg.norm(v)
        Q = self.basis
        for _ in range(2):   # Gram-Schmidt twice: orthogonal to rounding
            v = v - Q @ (Q.T @ v)
        r = np.linalg.norm(v)
        if not r > 1e-9 * norm:
            return False
        # grown only when a column is added (the pool's size), not per candidate
        self.basis = np.column_stack([Q, v / r])
        return True


_COMPLEMENT = {"<=": ">", "<": ">=", ">": "<=", ">=": "<", "in": "not in", "not in": "in"}
_UPPER = (">", ">=", "not in")


def _complement(condition):
    """The other side of ``condition``'s split (the missing values' side too)."""
    return dataclasses.replace(condition, op=_COMPLEMENT[condition.op],
                               missing=not condition.missing)


def _lower_child(path):
    """A rule (its conditions in path order) as the lower child of its last
    split: ``A and x > t`` as ``A and x <= t``. The two children of a node
    come from one split, in the same trees; with their parent (or, for a
    root, the constant) in the model each is the other's complement, so in
    a pool they are one rule."""
    path = list(path)
    if path and path[-1].op in _UPPER:
        path[-1] = _complement(path[-1])
    return frozenset(simplify_conditions(path))


def _lower_sibling(ens, j, key, taken, first):
    """Rule ``j`` (pool key ``key``), or its node's lower child when ``j`` is
    the upper child and the node's own rule (its parent) is in the pool
    (``taken``); None when that lower child is in the pool already."""
    path = list(ens.rules[j])
    if len(path) < 2 or path[-1].op not in _UPPER:
        return j
    parent = (key[0], _lower_side(frozenset(simplify_conditions(path[:-1]))))
    if parent not in taken:
        return j
    lower = (key[0], _lower_child(path))
    if lower in taken:
        return None
    return first.get(lower, j)


def _lower_side(conditions):
    """A one-condition rule on its lower side: ``x > t`` as ``x <= t`` (and
    ``not in`` as ``in``), the missing values' side flipped with it. A split
    makes both sides, which select complementary rows: in a pool they are one
    rule (the span filter would keep whichever came first), and counting them
    as one makes two samples name it alike."""
    if len(conditions) != 1:
        return conditions
    (c,) = conditions
    return frozenset({_complement(c)}) if c.op in _UPPER else conditions


def _near_duplicate_grid(X, discrete_limit=DISCRETE_LIMIT):
    """The grid :data:`DISTINCT_DECILES` compares rules on: each feature's
    training deciles, or None (threshold by threshold) for a feature of at
    most ``discrete_limit`` (:data:`DISCRETE_LIMIT`) distinct values, as SIRUS leaves such
    features off its grid: ``x1 <= 2.5`` and ``x1 <= 3.5`` differ by every
    row with ``x1 = 3``, though both can be nearest one decile."""
    grid = decile_grid(X)
    if not discrete_limit:
        return grid
    return [None if v is None or np.unique(v).size <= discrete_limit else g
            for g, v in zip(grid, numeric_columns(X))]


def keeps_pool_rules(extra, fitter, loss, keep_pool_losses=KEEP_POOL_LOSSES):
    """Whether a stable fit keeps its pool's rules (the fixed ridge on them,
    ``keep_pool_losses``, default :data:`KEEP_POOL_LOSSES`) or selects among
    them (None): kept with linear terms beside them (``extra``: their
    columns), a loss in ``keep_pool_losses`` and a fitter whose paths start at the
    unpenalised blocks' fit (``keeps_unpenalised_blocks``; not the
    multinomial one)."""
    if (loss in keep_pool_losses and extra is not None and extra.shape[1] > 0
            and getattr(fitter, "keeps_unpenalised_blocks", False)):
        return float(keep_pool_losses[loss])
    return None


def stable_pool(est, rules, leaf_values, sample_weight, extra=None, keep_rules=None,
                size=None, *, pool_per_rule=POOL_PER_RULE, distinct_deciles=DISTINCT_DECILES,
                discrete_limit=DISCRETE_LIMIT, canonical_side=CANONICAL_SIDE,
                centre_kept=CENTRE_KEPT, frequency_power=FREQUENCY_POWER,
                frequency_reference=FREQUENCY_REFERENCE,
                rule_penalty_factor=RULE_PENALTY_FACTOR, offered=None):
    """The pool: the ``size`` (``POOL_PER_RULE`` times the rule budget) most
    frequent distinct rules of the fit's ensemble (and ``extra``, the linear
    terms' columns, after them; ``keep_rules``: None, or the rules kept with
    this fixed ridge, see :func:`keeps_pool_rules`; ``offered``: a mask of
    the ensemble's columns that may enter, None: all; ``monotone`` holds
    some at zero).  The keyword-only
    arguments default to the module constants of their names in capitals
    (an ablation passes others: ``_fit_options``).

    Returns
    -------
    design : PoolDesign
        Their columns on the training rows (each rule's value where it holds).
    columns : ndarray of int
        Each pool column's design column in the ensemble (its first copy).
    frequency : ndarray of float
        The fraction of the model's trees that hold each pool rule.
    scale : ndarray of float
        Each pool column's factor, ``(frequency / frequency.max()) **
        FREQUENCY_POWER``: the penalty on the rule's weight is the path's
        ``lam`` divided by it (a rule's weight is its column's coefficient
        times the factor).
    """
    from firecy.rules import model_tree_of

    ens, table = rules.ensemble, rules.leaf_table
    ptr = np.asarray(ens.block_ptr)
    R = ptr[-1]
    block = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    trees = model_tree_of(ens, np.arange(R))
    klass = np.asarray(ens.tree_class)[block]
    holders, first, flipped = {}, {}, {}
    for j in range(R):
        conds = frozenset(simplify_conditions(ens.rules[j]))
        if canonical_side == "node":
            canonical = _lower_child(ens.rules[j])
        else:
            canonical = _lower_side(conds) if canonical_side else conds
        key = (int(klass[j]), canonical)
        holders.setdefault(key, set()).add(int(trees[j]))
        # the key's column: the first rule written as the key is, else the first
        if key not in first or (flipped[key] and canonical == conds):
            first[key], flipped[key] = j, canonical != conds
    n_trees = len(set(trees.tolist()))
    # ranked by the trees that hold the rule exactly: pooling a continuous
    # feature's near-equal thresholds (up to the deciles) into one frequency
    # was less stable on 11 of 12 sets (benchmarks/stability/RESULTS.md,
    # "Fourth run", measured at commit 97700af)
    ranked = sorted(holders, key=lambda k: (-len(holders[k]), first[k]))
    near_grid = (_near_duplicate_grid(rules.model_X, discrete_limit) if distinct_deciles
                 else None)
    size = pool_per_rule * (size or STABLE_MAX_RULES)
    positive = np.asarray(sample_weight) > 0
    seen, spans, cols, freq, masks = set(), {}, [], [], []
    taken = set()
    for key in ranked:
        j = first[key]
        if offered is not None and not offered[j]:
            continue
        if canonical_side == "parent":
            # a pair taken beside its parent is written as the lower child:
            # with the parent in the model the two children are equivalent
            lower = _lower_sibling(ens, j, key, taken, first)
            if lower is None:
                continue
            # (not when monotone holds the lower child at zero: an interval)
            j = lower if offered is None or offered[lower] else j
        if near_grid is not None:
            near = ("deciles", klass[j], rule_signature(ens.rules[j], near_grid))
            if near in seen:
                continue
            seen.add(near)
        mask = table[:, block[j]] == j
        on = mask[positive]
        if on.all() or not on.any():
            continue
        # SIRUS's filter: a rule that is a linear combination of more frequent
        # ones and the constant (the same rows, their complement, a pair's
        # two halves beside its parent) adds nothing, and unpenalised it
        # would make the weights not unique
        span = spans.setdefault(klass[j], _Span(on.size))
        if not span.add(on):
            continue
        cols.append(j)
        taken.add(key)
        freq.append(len(holders[key]) / n_trees)
        masks.append(mask)
        if len(cols) == size:
            break
    cols = np.asarray(cols, dtype=np.intp)
    freq = np.asarray(freq)
    # the penalty on a rule grows as its frequency falls, (f_max / f) ** power:
    # its column is scaled by the inverse, so the path adds rules in about
    # the order of their frequency
    if len(cols):
        ref = np.median(freq) if frequency_reference == "median" else freq.max()
        scale = (freq / ref) ** frequency_power / rule_penalty_factor
    else:
        scale = freq
    matrix = (np.column_stack(masks) * (np.asarray(leaf_values)[cols] * scale) if len(cols)
              else np.zeros((table.shape[0], 0)))
    means = None
    if keep_rules is not None and centre_kept and est.fit_intercept and len(cols):
        # centred, a kept rule's ridge weighs its column's variance, the same
        # for a rule and its complement: how a split is written (which side,
        # which child) then costs nothing
        means = np.average(matrix, axis=0, weights=np.asarray(sample_weight, dtype=float))
        matrix = matrix - means
    pool = PoolDesign(matrix, extra, klass[cols], keep_rules, means)
    pool.rule_columns = cols
    return pool, cols, freq, scale


def _subsample_task(source, target, sw, rows, penalty, lambdas, fitter, fit_intercept, tol,
                    max_iter):
    """The kept terms (pool rules and linear terms' columns) at each lambda of
    the path on ``rows``."""
    path = fitter.path(source.rows(rows).block_design(), target[rows], penalty,
                       sample_weight=sw[rows], lambdas=lambdas, fit_intercept=fit_intercept,
                       tol=tol, max_iter=max_iter)
    return [frozenset(np.flatnonzero(c).tolist()) for c in np.asarray(path.coefs)]


def path_stability(est, source, penalty, lambdas, target, sample_weight, fitter,
                   n_subsamples=N_SUBSAMPLES):
    """At each of ``lambdas``, the mean Dice index of the kept terms (the
    pool's rules and the linear terms) of pairs of ``n_subsamples``
    (:data:`N_SUBSAMPLES`) fits on
    random halves of the rows (NaN where a half's path stopped early).

    Parameters
    ----------
    source : PoolDesign
    penalty : Penalty
        The selected grid point's template, in solver units.
    lambdas : ndarray
        In solver units, decreasing.
    """
    positive = np.flatnonzero(np.asarray(sample_weight) > 0)
    rng = check_random_state(est.random_state)
    subsets = [np.sort(rng.choice(positive, positive.size // 2, replace=False))
               for _ in range(n_subsamples)]
    fitter = fitter or SquaredLossPaths()
    runs = Parallel(n_jobs=effective_n_jobs(est.n_jobs, n_subsamples), prefer="threads")(
        delayed(_subsample_task)(source, target, sample_weight, rows, penalty, lambdas,
                                 fitter, bool(est.fit_intercept), float(est.tol), est.max_iter)
        for rows in subsets)
    out = np.full(len(lambdas), np.nan)
    for k in range(len(lambdas)):
        sets = [run[k] for run in runs if k < len(run)]
        if len(sets) == len(runs):
            out[k] = np.mean([dice(a, b) for i, a in enumerate(sets) for b in sets[i + 1:]])
    return out
