"""Regularisation paths with warm starts: :func:`fire_path` over the
penalty's ``lam`` and :func:`group_l0_path` over group-L0's ``lam0``.

Each point starts from the previous point's weights and intercept; the path
starts at the closed-form top (lambda_max, where w = 0 is a solution; see
:func:`~firecy.solver.lambda_max`) and can stop early at a rule budget.
Blocks that no ``lam`` penalises (:class:`~firecy.penalties.Unpenalised`,
named by the penalty's ``unpenalised_blocks``) move the top: the path
starts where they are fitted and every other block is at zero
(:func:`unpenalised_start`).
"""
import copy
import numbers

import numpy as np

from firecy.solver._problem import Problem, check_penalty, check_solver_params
from firecy.solver._results import PathResult, SolveResult

__all__ = ["fire_path", "group_l0_path"]


def fire_path(design, y, penalty, *, datafit="quadratic", offset=None, block_ptr=None,
              sample_weight=None, lambdas=None, n_lambdas=50, eps=1e-3, max_rules=None,
              fit_intercept=True, tol=1e-6, max_iter=None, progress=None,
              strategy="working_set", refine_path=False, n_jobs=None):
    """The regularisation path over the penalty's ``lam``, with warm starts.

    Parameters
    ----------
    design, y, datafit, offset, block_ptr, sample_weight, fit_intercept, tol, max_iter
        As in :func:`solve` (``max_iter`` applies to each point).
    penalty : Penalty
        A template: its ``lam`` is replaced by each grid value; its other
        parameters (gamma, fusion ratio, ...) stay fixed. It is not modified.
    lambdas : array-like, optional
        The grid (sorted decreasing). Default: ``n_lambdas`` values spaced
        log-uniformly from lambda_max down to ``eps * lambda_max``.
    n_lambdas : int, default=50
    eps : float, default=1e-3
    max_rules : int, optional
        Stop after the first point with more than ``max_rules`` nonzero rules
        (that point is included).
    progress : callable, optional
        Called as ``progress(k, n_points, result)`` after each point.
    strategy : {"working_set", "greedy"}
        See :func:`solve`.
    refine_path : bool, default=False
        Where the rule count jumps by more than one between neighbouring
        points (below ``max_rules``), insert points by bisection in log
        lambda, warm-started, until every count is visited or the jump is
        narrower than 1e-3 in log lambda (see ``docs/selection.rst``).
    n_jobs : int or None, default=None
        Threads for the refinement: the bisections of different jumps are
        independent and run on clones of the problem, with bitwise the
        serial result. ``None``: the cores this process may use, 1 inside a
        joblib worker, ``k`` inside ``joblib.parallel_config(n_jobs=k)``
        (:func:`firecy._threads.effective_n_jobs`).

    Returns
    -------
    PathResult

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.penalties import L1
    >>> from firecy.solver import fire_path
    >>> M = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    >>> path = fire_path(M, [0, 1, 1, 1], L1(), block_ptr=[0, 2], datafit="logistic",
    ...                  n_lambdas=5)
    >>> path.n_rules.tolist()
    [0, 2, 2, 2, 2]
    """
    problem = Problem(design, y, sample_weight, fit_intercept, block_ptr, datafit, offset)
    template = check_penalty(penalty)
    max_updates = check_solver_params(tol, max_iter, problem.design.n_blocks)
    start = unpenalised_start(problem, template, tol, max_updates, strategy)
    lam_max, w_top = start if start is not None else (problem.lambda_max(template), None)
    lambdas = _check_grid(lambdas, n_lambdas, eps, lam_max, "lambda")
    path = _warm_path(problem, template, "lam", lambdas, lam_max, max_rules, tol,
                      max_updates, progress, strategy, w_top=w_top)
    if refine_path:
        from firecy.solver._refine import refine_jumps

        path = refine_jumps(problem, template, path, max_rules, tol, max_updates,
                            progress=progress, strategy=strategy, n_jobs=n_jobs)
    return path


