"""``stable=True``: rule sets that independent samples agree on (issue 39).

Three pieces, each measured in ``benchmarks/stability/RESULTS.md``:

* **a grid of split points** (:func:`fit_grid_forest`): the default forest is
  grown on each feature binned at its training deciles, its thresholds then
  written back in the data's units, so that two samples' forests offer the
  same candidate thresholds; its trees have depth 2 and the rules are their
  nodes at depths 1 and 2 (single conditions and pairs, as SIRUS's);
* **stability selection** (:func:`stable_selection`; Meinshausen and
  Bühlmann 2010): the selected grid point's path is refitted on
  ``N_SUBSAMPLES`` random halves of the rows, on the lambdas down to the
  selected one; a rule's frequency is the fraction of halves that keep it (a
  rule is its conditions: equal rules of different trees are one), and the
  model keeps the rules whose frequency reaches ``THRESHOLD`` at some lambda
  at or above the selected one, the most frequent first, within the budget;
* **FIRE's refit** of those rules' weights on every row, at the selected
  lambda.

The frequencies are also the kept rules' ``stability`` column, and the mean
Dice index of pairs of halves' rule sets at each path point is the path's
``stability`` (``path_.stability``, drawn by ``plot_path``).
"""
from types import SimpleNamespace

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed

from firecy._threads import effective_n_jobs
from firecy.ensembles._simplify import simplify_conditions
from firecy.estimators._fit_design import FitDesign
from firecy.estimators._selection import SquaredLossPaths
from firecy.estimators._stability import dice
from firecy.solver import BlockDesign

__all__ = ["fit_grid_forest", "stable_selection", "N_SUBSAMPLES", "THRESHOLD"]

N_SUBSAMPLES = 20
THRESHOLD = 0.5
N_BINS = 10


def fit_grid_forest(forest, X, y, sample_weight, n_bins=N_BINS):
    """Fit a scikit-learn forest with its split points on each feature's
    training deciles, in the data's units.

    The forest is fitted on ``X`` binned at each feature's ``n_bins``
    quantiles (of its float32 values, as scikit-learn reads ``X``); a split
    between bins ``k`` and ``k + 1`` is then the threshold ``edge_k``:
    ``float32(x) <= edge_k`` holds exactly for the rows of bins ``0 .. k``.
    The returned forest predicts on ``X`` itself.

    Parameters
    ----------
    forest : RandomForestRegressor or RandomForestClassifier, unfitted
    X : ndarray of shape (n_samples, n_features)
        Numeric, dense (NaN allowed: missing values keep their routing).
    y, sample_weight : ndarray

    Returns
    -------
    forest : fitted
    """
    import scipy.sparse as sp

    if sp.issparse(X):
        raise TypeError("stable=True grows its forest on binned features: pass X dense")
    Xf = np.asarray(X, dtype=np.float32)
    binned = np.empty(Xf.shape, dtype=np.float32)
    edges = []
    levels = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    for j in range(Xf.shape[1]):
        col = Xf[:, j]
        seen = col[np.isfinite(col)]
        e = np.unique(np.quantile(seen, levels, method="lower")) if seen.size else \
            np.empty(0, dtype=np.float32)
        e = e.astype(np.float32)
        edges.append(e)
        b = np.searchsorted(e, col, side="left").astype(np.float32)   # edges below x
        binned[:, j] = np.where(np.isnan(col), np.nan, b)
    forest.fit(binned, y, sample_weight=sample_weight)
    for tree in forest.estimators_:
        t = tree.tree_
        inner = np.flatnonzero(t.children_left != -1)
        # a split at k + 0.5 between bins k and k + 1 is x <= edge_k
        k = np.floor(t.threshold[inner]).astype(np.intp)
        t.threshold[inner] = [float(edges[f][i]) for f, i in zip(t.feature[inner], k)]
    return forest


def _rule_keys(ensemble, columns):
    """{column: (class, conditions)} -- equal rules of different trees share a key."""
    block = np.searchsorted(np.asarray(ensemble.block_ptr), columns, side="right") - 1
    klass = np.asarray(ensemble.tree_class)[block]
    return {int(j): (int(k), frozenset(simplify_conditions(ensemble.rules[int(j)])))
            for j, k in zip(columns, klass)}


def _subsample_task(source, target, sw, rows, penalty, lambdas, fitter, fit_intercept, tol,
                    max_iter):
    """The kept columns at each lambda of the path on ``rows``."""
    path = fitter.path(source.rows(rows).block_design(), target[rows], penalty,
                       sample_weight=sw[rows], lambdas=lambdas, fit_intercept=fit_intercept,
                       tol=tol, max_iter=max_iter)
    return [np.flatnonzero(c) for c in np.asarray(path.coefs)]


