"""Model selection along FIRE paths.

Every task here is a plain module-level function of arrays and penalty
objects, so joblib can ship it to threads, processes or a Dask cluster
unchanged.  :func:`select_on_paths` runs two stages:

1. one full-data path per grid point (gamma x fusion x group-L0), on the
   grid's own lambda sequence, stopped after the first point beyond the rule
   budget, and refined by bisection where the rule count jumps;
2. one validation task per (fold, grid point): the path on the fold's
   training rows over the same lambdas (those of stage 1 within the budget,
   refined points included but for those inside a run of equal rule counts,
   see :func:`~firecy.solver._refine.candidate_points`), scored by a
   validation loss on the fold's held-out rows.

The selected point has the lowest mean validation loss (or, with the
one-standard-error rule, the fewest rules within one standard error of it);
``by_budget`` skips stage 2 and takes the most rules within the budget.
The selected model is the stage-1 solution at the selected lambda: the
warm-started full-data path is the refit.  The loss is the task's
``validation_loss``, so the same machinery serves every task.  Every
design here is a :class:`~firecy.solver.BlockDesign` built by the fit's
:class:`~firecy.estimators._fit_design.FitDesign` for the task's rows.  How a task fits a path on it and predicts with it is the
``fitter``'s business (default :class:`SquaredLossPaths`, regression); a
classifier passes its own.  ``docs/selection.rst`` explains the choices and
their measurements.
"""
import contextlib
import warnings
from dataclasses import dataclass, field, fields

import joblib
import numpy as np
from sklearn.utils.parallel import Parallel, delayed

from firecy._warn import user_stacklevel
from firecy._threads import effective_n_jobs
from firecy.solver import PathResult, fire_path
from firecy.solver import candidate_points

__all__ = ["FIREPath", "SquaredLossPaths", "full_path_task", "fold_errors_task",
           "weighted_squared_error", "select_on_paths", "saturated_points", "effective_n_jobs"]


@dataclass
class FIREPath(PathResult):
    """A regularisation path on the full training data and its validation scores.

    The fields of :class:`firecy.solver.PathResult` (``lambdas``, the values
    of the penalty's ``lam``, decreasing; ``coefs``, ``intercepts``,
    ``objectives``, ``n_rules``, ``n_iter`` and ``converged`` at each point,
    on the full data; ``lambda_max``), plus the following.

    Attributes
    ----------
    lambdas, coefs, intercepts, objectives, n_rules, n_iter, converged, lambda_max
        As in :class:`firecy.solver.PathResult`, on the full data: the
        solver's weights (a fitted estimator's ``coef_`` is the selected
        point's, with equal rules of different trees merged into one).
    warm_starts : ndarray of int or None
        As in :class:`firecy.solver.PathResult`: the point each point was
        warm-started from (``warm_start_chain(k)`` leads to point k).
    params : dict
        The fixed penalty parameters of this path (``gamma``, ``fusion``,
        ``group_l0``, or ``penalty`` for a user penalty object).
    validation_error : ndarray of shape (n_points,)
        The validation loss on the held-out rows (the weighted mean squared
        error for regression), averaged over the folds (one fold for
        ``selection="validation"``). ``inf`` for the points that are not
        candidates (see ``eligible``), NaN when no selection was run.
    validation_error_std : ndarray of shape (n_points,)
        Standard deviation of the fold errors (0 with a single split).
    eligible : ndarray of bool, shape (n_points,)
        The points the selection chooses among (a mask: the rule count is
        not monotone in lambda): those within the rule budget, except
        inserted points inside a run of equal rule counts, which repeat the
        run's rules at a larger lambda than its last point
        (:func:`firecy.solver._refine.candidate_points`; every rule count
        of the path keeps a point), and except a classifier's saturated
        points (:func:`saturated_points`: the classes separated, the weights
        unbounded). Only these are cross-validated.
    inserted : ndarray of bool, shape (n_points,)
        Points added by path refinement (all False without it).
    skipped_counts : ndarray of int or None
        Rule counts up to ``max_rules`` the refined path jumps over (None
        without refinement).
    stability : ndarray of shape (n_points,)
        With ``stable=True``: at the points from the top of the path down to
        the selected one, the mean Dice index of the rule sets fitted on
        pairs of random halves of the rows (1: the halves agree), beside
        ``validation_error``; NaN elsewhere, and empty without ``stable``
        (``docs/stability.rst``).

    Notes
    -----
    Dict-style access works too: ``path["lambdas"]``, ``path.keys()``.

    Examples
    --------
    A fitted :class:`~firecy.FIRERegressor` keeps its path in ``path_``; the
    selected point has the smallest validation error within the budget:

    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from firecy import FIRERegressor
    >>> from firecy.estimators import FIREPath
    >>> X, y = load_diabetes(return_X_y=True)
    >>> rf = RandomForestRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    >>> fire = FIRERegressor(rf, max_rules=5, n_lambdas=10, cv=3, random_state=0).fit(X, y)
    >>> path = fire.path_
    >>> isinstance(path, FIREPath), path.params
    (True, {'gamma': 1.1, 'fusion': 0.5, 'group_l0': 0.0})
    >>> bool(np.all(path.n_rules[path.eligible] <= 5))
    True
    >>> best = int(np.argmin(np.where(path.eligible, path.validation_error, np.inf)))
    >>> bool(path.lambdas[best] == fire.lambda_), bool(path.n_rules[best] == fire.n_terms_)
    (True, True)
    >>> bool(np.array_equal(path.coefs[best][:len(fire.coef_)], fire.coef_))  # rules first
    True
    >>> path["validation_error"] is path.validation_error
    True
    """

    params: dict = field(default_factory=dict)
    validation_error: np.ndarray = field(default_factory=lambda: np.empty(0))
    validation_error_std: np.ndarray = field(default_factory=lambda: np.empty(0))
    eligible: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))
    stability: np.ndarray = field(default_factory=lambda: np.empty(0))

    @classmethod
    def from_path(cls, path, **scores):
        """A FIREPath with the fields of the solver's ``path`` and ``scores``."""
        out = cls(**{f.name: getattr(path, f.name) for f in fields(path)}, **scores)
        if out.inserted is None:
            out.inserted = np.zeros(len(out), dtype=bool)
        return out

    def __getitem__(self, key):
        if not isinstance(key, str) or key.startswith("_") or not hasattr(self, key):
            raise KeyError(key)
        return getattr(self, key)

    def keys(self):
        """The names of the fields."""
        return [f.name for f in fields(self)]


