"""Fast solvers for the one-dimensional fused lasso (total-variation denoising).

Two algorithms, both exact (up to rounding) and allocation-free at C level
(declarations and workspace sizes in ``_fused_lasso.pxd``):

* ``fused_lasso_1d``: the unweighted problem

      argmin_x 1/2 sum_i (x_i - y_i)^2 + lam sum_{i>0} |x_i - x_{i-1}|

  by Condat's direct algorithm (IEEE SPL 2013). Condat's original code has
  a corner-case bug, fixed in later versions; this implementation is derived
  independently from the dual view below (each restart begins a fresh
  segment from its known boundary dual) and tested against the exact
  optimality certificate.
* ``fused_lasso_dp`` / ``fused_lasso_dp_l1``: the weighted problem

      argmin_x sum_i [c_i/2 (x_i - z_i)^2 + phi_i(x_i)] + lam_tv TV(x)

  with phi_i = 0, lam1 |x| or firecy's MCP (concavity gamma / a_i), by
  Johnson's dynamic programme (JCGS 2013) extended to losses whose
  derivative has kinks.

Dual view used throughout. With u_0 = u_n = 0 and
u_{i+1} = u_i + c_i (x_i - z_i) + s_i (s_i a subgradient of phi_i at x_i),
x is optimal iff |u_i| <= lam_tv for all i and u_i = lam_tv sign(x_i - x_{i-1})
wherever x_i != x_{i-1}. The tests check exactly this certificate.
"""
import time

import numpy as np

from libc.math cimport INFINITY, fabs, isfinite
from libc.string cimport memmove, memset


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


# ---------------------------------------------------------------------------
# Dynamic programme (weighted, with L1 / MCP)
# ---------------------------------------------------------------------------
#
# Forward pass. F_1 = f_1 and F_i = f_i + B_{i-1}, where
# B_i(x) = min_x' F_i(x') + lam |x - x'| is the best cost of x_1..x_i given
# x_{i+1} = x. With F_i convex, B_i' = clip(F_i', -lam, lam): below the point
# lo_i where F_i' reaches -lam the derivative is flattened to -lam, above the
# point hi_i where it reaches +lam to +lam. Backward pass: x_n minimises F_n,
# and x_i = clip(x_{i+1}, lo_i, hi_i) minimises F_i(x) + lam |x_{i+1} - x|.
#
# Representation of a derivative F' (piecewise linear, non-decreasing, with
# jumps): linear "tails" a x + b beyond the outermost knots, and knots, each
# adding (da x + db) to the piece on its right. Knots live in three places,
# merged by position during a scan:
#   * a deque of knots created by clipping. A left clip removes knots from
#     the left end and pushes one at lo_i, which lies left of every remaining
#     knot, so the deque stays sorted without ever searching;
#   * one accumulated knot at 0: every L1 or MCP term puts a jump of 2 lam1
#     there, so all of them merge into a single number;
#   * (MCP only) the kinks at +-gamma lam1 / a_i, one pair per element at
#     arbitrary positions: a small sorted array, or heaps if many pile up
#     (see _kink_push).
# Each scan step removes a knot and each element adds O(1) knots, so the
# forward pass is amortised linear (heap operations add a log for MCP).
#
# Storage: ``out`` holds lo_i during the forward pass (the backward pass
# overwrites it in place with x, reading lo_i just before), ``work`` holds
# hi_i, the deque and the kinks (layout in _dp_solve).
#
# Robustness. Tails are maintained directly (sums of c_i, exact clip levels)
# rather than by accumulating knot deltas, and a scan that runs out of knots
# switches to the opposite tail. Crossings inside a piece are clamped to the
# piece, and a piece whose slope is not positive (possible only by rounding,
# or with all-zero weights) takes an end point: no division by a zero or
# tiny slope can throw the solution outside its bracket.

cdef struct Knot:
    double x       # position
    double da      # change of slope at x (left to right)
    double db      # change of intercept at x


cdef struct HeapEntry:
    double key     # position (negated in the max-heap)
    Py_ssize_t id  # 2 i for the kink at -gamma lam1 / a_i, 2 i + 1 for +


# Which knot sources a problem has. The forward pass and the scans are
# written once over this fused type, so Cython emits one C version per case
# and the plain and L1 versions carry no code for the sources they lack
# (the tag argument itself is never read).
cdef struct _NoPenalty:
    char unused
cdef struct _L1Penalty:
    char unused
cdef struct _MCPPenalty:
    char unused
ctypedef fused _KnotSet:
    _NoPenalty
    _L1Penalty
    _MCPPenalty


cdef struct DPState:
    Knot* dq
    Py_ssize_t head      # first live knot of the deque
    Py_ssize_t tail      # one past the last live knot
    double left_a        # F' = left_a x + left_b left of every knot
    double left_b
    double right_a       # F' = right_a x + right_b right of every knot
    double right_b
    double zero_jump     # jump of F' at 0 (0: no knot there)
    bint kinks_sorted    # MCP kinks in the sorted array (else the heaps)
    HeapEntry* sorted_kinks  # live kinks at [kink_head, kink_tail), sorted
    Py_ssize_t kink_head
    Py_ssize_t kink_tail
    HeapEntry* min_heap  # MCP kinks by position
    HeapEntry* max_heap  # MCP kinks by negated position
    Py_ssize_t min_size
    Py_ssize_t max_size
    unsigned char* dead  # kink consumed from the other heap
    Py_ssize_t n_ids     # 2n: number of kink ids
    const double* curv
    double inv_gamma
    double lam1


