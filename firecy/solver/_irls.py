"""The proximal-Newton (IRLS) outer loop for losses the compiled engine does
not carry yet: :func:`irls_solve` and :func:`irls_path` (docs/datafits.rst,
"Poisson and Cox").

At the raw prediction ``eta`` the loss's second-order expansion,

    f(eta + d) ~ f(eta) + g.d + 1/2 sum_i q_i d_i^2,

is a weighted least-squares problem with weights ``q`` and working response
``z = eta - g / q``. Scaling the target, offset and design by
``k = sqrt(sum q)`` makes the engine's squared datafit (normalised by the
sum of its weights) equal to that expansion, so the penalty goes to the
engine unchanged, whatever it is (lam, gamma, fusion, group-L0). The
compiled engine solves it (warm-started); a backtracking line search on the
true penalised objective then makes every outer step lower it.

Which ``q``:

* a penalty that does not depend on the curvature (L1, L1 + fusion, and
  group-L0 on top of them): the Hessian diagonal at ``eta`` (Newton);
* one that does (MCP, whose concavity is scaled by each coordinate's
  curvature): a fixed reference, the Hessian diagonal at the null model
  (``w = 0``, optimal intercept). MCP's ``a_j`` is then
  ``sum_i q_i M_ij^2``, the same at every outer step, so the objective the
  steps lower is one fixed function, and a fixed point of the step is a
  stationary point of it (the gradient ``g`` is exact). Newton with the
  current Hessian would hand the engine another MCP at every step. The
  multiplier ``rho`` of the reference curvature follows the loss's secant
  curvature along the previous step, and an accepted step is extrapolated
  (doubled while the true objective keeps falling): one scalar cannot fit
  every direction, and a damping that fits the stiffest one leaves the flat
  ones converging linearly.

When the compiled contract carries these losses (ABI 3), the same public
estimators switch to it; nothing here is public API.
"""
import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from firecy._warn import user_stacklevel
from firecy.solver._api import solve
from firecy.solver._design import BlockDesign
from firecy.solver._results import PathResult, SolveResult

__all__ = ["IRLSProblem", "irls_solve", "irls_path", "irls_refine"]

# the largest multiple of an accepted reference step tried (doubling)
_EXTRAPOLATE = 16.0
# MCP: the Newton steps (an approximate penalty) hand over to the reference
# steps once one lowers the objective by less than this (relative); polishing
# a fixed point that is not the true one is wasted work (measured: about half
# the outer steps of a default fit, benchmarks/counts_survival/RESULTS.md)
_NEWTON_SWITCH = 1e-4


def _curvature_free(penalty):
    """Whether the penalty's value ignores the coordinate curvature."""
    from firecy.penalties import BlockwisePenalty, GroupL0, L1, L1Fusion, SignConstrained

    if isinstance(penalty, (GroupL0, SignConstrained)):
        return _curvature_free(penalty.inner)
    if isinstance(penalty, BlockwisePenalty):
        return _curvature_free(penalty.rules) and _curvature_free(penalty.linear)
    return isinstance(penalty, (L1, L1Fusion))


def _scaled_design(design, k):
    """The design with every value multiplied by ``k`` (structure shared)."""
    import copy

    out = copy.copy(design)
    if design.n_tree_blocks:
        out.leaf_values = design.leaf_values * k
    if not design.is_tree:   # the general part (general and mixed layouts)
        out.col_vals = design.col_vals * k
        out.row_vals = design.row_vals * k
    return out