class SquaredLossPaths:
    """The default ``fitter``: how a task fits a path and predicts with it.

    A fitter has two methods, ``path(design, y, penalty, **kwargs)`` (the
    arguments of :func:`~firecy.solver.fire_path`; returns a
    :class:`~firecy.solver.PathResult`) and ``predict(design, y, path)`` (the
    prediction at every path point on the rows of ``design``, what the
    validation loss scores; ``y`` are those rows' targets, for a fitter that
    keeps per-row data such as an offset in them).  This one is regression's:
    the squared loss on the target (the baseline already subtracted).
    ``keeps_unpenalised_blocks``: its paths start where the blocks of an
    :class:`~firecy.penalties.Unpenalised` penalty are fitted
    (:func:`~firecy.solver.fire_path`), so a stable fit may keep its pool's
    rules unpenalised (``_stable``). A classifier's fitter also has
    ``training_loss(design, y, path, sample_weight)``, which marks the
    saturated points (:func:`saturated_points`).
    """

    keeps_unpenalised_blocks = True

    def path(self, design, y, penalty, **kwargs):
        return fire_path(design, y, penalty, **kwargs)

    def predict(self, design, y, path):
        return np.asarray(design.tocsc() @ path.coefs.T) + path.intercepts[None, :]


def full_path_task(source, y, sample_weight, penalty,
                   lambdas, n_lambdas, eps, max_rules, fit_intercept, tol, max_iter,
                   progress=None, refine_path=False, fitter=None, n_jobs=None):
    """Stage 1: the path on all training rows (``lambdas=None``: default grid),
    refined where the rule count jumps if ``refine_path``.

    ``n_jobs``: threads for the refinement's independent bisections (the
    ``joblib.parallel_config`` the fitter runs in; None leaves the context
    as it is). ``source`` is the fit's :class:`~firecy.estimators._fit_design.FitDesign`
    on the rows of ``y``."""
    design = source.block_design()
    fitter = SquaredLossPaths() if fitter is None else fitter
    with contextlib.nullcontext() if n_jobs is None else joblib.parallel_config(n_jobs=n_jobs):
        return fitter.path(
            design, y, penalty, sample_weight=sample_weight, lambdas=lambdas,
            n_lambdas=n_lambdas, eps=eps, max_rules=max_rules,
            fit_intercept=fit_intercept, tol=tol, max_iter=max_iter, progress=progress,
            refine_path=refine_path,
        )


