"""Johnson's dynamic programme for the weighted 1-D fused lasso with L1 / MCP.

    argmin_x sum_i [c_i/2 (x_i - z_i)^2 + phi_i(x_i)] + lam_tv TV(x)

with phi_i = 0, lam1 |x| or firecy's curvature-scaled MCP (concavity
gamma / a_i), by the dynamic programme of N. Johnson ("A dynamic programming
algorithm for the fused lasso and L0-segmentation", JCGS 2013) extended to
losses whose derivative has kinks. Linear time without MCP; O(n log n) in
the worst case with it.
"""
from firecy.penalties.tv._common cimport _max, _min

from libc.math cimport INFINITY, fabs, isfinite
from libc.string cimport memmove, memset


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


# Whether the elements have bounds (fused_lasso_dp_bounded): the same
# trick, so that the unbounded solvers carry no code for them (measured:
# the run-time tests cost the L1 DP ~30% on 16-leaf blocks)
cdef struct _NoBounds:
    char unused
cdef struct _WithBounds:
    char unused
ctypedef fused _BoundSet:
    _NoBounds
    _WithBounds


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


cdef inline double _clip_left(DPState* s, double level, double floor, double ceil,
                              _KnotSet* kind, _BoundSet* bounds) noexcept nogil:
    """Flatten F' to ``level`` left of where it first reaches ``level``.

    Returns that point (-inf if F' >= level everywhere: nothing to do).

    With bounds ``floor <= x <= ceil`` on the element (-inf / +inf: none),
    F' is -inf below ``floor`` and +inf above ``ceil``, so the point is
    clamped to [floor, ceil]: every knot at or left of ``floor`` is absorbed
    whatever F' is there (B' is ``level`` left of the point anyway), and the
    scan stops at ``ceil`` without absorbing the knots beyond it (the right
    clip, with the same ceiling, flattens them).
    """
    cdef double a = s.left_a, b = s.left_b, prev = -INFINITY
    cdef double t, tk, xc, da, db
    cdef int source
    cdef bint at_ceil
    cdef Py_ssize_t id
    if _BoundSet is _NoBounds:
        if a <= 0.0 and b >= level:
            return -INFINITY
    else:
        if floor == -INFINITY and a <= 0.0 and b >= level:
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
        at_ceil = False
        if _BoundSet is _WithBounds:
            if prev < floor:
                # the floor pass: absorb the knots at or left of floor
                if source != 0 and t <= floor:
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
                    continue
                if source == 0:
                    # no knot left: the piece is the right tail, kept exactly
                    a = s.right_a
                    b = s.right_b
                prev = floor
                if a * floor + b >= level or floor >= ceil:
                    xc = floor
                    break
            if ceil < INFINITY and t > ceil:
                # no knot beyond the ceiling is absorbed (one at it is, as
                # usual: the knots at one position must be taken together, or
                # a partial jump may cross the level where the whole does not)
                if source == 0:
                    a = s.right_a   # the exact tail (see source == 0 below)
                    b = s.right_b
                t = ceil
                at_ceil = True
                source = 4
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
        if _BoundSet is _WithBounds and at_ceil:
            # F' <= level on (prev, ceil]: at level there, the crossing set
            # reaches prev (the unbounded scan's choice on a flat piece)
            xc = prev if (a <= 0.0 and a * t + b == level and prev > -INFINITY) else ceil
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


