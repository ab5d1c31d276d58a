"""How far to trust a rule set: :func:`stability` (issue 39).

A rule set is stable when the data, not the sample, chose it: fitted on two
independent samples, the same procedure keeps the same rules.  This is SIRUS's
measure (Bénard, Biau, Da Veiga, Scornet 2021): split the rows at random into
two disjoint halves, fit each half, and compare the two rule sets by the
Dice-Sorensen index ``2 |A & B| / (|A| + |B|)``, over several splits.  Two
fits never share a threshold to the last digit, so every threshold is mapped
to the nearest of its feature's empirical deciles first (:func:`decile_grid`,
:func:`rule_signature`): rules that differ only within a decile count as one.

The same refits give each kept rule of the full fit its *selection
frequency*: the fraction of the half-sample fits that keep it.  That is the
``stability`` column of ``rules_`` once :meth:`stability` has run (and of a
``stable=True`` fit, from its own subsample fits).
"""
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from firecy.ensembles import simplify_conditions

__all__ = ["StabilityMixin", "StabilityResult", "decile_grid", "rule_signature", "dice",
           "kept_signatures", "stability"]

#: the quantile levels of the grid thresholds are mapped to: 10%, 20%, ..., 100%
DECILES = np.linspace(0.1, 1.0, 10)


def decile_grid(X):
    """Each feature's ten empirical deciles (10%, ..., 100%; missing values
    left out): the grid :func:`rule_signature` maps thresholds to.

    Parameters
    ----------
    X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        Numeric columns (a category column gets no grid: its conditions
        compare categories).

    Returns
    -------
    list of ndarray or None
        One increasing array per feature (None for a column that is not
        numeric or holds no value).
    """
    return [None if v is None or not v.size else np.quantile(v, DECILES)
            for v in numeric_columns(X)]


def numeric_columns(X):
    """Each column of ``X`` (an array, sparse matrix or DataFrame) as its
    finite values in float64, or None for a column that is not numeric.

    A generator, one column at a time: a sparse matrix is read column by
    column from CSC (its unstored entries are values 0), never made dense."""
    if sp.issparse(X):
        csc = sp.csc_matrix(X, copy=True)
        csc.sum_duplicates()
        n = int(csc.shape[0])
        for j in range(csc.shape[1]):
            stored = np.asarray(csc.data[csc.indptr[j]:csc.indptr[j + 1]], dtype=np.float64)
            yield np.concatenate([stored[np.isfinite(stored)], np.zeros(n - stored.size)])
        return
    if hasattr(X, "iloc"):
        columns = (X.iloc[:, j] for j in range(X.shape[1]))
    else:
        arr = np.asarray(X)
        columns = (arr[:, j] for j in range(arr.shape[1]))
    for col in columns:
        try:
            v = np.asarray(col, dtype=np.float64)
        except (TypeError, ValueError):
            yield None
            continue
        yield v[np.isfinite(v)]


def rule_signature(conditions, grid):
    """A rule as a set of conditions up to the decile grid: what two rule sets
    share.

    A numeric condition becomes ``(feature, side, k)``: its side (``"<="``
    for ``<`` and ``<=``, ``">"`` for ``>`` and ``>=``) and the index of the
    decile nearest its threshold; a categorical one ``(feature, op,
    categories)``.  Conditions are simplified first (two bounds on one side
    of one feature are one).

    Parameters
    ----------
    conditions : sequence of Condition
    grid : list
        :func:`decile_grid` of the data.

    Returns
    -------
    frozenset
    """
    out = set()
    for c in simplify_conditions(conditions):
        if c.is_categorical:
            out.add((c.feature, c.op, frozenset(map(str, c.categories))))
            continue
        side = "<=" if c.op in ("<", "<=") else ">"
        g = grid[c.feature] if c.feature < len(grid) else None
        k = int(np.argmin(np.abs(g - float(c.threshold)))) if g is not None else \
            float(c.threshold)
        out.add((c.feature, side, k))
    return frozenset(out)


def dice(a, b):
    """The Dice-Sorensen index of two sets, ``2 |a & b| / (|a| + |b|)`` (1 for
    two empty sets: they agree)."""
    a, b = set(a), set(b)
    if not a and not b:
        return 1.0
    return 2.0 * len(a & b) / (len(a) + len(b))