cdef inline void _heap_push(HeapEntry* heap, Py_ssize_t* size, double key,
                            Py_ssize_t id) noexcept nogil:
    cdef Py_ssize_t i = size[0], parent
    size[0] = i + 1
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent].key <= key:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i].key = key
    heap[i].id = id


cdef inline void _heap_pop(HeapEntry* heap, Py_ssize_t* size) noexcept nogil:
    cdef Py_ssize_t last = size[0] - 1, i = 0, child
    cdef HeapEntry moved = heap[last]
    size[0] = last
    while True:
        child = 2 * i + 1
        if child >= last:
            break
        if child + 1 < last and heap[child + 1].key < heap[child].key:
            child += 1
        if heap[child].key >= moved.key:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = moved


# MCP kinks. While at most _sorted_kinks_max_live are live they sit in one
# sorted array: an insertion shifts the kinks beyond it by one slot (cheaper
# than heap operations at these sizes, and cache-friendly), removals at
# either end are O(1). Kinks are usually consumed soon after they
# enter, so this is the common case even for long signals. If more pile up,
# the live kinks move, once and for good, to a min-heap and a max-heap that
# each hold every kink; a kink consumed through one heap is marked dead and
# skipped when it surfaces in the other. That bounds every operation by
# O(log n): no quadratic worst case.
#
# Memory (HeapEntry slots from the kink base): the sorted array may drift
# outwards by one slot per insertion from the middle of 4n + 2 slots; the
# heaps take slots [0, 2n) and [2n, 4n); the 2n dead flags follow all that.
cdef Py_ssize_t _sorted_kinks_max_live = 256   # tests change it (see below)


cdef void _kinks_to_heaps(DPState* s) noexcept nogil:
    cdef Py_ssize_t m = s.kink_tail - s.kink_head, j
    cdef HeapEntry* base = s.sorted_kinks
    # ascending order is a valid min-heap, and reversed with negated keys a
    # valid max-heap: no sifting needed. [0, m) and [2n, 2n + m) are
    # disjoint since m <= 2n; memmove handles the overlap with the old block.
    memmove(base, base + s.kink_head, m * sizeof(HeapEntry))
    s.min_heap = base
    s.max_heap = base + s.n_ids
    for j in range(m):
        s.max_heap[j].key = -base[m - 1 - j].key
        s.max_heap[j].id = base[m - 1 - j].id
    s.min_size = m
    s.max_size = m
    memset(s.dead, 0, s.n_ids)
    s.kinks_sorted = False


cdef inline void _kink_push(DPState* s, double key, Py_ssize_t id) noexcept nogil:
    cdef Py_ssize_t j
    cdef HeapEntry* arr
    if s.kinks_sorted and s.kink_tail - s.kink_head >= _sorted_kinks_max_live:
        _kinks_to_heaps(s)
    if not s.kinks_sorted:
        _heap_push(s.min_heap, &s.min_size, key, id)
        _heap_push(s.max_heap, &s.max_size, -key, id)
        return
    # Insertion sort from one end. Kinks at -k sit left of those at +k, so
    # a negative key starts from the left end and a positive one from the
    # right: either way only the kinks beyond the new one move (an inline
    # loop: at these sizes a memmove call costs more than it moves).
    arr = s.sorted_kinks
    if key < 0.0:
        j = s.kink_head - 1
        while j + 1 < s.kink_tail and arr[j + 1].key < key:
            arr[j] = arr[j + 1]
            j += 1
        s.kink_head -= 1
    else:
        j = s.kink_tail
        while j > s.kink_head and arr[j - 1].key > key:
            arr[j] = arr[j - 1]
            j -= 1
        s.kink_tail += 1
    arr[j].key = key
    arr[j].id = id


cdef inline double _kink_min(DPState* s) noexcept nogil:
    """Leftmost live MCP kink (+inf if none)."""
    if s.kinks_sorted:
        if s.kink_head < s.kink_tail:
            return s.sorted_kinks[s.kink_head].key
        return INFINITY
    while s.min_size > 0 and s.dead[s.min_heap[0].id]:
        _heap_pop(s.min_heap, &s.min_size)
    if s.min_size > 0:
        return s.min_heap[0].key
    return INFINITY


cdef inline double _kink_max(DPState* s) noexcept nogil:
    """Rightmost live MCP kink (-inf if none)."""
    if s.kinks_sorted:
        if s.kink_head < s.kink_tail:
            return s.sorted_kinks[s.kink_tail - 1].key
        return -INFINITY
    while s.max_size > 0 and s.dead[s.max_heap[0].id]:
        _heap_pop(s.max_heap, &s.max_size)
    if s.max_size > 0:
        return -s.max_heap[0].key
    return -INFINITY


