"""Solve the FIRE problem for one lambda, or along a warm-started path.

The objective, the same everywhere in firecy (tests, path, benchmarks):

    F(w, b) = 1 / (2 sum_i s_i) * sum_i s_i (y_i - b - (M w)_i)^2 + sum_t P(w_t)

with s the sample weights (all ones by default), b an unpenalised intercept
(0 when ``fit_intercept=False``) and P the penalty, applied block by block.
With unit weights the datafit is scikit-learn's Lasso datafit,
``1 / (2 n) ||y - b - M w||^2``, so ``L1(lam)`` solves ``Lasso(alpha=lam)``.
"""
import copy
import numbers
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from firecy.penalties import as_penalty
from firecy.solver._design import BlockDesign
from firecy.solver._engine import GreedyBlockCD

__all__ = ["solve", "fire_path", "group_l0_path", "lambda_max", "SolveResult", "PathResult"]


@dataclass
class SolveResult:
    """The solution of one solve.

    Attributes
    ----------
    coef : ndarray of shape (n_columns,)
        Rule weights w.
    intercept : float
    objective : float
        F(coef, intercept), the documented objective.
    n_iter : int
        Number of block updates (a convergence sweep counts one per block).
    converged : bool
    objective_trace : ndarray
        F after each block update (only with ``record_objective=True``).
    """

    coef: np.ndarray
    intercept: float
    objective: float
    n_iter: int
    converged: bool
    objective_trace: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def n_rules(self):
        """Number of nonzero rule weights."""
        return int(np.count_nonzero(self.coef))


@dataclass
class PathResult:
    """A regularisation path, one entry per lambda (largest first).

    Attributes
    ----------
    lambdas : ndarray of shape (n_points,)
    coefs : ndarray of shape (n_points, n_columns)
    intercepts, objectives : ndarray of shape (n_points,)
    n_rules, n_iter : ndarray of int, shape (n_points,)
    converged : ndarray of bool, shape (n_points,)
    lambda_max : float
        The smallest lambda at which w = 0 is stationary.
    """

    lambdas: np.ndarray
    coefs: np.ndarray
    intercepts: np.ndarray
    objectives: np.ndarray
    n_rules: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    lambda_max: float

    def __len__(self):
        return len(self.lambdas)


def _check_y_weights(y, sample_weight, n_samples):
    y = np.asarray(y)
    if y.dtype == object or not np.issubdtype(y.dtype, np.number):
        raise TypeError(f"y must be numeric, got dtype {y.dtype}")
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.ndim == 2 and y.shape[1] == 1:
        y = np.ascontiguousarray(y[:, 0])
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(
            f"y has {y.shape[0]} samples but the design has {n_samples} rows"
        )
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")
    if sample_weight is None:
        s = np.full(n_samples, 1.0 / n_samples)
    else:
        s = np.asarray(sample_weight, dtype=np.float64)
        if s.ndim != 1 or s.shape[0] != n_samples:
            raise ValueError(
                f"sample_weight has shape {s.shape}, expected ({n_samples},)"
            )
        if not np.all(np.isfinite(s)):
            raise ValueError("sample_weight contains NaN or infinity")
        if np.any(s < 0):
            raise ValueError("sample_weight must be non-negative")
        total = s.sum()
        if total <= 0:
            raise ValueError("sample_weight sums to zero")
        s = np.ascontiguousarray(s / total)
    return y, s


def _check_penalty(penalty):
    penalty = as_penalty(penalty)
    if not (np.isfinite(penalty.lam) and penalty.lam >= 0):
        raise ValueError(f"the penalty's lambda must be non-negative and finite, got {penalty.lam!r}")
    return penalty


def _check_solver_params(tol, max_iter, n_blocks):
    if not isinstance(tol, numbers.Real) or not tol > 0 or not np.isfinite(tol):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    if max_iter is None:
        return 1000 * n_blocks
    if not isinstance(max_iter, numbers.Integral) or isinstance(max_iter, bool) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    return int(max_iter)


