# Inline helpers shared by the 1-D fused lasso solvers (header-only).

# Branch-free max / min: these ternaries compile to single maxsd / minsd
# instructions (libm's fmax / fmin are calls, as they must handle NaN).
cdef inline double _max(double a, double b) noexcept nogil:
    return a if a > b else b


cdef inline double _min(double a, double b) noexcept nogil:
    return a if a < b else b


cdef inline double _monotone(double v, double last, double w0) noexcept nogil:
    # A segment after a step down (w0 = +lam) is <= the previous one, after a
    # step up (w0 = -lam) >= it. In exact arithmetic the algorithm guarantees
    # this; rounding can leave a "step" of one ulp the wrong way between two
    # segments that are really equal, which would contradict the dual
    # certificate. Clamping makes such segments exactly equal.
    if w0 > 0.0 and v > last:
        return last
    if w0 < 0.0 and v < last:
        return last
    return v
