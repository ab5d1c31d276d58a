"""The demo's measurement: repeated K-fold cross-validation of FIRE, L1
selection at the same budget and the full forest, and the budget curve."""
import sys

import numpy as np

from firecy.cli._job import _make_fire, _make_forest, _mse, _r2
from firecy.cli._progress import _isatty, status

__all__ = ["N_FOLDS", "cross_validate", "path_predictions", "budget_choice"]

# five folds: each model is trained on 4/5 of the 442 rows and scored on 88
# or 89 others; the repeats reshuffle the folds (--repeats)
N_FOLDS = 5


def _fit_status(text, quiet, last):
    """One fit's status on stderr: rewritten in place on a terminal (the
    last stays), one line each when redirected."""
    if quiet:
        return
    if not _isatty(sys.stderr):
        status(text)
        return
    sys.stderr.write("\r" + text + ("\n" if last else ""))
    sys.stderr.flush()


def path_predictions(est, X):
    """The prediction at every point of a fitted regressor's ``path_`` on
    the rows of ``X``, shape (n_points, n_samples): the ensemble's baseline,
    the point's intercept, its rule weights and its linear terms (the path's
    weights of a linear term are per design column,
    ``linear_terms_.design(X)``). At the selected point this is
    ``est.predict(X)``."""
    path, ens = est.path_, est.ensemble_
    n_cols = len(ens.leaf_values)
    X = np.asarray(X, dtype=np.float64)
    terms = getattr(est, "linear_terms_", None)
    design = terms.design(X) if terms is not None and len(terms) else None
    out = np.empty((len(path), X.shape[0]))
    for k in range(len(path)):
        coef = np.asarray(path.coefs[k], dtype=np.float64)
        out[k] = np.asarray(ens.predict_raw(X, coef[:n_cols])).reshape(-1) + path.intercepts[k]
        if design is not None:
            out[k] += design @ coef[n_cols:]
    return out


def budget_choice(path, budget):
    """The path point a fit with ``max_rules=budget`` selects on this path
    (exactly, without refinement; the refinement inserts points by budget):
    among the eligible points of at most ``budget`` terms, the smallest
    validation error; without validation (``selection="budget"``), the one
    with the most terms (the last). None when no point qualifies."""
    ok = np.flatnonzero(np.asarray(path.eligible) & (np.asarray(path.n_rules) <= budget))
    if not ok.size:
        return None
    err = np.asarray(path.validation_error, dtype=np.float64)[ok]
    if np.all(np.isnan(err)):
        return int(ok[-1])
    return int(ok[np.nanargmin(err)])


def _curve(est, X_te, y_te, budgets):
    """Test MSE, terms and antecedents of ``est``'s choice at each budget."""
    from firecy.rules import count_antecedents

    preds = path_predictions(est, X_te)
    n_cols = len(est.ensemble_.leaf_values)
    rows = []
    for b in budgets:
        k = budget_choice(est.path_, b)
        coef = np.asarray(est.path_.coefs[k][:n_cols])
        rows.append((_mse(y_te, preds[k]), int(est.path_.n_rules[k]),
                     count_antecedents(est.ensemble_, coef)))
    return np.array(rows, dtype=np.float64)


def _scores(est, X_te, y_te, fitted_fire):
    from firecy.rules import count_antecedents

    pred = est.predict(X_te)
    if fitted_fire:
        terms = int(getattr(est, "n_terms_", est.n_rules_))
        ante = count_antecedents(est.ensemble_, est.coef_)
    else:
        # the full forest's rules are its leaves
        trees = getattr(est, "estimators_", None)
        terms = (np.nan if trees is None
                 else float(sum(t.tree_.n_leaves for t in np.ravel(trees))))
        ante = np.nan
    return [_mse(y_te, pred), _r2(y_te, pred), terms, ante]


def cross_validate(X, y, args, budget, n_repeats):
    """Fit the forest, FIRE and L1 selection (at the same budget) on each
    training part of ``N_FOLDS``-fold cross-validation repeated
    ``n_repeats`` times (folds shuffled with ``args.seed``), and score them
    on the held-out part.

    Returns
    -------
    dict
        ``scores``: {"fire", "l1", "forest"} -> array (n_fits, 4) of test
        MSE, test R^2, terms (the forest's: its leaves) and antecedents (NaN
        for the forest); "l1" is
        missing when FIRE is L1 alone. ``curve``: {"fire", "l1"} -> array
        (n_fits, n_budgets, 3) of test MSE, terms and antecedents of the
        point selected at each budget ``1..budget`` (no curve for a stable
        fit, whose path is on its own pool's columns). ``n_test``: the
        held-out rows of each fit.
    """
    from sklearn.model_selection import RepeatedKFold

    folds = RepeatedKFold(n_splits=N_FOLDS, n_repeats=n_repeats, random_state=args.seed)
    budgets = np.arange(1, budget + 1)
    with_l1 = args.penalty != "l1" or bool(args.fusion)
    with_curve = not getattr(args, "stable", False)
    scores = {"fire": [], "forest": []}
    curve = {"fire": []}
    if with_l1:
        scores["l1"], curve["l1"] = [], []
    n_test = []
    n_fits = N_FOLDS * n_repeats
    for i, (tr, te) in enumerate(folds.split(X)):
        _fit_status(f"cross-validation: fit {i + 1} of {n_fits} (forest, FIRE"
                    f"{', L1' if with_l1 else ''} on {len(tr)} rows) ...", args.no_progress,
                    last=i + 1 == n_fits)
        forest = _make_forest(getattr(args, "model", "rf"), args.n_trees, args.max_depth,
                              args.seed, args.n_jobs)
        forest.fit(X[tr], y[tr])
        fitted = {"fire": _make_fire(forest, args, args.penalty, args.fusion).fit(X[tr], y[tr])}
        if with_l1:
            fitted["l1"] = _make_fire(forest, args, "l1", 0.0).fit(X[tr], y[tr])
        for name, est in fitted.items():
            scores[name].append(_scores(est, X[te], y[te], True))
            if with_curve:
                curve[name].append(_curve(est, X[te], y[te], budgets))
        scores["forest"].append(_scores(forest, X[te], y[te], False))
        n_test.append(len(te))
    return dict(scores={k: np.array(v) for k, v in scores.items()},
                curve={k: np.array(v) for k, v in curve.items()} if with_curve else None,
                budgets=budgets, n_test=np.array(n_test), n_repeats=n_repeats)