class _Problem:
    """Design + data + engine, set up once and reused across solves."""

    def __init__(self, design, y, sample_weight, fit_intercept, block_ptr=None):
        self.design = BlockDesign.coerce(design, block_ptr)
        self.y, self.s = _check_y_weights(y, sample_weight, self.design.n_samples)
        self.fit_intercept = bool(fit_intercept)
        column_sums, curv = self.design.column_stats(self.s)
        lipschitz = self.design.block_lipschitz(self.s, curv)
        # exact minimisation on diagonal blocks (step = own curvature),
        # one prox-gradient step of length 1 / L_t otherwise
        per_col_L = np.repeat(lipschitz * (1 + 1e-12), np.diff(self.design.block_ptr))
        diag_cols = np.repeat(self.design.block_is_diagonal, np.diff(self.design.block_ptr))
        self.step = np.ascontiguousarray(np.where(diag_cols, curv, per_col_L))
        self.engine = GreedyBlockCD(self.design, self.y, self.s, column_sums, curv,
                                    self.step, self.fit_intercept)
        self.grad0 = self.engine.gradient_at_zero()
        # the scale of the direction vector: the lasso's lambda_max, floored
        # so that a constant target (a gradient of pure rounding noise) does
        # not ask for an unreachable tolerance; |grad_j| <= sqrt(a_j) ||y||_s
        floor = 1e-10 * np.sqrt(np.max(curv) * np.sum(self.s * self.y ** 2))
        self.score_scale = max(float(np.max(np.abs(self.grad0))), floor) or 1.0

    def lambda_max(self, penalty):
        curv = self.engine.curvature
        ptr = self.design.block_ptr
        return max(
            penalty.lambda_max_of(self.grad0[ptr[t]:ptr[t + 1]], curv[ptr[t]:ptr[t + 1]])
            for t in range(self.design.n_blocks)
        )

    def solve(self, penalty, w, tol, max_updates, record_objective=False, warn=True,
              strategy="working_set"):
        # one BLAS thread: the Newton steps factorise small dense matrices,
        # where OpenBLAS threads on a busy machine cost 100x, and a fixed
        # summation order keeps results identical on any thread count
        with threadpool_limits(limits=1, user_api="blas"):
            out = self.engine.solve(
                penalty, w, tol, max_updates, self.score_scale, record_objective, warn,
                strategy)
        return SolveResult(
            coef=w,
            intercept=out["intercept"],
            objective=out["objective"],
            n_iter=out["n_updates"],
            converged=out["converged"],
            objective_trace=out["trace"],
        )


def solve(design, y, penalty, *, block_ptr=None, sample_weight=None, fit_intercept=True,
          coef_init=None, tol=1e-6, max_iter=None, record_objective=False,
          strategy="working_set", local_search=False):
    """Minimise the FIRE objective for one penalty by greedy block CD.

    Parameters
    ----------
    design : BlockDesign, ndarray or sparse matrix of shape (n_samples, n_columns)
        The rule design M; a matrix needs ``block_ptr``.
    y : array-like of shape (n_samples,)
    penalty : Penalty or object with the Python penalty protocol
        E.g. ``L1(lam)``, ``MCP(lam, gamma)``.
    block_ptr : array-like of int, optional
        Block boundaries when ``design`` is a matrix.
    sample_weight : array-like of shape (n_samples,), optional
    fit_intercept : bool, default=True
    coef_init : array-like of shape (n_columns,), optional
        Warm start.
    tol : float, default=1e-6
        Stop when the largest block direction norm is below ``tol`` times the
        lasso's lambda_max and a full sweep of block updates lowers the
        objective by less than ``tol`` relative.
    max_iter : int, optional
        Maximum number of block updates (default ``1000 * n_blocks``).
        Reaching it raises a ``ConvergenceWarning``.
    record_objective : bool, default=False
        Keep the objective after every block update (``objective_trace``).
    strategy : {"working_set", "greedy"}, default="working_set"
        ``"greedy"``: every iteration scores all blocks and updates the best
        one, the full gradient kept up to date incrementally (papers/000,
        Algorithm 1). ``"working_set"``: blocks are chosen greedily by the
        same score into a working set, solved by cyclic exact block updates
        with Anderson extrapolation; faster when many rules are kept.
    local_search : bool, default=False
        With a :class:`~firecy.penalties.GroupL0` penalty: after convergence,
        switch single trees on or off (re-solving the weights of the other
        trees) while that lowers the objective. Without it the solution is
        block-wise optimal (no single block update lowers F); with it, no
        single tree switch does either. Costs one sub-solve per tree per pass.

    Returns
    -------
    SolveResult
    """
    problem = _Problem(design, y, sample_weight, fit_intercept, block_ptr)
    penalty = _check_penalty(penalty)
    max_updates = _check_solver_params(tol, max_iter, problem.design.n_blocks)
    w = _initial_coef(coef_init, problem.design.n_columns)
    res = problem.solve(penalty, w, tol, max_updates, record_objective, strategy=strategy)
    if local_search:
        res = _tree_switch_search(problem, penalty, res, tol, max_updates)
    return res