def group_l0_path(design, y, penalty, *, datafit="quadratic", offset=None, block_ptr=None,
                  sample_weight=None, lam0s=None, n_lam0s=20, eps=1e-3, max_rules=None,
                  fit_intercept=True, tol=1e-6, max_iter=None, progress=None):
    """The path over group-L0's ``lam0``, inner penalty fixed, with warm starts.

    Parameters
    ----------
    penalty : GroupL0
        Its inner penalty (and ``lam``) stay fixed; ``lam0`` runs over the grid.
    lam0s : array-like, optional
        The grid; default ``n_lam0s`` values from lam0_max (the largest
        decrease a block update of one tree achieves from w = 0, above which
        no tree is kept; for the squared loss on trees that is the exact
        decrease) down to ``eps * lam0_max``.
    n_lam0s : int, default=20
        Number of grid points when ``lam0s`` is not given.
    design, y, datafit, offset, block_ptr, sample_weight, eps, max_rules, fit_intercept, tol, max_iter, progress
        As in :func:`fire_path`.

    Returns
    -------
    PathResult
        With ``lambdas`` holding the lam0 grid and ``lambda_max`` lam0_max.

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.penalties import L1, GroupL0
    >>> from firecy.solver import group_l0_path
    >>> M = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    >>> path = group_l0_path(M, [0.0, 1.0, 2.0, 3.0], GroupL0(L1(0.0), 1.0), block_ptr=[0, 1, 2],
    ...                      n_lam0s=3)
    >>> path.n_rules.tolist()
    [0, 2, 2]
    """
    from firecy.penalties import GroupL0

    if not isinstance(penalty, GroupL0):
        raise TypeError(f"group_l0_path needs a GroupL0 penalty, got {type(penalty).__name__}")
    problem = Problem(design, y, sample_weight, fit_intercept, block_ptr, datafit, offset)
    template = check_penalty(penalty)
    max_updates = check_solver_params(tol, max_iter, problem.design.n_blocks)
    top = problem.per_block(template.lam0_max_of)
    grid = _check_grid(lam0s, n_lam0s, eps, top, "lam0")
    return _warm_path(problem, template, "lam0", grid, top, max_rules, tol, max_updates,
                      progress, "working_set")


def _check_grid(grid, n_points, eps, top, name):
    if grid is None:
        if not isinstance(n_points, numbers.Integral) or n_points < 1:
            raise ValueError(f"n_{name}s must be a positive integer, got {n_points!r}")
        if not 0 < eps < 1:
            raise ValueError(f"eps must be in (0, 1), got {eps!r}")
        if not np.isfinite(top):
            raise ValueError(
                f"{name}_max is infinite for this penalty (e.g. fusion alone leaves a "
                f"tree's level unpenalised): pass the grid explicitly")
        return top * np.logspace(0, np.log10(eps), n_points)
    grid = np.asarray(grid, dtype=np.float64).ravel()
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid < 0):
        raise ValueError(f"{name}s must be a non-empty array of non-negative numbers")
    return np.sort(grid)[::-1]


def unpenalised_start(problem, template, tol, max_updates, strategy="working_set"):
    """The path's top when some blocks are unpenalised, and its weights.

    With blocks that no ``lam`` penalises (the penalty's
    ``unpenalised_blocks(block_ptr)``; glmnet's ``penalty.factor = 0``), the
    top of the path is not ``w = 0``: it is the fit of those blocks alone
    (and the intercept), and the path's lambda_max is the other blocks'
    lambda_max at that fit, computed as at ``w = 0`` with the fitted blocks'
    margin as an offset (the intercept's optimum is the same either way).

    Returns
    -------
    None when every block is penalised, else ``(lambda_max, w)``: ``w`` the
    full weight vector at the top (the other blocks at zero); lambda_max is
    0 when no block is penalised (every ``lam`` gives that fit).
    """
    design = problem.design
    split = unpenalised_split(template, design)
    if split is None:
        return None
    free, rest = split
    sub_design, cols = design.subset_blocks(free)
    sub = problem.subproblem(sub_design)
    w_free = np.zeros(sub_design.n_columns)
    sub.solve(restricted(template, free, cols), w_free, tol, max_updates, strategy=strategy)
    w = np.zeros(design.n_columns)
    w[cols] = w_free
    if rest.size == 0:
        return 0.0, w
    rest_design, rest_cols = design.subset_blocks(rest)
    offset = problem.offset + sub_design.matvec(w_free)
    at_fit = Problem(rest_design, problem.y, problem.s, problem.fit_intercept,
                     datafit=problem.datafit, offset=offset)
    return at_fit.lambda_max(restricted(template, rest, rest_cols)), w