def weighted_squared_error(y, pred, sample_weight):
    """Weighted mean squared error of each column of ``pred``.

    Unweighted if the weights sum to zero.
    """
    resid2 = (y[:, None] - pred) ** 2
    if sample_weight.sum() > 0:
        return (sample_weight[:, None] * resid2).sum(axis=0) / sample_weight.sum()
    return resid2.mean(axis=0)


def fold_errors_task(source, y, sample_weight, train, test,
                     penalty, lambdas, fit_intercept, tol, max_iter, progress=None,
                     loss=weighted_squared_error, fitter=None):
    """Stage 2: validation losses of the path fitted on ``train``, scored on ``test``.

    Returns
    -------
    errors : ndarray of shape (len(lambdas),)
        ``loss(y[test], prediction, sample_weight[test])`` at each lambda,
        the prediction being ``fitter.predict`` on the test rows (for
        regression the intercept plus ``M w``); NaN for an empty test set.
    """
    fitter = SquaredLossPaths() if fitter is None else fitter
    # zero-weight rows out of the fit, as in select_on_paths (unless every
    # one is: the fitter decides what a fold without weight gives)
    train = np.asarray(train)
    positive = sample_weight[train] > 0
    if positive.any():
        train = train[positive]
    design = source.rows(train).block_design()
    path = fitter.path(
        design, y[train], penalty, sample_weight=sample_weight[train],
        lambdas=lambdas, fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
        progress=progress,
    )
    if len(test) == 0:
        return np.full(len(path.lambdas), np.nan)
    test_design = source.rows(test).block_design()
    pred = fitter.predict(test_design, y[test], path)
    return loss(y[test], pred, sample_weight[test])