def stable_selection(est, grid, rules, fit, data, task, paths, best):
    """The stable rule set and its refitted weights (see the module notes).

    Returns
    -------
    coef : ndarray of shape (n_rules,)
        In the data's units; zero but on the kept rules.
    intercept : float or ndarray
    rule_stability : ndarray of shape (n_rules,)
        The kept rules' frequencies (NaN elsewhere).
    """
    g, k_best = best
    path = paths[g]
    lam_star = float(path.lambdas[k_best])
    factor = fit.scale.lam_factor
    # the path's lambdas at or above the selected one, decreasing, in solver units
    lambdas = np.unique(path.lambdas[path.lambdas >= lam_star])[::-1] / factor
    penalty = fit.scale.scale_grid([grid[g]])[0][1]
    source = FitDesign(rules.leaf_table, fit.leaf_values, fit.block_ptr)
    sw = data.sample_weight
    positive = np.flatnonzero(sw > 0)
    rng = check_random_state(est.random_state)
    subsets = [np.sort(rng.choice(positive, positive.size // 2, replace=False))
               for _ in range(N_SUBSAMPLES)]
    fitter = task.fitter(rules.ensemble) or SquaredLossPaths()
    selected = Parallel(n_jobs=effective_n_jobs(est.n_jobs, N_SUBSAMPLES), prefer="threads")(
        delayed(_subsample_task)(source, fit.target, sw, rows, penalty, lambdas, fitter,
                                 bool(est.fit_intercept), float(est.tol), est.max_iter)
        for rows in subsets)
    seen = np.unique(np.concatenate([c for run in selected for c in run] or [[]])).astype(int)
    keys = _rule_keys(rules.ensemble, seen)
    # frequency of each key at each lambda (rows: lambdas, from the largest)
    all_keys = sorted(set(keys.values()), key=lambda kk: min(j for j, v in keys.items()
                                                             if v == kk))
    index = {kk: i for i, kk in enumerate(all_keys)}
    counts = np.zeros((lambdas.size, len(all_keys)))
    sets_at = [[set() for _ in subsets] for _ in lambdas]
    for b, run in enumerate(selected):
        for i, cols in enumerate(run):
            ks = {keys[int(j)] for j in cols}
            sets_at[i][b] = ks
            for kk in ks:
                counts[i, index[kk]] += 1
    freq = counts.max(axis=0) / len(subsets) if len(all_keys) else np.zeros(0)
    _record_path_stability(path, lambdas * factor, sets_at)
    order = np.argsort(-freq, kind="stable")
    budget = est.max_rules if est.max_rules is not None else len(order)
    chosen = [all_keys[i] for i in order if freq[i] >= THRESHOLD][:budget]
    column_of = {}
    for j, kk in sorted(keys.items()):
        column_of.setdefault(kk, j)
    cols = np.array(sorted(column_of[kk] for kk in chosen), dtype=np.intp)
    if cols.size:
        coef, intercept = _refit(est, rules, fit, data, task, penalty, lam_star / factor, cols)
    else:   # no rule is stable: the path's model without rules
        empty = np.flatnonzero(path.n_rules == 0)
        coef, intercept = np.zeros(len(fit.leaf_values)), np.asarray(path.intercepts)[empty[0]]
    rule_stability = np.full(len(fit.leaf_values), np.nan)
    for j in np.flatnonzero(coef):
        rule_stability[j] = freq[index[keys[int(j)]]]
    return coef, intercept, rule_stability


def _record_path_stability(path, lambdas, sets_at):
    """``path.stability``: at each evaluated point, the mean Dice index of
    pairs of halves' rule sets (NaN at points below the selected lambda)."""
    out = np.full(len(path.lambdas), np.nan)
    for lam, sets in zip(lambdas, sets_at):
        pairs = [dice(a, b) for i, a in enumerate(sets) for b in sets[i + 1:]]
        out[np.isclose(path.lambdas, lam, rtol=1e-12, atol=0.0)] = np.mean(pairs)
    path.stability = out


def _refit(est, rules, fit, data, task, penalty, lam, cols):
    """FIRE's weights of the kept columns ``cols`` on every row at ``lam``
    (solver units in, the data's units out): each column its own block."""
    design = BlockDesign.from_leaf_table(rules.leaf_table, fit.leaf_values, fit.block_ptr)
    keep = data.sample_weight > 0
    small = BlockDesign.from_matrix(design.tocsc()[:, cols][keep], np.arange(cols.size + 1))
    block = np.searchsorted(np.asarray(fit.block_ptr), cols, side="right") - 1
    # the fitter of a multi-class model reads each block's class
    outputs = SimpleNamespace(n_outputs=int(getattr(rules.ensemble, "n_outputs", 1)),
                              tree_class=np.asarray(rules.ensemble.tree_class)[block])
    fitter = task.fitter(outputs) or SquaredLossPaths()
    res = fitter.path(small, fit.target[keep], penalty, sample_weight=data.sample_weight[keep],
                      lambdas=np.array([lam]), fit_intercept=bool(est.fit_intercept),
                      tol=float(est.tol), max_iter=est.max_iter)
    res = fit.scale.unscale_path(res)
    coef = np.zeros(len(fit.leaf_values))
    coef[cols] = np.asarray(res.coefs)[-1]
    return coef, np.asarray(res.intercepts)[-1]
