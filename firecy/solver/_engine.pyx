"""Greedy block coordinate descent (papers/000 Algorithm 1), without the GIL.

Problem, with s the sample weights normalised to sum to one:

    F(w, b) = 1/2 sum_i s_i (y_i - b - (M w)_i)^2 + sum_t P(w_t)

State kept up to date incrementally (never recomputed per step):

    rt[i]  = y_i - (M w)_i              residual without the intercept
    S1     = sum_i s_i rt[i]            so the optimal intercept is b = S1
    S2     = sum_i s_i rt[i]^2          so F = (S2 - 2 b S1 + b^2) / 2 + P

and the gradient grad_j = -sum_i s_i M_ij (rt[i] - b). Blocks are scored
through the penalty's contract (by default the squared norm of the direction
vector d_j = dist(-grad_j, subdifferential_j)); a block update is exact (a
closed-form or 1-D fused-lasso prox with the block's diagonal curvature)
when no row has two nonzeros in the block, always true for trees, and one
prox-gradient step of length 1 / L_t otherwise. Two strategies:

* "greedy" (the paper's Algorithm 1): every iteration scores all blocks and
  updates the best one; the full gradient is kept incrementally (after a
  block update, only the rows of the changed columns correct it: changed rows
  x nonzeros per row).
* "working_set" (the default): blocks are chosen greedily by the same score
  into a working set (the blocks in use plus the best-scored others); the
  working set is solved by cyclic exact block updates with the residual kept
  incrementally and Anderson extrapolation; when that is slow (forests are
  ill-conditioned: trees are strongly correlated), Newton steps on the support
  with the penalty's local quadratic model (majorize-minimize steps for MCP's
  concave part), each accepted only if F decreases.

Either way, convergence is confirmed by a full sweep of exact block updates:
the direction vector can vanish at non-stationary points of non-separable
penalties (fusion), a sweep of exact block updates cannot.
"""
from libc.math cimport fabs, fmax, sqrt, INFINITY
from libc.string cimport memset

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve
from sklearn.exceptions import ConvergenceWarning

cimport numpy as cnp
from firecy.penalties._base cimport Penalty

cnp.import_array()

# Anderson extrapolation over the last ANDERSON_K epochs (as in skglm/celer)
cdef enum:
    ANDERSON_K = 5
# an inner solve stops once its largest block score falls below this
# fraction of the largest score that opened it
cdef double INNER_RATIO = 0.01
# epochs of an inner solve before the engine tries a Newton step on the support
# (Newton costs a dense factorisation; cheap epochs go first)
cdef Py_ssize_t INNER_MAX_EPOCHS = 100
# every INNER_CHECK epochs the largest block score must at least halve, or
# coordinate descent counts as slow and the engine tries a Newton step
cdef Py_ssize_t INNER_CHECK = 10
# largest support for a Newton step (a dense Cholesky of this size)
NEWTON_MAX_SUPPORT = 4000
# Newton steps per attempt: a factorisation each; on a still-shrinking support
# more than one step costs more than the coordinate epochs it saves (measured)
NEWTON_MAX_STEPS = 1
# majorize-minimize steps per factorisation when the local model is indefinite
NEWTON_MM_STEPS = 50


def _cholesky(matrix):
    """Cholesky factor, with a relative ridge of 1e-12 if singular (a whole
    tree in the support is collinear with the intercept); None if indefinite."""
    scale = max(float(np.max(np.abs(np.diag(matrix)))), 1e-300)
    for ridge in (0.0, 1e-12 * scale):
        try:
            return cho_factor(matrix + ridge * np.eye(matrix.shape[0]), check_finite=False)
        except np.linalg.LinAlgError:
            pass
    return None


