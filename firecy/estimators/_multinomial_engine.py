"""The multinomial path solved by the engine, one call per path point.

The K classes are stacked (:class:`~firecy.datafits.Multinomial`): sample i
becomes the K pseudo-rows ``i K + k``, a column of class k (a leaf of one of
class k's trees) keeps its values on its rows' class-k pseudo-rows, and the
engine minimises the softmax loss over every class's blocks at once, with
its own greedy/working-set strategy, Anderson and Newton steps and its
convergence test (docs/datafits.rst, "Multinomial"). This replaces the
class-by-class cycles of :mod:`~firecy.estimators._multinomial_cycles` and
their NumPy polish, which still solve a path with fewer than two classes
present (and which tests and benchmarks call directly to compare). On wine
with a random forest the engine's objective is the lower one at 22 of the
full path's 52 points (by up to 14%) and the higher at 2 (by 2.6% and 0.1%;
each answer is a stationary point the other solver keeps when started from
it: MCP's non-convexity), equal elsewhere.

Classes without a row of positive weight have an intercept that runs to
-infinity: they are left out of the solve (their rules stay at zero) and
get the margin :func:`~firecy.estimators._multinomial_cycles.absent_class_margin`
below the others, as the cycles give them.
"""
import copy

import numpy as np

from firecy._threads import single_blas_thread
from firecy._validation import check_sample_weight
from firecy.datafits import Multinomial
from firecy.estimators._multinomial_cycles import absent_class_margin
from firecy.estimators._multinomial_cycles import multinomial_path as cycles_path
from firecy.estimators._multinomial_cycles import lambda_grid, path_result, record_point
from firecy.estimators._multinomial_polish import row_logsumexp
from firecy.solver import BlockDesign, SolveResult
from firecy.solver import Problem, check_penalty, check_solver_params, unpenalised_start


__all__ = ["multinomial_path", "stack_design"]


def stack_design(design, col_class, n_classes):
    """The stacked design: column j's rows ``i`` become ``i K + col_class[j]``.

    Parameters
    ----------
    design : BlockDesign
        n rows; every block's columns belong to one class.
    col_class : ndarray of int, shape (n_columns,)
    n_classes : int

    Returns
    -------
    BlockDesign
        General layout, ``n * n_classes`` rows, the same columns and blocks
        (a block stays diagonal: its rows move to one class's pseudo-rows).
    """
    import scipy.sparse as sp

    K = int(n_classes)
    csc = design.tocsc()
    counts = np.diff(csc.indptr)
    rows = (csc.indices.astype(np.int64) * K
            + np.repeat(np.asarray(col_class, dtype=np.int64), counts))
    n_rows = design.n_samples * K
    if n_rows > np.iinfo(np.int32).max:
        raise ValueError(f"{design.n_samples} rows x {K} classes exceed the int32 row index")
    out = BlockDesign._new()
    out.layout, out.is_tree = "general", False
    out.n_tree_blocks = out.n_tree_columns = out.tree_nnz = 0
    out.n_samples, out.n_columns = n_rows, design.n_columns
    out.n_blocks = design.n_blocks
    out.block_ptr = np.asarray(design.block_ptr)
    out.col_ptr = csc.indptr.astype(np.intp)
    out.col_rows = rows.astype(np.int32)        # sorted within a column, as i was
    out.col_vals = np.ascontiguousarray(csc.data, dtype=np.float64)
    csr = sp.csc_matrix((out.col_vals, out.col_rows, out.col_ptr),
                        shape=(n_rows, design.n_columns)).tocsr()
    csr.sort_indices()
    out.row_ptr = csr.indptr.astype(np.intp)
    out.row_cols = csr.indices.astype(np.int32)
    out.row_vals = np.ascontiguousarray(csr.data, dtype=np.float64)
    out.leaf_table = out.leaf_values = None
    out.block_is_diagonal = np.asarray(design.block_is_diagonal, dtype=bool).copy()
    return out