class IRLSProblem:
    """A loss, a design and an offset: what the outer loop needs, computed once.

    Parameters
    ----------
    design : BlockDesign
    loss : PoissonLoss or CoxLoss
        An object with ``value``, ``gradient``, ``hessian`` in ``eta``
        (normalised by the sum of the sample weights) and ``has_intercept``.
    offset : ndarray of shape (n_samples,)
    fit_intercept : bool
    """

    def __init__(self, design, loss, offset, fit_intercept=True):
        self.design = design
        self.loss = loss
        self.offset = np.asarray(offset, dtype=np.float64)
        self.fit_intercept = bool(fit_intercept) and loss.has_intercept
        self.csc = design.tocsc()
        self.b0 = loss.null_intercept(self.offset) if self.fit_intercept else 0.0
        eta0 = self.offset + self.b0
        self.grad0 = np.asarray(self.csc.T @ loss.gradient(eta0))
        # MCP's reference curvature: the Hessian at the null model
        self.h_ref = self._floor(loss.hessian(eta0), loss.gradient(eta0))
        self.curvature = np.asarray(self.csc.multiply(self.csc).T @ self.h_ref)
        ptr = design.block_ptr
        self.block_starts = np.asarray(ptr[:-1], dtype=np.intp)
        # each block's penalty arguments, made once (a penalty call per block
        # is the outer loop's main Python cost)
        self.blocks = [(int(ptr[t]), int(ptr[t + 1]),
                        dict(curvature=self.curvature[ptr[t]:ptr[t + 1]],
                             columns=np.arange(ptr[t], ptr[t + 1]), block=t))
                       for t in range(design.n_blocks)]
        self.all_columns = dict(curvature=self.curvature,
                                columns=np.arange(design.n_columns), block=0)

    @staticmethod
    def _floor(q, g):
        """Weights for the quadratic model: a row whose curvature vanishes but
        whose gradient does not (a Cox row alone in its risk set) would make
        the model linear and unbounded; floor it at a small fraction of the
        largest curvature."""
        top = float(q.max()) if q.size else 0.0
        if top <= 0:
            return q
        return np.where((q <= 1e-8 * top) & (g != 0), 1e-8 * top, q)

    def eta(self, coef, intercept):
        return self.offset + intercept + np.asarray(self.csc @ coef)

    def _nonzero_blocks(self, coef):
        counts = np.add.reduceat(coef != 0, self.block_starts)
        return [self.blocks[t] for t in np.flatnonzero(counts)]

    def penalty_value(self, penalty, coef):
        """``P(w)``: a block of zeros costs nothing, so only nonzero blocks are asked."""
        return float(sum(penalty.value_of(coef[lo:hi], **args)
                         for lo, hi, args in self._nonzero_blocks(coef)))

    def objective(self, penalty, coef, intercept):
        return self.loss.value(self.eta(coef, intercept)) + self.penalty_value(penalty, coef)

    def lambda_max(self, penalty):
        """The smallest ``lam`` with ``w = 0`` stationary (max over blocks)."""
        return max(penalty.lambda_max_of(self.grad0[lo:hi], **args)
                   for lo, hi, args in self.blocks)

    def kkt_residual(self, penalty, coef, grad_cols):
        """The largest distance of ``-grad_j`` to the penalty's subdifferential
        interval (0 at a stationary point of L1, MCP and fusion)."""
        from firecy.penalties import BlockwisePenalty

        if penalty.is_separable and not isinstance(penalty, BlockwisePenalty):
            # block boundaries do not matter: one call for every column
            # (they do for a penalty that dispatches on the block)
            d = penalty.direction_of(coef, grad_cols, **self.all_columns)
            return float(np.max(d)) if d.size else 0.0
        from firecy.penalties import FusedPenalty

        blocks = self.blocks
        if isinstance(penalty, FusedPenalty):
            # at w_t = 0 every coordinate's interval holds [-lam, lam] (fusion
            # adds an interval around 0): a zero block whose gradient is
            # inside it is stationary, no call needed
            big = np.maximum.reduceat(np.abs(grad_cols), self.block_starts) > penalty.lam
            nonzero = np.add.reduceat(coef != 0, self.block_starts) > 0
            blocks = [blocks[t] for t in np.flatnonzero(big | nonzero)]
        res = 0.0
        for lo, hi, args in blocks:
            d = penalty.direction_of(coef[lo:hi], grad_cols[lo:hi], **args)
            res = max(res, float(np.max(d)) if d.size else 0.0)
        return res