def _tree_switch_search(problem, penalty, res, tol, max_updates, max_passes=20):
    """Local search over single tree switches for group-L0 (papers/003 D)."""
    from firecy.penalties import GroupL0

    if not isinstance(penalty, GroupL0):
        raise ValueError("local_search applies to GroupL0 penalties only")
    design, ptr = problem.design, problem.design.block_ptr

    def trees_of(coef):
        return [t for t in range(design.n_blocks) if np.any(coef[ptr[t]:ptr[t + 1]] != 0)]

    def solve_on(trees, start):
        if not trees:
            coef = np.zeros(design.n_columns)
            obj, b = problem.engine.objective_at(penalty, coef)
            return coef, b, obj
        sub, cols = design.subset_blocks(trees)
        sub_problem = _Problem(sub, problem.y, problem.s, problem.fit_intercept)
        sub_res = sub_problem.solve(penalty, np.ascontiguousarray(start[cols]), tol,
                                    max_updates, warn=False)
        coef = np.zeros(design.n_columns)
        coef[cols] = sub_res.coef
        return coef, sub_res.intercept, sub_res.objective

    best = (res.coef.copy(), res.intercept, res.objective)
    for _ in range(max_passes):
        improved = False
        for t in range(design.n_blocks):
            on = trees_of(best[0])
            cand = solve_on(sorted(set(on) ^ {t}), best[0])
            if cand[2] < best[2] - tol * abs(best[2]):
                best, improved = cand, True
        if not improved:
            break
    res.coef[:] = best[0]
    res.intercept, res.objective = best[1], best[2]
    return res


def _initial_coef(coef_init, n_columns):
    if coef_init is None:
        return np.zeros(n_columns)
    w = np.array(coef_init, dtype=np.float64)
    if w.shape != (n_columns,):
        raise ValueError(f"coef_init has shape {w.shape}, expected ({n_columns},)")
    if not np.all(np.isfinite(w)):
        raise ValueError("coef_init contains NaN or infinity")
    return w


def lambda_max(design, y, penalty, *, block_ptr=None, sample_weight=None, fit_intercept=True):
    """The smallest penalty ``lam`` for which ``w = 0`` is a solution."""
    problem = _Problem(design, y, sample_weight, fit_intercept, block_ptr)
    return problem.lambda_max(_check_penalty(penalty))


def fire_path(design, y, penalty, *, block_ptr=None, sample_weight=None, lambdas=None,
              n_lambdas=50, eps=1e-3, max_rules=None, fit_intercept=True, tol=1e-6,
              max_iter=None, progress=None, strategy="working_set"):
    """The regularisation path over the penalty's ``lam``, with warm starts.

    Parameters
    ----------
    design, y, block_ptr, sample_weight, fit_intercept, tol, max_iter
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

    Returns
    -------
    PathResult
    """
    problem = _Problem(design, y, sample_weight, fit_intercept, block_ptr)
    template = _check_penalty(penalty)
    max_updates = _check_solver_params(tol, max_iter, problem.design.n_blocks)
    lam_max = problem.lambda_max(template)
    lambdas = _check_grid(lambdas, n_lambdas, eps, lam_max, "lambda")
    return _warm_path(problem, template, "lam", lambdas, lam_max, max_rules, tol,
                      max_updates, progress, strategy)


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