def select_on_paths(grid, source, target, sample_weight,
                    splits, *, lambdas, n_lambdas, eps, max_rules, refine_path, one_se,
                    n_jobs, loss, lam, by_budget=False, **common):
    """Both stages, and the choice of (grid point, path point).

    Parameters
    ----------
    grid : list of (dict, Penalty)
        The grid points and their penalty templates.
    source : FitDesign
        The fit's columns on every training row
        (:class:`~firecy.estimators._fit_design.FitDesign`).
    splits : list of (train, test) or None
        Validation folds; None: nothing to select (one grid point, fixed
        ``lam``).
    lambdas : ndarray or None
        A fixed lambda grid, or None for each path's default grid.
    refine_path : bool
        Refine the full-data paths where the rule count jumps (see
        :func:`firecy.solver.fire_path`).
    one_se : bool
        Among the eligible points whose mean validation loss is within one
        standard error of the best, take the one with the fewest rules.
    loss : callable
        ``loss(y, pred, sample_weight)`` per column of ``pred``.
    lam : float or None
        The estimator's fixed ``lam``, for the warning when it breaks the
        rule budget.
    by_budget : bool, default=False
        No validation (``splits`` None): take the eligible point with the
        most rules, then the smallest lambda (the rule budget as the model
        size, as a risk score's user fixes it).
    **common
        ``fit_intercept``, ``tol``, ``max_iter``, ``progress`` for the solver,
        and ``fitter`` (see :class:`SquaredLossPaths`).

    Returns
    -------
    paths : list of FIREPath
        One per grid point.
    best : (int, int)
        The selected grid point and path point.
    """
    def parallel(tasks):
        # joblib's own thread pool per stage, sized by that stage's tasks
        tasks = list(tasks)
        return Parallel(n_jobs=effective_n_jobs(n_jobs, len(tasks)), prefer="threads")(tasks)

    progress = common.pop("progress", None)
    # rows of zero weight are not part of the objective, and the solvers never
    # see them: left in, they change the rounding of the column curvatures and
    # gradients (sums over more rows), which decides ties between duplicate
    # rules and so which local minimum MCP reaches; dropped, a zero weight
    # gives bitwise the fit of the row removed
    fit_rows = np.flatnonzero(sample_weight > 0)
    if fit_rows.size == sample_weight.shape[0]:
        fit_rows = slice(None)
    # a fixed lam: the path is the given warm path down to lam, whole and
    # unrefined, and its model is its last point
    fixed = lam is not None
    # one grid point: its path runs alone, and its refinement may thread
    # over the jumps (bitwise the serial path) on the cores the folds will
    # use; several: the paths themselves are the threads
    refine_jobs = (effective_n_jobs(n_jobs, 1 << 30) or 1) if len(grid) == 1 else 1
    full = parallel(
        delayed(full_path_task)(
            source.rows(fit_rows), target[fit_rows],
            sample_weight[fit_rows], pen, lambdas,
            n_lambdas, eps, None if fixed else max_rules,
            refine_path=refine_path and not fixed,
            progress=_stage(progress, "full path"), n_jobs=refine_jobs, **common,
        )
        for _, pen in grid
    )
    # a mask, not a prefix: MCP's rule count is not monotone in lambda, and
    # refinement can insert a point beyond the budget before eligible ones;
    # inserted points inside a run of equal counts repeat a rule set at more
    # shrinkage than the run's last point, and are left out of the choice
    # (and so of every fold's path): see candidate_points
    eligible = [
        (np.ones(len(p), dtype=bool) if max_rules is None else p.n_rules <= max_rules)
        & candidate_points(p.n_rules, p.inserted)
        for p in full
    ]
    if fixed:
        eligible = [e & (np.arange(len(e)) == len(e) - 1) for e in eligible]
    else:
        fitter = common.get("fitter")
        eligible = [e & ~saturated_points(fitter, source.rows(fit_rows), target[fit_rows],
                                          sample_weight[fit_rows], p)
                    for e, p in zip(eligible, full)]

    errors = [np.full(len(p), np.nan) for p in full]
    stds = [np.full(len(p), np.nan) for p in full]
    if splits is not None:
        errors, stds = _validation_errors(parallel, grid, full, eligible, source,
                                          target, sample_weight, splits, loss,
                                          dict(common, progress=_stage(progress, "validation")))
    if by_budget:
        best = _at_budget(full, eligible)
    else:
        best = _choose(full, eligible, errors, stds, len(splits) if splits else 0, one_se)
    if best is None:
        # fixed lam beyond the budget everywhere: keep the sparsest
        last = [len(p) - 1 if fixed else 0 for p in full]
        _, g = min((int(p.n_rules[last[g]]), g) for g, p in enumerate(full))
        best = (g, last[g])
        warnings.warn(
            (f"lam={lam!r} gives" if lam is not None else "every lambda given gives at least")
            + f" {full[g].n_rules[last[g]]} rules, more than max_rules={max_rules}; "
            + ("increase lam or use lam=None to select it" if lam is not None
               else "give larger lambdas"),
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    if not fixed:
        _warn_if_budget_unreachable(full, eligible, best, max_rules)
    paths = [
        FIREPath.from_path(p, params=dict(params), validation_error=errors[g],
                           validation_error_std=stds[g], eligible=eligible[g])
        for g, ((params, _), p) in enumerate(zip(grid, full))
    ]
    return paths, best


#: A path point whose training loss is below this fraction of the first
#: point's (the null model's at lambda_max) is saturated: glmnet's
#: ``fdev``, a deviance explained of 0.999, where it stops its paths.
SATURATED = 1e-3


def saturated_points(fitter, source, target, sample_weight, path):
    """The points of ``path`` where the fit is saturated (a mask).

    On separable classes the logistic and multinomial losses fall to 0 as
    the weights grow without bound, and MCP, flat beyond ``gamma * lam``,
    does not stop them: the penalised problem has no minimiser, and where
    the solver stops is decided by rounding (weights of a few thousand that
    differ by 10% between a fit with integer weights and one with the rows
    repeated). Those points are left out of the choice, unless only models
    without a term precede them: then the first saturated point stays a
    candidate (glmnet's last point), so that data separated by the first
    rule to enter still get that rule rather than the null model. A fitter
    without a ``training_loss`` (regression, counts, survival) has none.
    """
    training_loss = getattr(fitter, "training_loss", None)
    mask = np.zeros(len(path), dtype=bool)
    if training_loss is None or len(path) < 2:
        return mask
    loss = training_loss(source.block_design(), target, path, sample_weight)
    mask = loss < SATURATED * loss[0]
    if mask.any():
        first = int(np.argmax(mask))
        if not np.any(np.asarray(path.n_rules[:first]) > 0):
            mask[first] = False
    return mask


def _warn_if_budget_unreachable(full, eligible, best, max_rules):
    """Warn when the model keeps no rule only because no path point fits the budget.

    Rules can enter a path together (fused neighbours, ties): a path may jump
    from 0 rules to more than ``max_rules``, and refinement cannot split such
    a jump.  The empty model is then the only eligible point, which the user
    should hear about rather than receive silently.
    """
    g, k = best
    if max_rules is None or max_rules < 1 or full[g].n_rules[k] != 0:
        return
    if any(np.any(e & (p.n_rules > 0)) for e, p in zip(eligible, full)):
        return  # a non-empty model within the budget was there: the CV chose
    over = [int(c) for p in full for c in p.n_rules if c > max_rules]
    if not over:
        return  # the paths never leave the empty model
    warnings.warn(
        f"no point of the path keeps between 1 and max_rules={max_rules} rules: it "
        f"jumps from 0 to {min(over)} rules (rules that enter together, e.g. fused "
        "neighbours or ties), so the model keeps no rule; raise max_rules, lower "
        "fusion, or give a finer lambdas grid",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def _stage(progress, name):
    """The callback for one stage: ``progress.stage(name)`` when it has one
    (the CLI's counter, which keeps the stages apart), else ``progress``."""
    stage = getattr(progress, "stage", None)
    return stage(name) if callable(stage) else progress


def _validation_errors(parallel, grid, full, eligible, source, target, sample_weight, splits,
                       loss, common):
    """Stage 2: mean and std over the folds of the loss at each eligible point.

    The folds' paths are aligned with the full-data path by lambda: each
    fold solves its own warm-started path on the full path's eligible
    lambdas (refined points included), so that a fold's score at a lambda
    is the score of the rule set the full data gives at that lambda.
    """
    tasks = [(g, k) for k in range(len(splits)) for g in range(len(grid))
             if eligible[g].any()]
    fold_errs = parallel(
        delayed(fold_errors_task)(
            source, target, sample_weight,
            splits[k][0], splits[k][1], grid[g][1],
            full[g].lambdas[eligible[g]], loss=loss, **common,
        )
        for g, k in tasks
    )
    errors = [np.full(len(p), np.inf) for p in full]
    stds = [np.full(len(p), np.inf) for p in full]
    per_grid = {g: [] for g in range(len(grid))}
    for (g, _), e in zip(tasks, fold_errs):
        per_grid[g].append(e)
    for g, errs in per_grid.items():
        if errs:
            errs = np.vstack(errs)
            # a fold whose loss is undefined (NaN: an empty held-out set, or
            # ROC AUC on held-out rows of a single class, a rare class's
            # usual case) is left out of the mean rather than making every
            # point's mean NaN, which would leave the choice to the tie rule
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                errors[g][eligible[g]] = np.nanmean(errs, axis=0)
                stds[g][eligible[g]] = np.nanstd(errs, axis=0)
    return errors, stds


def _at_budget(full, eligible):
    """(grid point, path point) with the most rules among eligible points,
    then the smallest lambda (the least shrunk fit of that size)."""
    cands = [(-int(full[g].n_rules[k]), float(full[g].lambdas[k]), g, int(k))
             for g in range(len(full)) for k in np.flatnonzero(eligible[g])]
    if not cands:
        return None
    best = min(cands)
    return best[2], best[3]


def _choose(full, eligible, errors, stds, n_folds, one_se):
    """(grid point, path point) with the lowest mean loss among eligible points
    (ties: the earlier grid point, then the larger lambda); with ``one_se``,
    the fewest rules within one standard error of that loss."""
    cands = [(float(np.nan_to_num(errors[g][k], nan=np.inf)) if n_folds else 0.0, g, k)
             for g in range(len(full)) for k in np.flatnonzero(eligible[g])]
    if not cands:
        return None
    best = min(cands, key=lambda c: (c[0], c[1], c[2]))
    if not one_se or not n_folds:
        return best[1], int(best[2])
    # standard error of the mean over folds: std (ddof=0) / sqrt(K - 1)
    bar = best[0] + stds[best[1]][best[2]] / np.sqrt(max(n_folds - 1, 1))
    within = [c for c in cands if c[0] <= bar]
    pick = min(within, key=lambda c: (int(full[c[1]].n_rules[c[2]]), c[0], c[1], c[2]))
    return pick[1], int(pick[2])