def irls_solve(problem, penalty, *, coef_init=None, intercept_init=None, tol=1e-6,
               max_iter=100, inner_max_iter=None, kkt_scale=None, warn=True):
    """Minimise ``f(eta) + P(w)`` by proximal-Newton steps with a line search.

    Parameters
    ----------
    problem : IRLSProblem
    penalty : Penalty
    coef_init, intercept_init : optional
        Warm start (default: zero rules, the null model's intercept).
    tol : float
        Stop when an outer step lowers the objective by less than ``tol``
        (relative) and the KKT residual is below ``sqrt(tol)`` times
        ``kkt_scale`` (default: the largest gradient at the null model, the
        lasso's lambda_max).
    max_iter : int
        Outer (Newton) steps; reaching it is a ``ConvergenceWarning``.

    Returns
    -------
    SolveResult
    """
    design, loss = problem.design, problem.loss
    w = np.zeros(design.n_columns) if coef_init is None else np.array(coef_init, dtype=float)
    b = (problem.b0 if intercept_init is None else float(intercept_init)) \
        if problem.fit_intercept else 0.0
    # MCP: Newton steps first (the current Hessian hands the engine an MCP
    # whose concavity is scaled by it, not by the reference: an approximation
    # of the penalty, but every step is checked on the true objective) until
    # they stall, then steps on the reference curvature, whose fixed point is
    # stationary for the true objective. The reference steps alone converge
    # linearly, slowly where exp(eta) moved far from the null model (100
    # steps were not enough on a 20-tree Poisson path).
    exact_newton = _curvature_free(penalty)
    # rho starts where the previous solve of this problem left it (a path's
    # neighbouring points need about the same damping)
    newton, rho = True, getattr(problem, "rho", 1.0)
    scale = float(np.max(np.abs(problem.grad0))) if kkt_scale is None else kkt_scale
    eta = problem.eta(w, b)
    pen_w = problem.penalty_value(penalty, w)
    F = loss.value(eta) + pen_w
    converged, n_iter, stalled, kkt = False, 0, False, None
    for n_iter in range(1, max_iter + 1):
        g = loss.gradient(eta)
        if newton:
            q, inner_pen = problem._floor(loss.hessian(eta), g), penalty
        else:
            # rho * reference curvature with gamma * rho: the engine's MCP is
            # then exactly the reference one (a_j / gamma unchanged); rho
            # tracks the loss's curvature along the steps (_next_rho)
            q, inner_pen = rho * problem.h_ref, _with_gamma(penalty, rho)
        step = _inner_step(problem, inner_pen, q, g, eta, w, b, tol, inner_max_iter)
        dw, db, deta = step
        pen_new = problem.penalty_value(penalty, w + dw)
        predicted = float(g @ deta) + pen_new - pen_w   # < 0 for a descent step
        # Newton steps: backtracking on the segment; reference steps: the
        # full step only (MCP is concave along a segment: its value between
        # the ends can exceed both), damped by rho instead
        t, accepted = 1.0, False
        f_full = None
        while t > (1e-10 if newton else 0.5):
            wt = w + dw if t == 1.0 else w + t * dw
            pt = pen_new if t == 1.0 else problem.penalty_value(penalty, wt)
            ft = loss.value(eta + t * deta)
            if t == 1.0:
                f_full = ft
            Ft = ft + pt
            if Ft <= F + 1e-4 * t * min(predicted, 0.0) and Ft <= F:
                accepted = True
                break
            t *= 0.5
        if accepted and not newton:
            # extrapolate along an accepted reference step while the true
            # objective keeps falling: the reference model's one curvature
            # multiplier fits the stiffest direction of the step, and the
            # flat ones then move by a fraction of what they need
            while t < _EXTRAPOLATE:
                w2 = w + 2.0 * t * dw
                p2 = problem.penalty_value(penalty, w2)
                F2 = loss.value(eta + 2.0 * t * deta) + p2
                if not F2 < Ft:
                    break
                t, wt, pt, Ft = 2.0 * t, w2, p2, F2
        if not newton:
            # the next rho: the loss's curvature along this step, in units of
            # the reference model's (a fixed rho halved on success and doubled
            # on failure alternates between a rejected step and one damped
            # by a factor 2 from the curvature it needs: linear convergence)
            rho = _next_rho(problem, F - pen_w, g, deta, f_full, rho, accepted, penalty)
            problem.rho = rho
        if accepted:
            w, b, eta, pen_w = wt, b + t * db, eta + t * deta, pt
            if problem.fit_intercept:
                # the exact intercept step of the log link (never raises f)
                shift = loss.intercept_step(eta)
                b, eta = b + shift, eta + shift
            F_old, F = F, loss.value(eta) + pen_w
        else:
            F_old = F
            if not newton and rho < 1e6:
                continue
        rel = (F_old - F) / max(abs(F), 1e-300)
        if (rel <= max(tol, _NEWTON_SWITCH) or not accepted) and newton and not exact_newton:
            newton = False   # switch to the reference curvature
            continue
        if rel <= tol or not accepted:
            # the KKT residual can only be as small as the inner solves make
            # it; sqrt(tol) of the null gradient is what they reach at every
            # tol tried (1e-4 .. 1e-12); the objective test is the primary one
            grad_cols = np.asarray(problem.csc.T @ loss.gradient(eta))
            kkt = problem.kkt_residual(penalty, w, grad_cols)
            if kkt <= np.sqrt(tol) * max(scale, 1e-300):
                converged = True
                break
            if not accepted:
                stalled = True
                break
    if not converged and warn:
        target = np.sqrt(tol) * max(scale, 1e-300)
        if kkt is None:
            kkt = problem.kkt_residual(penalty, w, np.asarray(problem.csc.T @ loss.gradient(eta)))
        state = f"objective {F:.10g}, optimality residual {kkt:.3g}, target {target:.3g}"
        if stalled:
            what = (f"stopped after {n_iter} of at most {max_iter} steps: no step of its "
                    f"quadratic model lowered the objective ({state}); raise tol")
        else:
            what = f"did not converge in {max_iter} steps ({state}); raise max_iter or tol"
        warnings.warn(f"the proximal-Newton loop {what}", ConvergenceWarning,
                      stacklevel=user_stacklevel())
    return SolveResult(coef=w, intercept=b, objective=F, n_iter=n_iter, converged=converged)