cdef inline Py_ssize_t _kink_pop_min(DPState* s) noexcept nogil:
    """Remove the kink _kink_min just returned; return its id."""
    cdef Py_ssize_t id
    if s.kinks_sorted:
        s.kink_head += 1
        return s.sorted_kinks[s.kink_head - 1].id
    id = s.min_heap[0].id
    _heap_pop(s.min_heap, &s.min_size)
    s.dead[id] = 1
    return id


cdef inline Py_ssize_t _kink_pop_max(DPState* s) noexcept nogil:
    """Remove the kink _kink_max just returned; return its id."""
    cdef Py_ssize_t id
    if s.kinks_sorted:
        s.kink_tail -= 1
        return s.sorted_kinks[s.kink_tail].id
    id = s.max_heap[0].id
    _heap_pop(s.max_heap, &s.max_size)
    s.dead[id] = 1
    return id


cdef inline void _kink_delta(DPState* s, Py_ssize_t id, double* da,
                             double* db) noexcept nogil:
    # Inside (-k, 0) the MCP derivative is -lam1 - a x / gamma and inside
    # (0, k) it is lam1 - a x / gamma; beyond +-k it is 0 (continuous there).
    cdef double slope = s.curv[id >> 1] * s.inv_gamma
    da[0] = slope if (id & 1) else -slope
    db[0] = -s.lam1


cdef inline double _clip_left(DPState* s, double level,
                              _KnotSet* kind) noexcept nogil:
    """Flatten F' to ``level`` left of where it first reaches ``level``.

    Returns that point (-inf if F' >= level everywhere: nothing to do).
    """
    cdef double a = s.left_a, b = s.left_b, prev = -INFINITY
    cdef double t, tk, xc, da, db
    cdef int source
    cdef Py_ssize_t id
    if a <= 0.0 and b >= level:
        return -INFINITY
    while True:
        source = 0
        t = INFINITY
        if s.head < s.tail:
            t = s.dq[s.head].x
            source = 1
        if _KnotSet is not _NoPenalty:
            if s.zero_jump > 0.0 and t > 0.0:
                t = 0.0
                source = 2
        if _KnotSet is _MCPPenalty:
            tk = _kink_min(s)
            if tk < t:
                t = tk
                source = 3
        if source == 0:
            # no knot left: the last piece is the right tail, kept exactly
            a = s.right_a
            b = s.right_b
            if a > 0.0:
                xc = (level - b) / a
                if xc < prev:
                    xc = prev
            elif prev > -INFINITY:
                xc = prev
            else:
                xc = 0.0   # F' constant below level: unbounded, not reachable
            break
        if a * t + b > level:
            # crossing inside (prev, t)
            if a > 0.0:
                xc = (level - b) / a
                if xc < prev:
                    xc = prev
                elif xc > t:
                    xc = t
            elif prev > -INFINITY:
                xc = prev
            else:
                xc = t
            break
        if source == 1:
            da = s.dq[s.head].da
            db = s.dq[s.head].db
            s.head += 1
        elif source == 2:
            da = 0.0
            db = s.zero_jump
            s.zero_jump = 0.0
        else:
            _kink_delta(s, _kink_pop_min(s), &da, &db)
        a += da
        b += db
        prev = t
        if a * t + b >= level:
            xc = t   # the jump at t crosses the level
            break
    s.head -= 1
    s.dq[s.head].x = xc
    s.dq[s.head].da = a
    s.dq[s.head].db = b - level
    s.left_a = 0.0
    s.left_b = level
    return xc


cdef inline double _clip_right(DPState* s, double level,
                               _KnotSet* kind) noexcept nogil:
    """Flatten F' to ``level`` right of where it last is below ``level``.

    Returns that point (+inf if F' <= level everywhere: nothing to do).
    """
    cdef double a = s.right_a, b = s.right_b, prev = INFINITY
    cdef double t, tk, xc, da, db
    cdef int source
    cdef Py_ssize_t id
    if a <= 0.0 and b <= level:
        return INFINITY
    while True:
        source = 0
        t = -INFINITY
        if s.head < s.tail:
            t = s.dq[s.tail - 1].x
            source = 1
        if _KnotSet is not _NoPenalty:
            if s.zero_jump > 0.0 and t < 0.0:
                t = 0.0
                source = 2
        if _KnotSet is _MCPPenalty:
            tk = _kink_max(s)
            if tk > t:
                t = tk
                source = 3
        if source == 0:
            a = s.left_a
            b = s.left_b
            if a > 0.0:
                xc = (level - b) / a
                if xc > prev:
                    xc = prev
            elif prev < INFINITY:
                xc = prev
            else:
                xc = 0.0
            break
        if a * t + b < level:
            # crossing inside (t, prev)
            if a > 0.0:
                xc = (level - b) / a
                if xc > prev:
                    xc = prev
                elif xc < t:
                    xc = t
            elif prev < INFINITY:
                xc = prev
            else:
                xc = t
            break
        if source == 1:
            s.tail -= 1
            da = s.dq[s.tail].da
            db = s.dq[s.tail].db
        elif source == 2:
            da = 0.0
            db = s.zero_jump
            s.zero_jump = 0.0
        else:
            _kink_delta(s, _kink_pop_max(s), &da, &db)
        a -= da
        b -= db
        prev = t
        if a * t + b <= level:
            xc = t
            break
    s.dq[s.tail].x = xc
    s.dq[s.tail].da = -a
    s.dq[s.tail].db = level - b
    s.tail += 1
    s.right_a = 0.0
    s.right_b = level
    return xc


