# One-dimensional fused lasso (total variation) solvers: C-level API.
# (This header: the unweighted solver; tv/_dp.pxd: the weighted ones.)
#
# Every function here is plain C: no Python objects, callable without the
# GIL, and allocation-free (the caller provides the workspace, so a solver
# that runs once per block update never touches malloc). Sizes are in
# doubles; pass a buffer of at least ``*_work_size(n)`` doubles, aligned as
# any double array is. ``out`` may alias the data array (``y`` / ``z``) for
# in-place solves; it must not alias ``c``, ``a`` or ``work``.
#
# Return value: 0 on success, -1 on invalid arguments (n < 0; a penalty
# level that is negative, NaN or infinite; gamma <= 0 or NaN with a
# curvature array; an element whose loss is not convex, c_i * gamma < a_i).
# On -1 the content of ``out`` is unspecified. Data values are not checked
# (a NaN input gives NaN-ish output, never a crash or an endless loop).
# No global state is written: concurrent calls on separate buffers are safe.


# Unweighted problem, Condat's direct algorithm:
#     out = argmin_x 1/2 sum_i (x_i - y_i)^2 + lam * sum_{i>0} |x_i - x_{i-1}|
# Linear time with ``work``: fused_lasso_1d_work_size(n) (= 7n + 6) doubles,
# only touched if the direct algorithm has taken more than 4 steps per
# position reached (+256). Its rescans make its worst case quadratic, and
# smooth signals under heavy fusion do get there (a noisy ramp, n = 5000,
# lam = 300: 12 steps per element); the rest of the signal is then handed to
# the dynamic programme, linear in the worst case. ``work`` may be NULL: no
# fallback, the direct algorithm runs to completion (still exact).
cdef Py_ssize_t fused_lasso_1d_work_size(Py_ssize_t n) noexcept nogil
cdef int fused_lasso_1d(const double* y, Py_ssize_t n, double lam,
                        double* out, double* work) noexcept nogil


# Internal, for tv/_api.pyx's test hooks: the direct algorithm under a step
# budget (see _condat.pyx), and the same with the hand-over to the DP.
cdef Py_ssize_t _condat(const double* y, Py_ssize_t n, double lam, double* x,
                        Py_ssize_t ratio, Py_ssize_t slack,
                        Py_ssize_t* stop_at,
                        double* stop_w0, double* stop_last) noexcept nogil
cdef Py_ssize_t _condat_then_dp(const double* y, Py_ssize_t n, double lam,
                                double* out, double* work, Py_ssize_t ratio,
                                Py_ssize_t slack) noexcept nogil