def _rho_floor(penalty):
    """The smallest reference-curvature multiplier: the engine's MCP
    concavity ``gamma * rho`` must stay above 1."""
    gammas = [getattr(t, "gamma", 0.0) for t in _concavity_holders(penalty)]
    gamma = min([g for g in gammas if g > 0.0], default=0.0)
    return 1.0 if gamma <= 1.0 else max(1.05 / gamma, 0.25)


def _concavity_holders(penalty):
    """The penalty objects whose ``gamma`` is an MCP concavity: the penalty,
    GroupL0's inner one, and both parts of a BlockwisePenalty."""
    if hasattr(penalty, "inner"):
        return _concavity_holders(penalty.inner)
    if hasattr(penalty, "rules") and hasattr(penalty, "linear"):
        return _concavity_holders(penalty.rules) + _concavity_holders(penalty.linear)
    return [penalty]


def _next_rho(problem, f_old, g, deta, f_new, rho, accepted, penalty):
    """The reference model's multiplier for the next step: the secant
    curvature ``2 (f(eta + d) - f(eta) - g.d) / sum_i h_i d_i^2`` along the
    step just taken (centred for Cox, whose loss ignores a constant), a
    little above it; at least doubled after a rejected step."""
    d = deta
    h = problem.h_ref
    if not problem.fit_intercept:
        d = d - float(h @ d) / float(h.sum())
    denom = float(h @ (d * d))
    if denom <= 0 or f_new is None or not np.isfinite(f_new):
        kappa = 2.0 * rho
    else:
        kappa = 2.0 * (f_new - f_old - float(g @ deta)) / denom
    # at most halved after an accepted step (a rejected step costs a solve)
    new = max(1.1 * kappa, 2.0 * rho if not accepted else 0.5 * rho)
    return float(min(max(new, _rho_floor(penalty)), 1e6))