cdef class GreedyBlockCD:
    """The engine state for one (design, y, sample_weight) problem.

    Reused along a path: each :meth:`solve` starts from the given weights.
    Build it through :func:`firecy.solver.solve` or
    :func:`firecy.solver.fire_path` rather than directly.
    """
    # design
    cdef Py_ssize_t n, R, T, max_block
    cdef bint is_tree
    cdef const Py_ssize_t[::1] block_ptr
    cdef const Py_ssize_t[::1] col_ptr
    cdef const int[::1] col_rows
    cdef const double[::1] col_vals       # general layout
    cdef const double[::1] leaf_values    # tree layout
    cdef const int[:, ::1] leaf_table     # tree layout
    cdef const Py_ssize_t[::1] row_ptr    # general layout
    cdef const int[::1] row_cols
    cdef const double[::1] row_vals
    cdef const double[::1] y, s
    cdef const double[::1] m, curv, step  # M^T s, diag(M^T S M), prox weights
    cdef bint fit_intercept
    # state
    cdef double[::1] w, rt, gt, dr, block_pen, scores
    cdef unsigned char[::1] touched_mark
    cdef int[::1] touched
    cdef Py_ssize_t n_touched
    cdef double S1, S2, b, pen_total
    cdef double[::1] buf_g, buf_z, buf_x, buf_work
    cdef Penalty penalty
    # working-set strategy: blocks, their columns, Anderson snapshots
    cdef Py_ssize_t[::1] ws_blocks, ws_ptr, ws_cols
    cdef Py_ssize_t n_ws, n_ws_cols
    cdef double[::1] buf_w, buf_step, buf_curv, rt_save, lo_buf, hi_buf
    cdef double[:, ::1] snapshots
    cdef double[::1] anderson_w
    cdef object newton_failed_on
    cdef public int verbose
    cdef public Py_ssize_t n_anderson_tried, n_anderson_accepted
    # trace of the objective after each block update
    cdef double[::1] trace
    cdef Py_ssize_t trace_len
    cdef bint record

    def __init__(self, design, y, sample_weight, column_sums, curvature,
                 double[::1] step, bint fit_intercept):
        self.n = design.n_samples
        self.R = design.n_columns
        self.T = design.n_blocks
        self.is_tree = design.is_tree
        self.block_ptr = design.block_ptr
        self.max_block = int(np.diff(design.block_ptr).max())
        self.col_ptr = design.col_ptr
        self.col_rows = design.col_rows
        if self.is_tree:
            self.leaf_values = design.leaf_values
            self.leaf_table = design.leaf_table
        else:
            self.col_vals = design.col_vals
            self.row_ptr = design.row_ptr
            self.row_cols = design.row_cols
            self.row_vals = design.row_vals
        self.y = y
        self.s = sample_weight
        self.m = np.ascontiguousarray(column_sums, dtype=np.float64)
        self.curv = np.ascontiguousarray(curvature, dtype=np.float64)
        self.step = step
        self.fit_intercept = fit_intercept
        self.rt = np.zeros(self.n)
        self.dr = np.zeros(self.n)
        self.gt = np.zeros(self.R)
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
        self.rt_save = np.zeros(self.n)
        self.ws_blocks = np.zeros(self.T, dtype=np.intp)
        self.ws_ptr = np.zeros(self.T + 1, dtype=np.intp)
        self.ws_cols = np.zeros(self.R, dtype=np.intp)
        self.snapshots = np.zeros((ANDERSON_K + 1, self.R))
        self.anderson_w = np.zeros(self.R)

    @property
    def curvature(self):
        return np.asarray(self.curv)

    @property
    def column_sums(self):
        return np.asarray(self.m)

    # ------------------------------------------------------------------
    # residual and gradient bookkeeping

    cdef inline double value_at(self, Py_ssize_t p, Py_ssize_t j) noexcept nogil:
        """The value of the p-th stored entry of column j."""
        return self.leaf_values[j] if self.is_tree else self.col_vals[p]

    cdef void add_to_column(self, Py_ssize_t j, double delta) noexcept nogil:
        """Record dr -= M[:, j] * delta on the rows of column j."""
        cdef Py_ssize_t p, i
        for p in range(self.col_ptr[j], self.col_ptr[j + 1]):
            i = self.col_rows[p]
            self.dr[i] -= self.value_at(p, j) * delta
            if not self.touched_mark[i]:
                self.touched_mark[i] = 1
                self.touched[self.n_touched] = <int> i
                self.n_touched += 1

    cdef void flush_rows(self) noexcept nogil:
        """Apply dr to rt, S1, S2 and correct gt on the touched rows only."""
        cdef Py_ssize_t q, i, t, p, k
        cdef double d, sd, old
        for q in range(self.n_touched):
            i = self.touched[q]
            d = self.dr[i]
            self.dr[i] = 0.0
            self.touched_mark[i] = 0
            if d == 0.0:
                continue
            old = self.rt[i]
            self.rt[i] = old + d
            sd = self.s[i] * d
            self.S1 += sd
            self.S2 += sd * (2.0 * old + d)
            if self.is_tree:
                for t in range(self.T):
                    k = self.leaf_table[i, t]
                    self.gt[k] -= self.leaf_values[k] * sd
            else:
                for p in range(self.row_ptr[i], self.row_ptr[i + 1]):
                    self.gt[self.row_cols[p]] -= self.row_vals[p] * sd
        self.n_touched = 0
        self.b = self.S1 if self.fit_intercept else 0.0

    cdef int resync(self) except -1 nogil:
        """Recompute rt, gt, S1, S2 and the penalty values from scratch."""
        cdef Py_ssize_t i, j, p, t, lo, hi
        cdef double acc
        for i in range(self.n):
            self.rt[i] = self.y[i]
        for j in range(self.R):
            if self.w[j] != 0.0:
                for p in range(self.col_ptr[j], self.col_ptr[j + 1]):
                    self.rt[self.col_rows[p]] -= self.value_at(p, j) * self.w[j]
        self.S1 = 0.0
        self.S2 = 0.0
        for i in range(self.n):
            self.S1 += self.s[i] * self.rt[i]
            self.S2 += self.s[i] * self.rt[i] * self.rt[i]
        for j in range(self.R):
            acc = 0.0
            for p in range(self.col_ptr[j], self.col_ptr[j + 1]):
                i = self.col_rows[p]
                acc += self.value_at(p, j) * self.s[i] * self.rt[i]
            self.gt[j] = -acc
        self.b = self.S1 if self.fit_intercept else 0.0
        self.pen_total = self.recompute_penalty()
        return 0

    cdef inline double objective(self) noexcept nogil:
        return 0.5 * (self.S2 - 2.0 * self.b * self.S1 + self.b * self.b) + self.pen_total

    # ------------------------------------------------------------------
    # the two steps of an iteration

    cdef inline void block_gradient(self, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(lo, hi):
            self.buf_g[j - lo] = self.gt[j] + self.b * self.m[j]

    cdef int score_blocks(self) except -1 nogil:
        cdef Py_ssize_t t, lo, hi
        for t in range(self.T):
            lo = self.block_ptr[t]
            hi = self.block_ptr[t + 1]
            self.block_gradient(lo, hi)
            self.scores[t] = self.penalty.block_score(
                &self.w[lo], &self.buf_g[0], &self.step[lo], &self.curv[lo],
                &self.buf_work[0], hi - lo)
        return 0

    cdef int update_block(self, Py_ssize_t t) except -1 nogil:
        """Minimise F over block t (exactly when its curvature is diagonal)."""
        cdef Py_ssize_t lo = self.block_ptr[t], hi = self.block_ptr[t + 1]
        cdef Py_ssize_t nb = hi - lo, j
        cdef double delta, new_pen
        cdef bint moved = False
        self.block_gradient(lo, hi)
        for j in range(nb):
            if self.step[lo + j] > 0.0:
                self.buf_z[j] = self.w[lo + j] - self.buf_g[j] / self.step[lo + j]
            else:
                self.buf_z[j] = self.w[lo + j]
        self.penalty.prox(&self.buf_z[0], &self.step[lo], &self.curv[lo], &self.buf_x[0], nb)
        for j in range(nb):
            delta = self.buf_x[j] - self.w[lo + j]
            if delta != 0.0:
                moved = True
                self.add_to_column(lo + j, delta)
                self.w[lo + j] = self.buf_x[j]
        if moved:
            new_pen = self.penalty.value(&self.w[lo], &self.curv[lo], nb)
            self.pen_total += new_pen - self.block_pen[t]
            self.block_pen[t] = new_pen
            self.flush_rows()
        if self.record and self.trace_len < self.trace.shape[0]:
            self.trace[self.trace_len] = self.objective()
            self.trace_len += 1
        return 0

    cdef double max_score(self) noexcept nogil:
        cdef double best = 0.0
        cdef Py_ssize_t t
        for t in range(self.T):
            best = fmax(best, self.scores[t])
        return best

    cdef int confirm_by_sweep(self, double score_tol, double obj_tol,
                              bint working_set) except -1 nogil:
        """One exact update of every block; converged (1) if the sweep lowers
        F by at most obj_tol relative and leaves every score below score_tol.
        (The direction vector can vanish at non-stationary points of fusion;
        a sweep of exact block updates cannot be fooled that way.)"""
        cdef Py_ssize_t t
        cdef double before = self.objective()
        if working_set:
            self.full_working_set()
        for t in range(self.T):
            if working_set:
                self.update_ws_block(t)
            else:
                self.update_block(t)
        self.resync()
        if before - self.objective() > obj_tol * fmax(fabs(before), 1e-300):
            return 0
        self.score_blocks()
        return self.max_score() <= score_tol

    cdef int run(self, double score_tol, double obj_tol, Py_ssize_t max_updates,
                 Py_ssize_t* n_updates, bint* converged) except -1 nogil:
        cdef Py_ssize_t t, best, updates = 0
        cdef double best_score, before
        converged[0] = False
        self.resync()
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
                continue
            # the direction vector is (nearly) zero: confirm with a full sweep
            self.resync()
            updates += self.T
            if self.confirm_by_sweep(score_tol, obj_tol, False):
                converged[0] = True
                break
        n_updates[0] = updates
        return 0


    # ------------------------------------------------------------------
    # working-set strategy: the residual is kept incrementally; a block's
    # gradient is read off it (O(rows of the block's columns)); the full
    # gradient is only formed when the working set is chosen.

    cdef inline double column_gradient(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t p, i
        cdef double acc = 0.0
        if self.is_tree:
            for p in range(self.col_ptr[j], self.col_ptr[j + 1]):
                i = self.col_rows[p]
                acc += self.s[i] * self.rt[i]
            acc *= self.leaf_values[j]
        else:
            for p in range(self.col_ptr[j], self.col_ptr[j + 1]):
                i = self.col_rows[p]
                acc += self.col_vals[p] * self.s[i] * self.rt[i]
        return -acc + self.b * self.m[j]

    cdef void move_column(self, Py_ssize_t j, double value) noexcept nogil:
        """w_j = value, with rt, S1, S2 updated on the column's rows."""
        cdef Py_ssize_t p, i
        cdef double old, new, sd, delta = value - self.w[j]
        for p in range(self.col_ptr[j], self.col_ptr[j + 1]):
            i = self.col_rows[p]
            old = self.rt[i]
            new = old - self.value_at(p, j) * delta
            self.rt[i] = new
            sd = self.s[i] * (new - old)
            self.S1 += sd
            self.S2 += sd * (new + old)
        self.w[j] = value

    cdef double update_ws_block(self, Py_ssize_t k) except? -1 nogil:
        """Exact block update of working-set entry k; returns its score before."""
        cdef Py_ssize_t t = self.ws_blocks[k]
        cdef Py_ssize_t q0 = self.ws_ptr[k], nb = self.ws_ptr[k + 1] - q0
        cdef Py_ssize_t q, j
        cdef double delta, score, old_val, new_val
        cdef bint moved = False
        for q in range(nb):
            j = self.ws_cols[q0 + q]
            self.buf_g[q] = self.column_gradient(j)
            self.buf_w[q] = self.w[j]
            self.buf_step[q] = self.step[j]
            self.buf_curv[q] = self.curv[j]
            self.buf_z[q] = (self.w[j] - self.buf_g[q] / self.step[j]
                             if self.step[j] > 0.0 else self.w[j])
        score = self.penalty.block_score(&self.buf_w[0], &self.buf_g[0], &self.buf_step[0],
                                         &self.buf_curv[0], &self.buf_work[0], nb)
        self.penalty.prox(&self.buf_z[0], &self.buf_step[0], &self.buf_curv[0],
                          &self.buf_x[0], nb)
        for q in range(nb):
            delta = self.buf_x[q] - self.buf_w[q]
            if delta != 0.0:
                if not moved:
                    old_val = self.penalty.value(&self.buf_w[0], &self.buf_curv[0], nb)
                    moved = True
                self.move_column(self.ws_cols[q0 + q], self.buf_x[q])
        if moved:
            new_val = self.penalty.value(&self.buf_x[0], &self.buf_curv[0], nb)
            self.pen_total += new_val - old_val
            self.b = self.S1 if self.fit_intercept else 0.0
        if self.record and self.trace_len < self.trace.shape[0]:
            self.trace[self.trace_len] = self.objective()
            self.trace_len += 1
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
        cdef double g
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
            if self.penalty.is_separable:
                self.penalty.subdiff(&self.w[lo], &self.curv[lo], &self.lo_buf[0],
                                     &self.hi_buf[0], hi - lo)
                for j in range(lo, hi):
                    g = self.gt[j] + self.b * self.m[j]
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
        cdef Py_ssize_t t, lo, hi
        cdef double total = 0.0
        for t in range(self.T):
            lo = self.block_ptr[t]
            hi = self.block_ptr[t + 1]
            self.block_pen[t] = self.penalty.value(&self.w[lo], &self.curv[lo], hi - lo)
            total += self.block_pen[t]
        return total

    cdef int anderson_step(self, Py_ssize_t n_snap) except -1 nogil:
        """Extrapolate the last snapshots of the working columns; keep the
        result only if it lowers F (so every accepted step is a descent)."""
        cdef Py_ssize_t K = n_snap - 1, a, c, q, j, piv
        cdef double gram[ANDERSON_K][ANDERSON_K]
        cdef double rhs[ANDERSON_K]
        cdef double coef[ANDERSON_K]
        cdef double acc, total, f_old, S1_old, S2_old, pen_old, tmp, trace_sum
        if K < 2:
            return 0
        # gram of the differences U_a = x_{a+1} - x_a
        for a in range(K):
            for c in range(a, K):
                acc = 0.0
                for q in range(self.n_ws_cols):
                    acc += ((self.snapshots[a + 1, q] - self.snapshots[a, q])
                            * (self.snapshots[c + 1, q] - self.snapshots[c, q]))
                gram[a][c] = acc
                gram[c][a] = acc
        trace_sum = 0.0
        for a in range(K):
            trace_sum += gram[a][a]
        if not trace_sum > 0.0:
            return 0
        for a in range(K):
            gram[a][a] += 1e-10 * trace_sum
            rhs[a] = 1.0
        # Gaussian elimination with partial pivoting (K <= 5)
        for a in range(K):
            piv = a
            for c in range(a + 1, K):
                if fabs(gram[c][a]) > fabs(gram[piv][a]):
                    piv = c
            if gram[piv][a] == 0.0:
                return 0
            if piv != a:
                for c in range(K):
                    tmp = gram[a][c]; gram[a][c] = gram[piv][c]; gram[piv][c] = tmp
                tmp = rhs[a]; rhs[a] = rhs[piv]; rhs[piv] = tmp
            for c in range(a + 1, K):
                tmp = gram[c][a] / gram[a][a]
                for q in range(a, K):
                    gram[c][q] -= tmp * gram[a][q]
                rhs[c] -= tmp * rhs[a]
        for a in range(K - 1, -1, -1):
            acc = rhs[a]
            for c in range(a + 1, K):
                acc -= gram[a][c] * coef[c]
            coef[a] = acc / gram[a][a]
        total = 0.0
        for a in range(K):
            total += coef[a]
        if total == 0.0 or total != total:
            return 0
        # candidate, applied in place; undone if it does not lower F
        f_old = self.objective()
        S1_old = self.S1
        S2_old = self.S2
        pen_old = self.pen_total
        for q in range(self.n):
            self.rt_save[q] = self.rt[q]
        for q in range(self.n_ws_cols):
            acc = 0.0
            for a in range(K):
                acc += coef[a] / total * self.snapshots[a + 1, q]
            j = self.ws_cols[q]
            self.anderson_w[q] = self.w[j]
            if acc != self.w[j]:
                self.move_column(j, acc)
        self.pen_total = self.recompute_penalty()
        self.b = self.S1 if self.fit_intercept else 0.0
        if self.objective() < f_old:
            if self.record and self.trace_len < self.trace.shape[0]:
                self.trace[self.trace_len] = self.objective()
                self.trace_len += 1
            return 1
        for q in range(self.n_ws_cols):
            self.w[self.ws_cols[q]] = self.anderson_w[q]
        for q in range(self.n):
            self.rt[q] = self.rt_save[q]
        self.S1 = S1_old
        self.S2 = S2_old
        self.pen_total = pen_old
        self.b = self.S1 if self.fit_intercept else 0.0
        return 0

    cdef int solve_working_set(self, double inner_tol, Py_ssize_t max_updates,
                               Py_ssize_t* updates) except -1 nogil:
        """Cyclic exact block updates over the working set, with Anderson.

        Returns 1 if the inner tolerance was reached, 0 if the epoch cap or
        the update budget stopped it (coordinate descent is struggling).
        """
        cdef Py_ssize_t k, q, n_snap = 0, epoch = 0
        cdef double epoch_score, checkpoint = INFINITY
        while updates[0] < max_updates and epoch < INNER_MAX_EPOCHS:
            epoch += 1
            epoch_score = 0.0
            for k in range(self.n_ws):
                epoch_score = fmax(epoch_score, self.update_ws_block(k))
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

    cdef int run_working_set(self, double score_tol, double obj_tol,
                             Py_ssize_t max_updates, Py_ssize_t* n_updates,
                             bint* converged) except -1 nogil:
        cdef Py_ssize_t t, updates = 0, n_active, n_new
        cdef double best_score, before
        cdef Py_ssize_t[::1] order
        converged[0] = False
        while updates < max_updates:
            self.resync()
            self.score_blocks()
            best_score = 0.0
            n_active = 0
            best_score = self.max_score()
            if best_score <= score_tol:
                updates += self.T
                if self.confirm_by_sweep(score_tol, obj_tol, True):
                    converged[0] = True
                    break
                continue
            with gil:
                order = np.argsort(-np.asarray(self.scores), kind="stable")
                n_active = int(np.count_nonzero(
                    np.add.reduceat(np.abs(np.asarray(self.w)), np.asarray(self.block_ptr[:self.T]))))
            n_new = max(10, n_active)
            self.build_working_set(order, n_new, score_tol)
            if not self.solve_working_set(fmax(score_tol, INNER_RATIO * best_score),
                                          max_updates, &updates):
                with gil:
                    ok = self.newton_step()
                    if self.verbose:
                        print(f"firecy: {updates} updates, best score {best_score:.3e}, "
                              f"working set {self.n_ws} blocks / {self.n_ws_cols} columns, "
                              f"Newton {'landed' if ok else 'no'}, F = {self.objective():.12g}, "
                              f"Anderson {self.n_anderson_accepted}/{self.n_anderson_tried}")
        self.resync()  # exact final state: no drift in the reported objective
        n_updates[0] = updates
        return 0

    def newton_step(self):
        """Newton steps on the support, each kept only if F decreases.

        Coordinate methods crawl on the ill-conditioned designs of forests
        (trees are strongly correlated); once the support is right, the
        problem restricted to it is smooth: with the penalty's local model
        (``Penalty.local_groups``: coordinates, or fused segments of leaves,
        that move together) it is a quadratic, and one direct solve lands on
        its minimiser. A step that would flip a sign stops at zero there (an
        active-set move); the engine's next sweep adds back whatever the
        optimality conditions ask for.
        """
        cdef Py_ssize_t it
        support = np.flatnonzero(np.asarray(self.w))
        if self.newton_failed_on is not None and np.array_equal(support, self.newton_failed_on):
            return False   # same support as a failed attempt: do not refactorise
        for it in range(NEWTON_MAX_STEPS):
            status = self._newton_once()
            if status != "partial":
                break
        self.newton_failed_on = support if status == "none" else None
        return status == "full"

    def penalty_groups(self):
        """The penalty's grouped local model on every block in use.

        Returns (column_group, pen_grad, pen_hess) with column_group[j] the
        global group of column j (-1: stays at zero), or None if the penalty
        has no local model."""
        cdef Py_ssize_t t, j, lo, hi, n_groups = 0, local
        cdef Py_ssize_t[::1] group = np.full(self.R, -1, dtype=np.intp)
        grad_arr = np.zeros(self.R)
        hess_arr = np.zeros(self.R)
        cdef double[::1] grad = grad_arr, hess = hess_arr
        with nogil:
            for t in range(self.T):
                lo = self.block_ptr[t]
                hi = self.block_ptr[t + 1]
                for j in range(lo, hi):
                    if self.w[j] != 0.0:
                        break
                else:
                    continue
                local = self.penalty.local_groups(&self.w[lo], &self.curv[lo], &group[lo],
                                                  &grad[n_groups], &hess[n_groups], hi - lo)
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

    def _support_model(self, with_hessian=True):
        """On the groups of the support: the datafit's gradient and Hessian
        (intercept profiled out) and the penalty's local model. The Hessian
        is None when not asked for (the majorize-minimize loop reuses one)."""
        model = self.penalty_groups()
        if model is None:
            return None
        column_group, pen_grad, pen_hess = model
        support = np.flatnonzero(column_group >= 0)
        groups = column_group[support]
        n_groups = pen_grad.shape[0]
        col_ptr = np.asarray(self.col_ptr)
        starts, counts = col_ptr[support], np.diff(col_ptr)[support]
        offsets = np.repeat(starts - (np.cumsum(counts) - counts), counts)
        entry = offsets + np.arange(counts.sum())
        rows = np.asarray(self.col_rows)[entry]
        vals = (np.repeat(np.asarray(self.leaf_values)[support], counts) if self.is_tree
                else np.asarray(self.col_vals)[entry])
        M_S = sp.csc_matrix((vals, rows, np.r_[0, np.cumsum(counts)]),
                            shape=(self.n, support.size))
        s = np.asarray(self.s)
        grad_cols = -(M_S.T @ (s * (np.asarray(self.rt) - self.b)))
        grad = np.bincount(groups, weights=grad_cols, minlength=n_groups) + pen_grad
        if not with_hessian:
            return column_group, grad, None, pen_hess
        hess = self.group_hessian(column_group, n_groups)
        if self.fit_intercept:
            m_g = np.bincount(groups, weights=np.asarray(self.m)[support], minlength=n_groups)
            hess -= np.outer(m_g, m_g)
        return column_group, grad, hess, pen_hess

    def group_hessian(self, Py_ssize_t[::1] column_group, Py_ssize_t n_groups):
        """Dense ``A^T diag(s) A`` where column g of A sums the columns of
        group g, row by row: each row adds s_i M_ij M_ik for the pairs of
        grouped columns it touches (sum_i k_i^2 work, k_i of them in row i)."""
        cdef Py_ssize_t i, t, p, a, k, cnt
        cdef Py_ssize_t[::1] idx = np.empty(self.T if self.is_tree else self.R, dtype=np.intp)
        cdef double[::1] val = np.empty(self.T if self.is_tree else self.R)
        hess_arr = np.zeros((n_groups, n_groups))
        cdef double[:, ::1] hess = hess_arr
        cdef double si, va
        with nogil:
            for i in range(self.n):
                si = self.s[i]
                if si == 0.0:
                    continue
                cnt = 0
                if self.is_tree:
                    for t in range(self.T):
                        k = self.leaf_table[i, t]
                        if column_group[k] >= 0:
                            idx[cnt] = column_group[k]
                            val[cnt] = self.leaf_values[k]
                            cnt += 1
                else:
                    for p in range(self.row_ptr[i], self.row_ptr[i + 1]):
                        k = self.row_cols[p]
                        if column_group[k] >= 0:
                            idx[cnt] = column_group[k]
                            val[cnt] = self.row_vals[p]
                            cnt += 1
                for a in range(cnt):
                    va = si * val[a]
                    for k in range(cnt):
                        hess[idx[a], idx[k]] += va * val[k]
        return hess_arr

    def _newton_once(self):
        """One Newton step on the current support (or, when the penalty's
        local model is concave enough to make the Hessian indefinite, a run
        of majorize-minimize steps). Returns "full" (landed on the support's
        stationary point), "partial" (moved; call again) or "none"."""
        w = np.asarray(self.w)
        n_support = np.count_nonzero(w)
        if n_support == 0 or n_support > NEWTON_MAX_SUPPORT:
            return "none"
        with nogil:
            self.resync()
        f_old = self.objective()
        model = self._support_model()
        if model is None:
            return "none"
        column_group, grad, hess, pen_hess = model
        factor = _cholesky(hess + np.diag(pen_hess))
        if factor is not None:
            return self._try_step(column_group,
                                  -cho_solve(factor, grad, check_finite=False), f_old)
        # indefinite (MCP's concave part): majorize the concave part by its
        # linearisation, keep the datafit Hessian (positive definite), and
        # iterate on the factorisation while the structure holds (a DC
        # algorithm: each step is a descent step of F)
        factor = _cholesky(hess)
        if factor is None:
            return "none"
        moved = False
        for _ in range(NEWTON_MM_STEPS):
            status = self._try_step(column_group,
                                    -cho_solve(factor, grad, check_finite=False), f_old)
            if status == "none":
                break
            moved = True
            f_new = self.objective()
            if status == "partial" or f_old - f_new <= 1e-15 * abs(f_old):
                break
            f_old = f_new
            model = self._support_model(with_hessian=False)
            if model is None or not np.array_equal(model[0], column_group):
                break
            grad = model[1]
        return "partial" if moved else "none"

    def _try_step(self, column_group, group_direction, f_old):
        """Move the groups along ``group_direction`` without crossing zero;
        keep the move only if F decreases. Returns "full" (the whole step,
        no sign change), "partial" (moved, some weights dropped to zero or a
        shorter step) or "none".

        Candidates in turn: the whole step projected on the current orthant
        (every weight that would change sign stops at zero, as in OWL-QN:
        drops many wrong rules at once), the step to the first crossing, and
        halved steps (fused groups can also change order)."""
        if not np.all(np.isfinite(group_direction)):
            return "none"
        w = np.asarray(self.w)
        support = np.flatnonzero(column_group >= 0)
        direction = group_direction[column_group[support]]
        w_old = w[support].copy()
        full = w_old + direction
        crossing = w_old * full < 0
        candidates = []
        if not np.any(crossing):
            candidates.append((full, "full"))
        else:
            projected = full.copy()
            projected[crossing] = 0.0
            candidates.append((projected, "partial"))
            ratios = -w_old[crossing] / direction[crossing]
            step = float(np.min(ratios))
            first = w_old + step * direction
            first[np.flatnonzero(crossing)[ratios <= step * (1 + 1e-12)]] = 0.0
            candidates.append((first, "partial"))
        candidates += [(w_old + 0.5 ** h * direction, "partial") for h in range(1, 4)]
        for cand, status in candidates:
            w[support] = cand
            with nogil:
                self.resync()
            if self.objective() < f_old:
                if self.record and self.trace_len < self.trace.shape[0]:
                    self.trace[self.trace_len] = self.objective()
                    self.trace_len += 1
                return status
        w[support] = w_old
        with nogil:
            self.resync()
        return "none"

    # ------------------------------------------------------------------

    def solve(self, Penalty penalty, double[::1] w, double tol, Py_ssize_t max_updates,
              double score_scale, bint record_objective=False, bint warn=True,
              str strategy="working_set"):
        """Minimise F in place over ``w`` from its current value.

        Parameters
        ----------
        penalty : Penalty
        w : ndarray of float64, shape (n_columns,)
            Start point; overwritten with the solution.
        tol : float
            Convergence: the largest block direction norm is at most
            ``tol * score_scale`` (for decrease-scored penalties: the largest
            achievable decrease is at most ``tol * |F|``), and a full sweep
            of block updates lowers F by at most ``tol * |F|``.
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
        cdef double score_tol, obj_tol = tol
        if strategy not in ("greedy", "working_set"):
            raise ValueError(f"strategy must be 'greedy' or 'working_set', got {strategy!r}")
        cdef bint use_greedy = strategy == "greedy"
        if w.shape[0] != self.R:
            raise ValueError(f"w has length {w.shape[0]}, the design has {self.R} columns")
        self.penalty = penalty
        self.w = w
        self.record = record_objective
        self.trace_len = 0
        self.trace = np.empty(max_updates + self.T if record_objective else 0)
        if penalty.score_is_decrease:
            score_tol = -1.0  # set per run below from |F|
        else:
            score_tol = (tol * score_scale) ** 2
        with nogil:
            if penalty.score_is_decrease:
                self.resync()
                score_tol = tol * fmax(fabs(self.objective()), 1e-300)
            if use_greedy:
                self.run(score_tol, obj_tol, max_updates, &n_updates, &converged)
            else:
                self.run_working_set(score_tol, obj_tol, max_updates, &n_updates, &converged)
        self.penalty = None
        if not converged and warn:
            warnings.warn(
                f"firecy: greedy block CD did not converge in {n_updates} block updates "
                f"(tol={tol:g}); increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return {
            "intercept": float(self.b),
            "objective": float(self.objective()),
            "n_updates": int(n_updates),
            "converged": bool(converged),
            "trace": np.asarray(self.trace)[: self.trace_len].copy(),
        }

    def objective_at(self, Penalty penalty, double[::1] w):
        """F at ``w`` with the optimal intercept (recomputed from scratch)."""
        self.penalty = penalty
        self.w = w
        with nogil:
            self.resync()
        self.penalty = None
        return float(self.objective()), float(self.b)

    def gradient_at_zero(self):
        """The datafit gradient at w = 0 with the optimal intercept."""
        w0 = np.zeros(self.R)
        self.w = w0
        self.penalty = _NullPenalty()
        with nogil:
            self.resync()
        self.penalty = None
        return np.asarray(self.gt) + self.b * np.asarray(self.m)


cdef class _NullPenalty(Penalty):
    cdef double value(self, const double* w, const double* curv,
                      Py_ssize_t n) except? -1 nogil:
        return 0.0
