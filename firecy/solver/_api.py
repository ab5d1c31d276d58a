"""Solve the FIRE problem for one penalty: :func:`solve` and :func:`lambda_max`.

The objective is stated in docs/objective.rst and docs/datafits.rst:

    F(w, b) = 1 / (sum_i s_i) * sum_i s_i loss(y_i, offset_i + b + (M w)_i)
              + sum_t P(w_t)

With the squared loss (the default datafit), unit weights and no offset it is
scikit-learn's Lasso objective, ``1 / (2 n) ||y - b - M w||^2 + P(w)``, so
``L1(lam)`` solves ``Lasso(alpha=lam)``; with the logistic loss and
``L1(lam)`` it is ``LogisticRegression(l1_ratio=1, C=1 / (sum s * lam))``.
"""
import numpy as np

from firecy.solver._problem import (
    Problem,
    check_penalty,
    check_solver_params,
    initial_coef,
)

__all__ = ["solve", "lambda_max"]


def solve(design, y, penalty, *, datafit="quadratic", offset=None, block_ptr=None,
          sample_weight=None, fit_intercept=True, coef_init=None, tol=1e-6, max_iter=None,
          record_objective=False, strategy="working_set", local_search=False):
    """Minimise the FIRE objective for one penalty by greedy block CD.

    Parameters
    ----------
    design : BlockDesign, ndarray or sparse matrix of shape (n_samples, n_columns)
        The rule design M; a matrix needs ``block_ptr``.
    y : array-like of shape (n_samples,)
        Targets (labels 0 and 1 for the logistic datafit).
    penalty : Penalty or object with the Python penalty protocol
        E.g. ``L1(lam)``, ``MCP(lam, gamma)``.
    datafit : str, Datafit or object, default="quadratic"
        The loss: "quadratic" (weighted squared loss), "logistic", another
        registered name, a :class:`~firecy.datafits.Datafit`, or an object
        with the Python datafit protocol (see
        :class:`~firecy.datafits.PythonDatafit`).
    offset : array-like of shape (n_samples,), optional
        A per-row baseline added to the prediction, ``eta = offset + b + M w``
        (the ensemble's baseline c(x)); 0 by default.
    block_ptr : array-like of int, optional
        Block boundaries when ``design`` is a matrix.
    sample_weight : array-like of shape (n_samples,), optional
    fit_intercept : bool, default=True
    coef_init : array-like of shape (n_columns,), optional
        Warm start.
    tol : float, default=1e-6
        Stop when the largest block direction norm and the intercept's
        gradient are below ``tol`` times the lasso's lambda_max and a full
        sweep of block updates lowers the objective by less than ``tol``
        relative.
    max_iter : int, optional
        Maximum number of block updates (default ``1000 * n_blocks``).
        Reaching it raises a ``ConvergenceWarning``.
    record_objective : bool, default=False
        Keep the objective after every accepted step (``objective_trace``).
    strategy : {"working_set", "greedy"}, default="working_set"
        ``"greedy"``: every iteration scores all blocks and updates the best
        one, the full gradient kept up to date incrementally (Liu & Mazumder,
        FIRE, KDD 2023, Algorithm 1). ``"working_set"``: blocks are chosen
        greedily by the same score into a working set, solved by cyclic block
        updates with Anderson extrapolation and Newton steps on the support;
        faster when many rules are kept.
    local_search : bool, default=False
        With a :class:`~firecy.penalties.GroupL0` penalty: after convergence,
        switch single trees on or off (re-solving the weights of the other
        trees) while that lowers the objective. Without it the solution is
        block-wise optimal (no single block update lowers F); with it, no
        single tree switch does either. Costs one sub-solve per tree per pass.

    Returns
    -------
    SolveResult

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.penalties import L1
    >>> from firecy.solver import solve
    >>> M = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    >>> res = solve(M, [0, 1, 1, 1], L1(0.01), block_ptr=[0, 2], datafit="logistic")
    >>> res.n_rules
    2
    """
    problem = Problem(design, y, sample_weight, fit_intercept, block_ptr, datafit, offset)
    penalty = check_penalty(penalty)
    max_updates = check_solver_params(tol, max_iter, problem.design.n_blocks)
    w = initial_coef(coef_init, problem.design.n_columns)
    res = problem.solve(penalty, w, tol, max_updates, record_objective, strategy=strategy)
    if local_search:
        res = _tree_switch_search(problem, penalty, res, tol, max_updates)
    return res


def _tree_switch_search(problem, penalty, res, tol, max_updates, max_passes=20):
    """Local search over single tree switches for group-L0 (Liu & Mazumder,
    FAST supplement, section D)."""
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
        from firecy.solver._path import restricted

        sub, cols = design.subset_blocks(trees)
        sub_res = problem.subproblem(sub).solve(
            restricted(penalty, np.asarray(trees), cols), np.ascontiguousarray(start[cols]),
            tol, max_updates, warn=False)
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


def lambda_max(design, y, penalty, *, datafit="quadratic", offset=None, block_ptr=None,
               sample_weight=None, fit_intercept=True):
    """The smallest penalty ``lam`` for which ``w = 0`` is a solution.

    Computed in closed form from the datafit's gradient at ``w = 0`` with the
    optimal intercept (for the logistic loss the intercept is solved to
    convergence first).

    Parameters
    ----------
    design, y, penalty, datafit, offset, block_ptr, sample_weight, fit_intercept
        As in :func:`solve` (the penalty's own ``lam`` is not used).

    Returns
    -------
    float

    Examples
    --------
    For the lasso it is the largest ``|M^T (y - mean(y))| / n``:

    >>> import numpy as np
    >>> from firecy.penalties import L1
    >>> from firecy.solver import lambda_max, solve
    >>> M = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    >>> y = [0.0, 1.0, 2.0, 3.0]
    >>> float(lambda_max(M, y, L1(), block_ptr=[0, 2]))
    0.5

    At ``lam = 0.5`` every weight is zero; just below, the fit moves off the
    mean (with the intercept, the tree's two leaves are linearly dependent,
    so which leaf carries the weight is not unique; the fitted values are):

    >>> solve(M, y, L1(0.5), block_ptr=[0, 2]).n_rules
    0
    >>> res = solve(M, y, L1(0.45), block_ptr=[0, 2])
    >>> (M @ res.coef + res.intercept).round(6).tolist()
    [1.4, 1.4, 1.6, 1.6]
    """
    problem = Problem(design, y, sample_weight, fit_intercept, block_ptr, datafit, offset)
    return problem.lambda_max(check_penalty(penalty))