def _with_gamma(penalty, factor):
    """A copy of the penalty with its MCP concavity multiplied by ``factor``."""
    import copy

    if factor == 1.0:
        return penalty
    pen = copy.deepcopy(penalty)
    for target in _concavity_holders(pen):
        if getattr(target, "gamma", 0.0) > 0.0:
            target.gamma = target.gamma * factor
    return pen


def _inner_step(problem, penalty, q, g, eta, w, b, tol, inner_max_iter):
    """The minimiser of the quadratic model plus the penalty (compiled
    engine), as a step ``(dw, db, deta)`` from ``(w, b)``."""
    k = np.sqrt(float(q.sum()))
    z = eta - np.divide(g, q, out=np.zeros_like(g), where=q > 0)
    # the model's intercept is free where the loss has one to fit, and where
    # the loss ignores a constant shift of eta (Cox, below); a Poisson fit
    # without an intercept (b = 0) must minimise the model at b = 0, or its
    # steps are not descent steps of the true objective and the loop stalls
    inner_intercept = problem.fit_intercept or not problem.loss.has_intercept
    with warnings.catch_warnings():
        # the inner solve's own tolerance is the outer loop's business
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve(_scaled_design(problem.design, k), k * z, penalty,
                    offset=k * problem.offset, sample_weight=q,
                    fit_intercept=inner_intercept, coef_init=w, tol=min(tol, 1e-6),
                    max_iter=inner_max_iter)
    dw = res.coef - w
    # the inner intercept is fitted even for Cox, whose loss ignores a
    # constant shift of eta: a tree's leaves sum to such a shift, and a
    # diagonal model without the intercept puts a large curvature on that
    # flat direction (linear convergence, ~5% per step, measured);
    # profiling the intercept out of diag(q) gives diag(q) - q q^T / sum q,
    # one risk set's Hessian. Cox then drops it (f(eta + c) = f(eta)).
    db = res.intercept / k - b if problem.fit_intercept else 0.0
    return dw, db, db + np.asarray(problem.csc @ dw)


def _unpenalised_start(problem, penalty, tol, max_iter, inner_max_iter):
    """As :func:`firecy.solver._path.unpenalised_start`, for the outer loop:
    ``(lambda_max, w, intercept)`` at the top of a path whose penalty leaves
    some blocks unpenalised, or None."""
    from firecy.solver._path import restricted, unpenalised_split

    split = unpenalised_split(penalty, problem.design)
    if split is None:
        return None
    free, rest = split
    sub_design, cols = problem.design.subset_blocks(free)
    sub = IRLSProblem(sub_design, problem.loss, problem.offset, problem.fit_intercept)
    res = irls_solve(sub, restricted(penalty, free, cols), tol=tol, max_iter=max_iter,
                     inner_max_iter=inner_max_iter)
    w = np.zeros(problem.design.n_columns)
    w[cols] = res.coef
    if rest.size == 0:
        return 0.0, w, res.intercept
    rest_design, rest_cols = problem.design.subset_blocks(rest)
    at_fit = IRLSProblem(rest_design, problem.loss,
                         problem.offset + sub_design.matvec(res.coef), problem.fit_intercept)
    return at_fit.lambda_max(restricted(penalty, rest, rest_cols)), w, res.intercept