cdef inline double _separable_solution(double z, double c, double lam1,
                                       double gamma, double curv) noexcept nogil:
    """argmin_x c/2 (x - z)^2 + phi(x); 0 when that is a whole interval."""
    cdef double az = fabs(z), knot, denom, x
    if c <= 0.0:
        return 0.0   # phi alone (or nothing): 0 is a minimiser
    if lam1 <= 0.0:
        return z
    if curv > 0.0:
        knot = gamma * lam1 / curv
        if az > knot:
            return z
        if c * az <= lam1:
            return 0.0
        denom = c - curv / gamma
        if denom > 0.0:
            x = (c * az - lam1) / denom
            if x > knot:
                x = knot
        else:
            x = knot   # loss linear on (0, knot), decreasing: go to the knot
        return x if z > 0.0 else -x
    if az <= lam1 / c:
        return 0.0
    return z - lam1 / c if z > 0.0 else z + lam1 / c


cdef inline void _add_kinks(DPState* s, double knot, Py_ssize_t id_left,
                            double slope, double lam1, double level_left,
                            double level_right) noexcept nogil:
    """Add one element's MCP kinks at -knot and +knot (call after its data
    term, before the clips at ``level_left`` / ``level_right``).

    A kink outside all current knots on the left, where F' is already at or
    below the coming left clip's level, would be the first knot that clip
    absorbs: fold it into the left tail now instead (F' left of it is about
    to be flattened anyway, and the right clip never scans that far). Kinks
    mostly fall there, so this spares a heap / sorted-array insertion and a
    scan step each. Likewise on the right.
    """
    cdef double t = -knot
    cdef double first = _kink_min(s)
    if s.head < s.tail and s.dq[s.head].x < first:
        first = s.dq[s.head].x
    if t < first and s.left_a * t + s.left_b <= level_left:
        s.left_a -= slope
        s.left_b -= lam1
    else:
        _kink_push(s, t, id_left)
    t = knot
    first = _kink_max(s)
    if s.head < s.tail and s.dq[s.tail - 1].x > first:
        first = s.dq[s.tail - 1].x
    if t > first and s.right_a * t + s.right_b >= level_right:
        # right of +knot the derivative loses the kink's delta
        s.right_a -= slope
        s.right_b += lam1
    else:
        _kink_push(s, t, id_left + 1)


cdef inline int _dp_forward(DPState* s, const double* z, const double* c,
                            Py_ssize_t n, double lam, double lam1, double gamma,
                            const double* curv, double first_shift, double* lo,
                            double* hi, _KnotSet* kind) noexcept nogil:
    """Forward pass: lo[i], hi[i] for i < n - 1, and x_{n-1} in lo[n-1]."""
    cdef Py_ssize_t i
    cdef double ci, zi, ai, knot, root_lo, root_hi, x
    for i in range(n):
        ci = 1.0 if c == NULL else c[i]
        zi = z[i]
        if i == 0:
            zi += first_shift
        # data term: c (x - z) is added to every piece, i.e. to both tails
        s.left_a += ci
        s.right_a += ci
        s.left_b -= ci * zi
        s.right_b -= ci * zi
        if _KnotSet is not _NoPenalty:
            s.zero_jump += 2.0 * lam1
            ai = curv[i] if _KnotSet is _MCPPenalty else 0.0
            knot = INFINITY
            if ai > 0.0:
                if not (ci * gamma >= ai):
                    return -1
                knot = gamma * lam1 / ai
            if knot < INFINITY:
                # MCP: derivative 0 beyond the kinks, so tails are unchanged
                _add_kinks(s, knot, 2 * i, ai * s.inv_gamma, lam1,
                           -lam if i + 1 < n else 0.0,
                           lam if i + 1 < n else 0.0)
            else:
                s.left_b -= lam1
                s.right_b += lam1
        if i + 1 < n:
            lo[i] = _clip_left(s, -lam, kind)
            hi[i] = _clip_right(s, lam, kind)
        else:
            # root of F_n': its zero set is [root_lo, root_hi]; take the
            # point nearest 0
            root_lo = _clip_left(s, 0.0, kind)
            root_hi = _clip_right(s, 0.0, kind)
            x = 0.0
            if x < root_lo:
                x = root_lo
            if x > root_hi:
                x = root_hi
            lo[i] = x
    return 0


