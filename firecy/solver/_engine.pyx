"""Greedy block coordinate descent without the GIL (Liu & Mazumder, FIRE,
KDD 2023, Algorithm 1), for any datafit and penalty.

It minimises F(w, b) = datafit(offset + b + M w) + sum_t P(w_t) as stated in
docs/objective.rst and docs/datafits.rst. The engine does not know which loss
it minimises: it holds the datafit's per-row state (a DatafitState it owns)
and calls the datafit once per column (gradient along a column, shift of a
column) and once per epoch (intercept step); the penalty once per block.

A block update moves the block to the prox point of the datafit's
linearisation with the step ``step_j`` (the coordinate curvature
a_j = sum_i s_i u_i M_ij^2, u_i the datafit's curvature bound, when no row
has two nonzeros in the block, always true for trees; the block's Lipschitz
constant otherwise). That minimises a majoriser of F over the block: exact
for the squared loss on diagonal blocks, a guaranteed decrease otherwise.
Two strategies:

* "greedy" (the paper's Algorithm 1): every iteration scores all blocks and
  updates the best one; the full gradient is kept incrementally (after a
  block update, only the changed rows correct it).
* "working_set" (the default): blocks chosen greedily by the same score form
  a working set, solved by cyclic block updates with Anderson extrapolation
  (firecy/solver/_anderson.pyx) and, when coordinate descent crawls, Newton
  steps on the support with the datafit's true curvature
  (firecy/solver/_newton.pyx). Every accepted step lowers F.

Either way, convergence is confirmed by a full sweep of block updates and an
intercept step that no longer lower F, with every block score and the
intercept's gradient below the tolerance: the direction vector can vanish at
non-stationary points of non-separable penalties (fusion), a sweep cannot.

The design's layout (tree: leaf table; general: CSC + CSR; mixed: tree
blocks in a leaf table, then general blocks) is resolved once per column (a
Column view) or once per call of a row kernel, never inside a hot loop.
"""
from libc.math cimport fabs, fmax, isfinite, INFINITY

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from firecy.datafits.base cimport Column, Datafit, DatafitState
from firecy.penalties.base cimport (
    Block, PENALTY_SCORE_IS_DECREASE, PENALTY_SEPARABLE, Penalty)
from firecy.solver._anderson cimport ANDERSON_K, anderson_weights
from firecy.solver._active_set cimport (ActiveSetQP, QP_CONVERGED, QP_ROUNDS, QP_TOO_LARGE,
                                        QP_FAILED)