def irls_path(problem, penalty, *, lambdas=None, n_lambdas=50, eps=1e-3, max_rules=None,
              tol=1e-6, max_iter=100, inner_max_iter=None, progress=None):
    """The regularisation path over ``penalty.lam`` with warm starts (as
    :func:`~firecy.solver.fire_path`, for the outer loop's losses).

    Returns
    -------
    PathResult
    """
    import copy

    if max_rules is not None and (not isinstance(max_rules, numbers.Integral) or max_rules < 1):
        raise ValueError(f"max_rules must be a positive integer, got {max_rules!r}")
    pen = copy.deepcopy(penalty)
    start = _unpenalised_start(problem, pen, tol, max_iter, inner_max_iter)
    top, w_top, b_top = start if start is not None else (problem.lambda_max(pen), None, None)
    if lambdas is None:
        if not np.isfinite(top):
            raise ValueError("lambda_max is infinite for this penalty: pass the grid")
        grid = top * np.logspace(0, np.log10(eps), n_lambdas)
    else:
        grid = np.sort(np.asarray(lambdas, dtype=np.float64).ravel())[::-1]
    scale = float(np.max(np.abs(problem.grad0)))
    w, b = np.zeros(problem.design.n_columns), problem.b0
    coefs, rows = np.zeros((len(grid), w.shape[0])), []
    for j, lam in enumerate(grid):
        pen.lam = float(lam)
        if lam >= top:
            # the top's solution: w = 0, or the unpenalised blocks' fit
            w, b = ((np.zeros_like(w), problem.b0) if w_top is None
                    else (w_top.copy(), b_top))
            res = SolveResult(coef=w, intercept=b, objective=problem.objective(pen, w, b),
                              n_iter=0, converged=True)
        else:
            res = irls_solve(problem, pen, coef_init=w, intercept_init=b, tol=tol,
                             max_iter=max_iter, inner_max_iter=inner_max_iter,
                             kkt_scale=scale)
            w, b = res.coef, res.intercept
        coefs[j] = w
        rows.append((lam, b, res.objective, res.n_rules, res.n_iter, res.converged))
        if progress is not None:
            progress(j, len(grid), res)
        if max_rules is not None and res.n_rules > max_rules:
            break
    cols = list(zip(*rows))
    return PathResult(
        lambdas=np.array(cols[0]), coefs=coefs[:len(rows)].copy(),
        intercepts=np.array(cols[1]), objectives=np.array(cols[2]),
        n_rules=np.array(cols[3], dtype=np.intp), n_iter=np.array(cols[4], dtype=np.intp),
        converged=np.array(cols[5], dtype=bool), lambda_max=float(top))


class _RefineSolver:
    """What :func:`~firecy.solver._refine.refine_jumps` asks of a problem
    (``solve(penalty, w, tol, max_updates, strategy=, intercept=)``, ``w``
    updated in place), on the outer loop."""

    def __init__(self, problem, max_iter, inner_max_iter, kkt_scale):
        self.problem, self.max_iter = problem, max_iter
        self.inner_max_iter, self.kkt_scale = inner_max_iter, kkt_scale

    def solve(self, penalty, w, tol, max_updates, strategy=None, intercept=None):
        res = irls_solve(self.problem, penalty, coef_init=w, intercept_init=intercept, tol=tol,
                         max_iter=self.max_iter, inner_max_iter=self.inner_max_iter,
                         kkt_scale=self.kkt_scale)
        w[:] = res.coef
        res.coef = w
        return res


def irls_refine(problem, penalty, path, *, max_rules=None, tol=1e-6, max_iter=100,
                inner_max_iter=None, progress=None):
    """The path with points inserted by bisection in log lambda wherever the
    rule count jumps below the budget (:func:`~firecy.solver._refine.refine_jumps`,
    the compiled paths' ``refine_path``), each solved by :func:`irls_solve`
    warm-started from its neighbour with the larger lambda.

    Returns
    -------
    PathResult
    """
    from firecy.solver._refine import refine_jumps

    scale = float(np.max(np.abs(problem.grad0)))
    solver = _RefineSolver(problem, max_iter, inner_max_iter, scale)
    return refine_jumps(solver, penalty, path, max_rules, tol, None, progress=progress)
