"""The competitors on one outer fold: best subset (abess), SIRUS, the full forest.

Every function takes a :class:`~benchmarks.quality.folds.Fold` and returns
``dict(test, n_rules, antecedents, seconds)`` with ``test`` the test MSE /
Var(y_test). L1 and FIRE live in :mod:`benchmarks.quality.selection` (the
same paths and selection code for every penalty).
"""
import time
import warnings

import numpy as np
from sklearn.model_selection import KFold, ShuffleSplit

from benchmarks.quality.folds import leaf_matrix

__all__ = ["best_subset", "sirus", "full_forest"]


def _result(fold, pred, n_rules, antecedents, seconds, **extra):
    test = float(np.mean((fold.y_test - pred) ** 2) / fold.var_test)
    return dict(test=test, n_rules=int(n_rules), antecedents=int(antecedents),
                seconds=float(seconds), **extra)


def full_forest(fold):
    from firecy.rules import count_antecedents

    ens = fold.ensemble()
    pred = fold.forest.predict(fold.X_test)
    ones = np.ones(fold.leaf_values.shape[0])
    return _result(fold, pred, ones.size, count_antecedents(ens, ones), fold.forest_time)


def best_subset(fold, max_rules=14, n_cv=5):
    """abess best-subset selection over the forest's leaves, sizes 1..max_rules.

    abess's own tuning: its cross-validation (``cv=n_cv``, test loss) over the
    support sizes, the folds fixed by a seeded KFold for determinism, then
    abess refits the chosen size on all training rows. The design is passed
    dense: abess's sparse-matrix mode was 10-20x slower here and selected
    differently.
    """
    from abess import LinearRegression

    from firecy.rules import count_antecedents

    t0 = time.perf_counter()
    M = leaf_matrix(fold.leaf_train, fold.leaf_values).toarray()
    # abess refuses constant columns (a leaf that holds every training row,
    # or none: a tree without a split on these rows)
    varying = np.flatnonzero(M.std(axis=0) > 0)
    M = M[:, varying]
    ids = np.zeros(M.shape[0], dtype=int)
    for j, (_, va) in enumerate(KFold(n_cv, shuffle=True, random_state=fold.seed).split(M)):
        ids[va] = j + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LinearRegression(support_size=range(1, max_rules + 1), cv=n_cv, thread=1)
        model.fit(M, fold.y_train, cv_fold_id=ids)
    seconds = time.perf_counter() - t0
    coef = np.zeros(fold.leaf_values.shape[0])
    coef[varying] = np.asarray(model.coef_, dtype=float)
    pred = leaf_matrix(fold.leaf_test, fold.leaf_values) @ coef + model.intercept_
    return _result(fold, pred, np.count_nonzero(coef),
                   count_antecedents(fold.ensemble(), coef), seconds)


def _sirus_prefix_errors(model, X_fit, y_fit, X_val, y_val, max_rules, seed):
    """Validation MSE of the first k rules, k = 1..len(rules), re-aggregated.

    SIRUS's rule list is frequency-ordered and its redundancy filter greedy,
    so the model with ``num_rules=k`` has the first k rules of the model
    with ``num_rules=max_rules`` (same forest); only the non-negative ridge
    aggregation is redone, with the package's own routine.
    """
    import sirus as S

    cols_fit = [X_fit.iloc[:, j].to_numpy(dtype=float) for j in range(X_fit.shape[1])]
    cols_val = [X_val.iloc[:, j].to_numpy(dtype=float) for j in range(X_val.shape[1])]
    G_fit, G_val = model._rule_matrix(cols_fit), model._rule_matrix(cols_val)
    errs = []
    for k in range(1, min(max_rules, G_fit.shape[1]) + 1):
        if k == 1:
            pred = G_val[:, 0]
        else:
            coef, b, _ = S._fit_nn_ridge_cv(G_fit[:, :k], y_fit, model.ridge_cv, seed)
            pred = b + G_val[:, :k] @ coef
        errs.append(float(np.mean((y_val - pred) ** 2)))
    return np.array(errs)


def sirus(fold, max_rules=14, val_fraction=0.2, num_trees=None, max_depth=2):
    """SIRUS (Bénard et al.; PyPI ``sirus``, a port of the R package) tuned
    within the budget: on a 20% validation split of the training rows, the
    number of rules k = 1..max_rules with the lowest validation error (one
    SIRUS fit with ``num_rules=max_rules``, prefixes re-aggregated), then
    ``SirusRegressor(num_rules=k)`` refitted on all training rows. SIRUS grows
    its own forest (depth ``max_depth``, default 2 as in the package; the
    number of trees by its stability criterion unless ``num_trees``).
    """
    from sirus import SirusRegressor

    t0 = time.perf_counter()
    X, y = fold.X_train, fold.y_train
    (tr, va), = ShuffleSplit(1, test_size=val_fraction, random_state=fold.seed).split(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = dict(num_trees=num_trees, max_depth=max_depth, random_state=fold.seed)
        m = SirusRegressor(num_rules=max_rules, **kw).fit(X.iloc[tr], y[tr])
        errs = _sirus_prefix_errors(m, X.iloc[tr], y[tr], X.iloc[va], y[va], max_rules,
                                    fold.seed)
        k = int(np.argmin(errs)) + 1
        final = SirusRegressor(num_rules=k, **kw).fit(X, y)
    seconds = time.perf_counter() - t0
    pred = final.predict(fold.X_test)
    weights = np.atleast_1d(final.rule_weights_)
    kept = [r for r, w in zip(final.rules_, weights) if w != 0]
    conditions = {(c.feature, c.op, c.value) for r in kept for c in r.conditions}
    return _result(fold, pred, len(kept), len(conditions), seconds,
                   num_trees=int(final.num_trees_))