cdef int _dp_solve(const double* z, const double* c, Py_ssize_t n,
                   double lam, double lam1, double gamma, const double* curv,
                   double first_shift, double* out, double* work) noexcept nogil:
    """Shared core. ``c`` NULL: unit weights; ``curv`` NULL: no MCP.

    ``first_shift`` is added to z_0 (the boundary dual when Condat's
    algorithm hands over the rest of a signal; 0 otherwise).
    """
    cdef DPState s
    cdef double* hi = work
    cdef Py_ssize_t i, cap
    cdef double ci, zi, ai, lo, x
    cdef int status
    cdef bint use_kinks = curv != NULL and lam1 > 0.0
    if n <= 0:
        return 0

    if lam == 0.0:
        for i in range(n):
            ci = 1.0 if c == NULL else c[i]
            zi = z[i] + (first_shift if i == 0 else 0.0)
            ai = curv[i] if use_kinks else 0.0
            if ai > 0.0 and not (ci * gamma >= ai):
                return -1
            out[i] = _separable_solution(zi, ci, lam1, gamma, ai)
        return 0

    # work layout (in doubles): hi[n] | deque, 2n + 2 Knots of 3 doubles |
    # MCP kinks, 4n + 2 HeapEntry of 2 doubles | 2n dead-flag bytes
    cap = 2 * n + 2
    s.dq = <Knot*>(work + n)
    # head and tail only ever move outwards by one per clip (n clips each
    # way at most), so starting in the middle of 2n + 2 slots never wraps
    s.head = n + 1
    s.tail = n + 1
    s.left_a = 0.0
    s.left_b = 0.0
    s.right_a = 0.0
    s.right_b = 0.0
    s.zero_jump = 0.0
    s.min_size = 0
    s.max_size = 0
    s.curv = curv
    s.lam1 = lam1
    s.inv_gamma = 0.0
    s.kinks_sorted = True
    s.sorted_kinks = NULL
    s.kink_head = 0
    s.kink_tail = 0
    s.min_heap = NULL
    s.max_heap = NULL
    s.dead = NULL
    s.n_ids = 2 * n
    if use_kinks:
        s.inv_gamma = 1.0 / gamma
        s.sorted_kinks = <HeapEntry*>(work + n + 3 * cap)
        s.kink_head = 2 * n + 1
        s.kink_tail = 2 * n + 1
        s.dead = <unsigned char*>(work + n + 3 * cap + 8 * n + 4)

    if use_kinks:
        status = _dp_forward(&s, z, c, n, lam, lam1, gamma, curv, first_shift,
                             out, hi, <_MCPPenalty*>NULL)
    elif lam1 > 0.0:
        status = _dp_forward(&s, z, c, n, lam, lam1, gamma, NULL, first_shift,
                             out, hi, <_L1Penalty*>NULL)
    else:
        status = _dp_forward(&s, z, c, n, lam, 0.0, gamma, NULL, first_shift,
                             out, hi, <_NoPenalty*>NULL)
    if status != 0:
        return status

    # backward pass, branch-free (see _max): whether
    # x_{i+1} falls inside [lo_i, hi_i] is unpredictable on noisy data
    x = out[n - 1]
    for i in range(n - 2, -1, -1):
        x = _min(_max(x, out[i]), hi[i])
        out[i] = x
    return 0


cdef inline bint _bad_level(double lam) noexcept nogil:
    return not (lam >= 0.0) or not isfinite(lam)


cdef Py_ssize_t fused_lasso_dp_l1_work_size(Py_ssize_t n) noexcept nogil:
    if n <= 0:
        return 0
    return n + 3 * (2 * n + 2)


cdef Py_ssize_t fused_lasso_dp_work_size(Py_ssize_t n) noexcept nogil:
    if n <= 0:
        return 0
    # + MCP kinks: two heaps of 2n (key, id) pairs and 2n "dead" bytes, or
    # (small n) one sorted array of 4n + 2 pairs
    return fused_lasso_dp_l1_work_size(n) + 8 * n + 4 + (2 * n + 7) // 8


cdef int fused_lasso_dp_l1(const double* z, const double* c, Py_ssize_t n,
                           double lam_tv, double lam1, double* out,
                           double* work) noexcept nogil:
    if n < 0 or _bad_level(lam_tv) or _bad_level(lam1):
        return -1
    return _dp_solve(z, c, n, lam_tv, lam1, 0.0, NULL, 0.0, out, work)


cdef int fused_lasso_dp(const double* z, const double* c, Py_ssize_t n,
                        double lam_tv, double lam1, double gamma,
                        const double* a, double* out,
                        double* work) noexcept nogil:
    if n < 0 or _bad_level(lam_tv) or _bad_level(lam1):
        return -1
    if a != NULL and (not (gamma > 0.0) or not isfinite(gamma)):
        return -1
    return _dp_solve(z, c, n, lam_tv, lam1, gamma, a, 0.0, out, work)


# ---------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------

cdef Py_ssize_t _first_invalid(const double[::1] values,
                               bint nonnegative) noexcept nogil:
    """Index of the first non-finite (or, if asked, negative) value; -1 if
    none. One C pass: the wrappers' checks cost little next to the solve."""
    cdef Py_ssize_t i
    for i in range(values.shape[0]):
        if not isfinite(values[i]) or (nonnegative and values[i] < 0.0):
            return i
    return -1


cdef Py_ssize_t _first_nonconvex(object weights, const double[::1] curvature,
                                 double gamma):
    """First i with curvature_i > 0 and weights_i * gamma < curvature_i."""
    cdef const double[::1] c
    cdef Py_ssize_t i
    cdef double ci = 1.0
    if weights is not None:
        c = weights
    for i in range(curvature.shape[0]):
        if weights is not None:
            ci = c[i]
        if curvature[i] > 0.0 and not (ci * gamma >= curvature[i]):
            return i
    return -1


