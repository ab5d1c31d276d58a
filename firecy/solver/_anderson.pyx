"""Anderson extrapolation (as in skglm and celer) for the engine's epochs.

Given K + 1 iterates x_0, ..., x_K of a fixed-point iteration (the weights of
the working set after each epoch of block updates), with differences
U_a = x_{a+1} - x_a, the weights c minimise ||U c|| subject to sum c = 1:
c = G^{-1} 1 / (1^T G^{-1} 1) with G = U^T U (ridge 1e-10 trace(G)). The
extrapolated point is sum_a c_a x_{a+1}; the engine keeps it only if it lowers
the objective, so every accepted extrapolation is a descent step.
"""
from libc.math cimport fabs


cdef Py_ssize_t anderson_weights(const double* snapshots, Py_ssize_t stride,
                                 Py_ssize_t n_snap, Py_ssize_t n,
                                 double* coef) noexcept nogil:
    """Weights of iterates 1 .. K (row a of ``snapshots`` is x_a, ``stride``
    doubles apart, n coordinates). Returns K, or 0 when degenerate."""
    cdef Py_ssize_t K = n_snap - 1, a, c, q, piv
    cdef double gram[ANDERSON_K][ANDERSON_K]
    cdef double rhs[ANDERSON_K]
    cdef double acc, total, tmp, trace_sum = 0.0
    cdef const double* xa
    cdef const double* xc
    if K < 2 or K > ANDERSON_K:
        return 0
    for a in range(K):
        for c in range(a, K):
            acc = 0.0
            xa = snapshots + a * stride
            xc = snapshots + c * stride
            for q in range(n):
                acc += (xa[stride + q] - xa[q]) * (xc[stride + q] - xc[q])
            gram[a][c] = acc
            gram[c][a] = acc
    for a in range(K):
        trace_sum += gram[a][a]
    if not trace_sum > 0.0:
        return 0
    for a in range(K):
        gram[a][a] += 1e-10 * trace_sum
        rhs[a] = 1.0
    # Gaussian elimination with partial pivoting (K <= ANDERSON_K)
    for a in range(K):
        piv = a
        for c in range(a + 1, K):
            if fabs(gram[c][a]) > fabs(gram[piv][a]):
                piv = c
        if gram[piv][a] == 0.0:
            return 0
        if piv != a:
            for c in range(K):
                tmp = gram[a][c]
                gram[a][c] = gram[piv][c]
                gram[piv][c] = tmp
            tmp = rhs[a]
            rhs[a] = rhs[piv]
            rhs[piv] = tmp
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
    for a in range(K):
        coef[a] /= total
    return K