def kept_signatures(est, grid):
    """{design column: signature} of a fitted estimator's kept rules; a
    multi-output model's signature carries the output (class) it speaks for."""
    ens = est.ensemble_
    coef = np.asarray(est.coef_).reshape(len(ens.leaf_values), -1)
    kept = np.flatnonzero(coef.any(axis=1))
    block = np.searchsorted(np.asarray(ens.block_ptr), kept, side="right") - 1
    klass = np.asarray(ens.tree_class)[block] if int(ens.n_outputs) > 1 else np.zeros_like(kept)
    return {int(j): (int(k), rule_signature(ens.rules[int(j)], grid))
            for j, k in zip(kept, klass)}


@dataclass
class StabilityResult:
    """What :meth:`stability` measured.

    Attributes
    ----------
    dice : ndarray of shape (n_splits,)
        The Dice-Sorensen index of the two halves' rule sets, per split.
    mean, std : float
        Their mean and standard deviation.
    n_rules : ndarray of shape (n_splits, 2)
        The rules each half kept.
    frequency : dict
        {design column of the estimator's kept rule: the fraction of the
        ``2 * n_splits`` half fits that keep it (up to the decile grid)}.
    """

    dice: np.ndarray
    n_rules: np.ndarray
    frequency: dict = field(default_factory=dict)

    @property
    def mean(self):
        return float(np.mean(self.dice))

    @property
    def std(self):
        return float(np.std(self.dice))

    def __repr__(self):
        return (f"StabilityResult(dice {self.mean:.3f} +- {self.std:.3f} over "
                f"{self.dice.size} splits, rules per half {np.mean(self.n_rules):.1f})")


def _rows(X, idx):
    return X.iloc[idx] if hasattr(X, "iloc") else X[idx]


def _half_fit(est, X, y, rows, weights, grid):
    """One half fit: a clone of ``est`` on ``rows``, its kept rules' signatures."""
    from sklearn.base import clone

    part = clone(est).fit(_rows(X, rows), np.asarray(y)[rows],
                          sample_weight=None if weights is None else weights[rows])
    return set(kept_signatures(part, grid).values())


class _HalfFitProgress:
    """``stability``'s progress on stderr: ``half fit k of n``, with the time
    left once the first fit is timed; on a terminal the line is rewritten in
    place, redirected one line per fit."""

    def __init__(self, total, verbose):
        import sys

        stream = sys.stderr
        tty = stream is not None and hasattr(stream, "isatty") and stream.isatty()
        self.enabled = stream is not None and (verbose is True or (verbose == "auto" and tty))
        self.stream, self.tty, self.total, self.done = stream, tty, total, 0
        self.t0 = None

    def start(self):
        import time

        self.t0 = time.perf_counter()
        if self.enabled:
            self._write(f"stability: {self.total} half fits")

    def step(self):
        import time

        self.done += 1
        if not self.enabled:
            return
        spent = time.perf_counter() - self.t0
        left = spent / self.done * (self.total - self.done)
        self._write(f"stability: half fit {self.done} of {self.total}, {spent:.0f} s"
                    + (f", about {left:.0f} s left" if self.done < self.total else ", done"))

    def _write(self, line):
        end = "\n" if not self.tty or self.done == self.total else ""
        self.stream.write(("\r" if self.tty else "") + line + end)
        self.stream.flush()