def unpenalised_split(penalty, design):
    """``(unpenalised blocks, the others)`` of ``design`` under ``penalty``
    (its ``unpenalised_blocks``), or None when every block is penalised."""
    find = getattr(penalty, "unpenalised_blocks", None)
    free = np.unique(np.asarray([] if find is None else find(design.block_ptr), dtype=np.intp))
    if free.size == 0:
        return None
    return free, np.setdiff1d(np.arange(design.n_blocks), free)


def restricted(penalty, blocks, columns=None):
    """``penalty`` on the design of ``blocks`` only, whose columns are
    ``columns`` of the full design (``restrict_to(blocks, columns)``: a
    penalty with per-column data, such as SignConstrained's bounds; else
    ``restrict_blocks(blocks)``)."""
    to = getattr(penalty, "restrict_to", None)
    if to is not None and columns is not None:
        return to(blocks, columns)
    restrict = getattr(penalty, "restrict_blocks", None)
    return penalty if restrict is None else restrict(blocks)


def _warm_path(problem, template, param, grid, top, max_rules, tol, max_updates,
               progress, strategy, w_top=None):
    """Solve along ``grid`` (decreasing) for the penalty attribute ``param``,
    each point warm-started from the previous one (``w_top``: the solution
    at and above ``top``, default zero)."""
    if max_rules is not None and (not isinstance(max_rules, numbers.Integral) or max_rules < 1):
        raise ValueError(f"max_rules must be a positive integer, got {max_rules!r}")
    pen = copy.deepcopy(template)
    w = np.zeros(problem.design.n_columns)
    # the coefficients go straight into the result: a list of copies stacked
    # at the end held them twice (1.4 GB for 50 points of 1.7M rules)
    coefs = np.empty((len(grid), w.shape[0]))
    rows = []
    for k, value in enumerate(grid):
        setattr(pen, param, float(value))
        if value >= top:
            # the top's solution by definition (w = 0, or the unpenalised
            # blocks' fit): no rounding noise
            w[:] = 0.0 if w_top is None else w_top
            obj, intercept = problem.engine.objective_at(pen, w)
            res = SolveResult(coef=w, intercept=intercept, objective=obj, n_iter=0,
                              converged=True)
        else:
            res = problem.solve(pen, w, tol, max_updates, strategy=strategy)
        coefs[k] = w
        rows.append((value, res.intercept, res.objective, res.n_rules, res.n_iter,
                     res.converged))
        if progress is not None:
            progress(k, len(grid), res)
        if max_rules is not None and res.n_rules > max_rules:
            break
    cols = list(zip(*rows))
    return PathResult(
        lambdas=np.array(cols[0]),
        # stopped early: copy, so that the result does not pin the whole block
        coefs=coefs if len(rows) == len(grid) else coefs[: len(rows)].copy(),
        intercepts=np.array(cols[1]),
        objectives=np.array(cols[2]),
        n_rules=np.array(cols[3], dtype=np.intp),
        n_iter=np.array(cols[4], dtype=np.intp),
        converged=np.array(cols[5], dtype=bool),
        lambda_max=float(top),
    )