def _warm_path(problem, template, param, grid, top, max_rules, tol, max_updates,
               progress, strategy):
    """Solve along ``grid`` (decreasing) for the penalty attribute ``param``,
    each point warm-started from the previous one."""
    if max_rules is not None and (not isinstance(max_rules, numbers.Integral) or max_rules < 1):
        raise ValueError(f"max_rules must be a positive integer, got {max_rules!r}")
    pen = copy.deepcopy(template)
    w = np.zeros(problem.design.n_columns)
    rows = []
    for k, value in enumerate(grid):
        setattr(pen, param, float(value))
        if value >= top:
            # w = 0 is a solution by definition of the path's top: no rounding noise
            w[:] = 0.0
            obj, intercept = problem.engine.objective_at(pen, w)
            res = SolveResult(coef=w, intercept=intercept, objective=obj, n_iter=0,
                              converged=True)
        else:
            res = problem.solve(pen, w, tol, max_updates, strategy=strategy)
        rows.append((value, w.copy(), res.intercept, res.objective, res.n_rules,
                     res.n_iter, res.converged))
        if progress is not None:
            progress(k, len(grid), res)
        if max_rules is not None and res.n_rules > max_rules:
            break
    cols = list(zip(*rows))
    return PathResult(
        lambdas=np.array(cols[0]),
        coefs=np.array(cols[1]),
        intercepts=np.array(cols[2]),
        objectives=np.array(cols[3]),
        n_rules=np.array(cols[4], dtype=np.intp),
        n_iter=np.array(cols[5], dtype=np.intp),
        converged=np.array(cols[6], dtype=bool),
        lambda_max=float(top),
    )


def group_l0_path(design, y, penalty, *, block_ptr=None, sample_weight=None, lam0s=None,
                  n_lam0s=20, eps=1e-3, max_rules=None, fit_intercept=True, tol=1e-6,
                  max_iter=None, progress=None):
    """The path over group-L0's ``lam0``, inner penalty fixed, with warm starts.

    Parameters
    ----------
    penalty : GroupL0
        Its inner penalty (and ``lam``) stay fixed; ``lam0`` runs over the grid.
    lam0s : array-like, optional
        The grid; default ``n_lam0s`` values from lam0_max (the largest
        decrease any tree achieves from w = 0, above which no tree is kept;
        exact for diagonal blocks such as trees) down to ``eps * lam0_max``.
    design, y, block_ptr, sample_weight, eps, max_rules, fit_intercept, tol, max_iter, progress
        As in :func:`fire_path`.

    Returns
    -------
    PathResult
        With ``lambdas`` holding the lam0 grid and ``lambda_max`` lam0_max.
    """
    from firecy.penalties import GroupL0

    if not isinstance(penalty, GroupL0):
        raise TypeError(f"group_l0_path needs a GroupL0 penalty, got {type(penalty).__name__}")
    problem = _Problem(design, y, sample_weight, fit_intercept, block_ptr)
    template = _check_penalty(penalty)
    max_updates = _check_solver_params(tol, max_iter, problem.design.n_blocks)
    curv = problem.engine.curvature
    ptr = problem.design.block_ptr
    top = max(template.lam0_max_of(problem.grad0[ptr[t]:ptr[t + 1]], curv[ptr[t]:ptr[t + 1]])
              for t in range(problem.design.n_blocks))
    grid = _check_grid(lam0s, n_lam0s, eps, top, "lam0")
    return _warm_path(problem, template, "lam0", grid, top, max_rules, tol, max_updates,
                      progress, "working_set")