cdef inline double _clip_right(DPState* s, double level, double floor, double ceil,
                               _KnotSet* kind, _BoundSet* bounds) noexcept nogil:
    """Flatten F' to ``level`` right of where it last is below ``level``.

    Returns that point (+inf if F' <= level everywhere: nothing to do).
    Bounds as in _clip_left, mirrored: the knots at or right of ``ceil`` are
    absorbed, the scan stops at ``floor``.
    """
    cdef double a = s.right_a, b = s.right_b, prev = INFINITY
    cdef double t, tk, xc, da, db
    cdef int source
    cdef bint at_floor
    cdef Py_ssize_t id
    if _BoundSet is _NoBounds:
        if a <= 0.0 and b <= level:
            return INFINITY
    else:
        if ceil == INFINITY and a <= 0.0 and b <= level:
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
        at_floor = False
        if _BoundSet is _WithBounds:
            if prev > ceil:
                # the ceiling pass: absorb the knots at or right of ceil
                if source != 0 and t >= ceil:
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
                    continue
                if source == 0:
                    a = s.left_a    # no knot left: the left tail, kept exactly
                    b = s.left_b
                prev = ceil
                if a * ceil + b <= level or ceil <= floor:
                    xc = ceil
                    break
            if floor > -INFINITY and t < floor:
                if source == 0:
                    a = s.left_a
                    b = s.left_b
                t = floor
                at_floor = True
                source = 4
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
        if _BoundSet is _WithBounds and at_floor:
            xc = prev if (a <= 0.0 and a * t + b == level and prev < INFINITY) else floor
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
                            double* hi, const double* lb, const double* ub,
                            _KnotSet* kind, _BoundSet* bounds) noexcept nogil:
    """Forward pass: lo[i], hi[i] for i < n - 1, and x_{n-1} in lo[n-1].

    ``lb``, ``ub`` (NULL: none): bounds lb_i <= x_i <= ub_i. F_i is then
    +inf outside [lb_i, ub_i], so both clip points and the final root are
    clamped to it (the clips absorb the knots beyond a bound: see
    _clip_left); B_i stays finite everywhere, and the backward pass's
    x_i = clip(x_{i+1}, lo_i, hi_i) lands in [lb_i, ub_i]."""
    cdef Py_ssize_t i
    cdef double ci, zi, ai, knot, root_lo, root_hi, x
    cdef double fl = -INFINITY, ce = INFINITY
    for i in range(n):
        if _BoundSet is _WithBounds:
            fl = lb[i]
            ce = ub[i]
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
            lo[i] = _clip_left(s, -lam, fl, ce, kind, bounds)
            hi[i] = _clip_right(s, lam, fl, ce, kind, bounds)
        else:
            # root of F_n': its zero set is [root_lo, root_hi]; take the
            # point nearest 0
            root_lo = _clip_left(s, 0.0, fl, ce, kind, bounds)
            root_hi = _clip_right(s, 0.0, fl, ce, kind, bounds)
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
    return _dp_solve_bounded(z, c, n, lam, lam1, gamma, curv, first_shift, NULL, NULL,
                             out, work)


cdef inline double _clamp_to(double x, const double* lb, const double* ub,
                             Py_ssize_t i) noexcept nogil:
    if lb == NULL:
        return x
    if x < lb[i]:
        return lb[i]
    if x > ub[i]:
        return ub[i]
    return x


cdef int _dp_solve_bounded(const double* z, const double* c, Py_ssize_t n,
                           double lam, double lam1, double gamma, const double* curv,
                           double first_shift, const double* lb, const double* ub,
                           double* out, double* work) noexcept nogil:
    """_dp_solve with bounds lb_i <= x_i <= ub_i (both NULL: none)."""
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
            # each element alone: its convex 1-D problem on [lb_i, ub_i] is
            # minimised by the clipped unconstrained minimiser
            out[i] = _clamp_to(_separable_solution(zi, ci, lam1, gamma, ai), lb, ub, i)
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

    if lb == NULL:
        if use_kinks:
            status = _dp_forward(&s, z, c, n, lam, lam1, gamma, curv, first_shift,
                                 out, hi, lb, ub, <_MCPPenalty*>NULL, <_NoBounds*>NULL)
        elif lam1 > 0.0:
            status = _dp_forward(&s, z, c, n, lam, lam1, gamma, NULL, first_shift,
                                 out, hi, lb, ub, <_L1Penalty*>NULL, <_NoBounds*>NULL)
        else:
            status = _dp_forward(&s, z, c, n, lam, 0.0, gamma, NULL, first_shift,
                                 out, hi, lb, ub, <_NoPenalty*>NULL, <_NoBounds*>NULL)
    elif use_kinks:
        status = _dp_forward(&s, z, c, n, lam, lam1, gamma, curv, first_shift,
                             out, hi, lb, ub, <_MCPPenalty*>NULL, <_WithBounds*>NULL)
    elif lam1 > 0.0:
        status = _dp_forward(&s, z, c, n, lam, lam1, gamma, NULL, first_shift,
                             out, hi, lb, ub, <_L1Penalty*>NULL, <_WithBounds*>NULL)
    else:
        status = _dp_forward(&s, z, c, n, lam, 0.0, gamma, NULL, first_shift,
                             out, hi, lb, ub, <_NoPenalty*>NULL, <_WithBounds*>NULL)
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


cdef int fused_lasso_dp_bounded(const double* z, const double* c, Py_ssize_t n,
                                double lam_tv, double lam1, double gamma,
                                const double* a, const double* lb, const double* ub,
                                double* out, double* work) noexcept nogil:
    cdef Py_ssize_t i
    if n < 0 or _bad_level(lam_tv) or _bad_level(lam1):
        return -1
    if a != NULL and (not (gamma > 0.0) or not isfinite(gamma)):
        return -1
    if lb != NULL:
        for i in range(n):
            if not (lb[i] <= ub[i]):
                return -1
    return _dp_solve_bounded(z, c, n, lam_tv, lam1, gamma, a, 0.0, lb, ub, out, work)


def _set_sorted_kinks_max_live(Py_ssize_t value):
    """Test hook: most live MCP kinks kept in the sorted array before moving
    to the heaps (default 256; 0: heaps from the start). Returns the previous
    value. Not thread-safe."""
    global _sorted_kinks_max_live
    previous = _sorted_kinks_max_live
    _sorted_kinks_max_live = max(value, 0)
    return previous
