"""Condat's direct algorithm for the unweighted 1-D fused lasso.

    argmin_x 1/2 sum_i (x_i - y_i)^2 + lam sum_{i>0} |x_i - x_{i-1}|

(L. Condat, "A direct algorithm for 1-D total variation denoising", IEEE
Signal Processing Letters, 2013). Condat's original code has a corner-case
bug, fixed in later versions; this implementation is derived independently
from the dual view (see ``firecy.penalties.tv``: each restart begins a fresh
segment from its known boundary dual) and tested against the exact
optimality certificate. If its step budget runs out (its worst case is
quadratic) the dynamic programme of ``_dp`` finishes the signal.
"""
from firecy.penalties.tv._common cimport _max, _min, _monotone
from firecy.penalties.tv._dp cimport _dp_solve, fused_lasso_dp_l1_work_size

from libc.math cimport isfinite


# ---------------------------------------------------------------------------
# Condat's direct algorithm (unweighted)
# ---------------------------------------------------------------------------
#
# Condat's sign convention: w_{k+1} = w_k + y_k - x_k with w_0 = w_n = 0 and
# |w| <= lam; w = +lam where the signal then steps down, -lam where it steps
# up. The algorithm grows a segment [k0, k] whose boundary dual w_{k0} is
# known (0 at the start, +lam after a step down, -lam after a step up) and
# keeps the interval [vmin, vmax] of constant values for which every
# w_{j+1}, k0 <= j <= k, stays in [-lam, lam]. umin / umax are w_{k+1} at
# vmin / vmax; kminus / kplus are the last positions where the bound that
# fixes vmin / vmax is tight (w = +lam at vmin, w = -lam at vmax).
#
# * If element k+1 pushes w below -lam even at vmin, no constant value
#   survives: the segment ends at kminus with value vmin and the signal steps
#   down (w_{kminus+1} = +lam, tight by construction). Symmetrically for
#   vmax / kplus / step up.
# * At the end, w_n = 0 is needed: w_n(v) is decreasing in v, so if
#   w_n(vmin) = umin < 0 the value would have to go below vmin, which the
#   bound at kminus forbids: break there and restart; likewise for umax > 0.
#   Otherwise the root v = vmin + umin / length is the last value.
#
# A restart begins a fresh segment at the break point with its boundary dual
# (+lam or -lam) and rescans from there. Every emitted segment is final, and
# the next segment provably moves in the stated direction (the old value
# stays feasible for the rescanned prefix and fails where the old segment
# failed), so the emitted x with the w's satisfies the optimality
# certificate. Rescans make the worst case quadratic, and smooth signals
# under heavy fusion do rescan a lot (a noisy ramp at lam = 1e4 takes ~40 n
# steps). So the step count is bounded by ``ratio`` times the farthest
# position scanned plus ``slack``: past that, the caller hands the rest of
# the signal to the linear-time dynamic programme.

cdef struct CondatState:
    Py_ssize_t k0        # first position of the current segment
    Py_ssize_t k         # last position scanned
    Py_ssize_t kminus    # last position where the bound fixing vmin is tight
    Py_ssize_t kplus     # likewise for vmax
    double vmin, vmax    # the segment values still feasible
    double umin, umax    # w_{k+1} at vmin / vmax
    double w0            # the segment's boundary dual
    double last          # the value of the previous segment


cdef inline void _close_segment(CondatState* s, const double* y, double* x,
                                double lam, bint down) noexcept nogil:
    """No constant value survives: end the segment at the bound that failed
    (vmin up to kminus, then a step down; vmax up to kplus, then a step up)
    and start a fresh one after it, with that step's boundary dual (+lam
    after a step down, -lam after a step up). Called with a constant
    ``down``, so each call site compiles to its own branch-free copy."""
    cdef Py_ssize_t kend = s.kminus if down else s.kplus, j
    cdef double v = _monotone(s.vmin if down else s.vmax, s.last, s.w0)
    for j in range(s.k0, kend + 1):
        x[j] = v
    s.last = v
    s.k0 = kend + 1
    s.k = s.k0
    s.kminus = s.k0
    s.kplus = s.k0
    if down:
        s.w0 = lam
        s.vmin = y[s.k]
        s.vmax = s.vmin + 2.0 * lam
    else:
        s.w0 = -lam
        s.vmax = y[s.k]
        s.vmin = s.vmax - 2.0 * lam
    s.umin = lam
    s.umax = -lam