def _as_signal(values, name, bint nonnegative=False):
    arr = np.ascontiguousarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    bad = _first_invalid(arr, nonnegative)
    if bad >= 0:
        if not np.isfinite(arr[bad]):
            raise ValueError(f"{name} contains NaN or infinite values")
        raise ValueError(f"{name} must be non-negative, {name}[{bad}] = {arr[bad]!r}")
    return arr


def _as_level(value, name):
    value = float(value)
    if not np.isfinite(value) or value < 0.0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


def _as_elementwise(values, name, n):
    arr = _as_signal(values, name, nonnegative=True)
    if arr.shape[0] != n:
        raise ValueError(
            f"{name} has length {arr.shape[0]}, expected {n} (the signal's length)")
    return arr


def fused_lasso(y, lam):
    """Unweighted 1-D fused lasso (total-variation denoising).

    Solves ``argmin_x 1/2 sum_i (x_i - y_i)**2 + lam * sum_{i>0} |x_i - x_{i-1}|``
    exactly, in linear time in practice, by Condat's direct algorithm.

    Parameters
    ----------
    y : array_like of shape (n,)
        Signal; finite values.
    lam : float
        Fusion level, ``>= 0``.

    Returns
    -------
    x : ndarray of shape (n,)
        The (unique) minimiser.

    Raises
    ------
    ValueError
        If ``y`` is not 1-D or not finite, or ``lam`` is negative or not finite.

    See Also
    --------
    fused_lasso_weighted : weights, L1 and MCP terms.

    Notes
    -----
    Adding ``lam1 * ||x||_1`` to this (equal-weight) problem is solved exactly
    by soft-thresholding the result at ``lam1``; with unequal weights it is
    not (use :func:`fused_lasso_weighted`).
    """
    cdef const double[::1] y_view
    cdef double[::1] out_view, work_view
    cdef double lam_c = _as_level(lam, "lam")
    cdef Py_ssize_t n
    cdef int status
    y_arr = _as_signal(y, "y")
    n = y_arr.shape[0]
    if n == 0:
        return np.empty(0)
    # (separate allocations: a view into one buffer would keep the
    # workspace alive as long as the result)
    out = np.empty(n)
    y_view = y_arr
    out_view = out
    work_view = np.empty(fused_lasso_1d_work_size(n))
    with nogil:
        status = fused_lasso_1d(&y_view[0], n, lam_c, &out_view[0], &work_view[0])
    if status != 0:  # pragma: no cover - arguments were validated above
        raise ValueError("invalid arguments")
    return out


def _prepare_weighted(z, lam_tv, weights, lam1, gamma, curvature):
    z_arr = _as_signal(z, "z")
    n = z_arr.shape[0]
    lam_tv = _as_level(lam_tv, "lam_tv")
    lam1 = _as_level(lam1, "lam1")
    c_arr = None if weights is None else _as_elementwise(weights, "weights", n)
    a_arr = None
    if gamma is None:
        if curvature is not None:
            raise ValueError("curvature is only used with gamma (MCP)")
        gamma = 0.0
    else:
        gamma = float(gamma)
        if not np.isfinite(gamma) or gamma <= 0.0:
            raise ValueError(f"gamma must be a finite number > 0, got {gamma!r}")
        if curvature is None:
            a_arr = np.ones(n) if c_arr is None else c_arr
        else:
            a_arr = _as_elementwise(curvature, "curvature", n)
        i = _first_nonconvex(c_arr, a_arr, gamma)
        if i >= 0:
            c_eff = np.ones(n) if c_arr is None else c_arr
            raise ValueError(
                "MCP term makes the problem non-convex: need "
                f"weights * gamma >= curvature, element {i} has weight "
                f"{c_eff[i]!r}, curvature {a_arr[i]!r}, gamma {gamma!r}")
    return z_arr, lam_tv, c_arr, lam1, gamma, a_arr


