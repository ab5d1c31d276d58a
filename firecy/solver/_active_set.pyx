"""Active-set Newton solver for the engine's quadratic model (see docs/solver.rst).

It minimises, over the weights x (and the intercept b, unpenalised),

    q(x) = g0 . (x - x0) + 1/2 (x - x0)^T H (x - x0) + sum_j lam_j |x_j|,

with H = M^T diag(D) M (the intercept's column of ones included) and D the
datafit's per-row curvature s_i loss''_i. For the squared loss q is F itself
up to a constant, so the solution is exact; for other losses it is a
proximal-Newton step (measured, the engine uses it for the squared loss
only). Separable penalties whose local model is a weighted L1 (L1, and
the engine's measurements keep it to penalties linear off zero) map onto
``lam_j``.

Why: on forests the support Hessian is very ill-conditioned (correlated trees)
and exactly singular along directions that forests create (a tree's leaves
sum to the intercept's column; trees sharing a split share a region).
Coordinate descent crawls along those valleys for thousands of epochs; a
Newton step crosses them at once, and the L1 kinks pin the solution down at
a vertex that an active-set method reaches exactly.

The method (a primal active set, as in Osborne, Presnell & Turlach 2000, with
the factor updated rather than recomputed):

* Slots: the support's columns (and the intercept), each with its orthant;
  ``SupportCholesky`` holds the Cholesky factor of H on them, in scaled
  coordinates (unit diagonal).
* A round: the columns at zero that violate their optimality condition most
  enter in a batch (their Gram entries with the slots come from the leaf
  table in O(rows x trees) each; one level-3 update of the factor); then the
  Newton direction on the slots, and a ratio test: the first slot to reach
  zero stops the step and leaves (a drop); the direction for the remaining
  slots follows from the old one in O(k |P|) (drops are deferred: the
  constraint x_p = 0 enters through the Schur complement of Q^{-1} on the
  dropped slots, and the factor deletes them in one go later); until a full
  step. Then the model gradient on every column, once per round.
* A column that the factor rejects as dependent (no Newton step exists along
  the null direction) is handled by a pivot: along the null direction q is
  linear (its L1 part only), so moving along it until a slot reaches zero
  lowers q; that slot leaves and the column takes its place.

Every column's gradient is recomputed from ``u = M (x - x0) + (b - b0)``
once per round, so rounding in the direction recurrences never accumulates
into the optimality test.
"""
from cython.parallel cimport prange
from libc.math cimport fabs, sqrt, INFINITY
from firecy._gather cimport gather_dot, gather_sum

import numpy as np

# drops deferred before the factor deletes them
cdef Py_ssize_t P_MAX = 64
# columns entering per round: at least BATCH_MIN, k / BATCH_DIV for k slots,
# at most BATCH_MAX. Many at once are cheap (level-3 BLAS, one gradient per
# round), but the best-ranked violators are correlated with each other and
# many of them leave again, each drop costing O(k^2): measured on forests,
# k / 16 balances the two
cdef Py_ssize_t BATCH_MIN = 32
cdef Py_ssize_t BATCH_DIV = 16
cdef Py_ssize_t BATCH_MAX = 256
# relative pivot under which a column counts as dependent (scaled Gram: a
# column at squared distance 1e-9 of the span would give Newton steps 3e4
# times its own scale)
cdef double DEP_TOL = 1e-9
# pivots for one dependent column before it is set aside
cdef Py_ssize_t MAX_PIVOTS = 20
# reconcile's "go on" (not a QP_* outcome)
cdef int RECONCILED = 100


cdef inline double sign_of(double x) noexcept nogil:
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