from firecy.solver._newton import newton_step
from firecy.penalties._signed cimport PENALTY_SIGN_BOUNDS

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int firecy_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int firecy_max_threads(void) { return 1; }
    #endif
    """
    int firecy_max_threads() noexcept nogil

# an inner solve stops once its largest block score falls below this
# fraction of the largest score that opened it
cdef double INNER_RATIO = 0.01
# epochs of an inner solve before the engine tries a Newton step on the support
# (Newton costs a dense factorisation; cheap epochs go first)
cdef Py_ssize_t INNER_MAX_EPOCHS = 100
# every INNER_CHECK epochs the largest block score must at least halve, or
# coordinate descent counts as slow and the engine tries a Newton step
cdef Py_ssize_t INNER_CHECK = 10
# intercept steps when the intercept is optimised on its own (Newton steps)
cdef Py_ssize_t INTERCEPT_MAX_STEPS = 100
# the largest support the active-set Newton solver factorises (a dense
# Cholesky factor of this order: 128 MB); beyond it, coordinate descent
QP_MAX_SUPPORT = 4000
# backtracking steps of the proximal-Newton line search (non-quadratic datafits)
cdef Py_ssize_t LINE_SEARCH_STEPS = 30


def _strategy_name(bint greedy, bint qp_ran, bint qp_at_end):
    """The solver that ran, as the ConvergenceWarning names it."""
    if greedy:
        return "greedy block CD"
    if not qp_ran:
        return "working-set block CD"
    if qp_at_end:
        return "the active-set Newton solver"
    return "the active-set Newton solver (then working-set block CD)"


cdef class GreedyBlockCD:
    """The engine state for one (design, datafit, y, weights, offset) problem.

    Reused along a path: each :meth:`solve` starts from the given weights
    (and the intercept the previous solve ended with). Build it through
    :func:`firecy.solver.solve` or :func:`firecy.solver.fire_path` rather
    than directly.
    """
    # design: raw pointers into the arrays the memoryviews keep alive
    cdef Py_ssize_t n, R, T, max_block
    # the tree part: the first T_tree blocks (columns 0 .. R_tree - 1, the
    # first tree_nnz entries of the column lists) are in the leaf table; the
    # rest (the general part) in CSC + CSR
    cdef Py_ssize_t R_tree, T_tree, tree_nnz
    cdef bint is_tree
    cdef readonly object design
    cdef const Py_ssize_t[::1] block_ptr, col_ptr, row_ptr
    cdef const int[::1] col_rows, row_cols
    cdef const double[::1] col_vals, leaf_values, row_vals
    cdef const int[:, ::1] leaf_table
    cdef const double* col_vals_p          # the general part's values (NULL if none)
    cdef const double* leaf_values_p       # the tree part's values (NULL if none)
    # problem
    cdef Datafit datafit
    cdef DatafitState st
    cdef const double[::1] y, s, offset
    cdef const double[::1] m, curv, step   # M^T s, coordinate curvature, prox weights
    cdef double[:, ::1] rows, rows_save    # the datafit's per-row arrays
    cdef double totals_save[4]
    cdef double intercept_save
    cdef double[::1] work, lin
    # state
    cdef double[::1] w, gt, dr, block_pen, scores
    cdef unsigned char[::1] touched_mark
    cdef int[::1] touched
    cdef Py_ssize_t n_touched
    cdef double pen_total
    cdef double[::1] buf_g, buf_z, buf_x, buf_work
    cdef Penalty penalty
    cdef const Py_ssize_t[::1] col_index   # 0 .. R-1: a block's columns for the penalty
    # working-set strategy: blocks, their columns, Anderson snapshots
    cdef Py_ssize_t[::1] ws_blocks, ws_ptr, ws_cols
    cdef Py_ssize_t n_ws, n_ws_cols
    cdef double[::1] buf_w, buf_step, buf_curv, lo_buf, hi_buf
    cdef double[:, ::1] snapshots
    cdef double[::1] anderson_w
    cdef public object newton_failed_on
    cdef public int verbose
    cdef public Py_ssize_t n_anderson_tried, n_anderson_accepted
    # work counters (diagnostics, never reset by a solve: benchmarks read
    # differences): full column-gradient passes, datafit state rebuilds
    # (M w and every row's derivative), coordinate moves (a column's rows
    # shifted), working-set epochs, and block updates that read gradients
    cdef public Py_ssize_t n_full_gradients, n_state_rebuilds, n_column_moves
    cdef public Py_ssize_t n_ws_epochs, n_ws_block_updates
    # active-set Newton solver (separable penalties with a weighted-L1 local
    # model): the solver, its weights lam_j, the model's row weights, a copy
    # of the weights it works on and one to restore
    cdef public ActiveSetQP qp
    cdef bint qp_enabled, qp_rows_set
    cdef double[::1] qp_w, qp_lam, qp_save, qp_rows
    cdef Py_ssize_t[::1] qp_group
    cdef public int n_threads, max_threads
    cdef public Py_ssize_t n_qp_steps
    cdef public bint use_active_set
    # the penalty's PENALTY_SIGN_BOUNDS flag, for the solve in progress (the
    # Newton steps, in Python, read it)
    cdef public bint sign_bounds
    # trace of the objective after each accepted step
    cdef double[::1] trace
    cdef Py_ssize_t trace_len
    cdef bint record
    # a plug-in datafit's curvature bound is checked by the descent it
    # promises (firecy's own are bounds by construction: no cost for them)
    cdef bint check_majoriser
    # rows whose derivatives move together (a datafit's ``row_group_size``:
    # the multinomial's K pseudo-rows of a sample); the greedy strategy's
    # shift_rows gets whole groups, so that it reports every row that changed
    cdef readonly Py_ssize_t row_group
    # the datafit steps one intercept per row of a group itself (the
    # multinomial's K, in its own state): the convergence test asks each of
    # their gradients, the sums of z over the group's k-th rows, to vanish
    cdef bint group_intercepts
    # skipping a redundant resync (see in_sync): the state of a datafit
    # whose per-row state is a function of (w, intercept) alone (firecy's
    # Quadratic and Logistic) is exactly what the last resync computed while
    # ``synced`` holds and w and the intercept are bitwise those it saw
    # (w_sync, b_sync); col_grad keeps that resync's column gradients, which
    # a confirming sweep reads until its first move (sweep_cached)
    cdef bint sync_ok, synced, sweep_cached
    cdef double[::1] w_sync, col_grad
    cdef double b_sync

    def __init__(self, design, Datafit datafit, y, sample_weight, offset, column_sums,
                 curvature, double[::1] step, bint fit_intercept):
        cdef Py_ssize_t k
        self.design = design
        self.n = design.n_samples
        self.R = design.n_columns
        self.T = design.n_blocks
        self.is_tree = design.is_tree
        self.block_ptr = design.block_ptr
        self.max_block = int(np.diff(design.block_ptr).max())
        self.col_ptr = design.col_ptr
        self.col_rows = design.col_rows
        self.T_tree = design.n_tree_blocks
        self.R_tree = design.n_tree_columns
        self.tree_nnz = design.tree_nnz
        self.leaf_values_p = NULL
        self.col_vals_p = NULL
        if self.T_tree:
            self.leaf_values = design.leaf_values
            self.leaf_table = design.leaf_table
            self.leaf_values_p = &self.leaf_values[0]
        if not self.is_tree:
            self.col_vals = design.col_vals
            self.row_ptr = design.row_ptr
            self.row_cols = design.row_cols
            self.row_vals = design.row_vals
            self.col_vals_p = &self.col_vals[0] if self.col_vals.shape[0] else NULL
        self.datafit = datafit
        self.y = y
        self.s = sample_weight
        self.offset = offset
        self.m = np.ascontiguousarray(column_sums, dtype=np.float64)
        self.curv = np.ascontiguousarray(curvature, dtype=np.float64)
        self.step = step
        n_used = datafit.n_rows_used
        if not 1 <= n_used <= 4:
            raise ValueError(f"{datafit!r} asks for {n_used} per-row arrays (1 to 4)")
        # the base class's state-level methods use row[0] and row[1]: a
        # datafit that asks for one row but inherits them still gets two
        n_used = max(n_used, 2)
        self.rows = np.zeros((n_used, self.n))
        self.rows_save = np.zeros((n_used, self.n))
        self.work = np.zeros(3 * self.n)
        self.lin = np.zeros(self.n)
        self.st.n_samples = self.n
        self.st.y = &self.y[0]
        self.st.weight = &self.s[0]
        self.st.offset = &self.offset[0]
        self.st.fit_intercept = fit_intercept
        self.st.intercept = 0.0
        from firecy.datafits import Logistic, Multinomial, Quadratic
        self.check_majoriser = type(datafit) not in (Quadratic, Logistic, Multinomial)
        self.sync_ok = type(datafit) in (Quadratic, Logistic)
        self.synced = False
        self.sweep_cached = False
        self.row_group = int(getattr(datafit, "row_group_size", 1))
        self.group_intercepts = (self.row_group > 1
                                 and bool(getattr(datafit, "fit_intercept", False)))
        if self.row_group < 1 or self.n % self.row_group:
            raise ValueError(f"{datafit!r}: row_group_size {self.row_group} does not divide "
                             f"the {self.n} rows")
        for k in range(4):
            self.st.row[k] = &self.rows[k, 0] if k < n_used else NULL
            self.st.total[k] = 0.0
        self.st.work = &self.work[0]
        self.dr = np.zeros(self.n)
        self.gt = np.zeros(self.R)
        self.w_sync = np.zeros(self.R)
        self.col_grad = np.zeros(self.R)
        self.block_pen = np.zeros(self.T)
        self.scores = np.zeros(self.T)
        self.touched_mark = np.zeros(self.n, dtype=np.uint8)
        self.touched = np.zeros(self.n, dtype=np.int32)
        self.buf_g = np.zeros(self.max_block)
        self.buf_z = np.zeros(self.max_block)
        self.buf_x = np.zeros(self.max_block)
        self.buf_work = np.zeros(3 * self.max_block)
        self.buf_w = np.zeros(self.max_block)
        self.buf_step = np.zeros(self.max_block)
        self.buf_curv = np.zeros(self.max_block)
        self.lo_buf = np.zeros(self.max_block)
        self.hi_buf = np.zeros(self.max_block)
        self.ws_blocks = np.zeros(self.T, dtype=np.intp)
        self.ws_ptr = np.zeros(self.T + 1, dtype=np.intp)
        self.ws_cols = np.zeros(self.R, dtype=np.intp)
        self.snapshots = np.zeros((ANDERSON_K + 1, self.R))
        self.anderson_w = np.zeros(self.R)
        self.col_index = np.arange(self.R, dtype=np.intp)
        self.qp = None
        self.n_threads = 1
        self.use_active_set = True
        self.max_threads = 1

    # ------------------------------------------------------------------
    # Python-level access (the Newton steps, the API)

    @property
    def curvature(self):
        return np.asarray(self.curv)

    @property
    def column_sums(self):
        return np.asarray(self.m)

    @property
    def coef(self):
        """The weights being solved (a view)."""
        return np.asarray(self.w)

    @property
    def fit_intercept(self):
        return bool(self.st.fit_intercept)

    @property
    def exact_curvature(self):
        return bool(self.datafit.exact_curvature)

    @property
    def intercept(self):
        return float(self.st.intercept)

    @intercept.setter
    def intercept(self, double value):
        self.st.intercept = value if self.st.fit_intercept else 0.0
        self.synced = False

    def _require_penalty(self, what):
        # the penalty is bound only while solve() runs (the Newton steps call
        # back in then); outside it these methods would call through None
        if self.penalty is None:
            raise RuntimeError(f"GreedyBlockCD.{what}() is available only during a solve")

    def refresh(self):
        """Recompute the state from ``coef`` and ``intercept``; return F."""
        self._require_penalty("refresh")
        with nogil:
            self.resync()
        return float(self.objective())

    def refresh_value(self):
        """F at ``coef`` and ``intercept``, the column gradients left stale
        (the Newton line search's evaluations; the engine resyncs before it
        reads the gradients again)."""
        self._require_penalty("refresh_value")
        with nogil:
            self.resync_value()
        return float(self.objective())

    def objective_value(self):
        return float(self.objective())

    def record_point(self):
        """Append the current F to the objective trace (when recording)."""
        self.record_objective()

    @property
    def sample_weight(self):
        """The normalised sample weights the engine holds (a copy)."""
        return np.array(self.s)

    def get_datafit(self):
        """The datafit object the engine solves with."""
        return self.datafit

    def datafit_rows(self):
        """The datafit's per-row arrays (a view, shape (n_rows_used, n)):
        where a datafit keeps state the contract has no field for (the
        multinomial's K intercepts, in the first K entries of row 2)."""
        self.synced = False   # the caller may write to them
        return np.asarray(self.rows)

    def row_derivatives(self):
        """Per-row ``(s_i loss', s_i loss'')`` at the current state."""
        grad = np.zeros(self.n)
        hess = np.zeros(self.n)
        cdef double[::1] g_ = grad, h_ = hess
        with nogil:
            self.datafit.row_derivatives(&self.st, &g_[0], &h_[0])
        return grad, hess

    # ------------------------------------------------------------------
    # the design, one column or one row kernel at a time

    cdef inline void column(self, Py_ssize_t j, Column* col) noexcept nogil:
        cdef Py_ssize_t p0 = self.col_ptr[j]
        col.rows = &self.col_rows[0] + p0
        col.n_rows = self.col_ptr[j + 1] - p0
        if j < self.R_tree:
            col.values = NULL
            col.value = self.leaf_values_p[j]
        else:
            col.values = self.col_vals_p + (p0 - self.tree_nnz)
            col.value = 0.0

    cdef void linear_predictor(self) noexcept nogil:
        """lin = M w."""
        cdef Py_ssize_t i, j, k
        cdef Column col
        cdef double wj
        for i in range(self.n):
            self.lin[i] = 0.0
        for j in range(self.R):
            wj = self.w[j]
            if wj == 0.0:
                continue
            self.column(j, &col)
            if col.values == NULL:
                wj *= col.value
                for k in range(col.n_rows):
                    self.lin[col.rows[k]] += wj
            else:
                for k in range(col.n_rows):
                    self.lin[col.rows[k]] += col.values[k] * wj

    cdef void add_to_column(self, Py_ssize_t j, double delta) noexcept nogil:
        """Record dr += M[:, j] * delta on the rows of column j (greedy)."""
        cdef Py_ssize_t k, i
        cdef Column col
        self.n_column_moves += 1
        self.column(j, &col)
        if col.values == NULL:
            delta *= col.value
            for k in range(col.n_rows):
                i = col.rows[k]
                self.dr[i] += delta
                if not self.touched_mark[i]:
                    self.touched_mark[i] = 1
                    self.touched[self.n_touched] = <int> i
                    self.n_touched += 1
        else:
            for k in range(col.n_rows):
                i = col.rows[k]
                self.dr[i] += col.values[k] * delta
                if not self.touched_mark[i]:
                    self.touched_mark[i] = 1
                    self.touched[self.n_touched] = <int> i
                    self.n_touched += 1

    cdef inline void tree_row_gradient(self, Py_ssize_t i, double dz) noexcept nogil:
        """gt += M[i, :] * dz over the tree blocks: one leaf per tree."""
        cdef Py_ssize_t t, k
        for t in range(self.T_tree):
            k = self.leaf_table[i, t]
            self.gt[k] += self.leaf_values_p[k] * dz

    cdef int flush_rows(self) except -1 nogil:
        """Apply dr to the datafit's state on the touched rows and correct the
        full gradient gt by the changes it reports (row kernel per layout,
        resolved once per call: a row's leaves in the tree blocks, through
        the table, then its entries in the general blocks, through the CSR
        copy)."""
        cdef Py_ssize_t q, i, p
        cdef double dz
        cdef Py_ssize_t n_shifted, g, r
        cdef bint tree_part = self.T_tree > 0
        if self.row_group > 1:
            # widen to whole groups (the new rows shift by 0, but their
            # derivatives change with their group's)
            n_shifted = self.n_touched
            for q in range(n_shifted):
                g = self.touched[q] - self.touched[q] % self.row_group
                for r in range(g, g + self.row_group):
                    if not self.touched_mark[r]:
                        self.touched_mark[r] = 1
                        self.touched[self.n_touched] = <int> r
                        self.n_touched += 1
        if self.n_touched:
            self.synced = False
            self.datafit.shift_rows(&self.st, &self.touched[0], &self.dr[0], self.n_touched)
        if self.is_tree:
            # the tree layout's own loop (the common case, kept unswitched)
            for q in range(self.n_touched):
                i = self.touched[q]
                dz = self.dr[i]
                self.dr[i] = 0.0
                self.touched_mark[i] = 0
                if dz != 0.0:
                    self.tree_row_gradient(i, dz)
            self.n_touched = 0
            return 0
        for q in range(self.n_touched):
            i = self.touched[q]
            dz = self.dr[i]
            self.dr[i] = 0.0
            self.touched_mark[i] = 0
            if dz != 0.0:
                if tree_part:
                    self.tree_row_gradient(i, dz)
                for p in range(self.row_ptr[i], self.row_ptr[i + 1]):
                    self.gt[self.row_cols[p]] += self.row_vals[p] * dz
        self.n_touched = 0
        return 0

    cdef int full_gradient(self) except -1 nogil:
        """gt_j = gradient along column j minus its common part c * m_j."""
        cdef Py_ssize_t j
        cdef Column col
        cdef double c = self.datafit.common_gradient(&self.st)
        cdef double g
        self.n_full_gradients += 1
        for j in range(self.R):
            self.column(j, &col)
            g = self.datafit.column_gradient(&self.st, &col)
            self.col_grad[j] = g
            self.gt[j] = g - c * self.m[j]
        return 0

    cdef int resync(self) except -1 nogil:
        """Recompute the datafit's state, the gradient and the penalty values
        from w and the intercept (only the penalty values when the state is
        already exactly that: see in_sync)."""
        cdef Py_ssize_t j
        if self.in_sync():
            self.pen_total = self.recompute_penalty()
            return 0
        self.resync_value()
        self.full_gradient()
        if self.sync_ok:
            for j in range(self.R):
                self.w_sync[j] = self.w[j]
            self.b_sync = self.st.intercept
            self.synced = True
        return 0

    cdef bint in_sync(self) noexcept nogil:
        """Whether the datafit's state and the column gradients are bitwise
        what a resync at the current w and intercept computes: nothing moved
        them since the last resync (``synced``, cleared by every change of
        the state) and w and the intercept are the values it saw (O(R),
        against O(nnz) for the resync). Along a warm path most points keep
        the previous point's weights: their solve then reads no data."""
        cdef Py_ssize_t j
        if not (self.synced and self.st.intercept == self.b_sync):
            return False
        for j in range(self.R):
            if self.w[j] != self.w_sync[j]:
                return False
        return True

    cdef int resync_value(self) except -1 nogil:
        """Recompute the datafit's state and the penalty values (what F
        needs), leaving the column gradients stale: for a line search, which
        evaluates F at many points (the engine resyncs before it reads the
        gradients again)."""
        self.synced = False
        self.n_state_rebuilds += 1
        self.linear_predictor()
        self.datafit.initialize(&self.st, &self.lin[0])
        self.pen_total = self.recompute_penalty()
        return 0

    cdef inline double objective(self) except? -1 nogil:
        return self.datafit.value(&self.st) + self.pen_total

    cdef int check_no_rise(self, double before) except -1 nogil:
        """A sweep of block updates cannot raise F when the steps come from a
        true curvature bound (each minimises a majoriser of F over its
        block): if F rose, the datafit's bound is below the loss's actual
        curvature. Said here, rather than later as a loss overflowing to NaN
        when the overshooting steps diverge."""
        cdef double after
        if not self.check_majoriser:
            return 0
        after = self.objective()
        if after <= before + 1e-9 * fmax(fabs(before), 1e-300):
            return 0
        with gil:
            name = getattr(self.datafit, "name", None) or type(self.datafit).__name__
            raise ValueError(
                f"datafit {name}: its curvature bound is below the loss's actual "
                f"curvature: a sweep of block updates, each minimising a majoriser of F "
                f"built from curvature_bound, raised F from {before:.6g} to {after:.6g}; "
                "curvature_bound(y) must return u_i >= loss''(y_i, eta) for every eta")

    cdef int record_objective(self) except -1 nogil:
        if self.record and self.trace_len < self.trace.shape[0]:
            self.trace[self.trace_len] = self.objective()
            self.trace_len += 1
        return 0

    cdef int intercept_step(self, bint keep_gradient) except -1 nogil:
        """One intercept step of the datafit (a no-op for a profiled one)."""
        if self.datafit.update_intercept(&self.st) > 0.0:
            self.synced = False
            self.record_objective()
            if keep_gradient:
                self.full_gradient()
        return 0

    cdef int optimise_intercept(self) except -1 nogil:
        """Intercept steps until b stops moving (w fixed); 1 if it moved."""
        cdef Py_ssize_t k
        cdef double moved
        cdef int any_move = 0
        for k in range(INTERCEPT_MAX_STEPS):
            moved = self.datafit.update_intercept(&self.st)
            if moved > 0.0:
                any_move = 1
                self.synced = False
            if moved <= 1e-13 * (1.0 + fabs(self.st.intercept)):
                break
        return any_move

    cdef double intercept_gradient(self) except? -1 nogil:
        """sum_i s_i loss'(y_i, eta_i): zero at the optimal intercept."""
        cdef Py_ssize_t i
        cdef double total = 0.0, worst = 0.0
        cdef Py_ssize_t k
        if self.group_intercepts:
            self.datafit.row_derivatives(&self.st, &self.lin[0], NULL)
            for k in range(self.row_group):
                total = 0.0
                for i in range(self.n // self.row_group):
                    total += self.lin[i * self.row_group + k]
                worst = fmax(worst, fabs(total))
            return worst
        if not self.st.fit_intercept:
            return 0.0
        self.datafit.row_derivatives(&self.st, &self.lin[0], NULL)
        for i in range(self.n):
            total += self.lin[i]
        return total

    # ------------------------------------------------------------------
    # the two steps of an iteration

    cdef inline void block_view(self, Py_ssize_t t, Block* blk) noexcept nogil:
        """Block t (all its columns) as the penalty sees it."""
        cdef Py_ssize_t lo = self.block_ptr[t]
        blk.n = self.block_ptr[t + 1] - lo
        blk.index = t
        blk.columns = &self.col_index[lo]
        blk.curv = &self.curv[lo]

    cdef inline void block_gradient(self, Py_ssize_t lo, Py_ssize_t hi, double c) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(lo, hi):
            self.buf_g[j - lo] = self.gt[j] + c * self.m[j]

    cdef int score_blocks(self) except -1 nogil:
        cdef Py_ssize_t t, lo, hi
        cdef Block blk
        cdef double c = self.datafit.common_gradient(&self.st)
        for t in range(self.T):
            lo = self.block_ptr[t]
            hi = self.block_ptr[t + 1]
            self.block_gradient(lo, hi, c)
            self.block_view(t, &blk)
            self.scores[t] = self.penalty.block_score(
                &blk, &self.w[lo], &self.buf_g[0], &self.step[lo], &self.buf_work[0])
        return 0

    cdef int update_block(self, Py_ssize_t t) except -1 nogil:
        """Block update of block t with the full gradient kept (greedy)."""
        cdef Py_ssize_t lo = self.block_ptr[t], hi = self.block_ptr[t + 1]
        cdef Py_ssize_t nb = hi - lo, j
        cdef double delta, new_pen
        cdef bint moved = False
        cdef Block blk
        self.block_view(t, &blk)
        self.block_gradient(lo, hi, self.datafit.common_gradient(&self.st))
        for j in range(nb):
            if self.step[lo + j] > 0.0:
                self.buf_z[j] = self.w[lo + j] - self.buf_g[j] / self.step[lo + j]
            else:
                self.buf_z[j] = self.w[lo + j]
        self.penalty.prox(&blk, &self.buf_z[0], &self.step[lo], &self.buf_x[0])
        for j in range(nb):
            delta = self.buf_x[j] - self.w[lo + j]
            if delta != 0.0:
                moved = True
                self.add_to_column(lo + j, delta)
                self.w[lo + j] = self.buf_x[j]
        if moved:
            new_pen = self.penalty.value(&blk, &self.w[lo])
            self.pen_total += new_pen - self.block_pen[t]
            self.block_pen[t] = new_pen
            self.flush_rows()
        self.record_objective()
        return 0

    cdef double max_score(self) noexcept nogil:
        cdef double best = 0.0
        cdef Py_ssize_t t
        for t in range(self.T):
            best = fmax(best, self.scores[t])
        return best

    cdef int confirm_by_sweep(self, double score_tol, double obj_tol, double grad_tol,
                              bint working_set) except -1 nogil:
        """One update of every block and one intercept step; converged (1) if
        they lower F by at most obj_tol relative and leave every score below
        score_tol and the intercept's gradient below grad_tol."""
        cdef Py_ssize_t t
        cdef double before = self.objective()
        if working_set:
            self.full_working_set()
            # until a block moves, the state is the last resync's
            self.sweep_cached = self.in_sync()
        for t in range(self.T):
            if working_set:
                self.update_ws_block(t)
            else:
                self.update_block(t)
        self.sweep_cached = False
        self.check_no_rise(before)
        self.intercept_step(False)
        self.resync()
        if before - self.objective() > obj_tol * fmax(fabs(before), 1e-300):
            return 0
        if fabs(self.intercept_gradient()) > grad_tol:
            return 0
        self.score_blocks()
        return self.max_score() <= score_tol

    cdef int run(self, double score_tol, double obj_tol, double grad_tol,
                 Py_ssize_t max_updates, Py_ssize_t* n_updates, bint* converged) except -1 nogil:
        cdef Py_ssize_t t, best, updates = 0, since_intercept = 0
        cdef double best_score, epoch_start
        converged[0] = False
        self.resync()
        epoch_start = self.objective() if self.check_majoriser else 0.0
        while updates < max_updates:
            self.score_blocks()
            best = 0
            best_score = -INFINITY
            for t in range(self.T):
                if self.scores[t] > best_score:   # ties: lowest index
                    best_score = self.scores[t]
                    best = t
            if best_score > score_tol:
                self.update_block(best)
                updates += 1
                since_intercept += 1
                if since_intercept >= self.T:   # one intercept step per epoch
                    since_intercept = 0
                    if self.check_majoriser:
                        self.check_no_rise(epoch_start)
                    self.intercept_step(True)
                    if self.check_majoriser:
                        epoch_start = self.objective()
                continue
            # the direction vector is (nearly) zero: confirm with a full sweep
            self.resync()
            updates += self.T
            since_intercept = 0
            if self.confirm_by_sweep(score_tol, obj_tol, grad_tol, False):
                converged[0] = True
                break
        n_updates[0] = updates
        return 0

    # ------------------------------------------------------------------
    # working-set strategy: the datafit's row state is kept incrementally; a
    # block's gradient is read off it (O(rows of the block's columns)); the
    # full gradient is only formed when the working set is chosen.

    cdef inline double column_gradient(self, Py_ssize_t j) except? -1 nogil:
        cdef Column col
        self.column(j, &col)
        return self.datafit.column_gradient(&self.st, &col)

    cdef int move_column(self, Py_ssize_t j, double value) except -1 nogil:
        """w_j = value, with the datafit's row state updated on its rows."""
        cdef Column col
        self.synced = False
        self.sweep_cached = False
        self.n_column_moves += 1
        self.column(j, &col)
        self.datafit.shift_column(&self.st, &col, value - self.w[j])
        self.w[j] = value
        return 0

    cdef double update_ws_block(self, Py_ssize_t k) except? -1 nogil:
        """Block update of working-set entry k; returns its score before."""
        cdef Py_ssize_t q0 = self.ws_ptr[k], nb = self.ws_ptr[k + 1] - q0
        cdef Py_ssize_t q, j
        cdef double delta, score, old_val = 0.0, new_val
        cdef bint moved = False
        cdef Block blk
        blk.n = nb
        blk.index = self.ws_blocks[k]
        blk.columns = &self.ws_cols[q0]
        blk.curv = &self.buf_curv[0]
        for q in range(nb):
            j = self.ws_cols[q0 + q]
            # nothing moved since the resync that computed col_grad: the
            # same value, without reading the column's rows
            self.buf_g[q] = self.col_grad[j] if self.sweep_cached else self.column_gradient(j)
            self.buf_w[q] = self.w[j]
            self.buf_step[q] = self.step[j]
            self.buf_curv[q] = self.curv[j]
            self.buf_z[q] = (self.w[j] - self.buf_g[q] / self.step[j]
                             if self.step[j] > 0.0 else self.w[j])
        score = self.penalty.block_score(&blk, &self.buf_w[0], &self.buf_g[0],
                                         &self.buf_step[0], &self.buf_work[0])
        self.penalty.prox(&blk, &self.buf_z[0], &self.buf_step[0], &self.buf_x[0])
        for q in range(nb):
            delta = self.buf_x[q] - self.buf_w[q]
            if delta != 0.0:
                if not moved:
                    old_val = self.penalty.value(&blk, &self.buf_w[0])
                    moved = True
                self.move_column(self.ws_cols[q0 + q], self.buf_x[q])
        if moved:
            new_val = self.penalty.value(&blk, &self.buf_x[0])
            self.pen_total += new_val - old_val
        self.record_objective()
        return score

    cdef void full_working_set(self) noexcept nogil:
        cdef Py_ssize_t t, j
        for t in range(self.T):
            self.ws_blocks[t] = t
            self.ws_ptr[t] = self.block_ptr[t]
        self.ws_ptr[self.T] = self.R
        for j in range(self.R):
            self.ws_cols[j] = j
        self.n_ws = self.T
        self.n_ws_cols = self.R

    cdef int build_working_set(self, Py_ssize_t[::1] order, Py_ssize_t n_new,
                               double score_tol) except -1 nogil:
        """Blocks with nonzero weights, plus the n_new best-scored others.

        For separable penalties only the block's columns that are nonzero or
        violate optimality enter; fusion-type penalties take whole blocks.
        """
        cdef Py_ssize_t r, t, j, lo, hi, added = 0
        cdef bint active, take
        cdef Block blk
        cdef double g, c = self.datafit.common_gradient(&self.st)
        self.n_ws = 0
        self.n_ws_cols = 0
        self.ws_ptr[0] = 0
        for r in range(self.T):
            t = order[r]
            lo = self.block_ptr[t]
            hi = self.block_ptr[t + 1]
            active = False
            for j in range(lo, hi):
                if self.w[j] != 0.0:
                    active = True
                    break
            take = active
            if not take and added < n_new and self.scores[t] > score_tol:
                take = True
                added += 1
            if not take:
                continue
            if self.penalty.flags & PENALTY_SEPARABLE:
                self.block_view(t, &blk)
                self.penalty.subdiff(&blk, &self.w[lo], &self.lo_buf[0], &self.hi_buf[0])
                for j in range(lo, hi):
                    g = self.gt[j] + c * self.m[j]
                    if (self.w[j] != 0.0 or self.lo_buf[j - lo] + g > 0.0
                            or -g - self.hi_buf[j - lo] > 0.0):
                        self.ws_cols[self.n_ws_cols] = j
                        self.n_ws_cols += 1
            else:
                for j in range(lo, hi):
                    self.ws_cols[self.n_ws_cols] = j
                    self.n_ws_cols += 1
            if self.n_ws_cols > self.ws_ptr[self.n_ws]:
                self.ws_blocks[self.n_ws] = t
                self.n_ws += 1
                self.ws_ptr[self.n_ws] = self.n_ws_cols
        return 0

    cdef double recompute_penalty(self) except? -1 nogil:
        """Penalty of every block (kept in block_pen, for the greedy strategy)."""
        cdef Py_ssize_t t
        cdef Block blk
        cdef double total = 0.0
        for t in range(self.T):
            self.block_view(t, &blk)
            self.block_pen[t] = self.penalty.value(&blk, &self.w[self.block_ptr[t]])
            total += self.block_pen[t]
        return total

    cdef void save_rows(self) noexcept nogil:
        cdef Py_ssize_t k, i
        for k in range(self.rows.shape[0]):
            for i in range(self.n):
                self.rows_save[k, i] = self.rows[k, i]
        for k in range(4):
            self.totals_save[k] = self.st.total[k]
        self.intercept_save = self.st.intercept

    cdef void restore_rows(self) noexcept nogil:
        cdef Py_ssize_t k, i
        self.synced = False
        for k in range(self.rows.shape[0]):
            for i in range(self.n):
                self.rows[k, i] = self.rows_save[k, i]
        for k in range(4):
            self.st.total[k] = self.totals_save[k]
        self.st.intercept = self.intercept_save

    cdef inline double known_sign(self, Py_ssize_t q, Py_ssize_t n_snap,
                                  double value) noexcept nogil:
        """``value`` clipped to the half-lines working column q's snapshots
        reached (0 if every snapshot is 0)."""
        cdef Py_ssize_t a
        cdef bint pos = False, neg = False
        for a in range(n_snap):
            if self.snapshots[a, q] > 0.0:
                pos = True
            elif self.snapshots[a, q] < 0.0:
                neg = True
        if value > 0.0 and not pos:
            return 0.0
        if value < 0.0 and not neg:
            return 0.0
        return value

    cdef int feasible_start(self) except -1 nogil:
        """Zero every block whose penalty value is not finite (a start point
        outside the bounds of a sign-bounded penalty: zero is always inside
        them), so that the solve starts feasible and F finite."""
        cdef Py_ssize_t t, j
        cdef Block blk
        cdef bint changed = False
        for t in range(self.T):
            self.block_view(t, &blk)
            if not isfinite(self.penalty.value(&blk, &self.w[self.block_ptr[t]])):
                for j in range(self.block_ptr[t], self.block_ptr[t + 1]):
                    self.w[j] = 0.0
                changed = True
        if changed:
            self.resync()
        return 0

    cdef int anderson_step(self, Py_ssize_t n_snap) except -1 nogil:
        """Extrapolate the last snapshots of the working columns; keep the
        result only if it lowers F (so every accepted step is a descent)."""
        cdef double coef[ANDERSON_K]
        cdef Py_ssize_t K, a, q, j
        cdef double acc, f_old, pen_old
        K = anderson_weights(&self.snapshots[0, 0], self.snapshots.shape[1], n_snap,
                             self.n_ws_cols, coef)
        if K == 0:
            return 0
        f_old = self.objective()
        pen_old = self.pen_total
        self.save_rows()
        for q in range(self.n_ws_cols):
            acc = 0.0
            for a in range(K):
                acc += coef[a] * self.snapshots[a + 1, q]
            if self.sign_bounds:
                # the penalty's bounds are half-lines at zero the engine
                # cannot see: a sign some snapshot (a prox output, feasible)
                # took is allowed, a sign none took may not be, so the
                # extrapolation is clipped to the signs the snapshots show
                # (all zero: stays zero)
                acc = self.known_sign(q, n_snap, acc)
            j = self.ws_cols[q]
            self.anderson_w[q] = self.w[j]
            if acc != self.w[j]:
                self.move_column(j, acc)
        self.pen_total = self.recompute_penalty()
        if self.objective() < f_old:
            self.record_objective()
            return 1
        for q in range(self.n_ws_cols):
            self.w[self.ws_cols[q]] = self.anderson_w[q]
        self.restore_rows()
        self.pen_total = pen_old
        return 0

    cdef int solve_working_set(self, double inner_tol, Py_ssize_t max_updates,
                               Py_ssize_t* updates) except -1 nogil:
        """Cyclic block updates over the working set, an intercept step per
        epoch, and Anderson extrapolation.

        Returns 1 if the inner tolerance was reached, 0 if the epoch cap or
        the update budget stopped it (coordinate descent is struggling).
        """
        cdef Py_ssize_t k, q, n_snap = 0, epoch = 0
        cdef double epoch_score, checkpoint = INFINITY, before = 0.0
        while updates[0] < max_updates and epoch < INNER_MAX_EPOCHS:
            epoch += 1
            epoch_score = 0.0
            if self.check_majoriser:
                before = self.objective()
            self.n_ws_epochs += 1
            self.n_ws_block_updates += self.n_ws
            for k in range(self.n_ws):
                epoch_score = fmax(epoch_score, self.update_ws_block(k))
            self.check_no_rise(before)
            self.intercept_step(False)
            updates[0] += self.n_ws
            if epoch_score <= inner_tol:
                return 1
            if epoch % INNER_CHECK == 0:
                if epoch_score > 0.5 * checkpoint:
                    return 0
                checkpoint = epoch_score
            for q in range(self.n_ws_cols):
                self.snapshots[n_snap, q] = self.w[self.ws_cols[q]]
            n_snap += 1
            if n_snap == ANDERSON_K + 1:
                self.n_anderson_tried += 1
                self.n_anderson_accepted += self.anderson_step(n_snap)
                n_snap = 0
        return 0

    # ------------------------------------------------------------------
    # active-set Newton steps (firecy/solver/_active_set.pyx)

    cdef int qp_weights(self) except -1 nogil:
        """The penalty's local model as a weighted L1, lam_j per column.

        A zero weight: the half-width of the subdifferential at zero (it
        must be symmetric, [-lam_j, lam_j]). A nonzero weight: the slope
        sign(w_j) P'(w_j) from the penalty's local model (local_groups, one
        group per nonzero coordinate for a separable penalty), which must
        have P'' = 0 there and just off zero at the zero weights (linear
        pieces: the model is exact). Returns 0
        if the penalty has no such model here (no local model, a curved
        piece such as MCP's concave part, an asymmetric kink); the engine
        then uses coordinate descent."""
        cdef Py_ssize_t t, lo, hi, nb, j, g, n_groups
        cdef double lam_j
        cdef Block blk
        for t in range(self.T):
            lo = self.block_ptr[t]
            hi = self.block_ptr[t + 1]
            nb = hi - lo
            self.block_view(t, &blk)
            for j in range(nb):
                self.buf_x[j] = 0.0
            self.penalty.subdiff(&blk, &self.buf_x[0], &self.lo_buf[0], &self.hi_buf[0])
            # the local model where the weights are, and just off zero where
            # they are zero (a probe a billionth of the kink's half-width
            # away): the model must stay linear when a weight leaves zero
            for j in range(nb):
                if self.w[lo + j] != 0.0:
                    self.buf_w[j] = self.w[lo + j]
                else:
                    self.buf_w[j] = 1e-9 * self.hi_buf[j] if self.hi_buf[j] > 0.0 else 1e-9
            n_groups = self.penalty.local_groups(&blk, &self.buf_w[0], &self.qp_group[0],
                                                 &self.buf_g[0], &self.buf_z[0])
            if n_groups < 0:
                return 0
            for j in range(nb):
                g = self.qp_group[j]
                # a concave piece (MCP) would do as its tangent, a majoriser,
                # but measured, that majorize-minimize outer loop costs 18x
                # the coordinate descent on the 8000-rule forest (142
                # active-set solves), and one tangent step then CD 2x: only
                # penalties that are linear off zero use the active set
                if g < 0 or g >= n_groups or self.buf_z[g] != 0.0:
                    return 0
                if self.w[lo + j] == 0.0:
                    lam_j = self.hi_buf[j]
                    if not (isfinite(lam_j) and lam_j >= 0.0 and self.lo_buf[j] == -lam_j):
                        return 0
                else:
                    lam_j = self.buf_g[g] if self.w[lo + j] > 0.0 else -self.buf_g[g]
                    if not (isfinite(lam_j) and lam_j >= 0.0):
                        return 0
                self.qp_lam[lo + j] = lam_j
        return 1

    cdef int qp_step(self, double kkt_tol, Py_ssize_t max_rounds) except -1 nogil:
        """Minimise the quadratic model of F at the current point by the
        active-set Newton solver and move there (the squared loss: exactly;
        other datafits: a proximal-Newton step with a backtracking line
        search). Returns 1 if F went down, 0 if not (the caller stops using
        the solver for this solve)."""
        cdef Py_ssize_t j
        cdef int status
        cdef double b, b_old, f_old, f_new, t, predicted, c
        cdef bint exact = self.datafit.exact_curvature
        if not self.qp_weights():
            return 0
        if not (exact and self.qp_rows_set):
            # the model's Hessian: sum_i s_i loss''_i (row weights)
            self.datafit.row_derivatives(&self.st, &self.lin[0], &self.qp_rows[0])
            self.qp.set_weights(&self.qp_rows[0])
            self.qp_rows_set = True
        c = self.datafit.common_gradient(&self.st)
        for j in range(self.R):
            self.qp_save[j] = self.w[j]
            self.qp_w[j] = self.w[j]
            self.anderson_w[j] = self.gt[j] + c * self.m[j]   # g0 (scratch)
        b_old = self.st.intercept
        b = b_old
        f_old = self.objective()
        status = self.qp.solve(&self.qp_w[0], &b, &self.anderson_w[0], self.intercept_gradient(),
                               &self.qp_lam[0], kkt_tol, max_rounds)
        self.n_qp_steps += 1
        if exact:
            for j in range(self.R):
                self.w[j] = self.qp_w[j]
            self.st.intercept = b if self.st.fit_intercept else 0.0
            self.resync()
            f_new = self.objective()
            if f_new <= f_old:
                self.record_objective()
                return 1 if f_new < f_old else 0
        else:
            predicted = self.qp.model_change
            if predicted < 0.0:
                t = 1.0
                for j in range(LINE_SEARCH_STEPS):
                    self.line_point(t, b_old, b)
                    f_new = self.objective()
                    if f_new <= f_old + 1e-4 * t * predicted:
                        self.record_objective()
                        return 1
                    t *= 0.5
        # no decrease: back to where the step started
        for j in range(self.R):
            self.w[j] = self.qp_save[j]
        self.st.intercept = b_old
        self.resync()
        return 0

    cdef int line_point(self, double t, double b_old, double b_new) except -1 nogil:
        """w = save + t (qp_w - save), b likewise, and the state there."""
        cdef Py_ssize_t j
        for j in range(self.R):
            self.w[j] = self.qp_save[j] + t * (self.qp_w[j] - self.qp_save[j])
        self.st.intercept = (b_old + t * (b_new - b_old)) if self.st.fit_intercept else 0.0
        self.resync()
        return 0

    cdef int run_working_set(self, double score_tol, double obj_tol, double grad_tol,
                             Py_ssize_t max_updates, Py_ssize_t* n_updates,
                             bint* converged) except -1 nogil:
        cdef Py_ssize_t updates = 0, n_active, n_new, rounds, rounds_before
        cdef double best_score, kkt_tol
        cdef Py_ssize_t[::1] order
        converged[0] = False
        # the solver's optimality tolerance per coordinate: a block's score
        # (squared norm of its direction vector) then stays below score_tol
        # (tighter than needed: once the support is right, the active set
        # reaches its vertex in a round or two, so precision is nearly free)
        kkt_tol = 1e-3 * grad_tol / (self.max_block ** 0.5)
        while updates < max_updates:
            self.resync()
            self.score_blocks()
            best_score = self.max_score()
            if best_score <= score_tol:
                updates += self.T
                if self.confirm_by_sweep(score_tol, obj_tol, grad_tol, True):
                    converged[0] = True
                    if self.row_group > 1 and not self.record:
                        # a grouped (multinomial) solve ends on the support's
                        # stationary point itself, not within tol of it, as
                        # the class cycles' polish did: two fits of the same
                        # objective (weighted rows, repeated rows) then agree
                        # to rounding, not to sqrt(tol)
                        with gil:
                            # the final step, even on a support whose
                            # step did not land during the solve
                            self.newton_failed_on = None
                            newton_step(self)
                    break
                # every score is below tol, yet the sweep lowered F: the
                # scores miss a joint move (fused leaves moving together),
                # which sweeps make a little at a time; measured on iris
                # (boosting, MCP + fusion, a separable class), a thousand
                # sweeps each lowered F by 1e-5 relative up to max_iter.
                # Newton steps on the support's groups make that move at once
                with gil:
                    newton_step(self)
                continue
            if self.qp_enabled:
                # a round costs about a sweep (one gradient of every column)
                rounds = 1 if self.record else max(1, (max_updates - updates) // self.T)
                rounds_before = self.qp.n_rounds
                if self.qp_step(kkt_tol, rounds):
                    updates += self.T * max(1, self.qp.n_rounds - rounds_before)
                    continue
                self.qp_enabled = False
            with gil:
                order = np.argsort(-np.asarray(self.scores), kind="stable")
                n_active = int(np.count_nonzero(
                    np.add.reduceat(np.abs(np.asarray(self.w)), np.asarray(self.block_ptr[:self.T]))))
            n_new = max(10, n_active)
            self.build_working_set(order, n_new, score_tol)
            if not self.solve_working_set(fmax(score_tol, INNER_RATIO * best_score),
                                          max_updates, &updates):
                with gil:
                    ok = newton_step(self)
                    if self.verbose:
                        print(f"firecy: {updates} updates, best score {best_score:.3e}, "
                              f"working set {self.n_ws} blocks / {self.n_ws_cols} columns, "
                              f"Newton {'landed' if ok else 'no'}, F = {self.objective():.12g}, "
                              f"Anderson {self.n_anderson_accepted}/{self.n_anderson_tried}")
        self.resync()  # exact final state: no drift in the reported objective
        n_updates[0] = updates
        return 0

    def penalty_groups(self):
        """The penalty's grouped local model on every block in use.

        Returns (column_group, pen_grad, pen_hess) with column_group[j] the
        global group of column j (-1: stays at zero), or None if the penalty
        has no local model."""
        cdef Py_ssize_t t, j, lo, hi, n_groups = 0, local
        cdef Block blk
        cdef Py_ssize_t[::1] group = np.full(self.R, -1, dtype=np.intp)
        grad_arr = np.zeros(self.R)
        hess_arr = np.zeros(self.R)
        cdef double[::1] grad = grad_arr, hess = hess_arr
        self._require_penalty("penalty_groups")
        with nogil:
            for t in range(self.T):
                lo = self.block_ptr[t]
                hi = self.block_ptr[t + 1]
                for j in range(lo, hi):
                    if self.w[j] != 0.0:
                        break
                else:
                    continue
                self.block_view(t, &blk)
                local = self.penalty.local_groups(&blk, &self.w[lo], &group[lo],
                                                  &grad[n_groups], &hess[n_groups])
                if local == -2:
                    n_groups = -1
                    break
                for j in range(lo, hi):
                    if group[j] >= 0:
                        group[j] += n_groups
                n_groups += local
        if n_groups < 0:
            return None
        return np.asarray(group), grad_arr[:n_groups], hess_arr[:n_groups]

    # ------------------------------------------------------------------

    def solve(self, Penalty penalty, double[::1] w, double tol, Py_ssize_t max_updates,
              double score_scale, bint record_objective=False, bint warn=True,
              str strategy="working_set"):
        """Minimise F in place over ``w`` (and the intercept) from their current values.

        Parameters
        ----------
        penalty : Penalty
        w : ndarray of float64, shape (n_columns,)
            Start point; overwritten with the solution.
        tol : float
            Convergence: the largest block direction norm and the intercept's
            gradient are at most ``tol * score_scale`` (for decrease-scored
            penalties: the largest achievable decrease is at most
            ``tol * |F|``), and a full sweep of block updates lowers F by at
            most ``tol * |F|``.
        max_updates : int
            Maximum number of block updates.
        score_scale : float
            Scale of the direction vector (the lasso's lambda_max).

        Returns
        -------
        dict with keys intercept, objective, n_updates, converged, trace.
        """
        cdef Py_ssize_t n_updates = 0
        cdef bint converged = False
        cdef double score_tol, obj_tol = tol, grad_tol = tol * score_scale
        if strategy not in ("greedy", "working_set"):
            raise ValueError(f"strategy must be 'greedy' or 'working_set', got {strategy!r}")
        cdef bint use_greedy = strategy == "greedy"
        if w.shape[0] != self.R:
            raise ValueError(f"w has length {w.shape[0]}, the design has {self.R} columns")
        self.penalty = penalty
        self.w = w
        # a Newton step that failed on this support at another penalty (the
        # previous path point) says nothing about this one
        self.newton_failed_on = None
        self.record = record_objective
        self.trace_len = 0
        self.trace = np.empty(2 * (max_updates + self.T) + 100 if record_objective else 0)
        cdef bint score_is_decrease = penalty.flags & PENALTY_SCORE_IS_DECREASE
        score_tol = -1.0 if score_is_decrease else (tol * score_scale) ** 2
        # the active-set Newton solver takes separable penalties (their local
        # model must also be a weighted L1 at each step: see qp_weights)
        # and, measured, only pays for the squared loss (exact curvature: the
        # model is F); on the logistic loss the proximal-Newton steps stalled
        # short of tight tolerances, so logistic solves keep coordinate descent
        # Sign bounds (PENALTY_SIGN_BOUNDS): the active set's model is a
        # weighted L1 without them, its steps would cross them; coordinate
        # descent (whose prox respects them) takes those solves
        self.sign_bounds = bool(penalty.flags & PENALTY_SIGN_BOUNDS)
        self.qp_enabled = (not use_greedy and self.use_active_set and self.datafit.exact_curvature
                           and (penalty.flags & PENALTY_SEPARABLE) and not score_is_decrease
                           and not self.sign_bounds)
        # threads for the active set's per-column loops: at most max_threads
        # (default 1: measured on the shared 2-core machine, two threads were
        # no faster, 2.6 s vs 2.4 s for the 20% solve; results are the same)
        self.n_threads = max(1, min(self.max_threads, firecy_max_threads()))
        if self.qp_enabled and self.qp is None:
            self.qp = ActiveSetQP(self.design, self.st.fit_intercept,
                                  min(QP_MAX_SUPPORT, self.R), self.n_threads)
            self.qp_w = np.zeros(self.R)
            self.qp_lam = np.zeros(self.R)
            self.qp_save = np.zeros(self.R)
            self.qp_rows = np.zeros(self.n)
            self.qp_group = np.zeros(self.max_block, dtype=np.intp)
            self.qp_rows_set = False
        if self.qp is not None:
            self.qp.n_threads = self.n_threads
        # the warning names the solver that ran: the active set counts if it
        # did a round (it can hand over to coordinate descent after one)
        cdef Py_ssize_t qp_rounds_before = self.qp.n_rounds if self.qp is not None else 0
        try:
            with nogil:
                self.resync()
                if self.sign_bounds:
                    self.feasible_start()
                self.optimise_intercept()
                if score_is_decrease:
                    score_tol = tol * fmax(fabs(self.objective()), 1e-300)
                if use_greedy:
                    self.run(score_tol, obj_tol, grad_tol, max_updates, &n_updates, &converged)
                else:
                    self.run_working_set(score_tol, obj_tol, grad_tol, max_updates,
                                         &n_updates, &converged)
        finally:
            self.penalty = None
        if not converged and warn:
            qp_ran = self.qp is not None and self.qp.n_rounds > qp_rounds_before
            # the budget, not the count reached (a sweep may pass it): the same
            # text for every solve of a path and its folds, so that Python's
            # default filter shows it once rather than once per solve
            warnings.warn(
                f"firecy: {_strategy_name(use_greedy, qp_ran, self.qp_enabled)} did not "
                f"converge within {max_updates} block updates "
                f"(tol={tol:g}); increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        objective = float(self.objective())   # datafit value + the cached penalty total
        return {
            "intercept": float(self.st.intercept),
            "objective": objective,
            "n_updates": int(n_updates),
            "converged": bool(converged),
            "trace": np.asarray(self.trace)[: self.trace_len].copy(),
        }

    def objective_at(self, Penalty penalty, double[::1] w):
        """F at ``w`` with the optimal intercept, and that intercept."""
        self.penalty = penalty
        self.w = w
        try:
            with nogil:
                self.resync()
                self.optimise_intercept()
            objective = float(self.objective())
        finally:
            self.penalty = None
        return objective, float(self.st.intercept)

    def gradient_at_zero(self):
        """The datafit gradient at w = 0 with the optimal intercept (the
        intercept is solved to convergence first and kept as a warm start)."""
        cdef double c
        self.w = np.zeros(self.R)
        self.penalty = _NullPenalty()
        try:
            with nogil:
                self.resync()
                if self.optimise_intercept():
                    self.full_gradient()
                c = self.datafit.common_gradient(&self.st)
        finally:
            self.penalty = None
        return np.asarray(self.gt) + c * np.asarray(self.m)


cdef class _NullPenalty(Penalty):
    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        return 0.0