def stability(est, X, y, *, n_splits=10, random_state=None, sample_weight=None,
              n_jobs=None, verbose="auto"):
    """SIRUS's stability of ``est``'s procedure on ``(X, y)``, and its kept
    rules' selection frequencies (see the module notes).

    ``est`` (fitted) is cloned and refitted on each half of ``n_splits``
    random splits of the rows (the model too, unless it is wrapped in
    ``FrozenEstimator``); the estimator itself is not refitted. The splits
    are drawn before any fit, so the result does not depend on ``n_jobs``.
    """
    from joblib import Parallel, delayed
    from sklearn.utils import check_random_state

    from firecy._validation import check_int, check_sample_weight

    n_splits = check_int(n_splits, "n_splits", low=1)
    if verbose not in (True, False, "auto"):
        raise ValueError(f"verbose must be True, False or 'auto', got {verbose!r}")
    n = X.shape[0]
    if n < 4:
        raise ValueError(f"stability needs at least 4 rows to split in halves, got {n}")
    s = check_sample_weight(sample_weight, n)
    weights = s if sample_weight is not None else None
    grid = decile_grid(X)
    own = kept_signatures(est, grid)
    rng = check_random_state(random_state)
    halves = []
    for _ in range(n_splits):
        order = rng.permutation(n)
        halves += [order[: n // 2], order[n // 2: 2 * (n // 2)]]
    progress = _HalfFitProgress(len(halves), verbose)
    progress.start()
    # the half fits in order, whatever finishes first
    fits = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_half_fit)(est, X, y, rows, weights, grid) for rows in halves)
    sets = []
    for sig in fits:
        sets.append(sig)
        progress.step()
    scores, sizes, counts = [], [], {}
    for a, b in zip(sets[0::2], sets[1::2]):
        for key in a:
            counts[key] = counts.get(key, 0) + 1
        for key in b:
            counts[key] = counts.get(key, 0) + 1
        scores.append(dice(a, b))
        sizes.append([len(a), len(b)])
    total = 2 * n_splits
    frequency = {j: counts.get(sig, 0) / total for j, sig in own.items()}
    return StabilityResult(dice=np.array(scores), n_rules=np.array(sizes), frequency=frequency)


class StabilityMixin:
    """:meth:`stability` for the fitted FIRE estimators (internal)."""

    def stability(self, X, y, *, n_splits=10, random_state=None, sample_weight=None,
                  n_jobs=None, verbose="auto"):
        """How stable the rule set is: SIRUS's measure over ``n_splits`` random halvings.

        The estimator's procedure (a clone of it, its model refitted too
        unless wrapped in ``FrozenEstimator``) is fitted on each half of the
        rows of every split, and the two halves' rule sets are compared by
        the Dice-Sorensen index ``2 |A & B| / (|A| + |B|)``, thresholds
        mapped to their feature's nearest decile (``docs/stability.rst``).
        The fitted estimator itself is not changed, but for its rules'
        selection frequencies: afterwards ``rules_`` and ``summary()`` show a
        ``stability`` column, the fraction of the ``2 * n_splits`` half fits
        that keep each rule.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            The data to split (the training data, typically).
        y : array-like of shape (n_samples,)
        n_splits : int, default=10
            Random splits into two halves (SIRUS's protocol uses 10).
        random_state : int, RandomState instance or None, default=None
            Seeds the splits.
        sample_weight : array-like of shape (n_samples,), default=None
        n_jobs : int, default=None
            The half fits to run at once (joblib's convention: None is one
            unless in a ``joblib.parallel_config`` context, -1 every core). The
            splits are drawn first, so the result is the same for any
            ``n_jobs``.
        verbose : bool or "auto", default="auto"
            Show the progress on stderr (``half fit k of n``, and the time
            left): "auto" on a terminal only, True always, False never.

        Returns
        -------
        StabilityResult
            ``dice`` per split, ``mean``, ``std``, the rules of each half
            (``n_rules``) and the kept rules' ``frequency``; also stored as
            ``stability_``.

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from firecy import FIRERegressor
        >>> X, y = load_diabetes(return_X_y=True)
        >>> forest = RandomForestRegressor(n_estimators=30, max_depth=2, random_state=0)
        >>> fire = FIRERegressor(forest, max_rules=5, cv=3, random_state=0).fit(X, y)
        >>> result = fire.stability(X, y, n_splits=2, random_state=0)
        >>> 0.0 <= result.mean <= 1.0, "stability" in fire.rules_.columns
        (True, True)
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        result = stability(self, X, y, n_splits=n_splits, random_state=random_state,
                           sample_weight=sample_weight, n_jobs=n_jobs, verbose=verbose)
        column = np.full(len(self.ensemble_.leaf_values), np.nan)
        for j, f in result.frequency.items():
            column[j] = f
        self.stability_ = result
        self._rule_stability = column
        return result