class _StackedMultinomial:
    """The stacked problem of the present classes, and the maps between its
    columns/intercepts and the full model's."""

    def __init__(self, design, y, block_class, n_classes, sample_weight, fit_intercept):
        codes = y[:, 0].astype(np.intp)
        offsets = np.ascontiguousarray(y[:, 1:], dtype=np.float64)
        n, K = codes.shape[0], int(n_classes)
        if offsets.shape[1] != K:
            raise ValueError(f"the packed target has {offsets.shape[1]} offsets, "
                             f"expected one per class ({K})")
        s = check_sample_weight(sample_weight, n)
        self.K, self.n, self.s, self.codes, self.offsets = K, n, s, codes, offsets
        self.fit_intercept = bool(fit_intercept)
        self.n_pos = int(np.count_nonzero(s > 0))
        self.n_columns = design.n_columns
        block_class = np.asarray(block_class, dtype=np.intp)
        present = np.bincount(codes[s > 0], minlength=K)[:K] > 0
        # without intercepts an absent class's margin is its baseline plus
        # its (bounded) rules: it stays in the solve
        keep = present if self.fit_intercept else np.ones(K, dtype=bool)
        self.classes = np.flatnonzero(keep)               # solved classes
        self.absent = np.flatnonzero(~keep)
        Kp = self.classes.size
        new_index = np.full(K, -1, dtype=np.intp)
        new_index[self.classes] = np.arange(Kp)
        blocks = np.flatnonzero(keep[block_class])
        self.blocks = None
        if blocks.size == design.n_blocks:
            sub, self.cols = design, np.arange(design.n_columns)
        else:
            sub, self.cols = design.subset_blocks(blocks)
            self.blocks = blocks
        sub_class = new_index[np.repeat(block_class[blocks], np.diff(sub.block_ptr))]
        self.Kp = Kp
        stacked = stack_design(sub, sub_class, Kp)
        onehot = (codes[:, None] == self.classes[None, :]).astype(np.float64)
        # rows of a left-out class have no weight (that is why it is left
        # out): any label will do for them, the datafit asks for one-hot
        onehot[onehot.sum(axis=1) == 0, 0] = 1.0
        self.problem = Problem(
            stacked, onehot.ravel(), np.repeat(s, Kp), False,
            datafit=Multinomial(Kp, fit_intercept=self.fit_intercept),
            offset=offsets[:, self.classes].ravel())

    # -- intercepts: the present classes' live in the engine's row state
    def engine_intercepts(self):
        return self.problem.engine.datafit_rows()[2, :self.Kp].copy()

    def set_engine_intercepts(self, b_full):
        """Start the next solve from the full model's intercepts ``b_full``."""
        rows = self.problem.engine.datafit_rows()
        rows[2, :self.Kp] = np.asarray(b_full, dtype=np.float64)[self.classes]

    def full_intercepts(self, w_sub):
        """The K intercepts of the model: the solved ones, absent classes at
        the absent-class margin below the others, centred (F is unchanged
        when every margin moves alike; the centred representative makes the
        margins, not only the probabilities, defined, as in the cycles)."""
        b = np.zeros(self.K)
        b[self.classes] = self.engine_intercepts() if self.fit_intercept else 0.0
        if self.absent.size:
            eta = self.offsets[:, self.classes] + b[self.classes]
            eta += (self.problem.design.matvec(w_sub)).reshape(self.n, self.Kp)
            lse = row_logsumexp(eta)
            for k in self.absent:
                b[k] = float(absent_class_margin(self.n_pos)
                             - np.average(self.offsets[:, k] - lse, weights=self.s))
        if self.fit_intercept:
            b -= b.mean()
        return b

    def full_coef(self, w_sub):
        w = np.zeros(self.n_columns)
        w[self.cols] = w_sub
        return w