def fused_lasso_weighted(z, lam_tv, weights=None, lam1=0.0, gamma=None,
                         curvature=None):
    """Weighted 1-D fused lasso with an optional L1 or MCP term.

    Solves::

        argmin_x  sum_i [ c_i/2 (x_i - z_i)**2 + phi_i(x_i) ]
                  + lam_tv * sum_{i>0} |x_i - x_{i-1}|

    with ``c = weights`` and ``phi_i(x) = lam1 |x|`` (L1, ``gamma=None``) or
    firecy's MCP with per-element concavity ``gamma / a_i``::

        phi_i(x) = lam1 |x| - a_i x**2 / (2 gamma)   if |x| <= gamma lam1 / a_i
                 = gamma lam1**2 / (2 a_i)           otherwise

    by Johnson's dynamic programme (linear time; ``O(n log n)`` worst case
    with MCP).

    Parameters
    ----------
    z : array_like of shape (n,)
        Centres of the data terms; finite.
    lam_tv : float
        Fusion level, ``>= 0``.
    weights : array_like of shape (n,), optional
        ``c_i >= 0``; default all ones. A zero weight leaves the element with
        no data term (its value is then set by its neighbours and ``phi_i``).
    lam1 : float, default=0.0
        Sparsity level, ``>= 0``.
    gamma : float, optional
        MCP concavity (``> 0``). ``None`` (default) gives the L1 term.
    curvature : array_like of shape (n,), optional
        ``a_i >= 0`` for MCP; default ``weights`` (the curvature of the data
        term, as firecy's block updates use it). ``a_i = 0`` gives L1 for
        that element. The problem must stay convex:
        ``weights * gamma >= curvature`` elementwise.

    Returns
    -------
    x : ndarray of shape (n,)
        A minimiser. It is unique when all weights are positive; otherwise
        ties are broken deterministically (the last element takes the
        minimiser closest to 0, each earlier element the value closest to its
        right neighbour's).

    Raises
    ------
    ValueError
        On non-finite or non-1-D inputs, length mismatches, negative
        weights, curvature or levels, ``gamma <= 0``, ``curvature`` without
        ``gamma``, or a non-convex MCP term.

    See Also
    --------
    fused_lasso : the unweighted problem (faster).
    """
    cdef const double[::1] z_view, c_view, a_view
    cdef double[::1] out_view, work_view
    cdef const double* c_ptr = NULL
    cdef const double* a_ptr = NULL
    cdef Py_ssize_t n
    cdef double lam_c, lam1_c, gamma_c
    cdef int status
    z_arr, lam_tv, c_arr, lam1, gamma, a_arr = _prepare_weighted(
        z, lam_tv, weights, lam1, gamma, curvature)
    n = z_arr.shape[0]
    if n == 0:
        return np.empty(0)
    lam_c = lam_tv
    lam1_c = lam1
    gamma_c = gamma
    out = np.empty(n)
    z_view = z_arr
    out_view = out
    work_view = np.empty(fused_lasso_dp_work_size(n) if a_arr is not None
                         else fused_lasso_dp_l1_work_size(n))
    if c_arr is not None:
        c_view = c_arr
        c_ptr = &c_view[0]
    if a_arr is not None:
        a_view = a_arr
        a_ptr = &a_view[0]
        with nogil:
            status = fused_lasso_dp(&z_view[0], c_ptr, n, lam_c, lam1_c, gamma_c,
                                    a_ptr, &out_view[0], &work_view[0])
    else:
        with nogil:
            status = fused_lasso_dp_l1(&z_view[0], c_ptr, n, lam_c, lam1_c,
                                       &out_view[0], &work_view[0])
    if status != 0:  # pragma: no cover - arguments were validated above
        raise ValueError("invalid arguments")
    return out


# ---------------------------------------------------------------------------
# Benchmark and test helpers (not public API)
# ---------------------------------------------------------------------------

def _time_solver(str solver, z, double lam_tv, weights=None, double lam1=0.0,
                 gamma=None, curvature=None, Py_ssize_t repeat=1,
                 str clock="thread"):
    """Seconds taken by ``repeat`` back-to-back calls of a C-level solver.

    The calls run in one ``nogil`` loop on preallocated buffers, so the
    figure excludes all Python overhead. ``solver``: ``"condat"``
    (``fused_lasso_1d``), ``"dp"`` (``fused_lasso_dp_l1``, weights and
    ``lam1`` as given) or ``"dp_mcp"`` (``fused_lasso_dp``).

    ``z`` (and ``weights`` / ``curvature`` if given) may be 2-D: the calls
    then cycle through its rows. Repeating one short signal lets the branch
    predictor learn its exact path, which flatters the timing; a few hundred
    different rows do not. ``clock``: ``"thread"`` (this thread's CPU time:
    what the solver costs, not counting time other processes hold the core)
    or ``"wall"``.
    """
    cdef const double[::1] z_view, c_view, a_view
    cdef double[::1] out_view, work_view
    cdef const double* c_ptr = NULL
    cdef const double* a_ptr = NULL
    cdef Py_ssize_t n, rows, r, call, offset
    cdef int kind, status = 0
    cdef double gamma_c
    z2 = np.atleast_2d(np.asarray(z, dtype=np.float64))
    rows, n = z2.shape
    flat = lambda v: None if v is None else np.broadcast_to(
        np.asarray(v, dtype=np.float64), z2.shape).ravel()
    z_arr, lam_tv, c_arr, lam1, gamma, a_arr = _prepare_weighted(
        z2.ravel(), lam_tv, flat(weights), lam1, gamma, flat(curvature))
    if n == 0:
        raise ValueError("empty signal")
    kind = {"condat": 0, "dp": 1, "dp_mcp": 2}[solver]
    if kind == 2 and a_arr is None:
        raise ValueError("dp_mcp needs gamma")
    gamma_c = gamma
    z_view = z_arr
    out = np.empty(n)
    out_view = out
    if c_arr is not None:
        c_view = c_arr
    if a_arr is not None:
        a_view = a_arr
    work = np.empty(fused_lasso_dp_work_size(n))
    work_view = work
    timer = {"thread": time.thread_time, "wall": time.perf_counter}[clock]
    # one untimed round first: it faults in the fresh buffers' pages, which a
    # caller reusing its workspace (the engine) never pays again
    for r in range(2):
        if r == 1:
            start = timer()
        with nogil:
            for call in range(rows if r == 0 else repeat):
                offset = (call % rows) * n
                if c_arr is not None:
                    c_ptr = &c_view[offset]
                if a_arr is not None:
                    a_ptr = &a_view[offset]
                if kind == 0:
                    status |= fused_lasso_1d(&z_view[offset], n, lam_tv,
                                             &out_view[0], &work_view[0])
                elif kind == 1:
                    status |= fused_lasso_dp_l1(&z_view[offset], c_ptr, n,
                                                lam_tv, lam1, &out_view[0],
                                                &work_view[0])
                else:
                    status |= fused_lasso_dp(&z_view[offset], c_ptr, n, lam_tv,
                                             lam1, gamma_c, a_ptr,
                                             &out_view[0], &work_view[0])
    elapsed = timer() - start
    if status != 0:
        raise ValueError("invalid arguments")
    return elapsed