cdef class ActiveSetQP:
    """The active-set Newton solver on one design (see the module docstring).

    Parameters
    ----------
    design : BlockDesign
    fit_intercept : bool
    max_support : int, default=4000
        Largest support the dense factor may hold; beyond it ``solve``
        returns ``QP_TOO_LARGE`` and the engine uses coordinate descent.
    n_threads : int, default=1
        Threads for the per-column kernels (results do not depend on it).
    """

    def __init__(self, design, bint fit_intercept, Py_ssize_t max_support=4000,
                 int n_threads=1):
        cdef const double[::1] leaf_values, col_vals
        self.n = design.n_samples
        self.R = design.n_columns
        self.T = design.n_blocks
        self.is_tree = design.is_tree
        self.fit_intercept = fit_intercept
        self.n_threads = max(1, n_threads)
        self.col_ptr = design.col_ptr
        self.col_rows = design.col_rows
        self._keep = design
        self.R_tree = design.n_tree_columns
        self.T_tree = design.n_tree_blocks
        self.tree_nnz = design.tree_nnz
        self.leaf_values_p = NULL
        self.col_vals_p = NULL
        if self.T_tree:
            self.table = design.leaf_table
            leaf_values = design.leaf_values
            self.leaf_values_p = &leaf_values[0]   # the array's data (bounds unchecked)
        if not self.is_tree:
            self.row_ptr = design.row_ptr
            self.row_cols = design.row_cols
            self.row_vals = design.row_vals
            col_vals = design.col_vals
            self.col_vals_p = &col_vals[0] if col_vals.shape[0] else NULL
        cdef Py_ssize_t S = max_support + 1
        self.max_slots = S
        self.chol = SupportCholesky(S, DEP_TOL)
        self.pos = np.full(self.R, -1, dtype=np.int32)
        self.slot_col = np.zeros(S, dtype=np.intp)
        self.sc = np.zeros(S)
        self.xs = np.zeros(S)
        self.xsync = np.zeros(S)
        self.dt = np.zeros(S)
        self.G = np.zeros(S)
        self.zbuf = np.zeros(S)
        self.gbuf = np.zeros(S)
        self.sgn = np.zeros(S, dtype=np.int8)
        self.free_ = np.zeros(S, dtype=np.int8)
        self.dropped = np.zeros(S, dtype=np.int8)
        self.drop_slot = np.zeros(P_MAX, dtype=np.intp)
        self.Z = np.zeros((P_MAX, S))
        self.LP = np.zeros(P_MAX * P_MAX)
        self.alpha = np.zeros(P_MAX)
        self.D = np.zeros(self.n)
        self.u = np.zeros(self.n)
        self.Du = np.zeros(self.n)
        self.qdiag = np.zeros(self.R)
        self.grad = np.zeros(self.R)
        self.g0 = np.zeros(self.R)
        self.batch = np.zeros(BATCH_MAX, dtype=np.intp)
        self.cand = np.zeros(self.R, dtype=np.intp)
        self.cand_v = np.zeros(self.R)
        self.gram = np.zeros(BATCH_MAX * (S + BATCH_MAX + 1))
        self.BE = np.zeros(BATCH_MAX * BATCH_MAX)
        self.work = np.zeros(BATCH_MAX * BATCH_MAX + 2 * BATCH_MAX)
        self.accepted = np.zeros(BATCH_MAX, dtype=np.int8)
        self.excluded = np.zeros(self.R, dtype=np.int8)
        self.excluded_list = np.zeros(self.R, dtype=np.intp)
        # row lists: row i's slot columns and their values, from rl_ptr[i]
        self.rl_count = np.zeros(self.n, dtype=np.int32)
        # (room for a row's leaves in the tree blocks and its entries in the
        # general blocks)
        if self.is_tree:
            self.rl_ptr = np.arange(self.n, dtype=np.intp) * self.T
            size = self.n * self.T
        else:
            self.rl_ptr = (np.asarray(design.row_ptr[:self.n], dtype=np.intp)
                           + np.arange(self.n, dtype=np.intp) * self.T_tree)
            size = design.row_ptr[self.n] + self.n * self.T_tree
        self.rl_col = np.zeros(max(size, 1), dtype=np.int32)
        self.rl_val = np.zeros(max(size, 1))
        self.factor_valid = False

    @property
    def n_slots(self):
        return self.chol.k

    # ------------------------------------------------------------------
    # the design

    cdef double entry(self, Py_ssize_t j, Py_ssize_t p) noexcept nogil:
        """Value of the p-th stored entry of column j."""
        if j < self.R_tree:
            return self.leaf_values_p[j]
        return self.col_vals_p[p - self.tree_nnz]

    cdef int set_weights(self, const double* D) except -1 nogil:
        """New row weights of the model's Hessian (invalidates the factor)."""
        cdef Py_ssize_t i, j, p
        cdef double acc, v, total = 0.0
        for i in range(self.n):
            self.D[i] = D[i]
            total += D[i]
        self.qdiag_b = total
        for j in prange(self.R, nogil=True, num_threads=self.n_threads, schedule="static"):
            acc = 0.0
            for p in range(self.col_ptr[j], self.col_ptr[j + 1]):
                v = self.entry(j, p)
                acc = acc + self.D[self.col_rows[p]] * v * v
            self.qdiag[j] = acc
        self.factor_valid = False
        return 0

    cdef void list_add(self, Py_ssize_t c) noexcept nogil:
        """Enter column c in the row lists of its rows."""
        cdef Py_ssize_t p, i, m
        for p in range(self.col_ptr[c], self.col_ptr[c + 1]):
            i = self.col_rows[p]
            m = self.rl_ptr[i] + self.rl_count[i]
            self.rl_col[m] = <int> c
            self.rl_val[m] = self.entry(c, p)
            self.rl_count[i] += 1

    cdef void list_remove(self, Py_ssize_t c) noexcept nogil:
        """Take column c out of its rows' lists (the last entry moves into its
        place). The search runs from the end: the columns entered last (a
        batch's candidates, removed in reverse order) are found at once."""
        cdef Py_ssize_t p, i, m, last
        for p in range(self.col_ptr[c], self.col_ptr[c + 1]):
            i = self.col_rows[p]
            last = self.rl_ptr[i] + self.rl_count[i] - 1
            m = last
            while self.rl_col[m] != c:
                m -= 1
            self.rl_col[m] = self.rl_col[last]
            self.rl_val[m] = self.rl_val[last]
            self.rl_count[i] -= 1

    cdef void gram_columns(self, const Py_ssize_t* cols, Py_ssize_t b) noexcept nogil:
        """Scaled Gram entries of b columns (not in the factor) with the slots
        and among themselves: column q of ``gram`` holds them from offset
        ``q * (k + b + 1) + 1``, leading dimension k + b + 1.

        Row i's columns among the slots (and the b new ones) are kept in a
        list (``rl_*``), so a column's entries cost (its rows) x (slots per
        row), not (its rows) x (trees).
        """
        cdef Py_ssize_t k = self.chol.k, ld = k + b + 1, q, e, p, i, m, a
        cdef double val, sce
        cdef double* out
        cdef const int* pos = &self.pos[0]
        cdef const double* D = &self.D[0]
        cdef const int* rows = &self.col_rows[0]
        cdef const Py_ssize_t* cptr = &self.col_ptr[0]
        cdef const Py_ssize_t* lptr = &self.rl_ptr[0]
        cdef const int* lcount = &self.rl_count[0]
        cdef const int* lcol = &self.rl_col[0]
        cdef const double* lval = &self.rl_val[0]
        cdef bint icpt = self.fit_intercept
        for q in range(b):
            self.pos[cols[q]] = <int> (k + q)
            self.list_add(cols[q])
        for q in prange(b, nogil=True, num_threads=self.n_threads, schedule="dynamic"):
            e = cols[q]
            out = &self.gram[0] + q * ld + 1
            for a in range(ld - 1):
                out[a] = 0.0
            for p in range(cptr[e], cptr[e + 1]):
                i = rows[p]
                val = D[i] * self.entry(e, p)
                if val == 0.0:
                    continue
                if icpt:
                    out[0] += val
                for m in range(lptr[i], lptr[i] + lcount[i]):
                    out[pos[lcol[m]]] += val * lval[m]
            sce = 1.0 / sqrt(self.qdiag[e])
            for a in range(k):
                out[a] = out[a] * self.sc[a] * sce
            for a in range(b):
                out[k + a] = out[k + a] * sce / sqrt(self.qdiag[cols[a]])
        for q in range(b - 1, -1, -1):
            self.pos[cols[q]] = -1
            self.list_remove(cols[q])

    # ------------------------------------------------------------------
    # slots

    cdef Py_ssize_t append_columns(self, const Py_ssize_t* cols, Py_ssize_t b,
                                   const double* values, double tol=DEP_TOL) except -1 nogil:
        """Enter b columns with the given values (0 for a violator: its
        orthant is then the sign of its descent); a column whose relative
        pivot is below ``tol`` stays out. Returns how many entered;
        ``accepted`` marks which."""
        cdef Py_ssize_t k = self.chol.k, q, r, a, m, c
        cdef double v
        self.gram_columns(cols, b)
        for r in range(b):
            for q in range(b):
                self.BE[q + r * b] = self.gram[r * (k + b + 1) + 1 + k + q]
        self.chol.dep_tol = tol
        m = self.chol.append(&self.gram[1], k + b + 1, &self.BE[0], b,
                             <char*> &self.accepted[0], &self.work[0])
        self.chol.dep_tol = DEP_TOL
        r = 0
        for q in range(b):
            if not self.accepted[q]:
                continue
            a = k + r
            r += 1
            c = cols[q]
            v = values[q]
            self.slot_col[a] = c
            self.pos[c] = <int> a
            self.list_add(c)
            self.sc[a] = 1.0 / sqrt(self.qdiag[c])
            self.xs[a] = v
            self.xsync[a] = v
            self.free_[a] = self.lam[c] == 0.0
            self.dropped[a] = 0
            if v != 0.0:
                self.sgn[a] = <signed char> sign_of(v)
            else:
                self.sgn[a] = <signed char> (-sign_of(self.grad[c]))
        return m

    cdef int append_intercept(self, double b) except -1 nogil:
        cdef char acc = 0
        cdef double one = 1.0
        if not self.qdiag_b > 0.0:
            return -2
        self.chol.append(&one, 1, &one, 1, &acc, &self.work[0])
        if not acc:
            return -2
        self.slot_col[0] = -1
        self.sc[0] = 1.0 / sqrt(self.qdiag_b)
        self.xs[0] = b
        self.xsync[0] = b
        self.free_[0] = 1
        self.sgn[0] = 0
        self.dropped[0] = 0
        return 0

    cdef void remove_slot(self, Py_ssize_t a) noexcept nogil:
        """Delete slot a (its value is 0 and synced)."""
        cdef Py_ssize_t k = self.chol.k, q
        self.pos[self.slot_col[a]] = -1
        self.list_remove(self.slot_col[a])
        self.chol.delete(a)
        for q in range(a, k - 1):
            self.slot_col[q] = self.slot_col[q + 1]
            self.sc[q] = self.sc[q + 1]
            self.xs[q] = self.xs[q + 1]
            self.xsync[q] = self.xsync[q + 1]
            self.sgn[q] = self.sgn[q + 1]
            self.free_[q] = self.free_[q + 1]
            self.dropped[q] = self.dropped[q + 1]
            self.G[q] = self.G[q + 1]
            self.pos[self.slot_col[q]] = <int> q

    cdef void shift_column(self, Py_ssize_t c, double delta) noexcept nogil:
        """x_c += delta in the model (u) and in w; c = -1: the intercept."""
        cdef Py_ssize_t p, i
        if delta == 0.0:
            return
        if c < 0:
            for i in range(self.n):
                self.u[i] += delta
            return
        for p in range(self.col_ptr[c], self.col_ptr[c + 1]):
            self.u[self.col_rows[p]] += delta * self.entry(c, p)
        self.model_change += self.g0[c] * delta + self.lam[c] * (
            fabs(self.w[c] + delta) - fabs(self.w[c]))
        self.w[c] += delta

    cdef void sync(self) noexcept nogil:
        """Bring u and w up to the slots' values."""
        cdef Py_ssize_t a, c
        cdef double delta
        for a in range(self.chol.k):
            delta = self.xs[a] - self.xsync[a]
            if delta != 0.0:
                c = self.slot_col[a]
                if c < 0:
                    self.model_change += self.g0_b * delta
                self.shift_column(c, delta)
                if c >= 0:
                    self.w[c] = self.xs[a]     # exact, not a sum of deltas
                self.xsync[a] = self.xs[a]

    cdef void flush(self) noexcept nogil:
        """Sync, then delete the dropped slots from the factor."""
        cdef Py_ssize_t a
        self.sync()
        a = self.chol.k - 1
        while a >= 0:
            if self.dropped[a]:
                self.remove_slot(a)
            a -= 1
        self.n_drop = 0

    # ------------------------------------------------------------------
    # the model's gradient

    cdef void model_gradient(self, bint all_columns) noexcept nogil:
        cdef Py_ssize_t i, j, p, a
        cdef double acc, total = 0.0
        cdef const int* rows = &self.col_rows[0]
        cdef const Py_ssize_t* cptr = &self.col_ptr[0]
        cdef const double* Du = &self.Du[0]
        for i in range(self.n):
            self.Du[i] = self.D[i] * self.u[i]
            total += self.Du[i]
        self.grad_b = self.g0_b + total
        if all_columns:
            for j in prange(self.R, nogil=True, num_threads=self.n_threads, schedule="static"):
                self.grad[j] = self.g0[j] + self.column_dot(j, Du, rows, cptr)
        else:
            for a in range(self.chol.k):
                j = self.slot_col[a]
                if j >= 0:
                    self.grad[j] = self.g0[j] + self.column_dot(j, Du, rows, cptr)

    cdef inline double column_dot(self, Py_ssize_t j, const double* x, const int* rows,
                                  const Py_ssize_t* cptr) noexcept nogil:
        """sum_i M_ij x_i."""
        cdef Py_ssize_t p0 = cptr[j], n = cptr[j + 1] - cptr[j]
        if j < self.R_tree:
            return gather_sum(x, rows + p0, n) * self.leaf_values_p[j]
        return gather_dot(self.col_vals_p + (p0 - self.tree_nnz), x, rows + p0, n)

    cdef double slot_gradients(self) noexcept nogil:
        """G on the slots (penalty slope included); returns max |G|."""
        cdef Py_ssize_t a, c
        cdef double worst = 0.0
        for a in range(self.chol.k):
            c = self.slot_col[a]
            if c < 0:
                self.G[a] = self.grad_b
            elif self.free_[a]:
                self.G[a] = self.grad[c]
            else:
                self.G[a] = self.grad[c] + self.lam[c] * self.sgn[a]
            if not self.dropped[a]:
                worst = max(worst, fabs(self.G[a]))
        return worst

    # ------------------------------------------------------------------
    # Newton steps with drops

    cdef void newton_direction(self) noexcept nogil:
        cdef Py_ssize_t a
        for a in range(self.chol.k):
            self.dt[a] = -self.sc[a] * self.G[a]
        self.chol.solve(&self.dt[0])

    cdef double ratio_test(self, Py_ssize_t* blocking) noexcept nogil:
        """Largest step in (0, 1] along dt before a kinked slot reaches zero."""
        cdef Py_ssize_t a
        cdef double t = INFINITY, step, ta
        blocking[0] = -1
        for a in range(self.chol.k):
            if self.free_[a] or self.dropped[a]:
                continue
            step = self.sc[a] * self.dt[a]
            if self.sgn[a] * step < 0.0:
                ta = -self.xs[a] / step
                if ta < 0.0:
                    ta = 0.0
                if ta < t:
                    t = ta
                    blocking[0] = a
        return t

    cdef int defer_drop(self, Py_ssize_t p, double t) noexcept nogil:
        """Slot p reached zero after a step t along dt: hold it at zero and
        turn dt into the Newton direction of the remaining slots. Returns 0,
        or -1 if the Schur complement is not positive (the caller flushes)."""
        cdef Py_ssize_t m = self.n_drop, k = self.chol.k, r, s, a
        cdef double* z = &self.Z[m, 0]
        cdef double* l = &self.LP[m * P_MAX]
        cdef double val, piv, mu
        self.chol.unit_solve(p, z)
        for r in range(m):                         # l = LP^{-1} z_P
            val = z[self.drop_slot[r]]
            for s in range(r):
                val -= self.LP[r * P_MAX + s] * l[s]
            l[r] = val / self.LP[r * P_MAX + r]
        piv = z[p]
        for r in range(m):
            piv -= l[r] * l[r]
        if not piv > 1e-14 * z[p]:
            return -1
        r = m - 1                                  # alpha = LP^{-T} l
        while r >= 0:
            val = l[r]
            for s in range(r + 1, m):
                val -= self.LP[s * P_MAX + r] * self.alpha[s]
            self.alpha[r] = val / self.LP[r * P_MAX + r]
            r -= 1
        for a in range(k):                         # the corrected column
            val = z[a]
            for r in range(m):
                val -= self.alpha[r] * self.Z[r, a]
            self.zbuf[a] = val
        l[m] = sqrt(piv)
        mu = -(1.0 - t) * self.dt[p] / piv
        for a in range(k):
            self.dt[a] = (1.0 - t) * self.dt[a] + mu * self.zbuf[a]
        self.dt[p] = 0.0
        for r in range(m):
            self.dt[self.drop_slot[r]] = 0.0
        self.drop_slot[m] = p
        self.n_drop = m + 1
        self.dropped[p] = 1
        return 0

    cdef int newton_phase(self) except -1 nogil:
        """Newton steps on the slots, dropping those that reach zero, until
        a full step. Returns 0, or 1 if the step count ran away."""
        cdef Py_ssize_t a, p, guard = 0
        cdef double t
        self.newton_direction()
        while True:
            guard += 1
            if guard > 10 * self.max_slots + 100:
                return 1
            t = self.ratio_test(&p)
            if t >= 1.0:
                for a in range(self.chol.k):
                    if not self.dropped[a]:
                        self.xs[a] += self.sc[a] * self.dt[a]
                return 0
            for a in range(self.chol.k):
                if not self.dropped[a]:
                    self.xs[a] += t * self.sc[a] * self.dt[a]
            self.xs[p] = 0.0
            self.n_dropped += 1
            if self.n_drop == P_MAX or self.defer_drop(p, t) != 0:
                # delete what is pending and restart from a fresh direction
                self.dropped[p] = 1
                self.flush()
                self.model_gradient(False)
                self.slot_gradients()
                self.newton_direction()

    # ------------------------------------------------------------------
    # dependent columns

    cdef int pivot(self, Py_ssize_t j, double sigma) except -1 nogil:
        """Bring column j (dependent on the slots) in, or set it to zero, by
        moves along null directions. w[j] is its value; if 0, sigma is the
        orthant it would enter. Returns 1 if j entered, 0 if it is (or was
        left) at zero, 2 if no move lowers q (j is excluded)."""
        cdef Py_ssize_t k, a, p, it, c
        cdef double xj, scj, slope, s, tau, tj, step, ta, lin
        cdef double one_value
        for it in range(MAX_PIVOTS):
            xj = self.w[j]
            one_value = xj
            if self.append_columns(&j, 1, &one_value) == 1:
                if xj == 0.0:
                    self.sgn[self.pos[j]] = <signed char> sigma
                return 1
            if not self.qdiag[j] > 0.0:
                return self.exclude(j)
            self.n_pivots += 1
            self.slot_gradients()
            k = self.chol.k
            # the failed append left y = L^{-1} q_j (scaled) in gram[:k]:
            # v = L^{-T} y = Q^{-1} q_j, and the null direction is e_j - v
            for a in range(k):
                self.gbuf[a] = self.gram[1 + a]
            self.chol.backward(&self.gbuf[0])
            scj = 1.0 / sqrt(self.qdiag[j])
            lin = scj * self.grad[j]
            for a in range(k):
                if not self.dropped[a]:
                    lin -= self.sc[a] * self.gbuf[a] * self.G[a]
            if xj == 0.0:
                s = sigma
                slope = s * lin + scj * self.lam[j]
            else:
                slope = lin + scj * self.lam[j] * sign_of(xj)
                s = 1.0
                if slope > 0.0 or (slope == 0.0 and xj > 0.0):
                    s = -1.0
                slope = s * slope
            if slope > 0.0:
                return self.exclude(j)
            tau = INFINITY
            p = -1
            if xj != 0.0 and s * xj < 0.0:
                tau = fabs(xj) / scj
            for a in range(k):
                if self.free_[a] or self.dropped[a]:
                    continue
                step = -s * self.sc[a] * self.gbuf[a]
                if self.sgn[a] * step < 0.0:
                    ta = -self.xs[a] / step
                    if ta < 0.0:
                        ta = 0.0
                    if ta < tau:
                        tau = ta
                        p = a
            if tau == INFINITY:
                return self.exclude(j)
            for a in range(k):
                if not self.dropped[a]:
                    self.xs[a] -= tau * s * self.sc[a] * self.gbuf[a]
            if p < 0:
                self.shift_column(j, -xj)          # j itself reached zero
                self.w[j] = 0.0
                self.sync()
                return 0
            self.xs[p] = 0.0
            self.dropped[p] = 1
            self.shift_column(j, tau * s * scj)
            self.flush()
            self.slot_gradients()
            sigma = sign_of(self.w[j])
        return self.exclude(j)

    cdef int exclude(self, Py_ssize_t j) noexcept nogil:
        if not self.excluded[j]:
            self.excluded[j] = 1
            self.excluded_list[self.n_excluded] = j
            self.n_excluded += 1
        return 2

    # ------------------------------------------------------------------

    cdef int reconcile(self, double b) except -1 nogil:
        """Make the slots the support of w (plus the intercept); returns
        RECONCILED, or the QP_* status that ends the solve."""
        cdef Py_ssize_t a, c, j, q, nb, n_nz = 0, done
        cdef Py_ssize_t* nz
        cdef int status
        if not self.factor_valid:
            # latest slots first: list_remove then finds each at its rows' ends
            for a in range(self.chol.k - 1, -1, -1):
                if self.slot_col[a] >= 0:
                    self.pos[self.slot_col[a]] = -1
                    self.list_remove(self.slot_col[a])
            self.chol.clear()
            self.factor_valid = True
            self.n_rebuilds += 1
        if self.fit_intercept and self.chol.k == 0:
            if self.append_intercept(b) != 0:
                return QP_FAILED
        if self.fit_intercept:
            self.xs[0] = b
            self.xsync[0] = b
        a = self.chol.k - 1
        while a >= 0:
            c = self.slot_col[a]
            if c >= 0:
                if self.w[c] == 0.0:
                    self.remove_slot(a)
                else:
                    self.xs[a] = self.w[c]
                    self.xsync[a] = self.w[c]
                    self.sgn[a] = <signed char> sign_of(self.w[c])
                    self.free_[a] = self.lam[c] == 0.0
                    self.dropped[a] = 0
            a -= 1
        nz = &self.cand[0]
        for j in range(self.R):
            if self.w[j] != 0.0 and self.pos[j] < 0:
                nz[n_nz] = j
                n_nz += 1
        if self.chol.k + n_nz > self.max_slots:
            return QP_TOO_LARGE
        done = 0
        while done < n_nz:
            nb = min(BATCH_MAX, n_nz - done)
            for q in range(nb):
                self.cand_v[q] = self.w[nz[done + q]]
            self.append_columns(nz + done, nb, &self.cand_v[0])
            for q in range(nb):
                j = nz[done + q]
                if self.pos[j] < 0:
                    status = self.pivot(j, sign_of(self.w[j]))
                    if status == 2 and self.w[j] != 0.0:
                        return QP_FAILED
            done += nb
        return RECONCILED

    cdef Py_ssize_t select_violators(self, double kkt_tol, Py_ssize_t b) noexcept nogil:
        """The (up to) b columns at zero that violate optimality most, in
        decreasing order, into ``batch``; returns how many (0: none)."""
        cdef Py_ssize_t j, n_c = 0, q, r, best
        cdef double v, tmp_v
        cdef Py_ssize_t tmp_i
        for j in range(self.R):
            if self.pos[j] >= 0 or self.excluded[j] or not self.qdiag[j] > 0.0:
                continue
            v = fabs(self.grad[j]) - self.lam[j]
            if v > kkt_tol:
                self.cand[n_c] = j
                self.cand_v[n_c] = v
                n_c += 1
        if n_c == 0:
            return 0
        if n_c > b:
            _select_top(&self.cand[0], &self.cand_v[0], n_c, b)
            n_c = b
        # decreasing violation (ties: lower column first); n_c <= BATCH_MAX
        for q in range(n_c):
            best = q
            for r in range(q + 1, n_c):
                if (self.cand_v[r] > self.cand_v[best] or
                        (self.cand_v[r] == self.cand_v[best] and self.cand[r] < self.cand[best])):
                    best = r
            tmp_v = self.cand_v[q]
            self.cand_v[q] = self.cand_v[best]
            self.cand_v[best] = tmp_v
            tmp_i = self.cand[q]
            self.cand[q] = self.cand[best]
            self.cand[best] = tmp_i
            self.batch[q] = self.cand[q]
        return n_c

    cdef int solve(self, double* w, double* b, const double* g0, double g0_b,
                   const double* lam, double kkt_tol, Py_ssize_t max_rounds) except -1 nogil:
        """Minimise the model from (w, b), in place. Returns a QP_* status."""
        cdef Py_ssize_t i, j, q, m, n_b, size, rounds = 0
        cdef double worst, last_worst = INFINITY, zero = 0.0
        cdef int status
        self.w = w
        self.lam = lam
        self.model_change = 0.0
        for j in range(self.R):
            self.g0[j] = g0[j]
            self.grad[j] = g0[j]
        self.g0_b = g0_b if self.fit_intercept else 0.0
        self.grad_b = self.g0_b
        for i in range(self.n):
            self.u[i] = 0.0
        for q in range(self.n_excluded):
            self.excluded[self.excluded_list[q]] = 0
        self.n_excluded = 0
        self.n_drop = 0
        status = self.reconcile(b[0])
        if status != RECONCILED:
            return status
        self.slot_gradients()
        while True:
            worst = self.slot_gradients()
            size = max(BATCH_MIN, self.chol.k // BATCH_DIV)
            size = min(size, BATCH_MAX, self.max_slots - self.chol.k)
            if size <= 0:
                if self.select_violators(kkt_tol, 1) > 0:
                    status = QP_TOO_LARGE
                    break
                n_b = 0
            else:
                n_b = self.select_violators(kkt_tol, size)
            if n_b == 0 and worst <= kkt_tol:
                status = QP_CONVERGED
                break
            if rounds >= max_rounds:
                status = QP_ROUNDS
                break
            if n_b == 0 and worst > 0.5 * last_worst:
                # refinement no longer shrinks the slots' gradient: the model
                # is solved to the precision the factor allows
                status = QP_CONVERGED
                break
            last_worst = worst if n_b == 0 else INFINITY
            rounds += 1
            self.n_rounds += 1
            if n_b > 0:
                for q in range(n_b):
                    self.cand_v[q] = 0.0
                m = self.append_columns(&self.batch[0], n_b, &self.cand_v[0])
                self.n_added += m
                if m == 0:
                    j = self.batch[0]
                    if self.pivot(j, -sign_of(self.grad[j])) == 1:
                        self.n_added += 1
                self.slot_gradients()
            if self.newton_phase() != 0:
                status = QP_FAILED
                break
            self.flush()
            self.model_gradient(True)
        self.flush()
        if self.fit_intercept:
            b[0] = self.xs[0]
        # the curvature part of the model's change: 1/2 u^T D u
        for i in range(self.n):
            self.model_change += 0.5 * self.D[i] * self.u[i] * self.u[i]
        return status

    # ------------------------------------------------------------------
    # Python access (tests, diagnostics)

    def set_row_weights(self, double[::1] D):
        if D.shape[0] != self.n:
            raise ValueError("D has the wrong length")
        with nogil:
            self.set_weights(&D[0])

    def minimize(self, double[::1] w, double b, double[::1] g0, double g0_b,
                 double[::1] lam, double kkt_tol, Py_ssize_t max_rounds=1000000):
        """Minimise the model in place over w; returns (status, b)."""
        cdef int status
        if w.shape[0] != self.R or g0.shape[0] != self.R or lam.shape[0] != self.R:
            raise ValueError("w, g0 and lam need one entry per column")
        with nogil:
            status = self.solve(&w[0], &b, &g0[0], g0_b, &lam[0], kkt_tol, max_rounds)
        return status, b

    def stats(self):
        return dict(rounds=self.n_rounds, added=self.n_added, dropped=self.n_dropped,
                    pivots=self.n_pivots, rebuilds=self.n_rebuilds, slots=self.chol.k)


cdef void _select_top(Py_ssize_t* idx, double* val, Py_ssize_t n, Py_ssize_t b) noexcept nogil:
    """Reorder so that the b largest values (ties: lower index) come first
    (quickselect)."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, store, mid
    cdef double pv, tv
    cdef Py_ssize_t pi, ti
    while lo < hi:
        mid = lo + (hi - lo) // 2
        pv = val[mid]
        pi = idx[mid]
        # move the pivot to the end
        val[mid] = val[hi]
        idx[mid] = idx[hi]
        val[hi] = pv
        idx[hi] = pi
        store = lo
        for i in range(lo, hi):
            if val[i] > pv or (val[i] == pv and idx[i] < pi):
                tv = val[i]
                ti = idx[i]
                val[i] = val[store]
                idx[i] = idx[store]
                val[store] = tv
                idx[store] = ti
                store += 1
        val[hi] = val[store]
        idx[hi] = idx[store]
        val[store] = pv
        idx[store] = pi
        if store == b - 1 or store == b:
            return
        if store < b:
            lo = store + 1
        else:
            hi = store - 1


def _tuning(batch_min=None, batch_div=None):
    """Experiment hook: set the batch constants; returns the current ones."""
    global BATCH_MIN, BATCH_DIV
    if batch_min is not None:
        BATCH_MIN = min(int(batch_min), BATCH_MAX)
    if batch_div is not None:
        BATCH_DIV = int(batch_div)
    return dict(batch_min=BATCH_MIN, batch_div=BATCH_DIV)