def multinomial_path(design, y, penalty, *, block_class, n_classes, sample_weight=None,
                     lambdas=None, n_lambdas=50, eps=1e-3, max_rules=None,
                     fit_intercept=True, tol=1e-6, max_iter=None, progress=None,
                     refine_path=False):
    """The warm-started multinomial path, every point one engine solve.

    Parameters and returns as
    :func:`firecy.estimators._multinomial_cycles.multinomial_path`
    (``intercepts`` has shape (n_points, n_classes)); with fewer than two
    classes among the rows of positive weight, that function does the work.
    """
    s = check_sample_weight(sample_weight, y.shape[0])
    n_present = np.unique(y[s > 0, 0]).size
    if fit_intercept and n_present < 2:
        return cycles_path(design, y, penalty, block_class=block_class, n_classes=n_classes,
                           sample_weight=sample_weight, lambdas=lambdas, n_lambdas=n_lambdas,
                           eps=eps, max_rules=max_rules, fit_intercept=fit_intercept, tol=tol,
                           max_iter=max_iter, progress=progress, refine_path=refine_path)
    with single_blas_thread():
        state = _StackedMultinomial(design, y, block_class, n_classes, sample_weight,
                                    fit_intercept)
        if state.blocks is not None:
            # a penalty that tells blocks apart (BlockwisePenalty) or columns
            # (SignConstrained), on the present classes' blocks, renumbered
            to = getattr(penalty, "restrict_to", None)
            restrict = getattr(penalty, "restrict_blocks", None)
            if to is not None:
                penalty = to(state.blocks, state.cols)
            elif restrict is not None:
                penalty = restrict(state.blocks)
        return _path(state, penalty, lambdas, n_lambdas, eps, max_rules, tol, max_iter,
                     progress, refine_path)


def _path(state, penalty, lambdas, n_lambdas, eps, max_rules, tol, max_iter, progress,
          refine_path):
    problem = state.problem
    template = check_penalty(penalty)
    max_updates = check_solver_params(tol, max_iter, problem.design.n_blocks)
    # blocks no lam penalises (confirmatory terms): the path starts where
    # they are fitted, as fire_path's does
    start = unpenalised_start(problem, template, tol, max_updates) \
        if problem.design.n_blocks else None
    w_top = None
    if start is not None:
        top, w_top = start
    else:
        top = problem.lambda_max(template) if problem.design.n_blocks else 0.0
    grid = lambda_grid(top, lambdas, n_lambdas, eps)
    pen = copy.deepcopy(template)
    w = np.zeros(problem.design.n_columns)
    rows = []
    for i, lam in enumerate(grid):
        pen.lam = float(lam)
        if lam >= top:
            # w = 0 (or the unpenalised blocks' fit) is a solution by
            # definition of the path's top
            w[:] = 0.0 if w_top is None else w_top
            objective, _ = problem.engine.objective_at(pen, w)
            n_iter, converged = 0, True
        else:
            res = problem.solve(pen, w, tol, max_updates)
            objective, n_iter, converged = res.objective, res.n_iter, res.converged
        if record_point(rows, i, len(grid), lam, state.full_coef(w), state.full_intercepts(w),
                        objective, n_iter, converged, progress, max_rules):
            break
    path = path_result(rows, top)
    if refine_path:
        from firecy.solver import refine_jumps

        path = refine_jumps(_RefineProblem(state), penalty, path, max_rules, tol,
                            max_updates, progress=progress)
    return path


class _RefineProblem:
    """What :func:`~firecy.solver._refine.refine_jumps` solves on: full
    coefficients and intercepts in, the stacked engine solve inside."""

    def __init__(self, state):
        self.state = state

    def solve(self, pen, w, tol, max_updates, strategy="working_set", intercept=None):
        state = self.state
        if intercept is not None:
            state.set_engine_intercepts(intercept)
        w_sub = np.ascontiguousarray(w[state.cols], dtype=np.float64)
        res = state.problem.solve(pen, w_sub, tol, max_updates, strategy=strategy)
        w[:] = state.full_coef(w_sub)
        b = state.full_intercepts(w_sub)
        return SolveResult(coef=w, intercept=b, objective=res.objective, n_iter=res.n_iter,
                           converged=res.converged)