def _condat_with_budget(y, double lam, Py_ssize_t ratio=0,
                        Py_ssize_t slack=(<Py_ssize_t>1) << 62):
    """Test hook: the direct algorithm with a step budget of ``ratio`` steps
    per position reached plus ``slack`` (default: unlimited).

    Returns ``(x, steps, handed_over)``: the solution, the number of steps
    the direct algorithm took, and whether the dynamic programme finished it.
    """
    cdef const double[::1] y_view
    cdef double[::1] out_view, work_view
    cdef Py_ssize_t n, steps, stop_at = 0
    cdef double w0 = 0.0, last = 0.0
    y_arr = _as_signal(y, "y")
    n = y_arr.shape[0]
    if n < 2 or lam <= 0.0:
        raise ValueError("need n >= 2 and lam > 0")
    out = np.empty(n)
    work = np.empty(fused_lasso_1d_work_size(n))
    y_view = y_arr
    out_view = out
    work_view = work
    with nogil:
        steps = _condat(&y_view[0], n, lam, &out_view[0], ratio, slack,
                        &stop_at, &w0, &last)
    if stop_at < n:
        # rerun through the production path so the hand-over is what's tested
        with nogil:
            _condat_then_dp(&y_view[0], n, lam, &out_view[0], &work_view[0],
                            ratio, slack)
    return out, steps, stop_at < n


def _set_sorted_kinks_max_live(Py_ssize_t value):
    """Test hook: most live MCP kinks kept in the sorted array before moving
    to the heaps (default 256; 0: heaps from the start). Returns the previous
    value. Not thread-safe."""
    global _sorted_kinks_max_live
    previous = _sorted_kinks_max_live
    _sorted_kinks_max_live = max(value, 0)
    return previous


def _call_c(str solver, z, double lam_tv, weights=None, double lam1=0.0,
            double gamma=0.0, curvature=None, bint inplace=False,
            bint null_work=False):
    """Test hook: call a C-level solver on raw arguments (no validation).

    Returns ``(status, out)``. ``inplace``: ``out`` is the data array itself;
    ``null_work``: pass NULL as workspace (only ``"condat"`` accepts it).
    The workspace is exactly the documented size, between guard zones that
    are checked afterwards (RuntimeError if the solver wrote outside it);
    likewise for ``out``.
    """
    cdef double[::1] z_view, out_view, work_view
    cdef const double[::1] c_view, a_view
    cdef const double* c_ptr = NULL
    cdef const double* a_ptr = NULL
    cdef double* work_ptr = NULL
    cdef double* z_ptr
    cdef double* out_ptr
    cdef Py_ssize_t n, size, guard = 64
    cdef int status
    sentinel = -1.2345e300
    z_arr = np.array(z, dtype=np.float64).ravel()
    n = z_arr.shape[0]
    if solver == "condat":
        size = fused_lasso_1d_work_size(n)
    elif solver == "dp":
        size = fused_lasso_dp_l1_work_size(n)
    elif solver == "dp_mcp":
        size = fused_lasso_dp_work_size(n)
    else:
        raise ValueError(solver)
    work = np.full(size + 2 * guard, sentinel)
    out_buffer = np.full(n + 2 * guard, sentinel)
    if inplace:
        out_buffer[guard:guard + n] = z_arr
    z_view = out_buffer[guard:] if inplace else z_arr
    out_view = out_buffer
    work_view = work
    if not null_work:
        work_ptr = &work_view[guard]
    if weights is not None:
        c_arr = np.ascontiguousarray(weights, dtype=np.float64)
        c_view = c_arr
        c_ptr = &c_view[0]
    if curvature is not None:
        a_arr = np.ascontiguousarray(curvature, dtype=np.float64)
        a_view = a_arr
        a_ptr = &a_view[0]
    z_ptr = &z_view[0]
    out_ptr = &out_view[guard]
    if solver == "condat":
        status = fused_lasso_1d(z_ptr, n, lam_tv, out_ptr, work_ptr)
    elif solver == "dp":
        status = fused_lasso_dp_l1(z_ptr, c_ptr, n, lam_tv, lam1, out_ptr,
                                   work_ptr)
    else:
        status = fused_lasso_dp(z_ptr, c_ptr, n, lam_tv, lam1, gamma, a_ptr,
                                out_ptr, work_ptr)
    for buffer, inner in ((work, size), (out_buffer, n)):
        if not (np.all(buffer[:guard] == sentinel)
                and np.all(buffer[guard + inner:] == sentinel)):
            raise RuntimeError("solver wrote outside its buffer")
    return status, out_buffer[guard:guard + n].copy()