cdef Py_ssize_t _condat(const double* y, Py_ssize_t n, double lam, double* x,
                        Py_ssize_t ratio, Py_ssize_t slack,
                        Py_ssize_t* stop_at,
                        double* stop_w0, double* stop_last) noexcept nogil:
    """Run the direct algorithm; return the number of steps taken.

    If the step budget ran out, ``x[:stop_at[0]]`` is final and the
    rest solves the same problem on ``y[stop_at[0]:]`` with the boundary dual
    ``stop_w0[0]`` (i.e. with ``y[stop_at[0]] + stop_w0[0]`` as first value),
    and ``stop_last[0]`` is the value just before; otherwise
    ``stop_at[0] = n``.
    """
    cdef CondatState s
    cdef Py_ssize_t j, steps = 0, kfar = 0
    cdef double umin_next, umax_next, ynext, v
    cdef double inv_len, excess_min, excess_max
    s.k0 = s.k = s.kminus = s.kplus = 0
    s.vmin = y[0] - lam
    s.vmax = y[0] + lam
    s.umin = lam
    s.umax = -lam
    s.w0 = 0.0
    s.last = 0.0
    while True:
        steps += 1
        if s.k > kfar:
            kfar = s.k
        if steps > ratio * kfar + slack:
            stop_at[0] = s.k0
            stop_w0[0] = s.w0
            stop_last[0] = s.last
            return steps
        if s.k == n - 1:
            # w_n = 0 is needed: break where a bound forbids the root
            if s.umin < 0.0:
                _close_segment(&s, y, x, lam, True)
            elif s.umax > 0.0:
                _close_segment(&s, y, x, lam, False)
            else:
                v = _monotone(s.vmin + s.umin / <double>(s.k - s.k0 + 1), s.last, s.w0)
                for j in range(s.k0, n):
                    x[j] = v
                stop_at[0] = n
                return steps
        else:
            ynext = y[s.k + 1]
            umin_next = s.umin + ynext - s.vmin
            umax_next = s.umax + ynext - s.vmax
            if umin_next < -lam:
                _close_segment(&s, y, x, lam, True)
            elif umax_next > lam:
                _close_segment(&s, y, x, lam, False)
            else:
                s.k += 1
                # If w_{k+1}(vmin) > lam, raise vmin until it equals lam (and
                # symmetrically for vmax). Written without branches: whether
                # a bound moves is a coin toss on noisy data, and a
                # mispredicted branch costs more than the arithmetic. The
                # reciprocal does not depend on the data, so it is computed
                # off the critical path.
                inv_len = 1.0 / <double>(s.k - s.k0 + 1)
                excess_min = _max(umin_next - lam, 0.0)
                excess_max = _min(umax_next + lam, 0.0)
                s.kminus = s.k if umin_next >= lam else s.kminus
                s.kplus = s.k if umax_next <= -lam else s.kplus
                s.vmin += excess_min * inv_len
                s.vmax += excess_max * inv_len
                s.umin = umin_next - excess_min
                s.umax = umax_next - excess_max


# Direct-algorithm steps allowed per position before falling back to the
# dynamic programme. Noise, piecewise-constant and moderately fused signals
# take 1-2.5 steps per element; a step costs about a third of a
# dynamic-programme element, so beyond ~4 the programme is faster anyway.
cdef enum:
    _CONDAT_RATIO = 4
    _CONDAT_SLACK = 256


cdef Py_ssize_t fused_lasso_1d_work_size(Py_ssize_t n) noexcept nogil:
    return fused_lasso_dp_l1_work_size(n)


cdef int fused_lasso_1d(const double* y, Py_ssize_t n, double lam,
                        double* out, double* work) noexcept nogil:
    cdef Py_ssize_t j
    if n < 0 or not (lam >= 0.0) or not isfinite(lam):
        return -1
    if n == 0:
        return 0
    if lam == 0.0 or n == 1:
        if out != y:
            for j in range(n):
                out[j] = y[j]
        return 0
    if work == NULL:
        _condat_then_dp(y, n, lam, out, NULL, 0, (<Py_ssize_t>1) << 62)
    else:
        _condat_then_dp(y, n, lam, out, work, _CONDAT_RATIO, _CONDAT_SLACK)
    return 0


cdef Py_ssize_t _condat_then_dp(const double* y, Py_ssize_t n, double lam,
                                double* out, double* work, Py_ssize_t ratio,
                                Py_ssize_t slack) noexcept nogil:
    """Direct algorithm, the dynamic programme finishing if its step budget
    runs out. Returns the number of direct-algorithm steps (n >= 2, lam > 0)."""
    cdef Py_ssize_t stop_at = n, steps, j
    cdef double w0 = 0.0, last = 0.0, first, v
    steps = _condat(y, n, lam, out, ratio, slack, &stop_at, &w0, &last)
    if stop_at < n:
        _dp_solve(y + stop_at, NULL, n - stop_at, lam, 0.0, 0.0, NULL, w0,
                  out + stop_at, work)
        # same one-ulp direction fix as between the direct algorithm's segments
        first = out[stop_at]
        v = _monotone(first, last, w0)
        if v != first:
            j = stop_at
            while j < n and out[j] == first:
                out[j] = v
                j += 1
    return steps
