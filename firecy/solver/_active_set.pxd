from firecy.solver._cholesky cimport SupportCholesky

# outcome of ActiveSetQP.solve
cdef enum:
    QP_CONVERGED = 0      # the model's optimality conditions hold to the tolerance
    QP_ROUNDS = 1         # stopped at the round budget (the point is still a descent)
    QP_TOO_LARGE = 2      # the support outgrew the largest factor allowed
    QP_FAILED = 3         # numerical trouble: the caller falls back to coordinate descent


cdef class ActiveSetQP:
    # design (read-only views)
    cdef Py_ssize_t n, R, T
    # columns 0 .. R_tree - 1 (the first tree_nnz entries) are tree columns
    # (one value each), the others general (col_vals_p[p - tree_nnz])
    cdef Py_ssize_t R_tree, T_tree, tree_nnz
    cdef bint is_tree, fit_intercept
    cdef const int[:, ::1] table
    cdef const double* leaf_values_p
    cdef const double* col_vals_p
    cdef const Py_ssize_t[::1] col_ptr, row_ptr
    cdef const int[::1] col_rows, row_cols
    cdef const double[::1] row_vals
    cdef object _keep              # keeps the design's arrays alive
    cdef public int n_threads
    # the quadratic model's row weights (the datafit's s_i loss''_i) and the
    # diagonal of its Hessian, per column and for the intercept
    cdef double[::1] D, qdiag
    cdef double qdiag_b
    cdef public bint factor_valid
    # the factor and its slots (slot 0 is the intercept when there is one)
    cdef SupportCholesky chol
    cdef Py_ssize_t max_slots
    cdef int[::1] pos              # column -> slot, or -1
    cdef Py_ssize_t[::1] slot_col  # slot -> column (-1: the intercept)
    cdef double[::1] sc, xs, xsync, dt, G, zbuf, gbuf
    cdef signed char[::1] sgn      # the orthant a slot lives in
    cdef char[::1] free_, dropped  # no kink at zero; dropped, awaiting deletion
    # drops deferred between factor deletions: Z[r] = Q^{-1} e_{p_r}, LP the
    # Cholesky factor of Z_PP (row-major, P_MAX x P_MAX)
    cdef Py_ssize_t n_drop
    cdef Py_ssize_t[::1] drop_slot
    cdef double[:, ::1] Z
    cdef double[::1] LP, alpha
    # the model: u = M (x - x0) + (b - b0), gradient at x of the smooth part
    cdef double[::1] u, Du, grad, g0
    cdef double grad_b, g0_b
    cdef const double* lam
    cdef double* w
    # row lists of the slots' columns (and of a batch being entered)
    cdef Py_ssize_t[::1] rl_ptr
    cdef int[::1] rl_count, rl_col
    cdef double[::1] rl_val
    # batches
    cdef Py_ssize_t[::1] batch, cand
    cdef double[::1] cand_v, gram, BE, work
    cdef char[::1] accepted, excluded
    cdef Py_ssize_t[::1] excluded_list
    cdef Py_ssize_t n_excluded
    # counters
    cdef public Py_ssize_t n_rounds, n_added, n_dropped, n_pivots, n_rebuilds
    cdef public double model_change

    cdef int set_weights(self, const double* D) except -1 nogil
    cdef double entry(self, Py_ssize_t j, Py_ssize_t p) noexcept nogil
    cdef void list_add(self, Py_ssize_t c) noexcept nogil
    cdef void list_remove(self, Py_ssize_t c) noexcept nogil
    cdef void gram_columns(self, const Py_ssize_t* cols, Py_ssize_t b) noexcept nogil
    cdef Py_ssize_t append_columns(self, const Py_ssize_t* cols, Py_ssize_t b,
                                   const double* values, double tol=*) except -1 nogil
    cdef int append_intercept(self, double b) except -1 nogil
    cdef void remove_slot(self, Py_ssize_t a) noexcept nogil
    cdef void shift_column(self, Py_ssize_t c, double delta) noexcept nogil
    cdef void sync(self) noexcept nogil
    cdef void flush(self) noexcept nogil
    cdef void model_gradient(self, bint all_columns) noexcept nogil
    cdef double column_dot(self, Py_ssize_t j, const double* x, const int* rows,
                           const Py_ssize_t* cptr) noexcept nogil
    cdef double slot_gradients(self) noexcept nogil
    cdef void newton_direction(self) noexcept nogil
    cdef double ratio_test(self, Py_ssize_t* blocking) noexcept nogil
    cdef int defer_drop(self, Py_ssize_t p, double t) noexcept nogil
    cdef int newton_phase(self) except -1 nogil
    cdef int pivot(self, Py_ssize_t j, double sigma) except -1 nogil
    cdef int exclude(self, Py_ssize_t j) noexcept nogil
    cdef int reconcile(self, double b) except -1 nogil
    cdef Py_ssize_t select_violators(self, double kkt_tol, Py_ssize_t b) noexcept nogil
    cdef int solve(self, double* w, double* b, const double* g0, double g0_b,
                   const double* lam, double kkt_tol, Py_ssize_t max_rounds) except -1 nogil
