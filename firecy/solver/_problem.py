"""Input checks and the problem set up once per (design, datafit, data).

The objective (docs/objective.rst, docs/datafits.rst), the same everywhere in
firecy (tests, path, benchmarks):

    F(w, b) = 1 / (sum_i s_i) * sum_i s_i loss(y_i, offset_i + b + (M w)_i)
              + sum_t P(w_t)

with s the sample weights (all ones by default), b an unpenalised intercept
(0 when ``fit_intercept=False``), offset a per-row baseline (0 by default)
and P the penalty, applied block by block. The coordinate curvature the
engine and MCP use is a_j = sum_i s_i u_i M_ij^2 / sum_i s_i, with u_i the
datafit's per-sample curvature bound (1 for the squared loss, 1/4 for the
logistic loss).
"""
import copy
import numbers

import numpy as np

from firecy._threads import single_blas_thread
from firecy._validation import check_sample_weight
from firecy.datafits import as_datafit
from firecy.penalties import as_penalty
from firecy.solver._design import BlockDesign
from firecy.solver._engine import GreedyBlockCD
from firecy.solver._results import SolveResult


def check_y_weights(y, sample_weight, n_samples):
    y = np.asarray(y)
    if y.dtype == object or not (np.issubdtype(y.dtype, np.number) or y.dtype == bool):
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
    s = check_sample_weight(sample_weight, n_samples, normalize=True)
    return y, s


def check_offset(offset, n_samples):
    if offset is None:
        return np.zeros(n_samples)
    offset = np.asarray(offset)
    if offset.dtype == object or not np.issubdtype(offset.dtype, np.number):
        raise TypeError(f"offset must be numeric, got dtype {offset.dtype}")
    offset = np.ascontiguousarray(np.broadcast_to(offset.astype(np.float64), (n_samples,))
                                  if offset.ndim == 0 else offset, dtype=np.float64)
    if offset.shape != (n_samples,):
        raise ValueError(f"offset has shape {offset.shape}, expected ({n_samples},)")
    if not np.all(np.isfinite(offset)):
        raise ValueError("offset contains NaN or infinity")
    return offset


def check_penalty(penalty):
    penalty = as_penalty(penalty)
    if not (np.isfinite(penalty.lam) and penalty.lam >= 0):
        raise ValueError(f"the penalty's lambda must be non-negative and finite, got {penalty.lam!r}")
    return penalty


def check_solver_params(tol, max_iter, n_blocks):
    if not isinstance(tol, numbers.Real) or not tol > 0 or not np.isfinite(tol):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    if max_iter is None:
        return 1000 * n_blocks
    if not isinstance(max_iter, numbers.Integral) or isinstance(max_iter, bool) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    return int(max_iter)


def initial_coef(coef_init, n_columns):
    if coef_init is None:
        return np.zeros(n_columns)
    w = np.array(coef_init, dtype=np.float64)
    if w.shape != (n_columns,):
        raise ValueError(f"coef_init has shape {w.shape}, expected ({n_columns},)")
    if not np.all(np.isfinite(w)):
        raise ValueError("coef_init contains NaN or infinity")
    return w


def _check_no_overflow(y, s, curvature, grad0):
    """A clear error where float64 overflows on the data (not a wrong answer)."""
    with np.errstate(over="ignore", invalid="ignore"):
        loss_scale = np.sum(s * np.square(y))
    if not (np.isfinite(loss_scale) and np.all(np.isfinite(curvature))
            and np.all(np.isfinite(grad0))):
        raise ValueError(
            f"the squared loss overflows float64 (max |y| = {float(np.max(np.abs(y))):.3g}, "
            f"max curvature = {float(np.max(curvature)):.3g}): rescale y and the design "
            "(e.g. divide each by its standard deviation; the solution scales with them)"
        )


class Problem:
    """Design + datafit + data + engine, set up once and reused across solves."""

    def __init__(self, design, y, sample_weight, fit_intercept, block_ptr=None,
                 datafit=None, offset=None):
        self.design = BlockDesign.coerce(design, block_ptr)
        n = self.design.n_samples
        self.datafit = as_datafit(datafit)
        y, self.s = check_y_weights(y, sample_weight, n)
        self.offset = check_offset(offset, n)
        self.y = self.datafit.validate(y, self.s)
        self.fit_intercept = bool(fit_intercept)
        bound = self.datafit.curvature_bound_of(self.y)
        column_sums, plain_curv = self.design.column_stats(self.s)
        # a_j = sum_i s_i u_i M_ij^2 (u = 1: the plain curvature)
        curv = plain_curv if np.all(bound == 1.0) else self.design.column_stats(self.s * bound)[1]
        lipschitz = self.design.block_lipschitz(self.s * bound, curv)
        # the block's majoriser: its own curvature on diagonal blocks (an
        # exact minimisation for the squared loss), 1 / L_t otherwise
        per_col_L = np.repeat(lipschitz * (1 + 1e-12), np.diff(self.design.block_ptr))
        diag_cols = np.repeat(self.design.block_is_diagonal, np.diff(self.design.block_ptr))
        self.step = np.ascontiguousarray(np.where(diag_cols, curv, per_col_L))
        self.engine = GreedyBlockCD(self.design, self.datafit, self.y, self.s, self.offset,
                                    column_sums, curv, self.step, self.fit_intercept)
        # the engine's inputs as built, for clone() (2 x R floats)
        self._engine_inputs = (np.array(column_sums, dtype=np.float64),
                               np.array(curv, dtype=np.float64), self.step.copy())
        self.grad0 = self.engine.gradient_at_zero()   # no BLAS: no thread limit needed
        _check_no_overflow(self.y, self.s, curv, self.grad0)
        # the scale of the direction vector: the lasso's lambda_max, floored
        # so that a constant target (a gradient of pure rounding noise) does
        # not ask for an unreachable tolerance; by Cauchy-Schwarz
        # |grad_j| <= sqrt(sum_i s_i M_ij^2) * sqrt(sum_i s_i loss'_i^2)
        dloss = self.datafit.gradient_hessian_of(self.y, self.offset)[0]
        floor = 1e-10 * np.sqrt(np.max(plain_curv) * np.sum(self.s * dloss ** 2))
        self.score_scale = max(float(np.max(np.abs(self.grad0))), floor) or 1.0

    def per_block(self, method):
        """max over blocks of ``method(grad0_t, curv_t, columns=..., block=t)``
        (lambda_max & co.)."""
        curv = self.engine.curvature
        ptr = self.design.block_ptr
        self.check_penalty_fits(getattr(method, "__self__", None))
        return max(method(self.grad0[ptr[t]:ptr[t + 1]], curv[ptr[t]:ptr[t + 1]],
                          columns=np.arange(ptr[t], ptr[t + 1]), block=t)
                   for t in range(self.design.n_blocks))

    def check_penalty_fits(self, penalty):
        """The penalty's own check that its per-column data fits the design."""
        check = getattr(penalty, "check_blocks", None)
        if check is not None:
            check(np.asarray(self.design.block_ptr))

    def lambda_max(self, penalty):
        return self.per_block(penalty.lambda_max_of)

    def clone(self):
        """This problem with an engine of its own, for a solve in another thread.

        The engine is built from the inputs this one was built from: a solve
        from given weights and intercept is bitwise this problem's (the
        engine's state between solves is a function of them:
        ``tests/test_engine_resync.py``).
        """
        other = copy.copy(self)
        column_sums, curv, step = (a.copy() for a in self._engine_inputs)
        other.step = step
        other.engine = GreedyBlockCD(self.design, self.datafit, self.y, self.s, self.offset,
                                     column_sums, curv, step, self.fit_intercept)
        return other

    def clone_solves_exactly(self, penalty, strategy="working_set"):
        """Whether a :meth:`clone`'s solves with ``penalty`` are bitwise this one's.

        Not when the engine may run its active-set Newton solver (a
        separable penalty on a datafit of exact curvature, the squared
        loss, with ``strategy="working_set"``): that solver keeps state
        across solves, so a fresh engine agrees with a reused one only up
        to the tolerance (``tests/test_engine_resync.py``, L1).
        """
        flags = int(getattr(penalty, "flags", 0))
        active_set = (strategy != "greedy" and bool(self.engine.use_active_set)
                      and bool(self.datafit.exact_curvature)
                      and bool(flags & 1) and not flags & 2)  # SEPARABLE, SCORE_IS_DECREASE
        return not active_set

    def subproblem(self, design):
        """The same datafit and data on another design (a subset of blocks)."""
        return Problem(design, self.y, self.s, self.fit_intercept, datafit=self.datafit,
                       offset=self.offset)

    def solve(self, penalty, w, tol, max_updates, record_objective=False, warn=True,
              strategy="working_set", intercept=None):
        """Minimise from ``w`` (in place) and the engine's current intercept,
        or ``intercept`` when given."""
        self.check_penalty_fits(penalty)
        if intercept is not None:
            self.engine.intercept = float(intercept)
        # one BLAS thread: the Newton steps factorise small dense matrices,
        # where OpenBLAS threads on a busy machine cost 100x, and a fixed
        # summation order keeps results identical on any thread count;
        # reference-counted, so that solves in several threads restore it
        with single_blas_thread():
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
