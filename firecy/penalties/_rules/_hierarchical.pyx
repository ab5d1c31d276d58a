"""The hierarchical group penalty on each tree's node hierarchy.

    P(w) = lam * sum_t sum_{v internal node of tree t} base**depth(v) * ||w_{leaves below v}||_2

(Jawanpuria, Nath & Ramakrishnan, Generalized Hierarchical Kernel Learning,
JMLR, section 5, with rho = 2 and weights d_v = a^{|v|}, |v| the number of
conditions of node v). The leaves below a node are a contiguous run of the
block's columns and the groups of one tree are nested or disjoint, so:

* with equal steps the prox is exact by composing group soft-thresholdings
  from the leaves up (Jenatton, Mairal, Obozinski & Bach, JMLR 2011): one
  pass over the groups in post-order;
* with unequal steps (tree blocks: step_j = a_j) the composition is not the
  prox. The prox is computed exactly in two stages. (1) Which groups are zero
  does not depend on the steps' inequality: a subtree c is zero iff (s * z)
  restricted to it lies in the dual ball of its own groups (the terms of the
  enclosing groups vanish where x = 0), which one equal-step composition at
  s * z decides for every group at once. (2) On the remaining groups the
  solution is x_j = s_j z_j / (s_j + sum_{v contains j} lam_v / eta_v) with
  eta_v = ||x_{G_v}||, and eta minimises the convex function
      g(eta) = sum_j s_j z_j^2 T_j / (2 (s_j + T_j)) + sum_v lam_v eta_v / 2,
      T_j = sum_{v contains j} lam_v / eta_v
  (the variational form of the group norm minimised over x first). Newton's
  method with a backtracking line search solves it to rounding; its linear
  system is the tree's: eliminated from the leaves up in O(n + G).
  So every prox returns the block's exact minimiser, and the engine's block
  update lowers F whatever the steps.

Written on the public header only (``firecy.penalties.base``), as a third
party would; the per-tree data is read through ``Block.index``.
"""
from libc.math cimport fabs, fmax, fmin, sqrt, INFINITY
from libc.stdlib cimport free, malloc

import numpy as np

from firecy.penalties.base cimport Block, Penalty
from firecy.penalties._rules._structure import flatten_groups, groups_from_node_paths

# Newton on the group norms stops when every eta_v is its group's norm to
# this relative accuracy
cdef double NEWTON_TOL = 1e-13
cdef int NEWTON_MAX_ITER = 100


cdef struct Tree:
    # one block's groups in post-order (pointers into the penalty's arrays)
    Py_ssize_t n, G
    const Py_ssize_t* start
    const Py_ssize_t* end
    const Py_ssize_t* parent
    const double* weight        # base**depth
    const Py_ssize_t* leaf_group   # per leaf: the deepest group holding it


cdef void compose(const Tree* tr, double* x, double lam, double scale,
                  unsigned char* dead) noexcept nogil:
    """x <- the prox of lam * scale * sum_v weight_v ||x_v|| at x with unit
    steps (group soft-thresholding in post-order); dead[g] = the group's
    run is zero after its turn (may be NULL)."""
    cdef Py_ssize_t g, k
    cdef double r, thr
    for g in range(tr.G):
        r = 0.0
        for k in range(tr.start[g], tr.end[g]):
            r += x[k] * x[k]
        r = sqrt(r)
        thr = lam * tr.weight[g] * scale
        if r <= thr:
            for k in range(tr.start[g], tr.end[g]):
                x[k] = 0.0
        else:
            for k in range(tr.start[g], tr.end[g]):
                x[k] *= 1.0 - thr / r
        if dead != NULL:
            dead[g] = r <= thr


cdef void group_sq(const Tree* tr, const double* x, double* sq) noexcept nogil:
    """sq[g] = ||x_{G_g}||^2 for every group, in O(n + G)."""
    cdef Py_ssize_t g, k
    for g in range(tr.G):
        sq[g] = 0.0
    for k in range(tr.n):
        sq[tr.leaf_group[k]] += x[k] * x[k]
    for g in range(tr.G):
        if tr.parent[g] >= 0:
            sq[tr.parent[g]] += sq[g]


cdef struct Newton:
    # scratch of the weighted prox, G or n doubles each
    double* eta
    double* eta_new
    double* cum         # sum over the group and its ancestors of lam_v / eta_v
    double* sq
    double* acc_a
    double* acc_b
    double* piv_a
    double* piv_b
    double* piv
    double* tau
    double* step_dir
    double* h
    unsigned char* alive


cdef double newton_state(const Tree* tr, const Newton* nw, const double* eta,
                         const double* z, const double* s, double lam, double* x,
                         bint fill) noexcept nogil:
    """g(eta); with ``fill``, also x, h_j = x_j^2 / (s_j + T_j) and sq."""
    cdef Py_ssize_t g, k, p
    cdef double obj = 0.0, T, d
    for g in range(tr.G - 1, -1, -1):       # parents first
        if nw.alive[g]:
            p = tr.parent[g]
            nw.cum[g] = lam * tr.weight[g] / eta[g] + (nw.cum[p] if p >= 0 else 0.0)
            obj += 0.5 * lam * tr.weight[g] * eta[g]
    for k in range(tr.n):
        g = tr.leaf_group[k]
        if nw.alive[g]:
            T = nw.cum[g]
            d = s[k] + T
            obj += 0.5 * s[k] * z[k] * z[k] * (T / d)
            if fill:
                x[k] = s[k] * z[k] / d
                nw.h[k] = x[k] * x[k] / d
        elif fill:
            x[k] = 0.0
            nw.h[k] = 0.0
    if fill:
        group_sq(tr, x, nw.sq)
    return obj


cdef void weighted_prox(const Tree* tr, const double* z, const double* s, double lam,
                        double* x, const Newton* nw) noexcept nogil:
    """x = argmin sum_j s_j / 2 (x_j - z_j)^2 + lam sum_v weight_v ||x_v|| for
    unequal steps s (module docstring)."""
    cdef Py_ssize_t g, k, p, it
    cdef double obj, obj_new, err, lw, sigma, delta, dec, a, b_g, c_g
    cdef bint any_alive = False
    # (1) the zero groups: one composition at s * z with unit steps
    for k in range(tr.n):
        x[k] = s[k] * z[k]
    compose(tr, x, lam, 1.0, nw.alive)        # alive holds "dead" for now
    for g in range(tr.G - 1, -1, -1):
        p = tr.parent[g]
        nw.alive[g] = not nw.alive[g] and (p < 0 or nw.alive[p])
        any_alive = any_alive or nw.alive[g]
    if not any_alive:
        for k in range(tr.n):
            x[k] = 0.0
        return
    # (2) Newton on the norms of the live groups, from the unshrunk norms
    for k in range(tr.n):
        x[k] = z[k] if nw.alive[tr.leaf_group[k]] else 0.0
    group_sq(tr, x, nw.sq)
    for g in range(tr.G):
        nw.eta[g] = sqrt(nw.sq[g]) if nw.alive[g] else 0.0
    for it in range(NEWTON_MAX_ITER):
        obj = newton_state(tr, nw, nw.eta, z, s, lam, x, True)
        err = 0.0
        for g in range(tr.G):
            if nw.alive[g]:
                err = fmax(err, fabs(1.0 - sqrt(nw.sq[g]) / nw.eta[g]))
        if err <= NEWTON_TOL:
            return
        # the Newton system (C - K) delta = b, delta_v = lam_v / eta_v^2 * step_v,
        # K_uv = sum of h_j over the leaves of both groups; eliminated from
        # the leaves up: each group passes a quadratic in its ancestors' sum
        for g in range(tr.G):
            nw.acc_a[g] = 0.0
            nw.acc_b[g] = 0.0
        for k in range(tr.n):
            nw.acc_a[tr.leaf_group[k]] -= nw.h[k]
        for g in range(tr.G):
            if not nw.alive[g]:
                continue
            lw = lam * tr.weight[g]
            c_g = nw.sq[g] * nw.eta[g] / lw
            b_g = -0.5 * (nw.eta[g] * nw.eta[g] - nw.sq[g])
            nw.piv_a[g] = nw.acc_a[g]
            nw.piv_b[g] = nw.acc_b[g]
            nw.piv[g] = c_g + nw.acc_a[g]
            if not nw.piv[g] > 0.0:
                return           # rounding broke positive definiteness: keep x
            p = tr.parent[g]
            if p >= 0:
                nw.acc_a[p] += nw.acc_a[g] * c_g / nw.piv[g]
                nw.acc_b[p] += (nw.acc_a[g] * b_g + nw.acc_b[g] * c_g) / nw.piv[g]
        dec = 0.0
        for g in range(tr.G - 1, -1, -1):
            if not nw.alive[g]:
                nw.step_dir[g] = 0.0
                continue
            lw = lam * tr.weight[g]
            b_g = -0.5 * (nw.eta[g] * nw.eta[g] - nw.sq[g])
            p = tr.parent[g]
            sigma = nw.tau[p] if p >= 0 else 0.0
            delta = (b_g - nw.piv_b[g] - nw.piv_a[g] * sigma) / nw.piv[g]
            nw.tau[g] = sigma + delta
            nw.step_dir[g] = delta * nw.eta[g] * nw.eta[g] / lw
            # the Newton decrement: -gradient . step
            dec -= 0.5 * lw * (1.0 - nw.sq[g] / (nw.eta[g] * nw.eta[g])) * nw.step_dir[g]
        if not dec > 0.0:
            return
        a = 1.0                  # stay inside eta > 0
        for g in range(tr.G):
            if nw.alive[g] and nw.step_dir[g] < 0.0:
                a = fmin(a, 0.9 * nw.eta[g] / -nw.step_dir[g])
        while True:
            for g in range(tr.G):
                nw.eta_new[g] = nw.eta[g] + a * nw.step_dir[g] if nw.alive[g] else 0.0
            if dec <= 1e-13 * fabs(obj):
                break            # below rounding: take the step as it is
            obj_new = newton_state(tr, nw, nw.eta_new, z, s, lam, x, False)
            if obj_new <= obj - 1e-4 * a * dec:
                break
            a *= 0.5
            if a < 1e-12:
                newton_state(tr, nw, nw.eta, z, s, lam, x, True)
                return
        for g in range(tr.G):
            nw.eta[g] = nw.eta_new[g]
    newton_state(tr, nw, nw.eta, z, s, lam, x, True)


cdef class HierarchicalGroup(Penalty):
    """The hierarchical group penalty on each tree's node hierarchy.

    ``lam * sum_v base**depth(v) * ||w_{leaves below v}||_2`` over the
    internal nodes v of every tree (Jawanpuria et al., section 5, with rho = 2):
    a leaf's weight is nonzero only if every group above it is, so rules
    drop out subtree by subtree, and with ``base > 1`` deep subtrees cost
    more than shallow ones. ``depth(v)`` is the number of conditions of node
    v (the root: 0, the whole tree). The prox is exact for any steps (see
    docs/penalties.rst). By name: ``FIRERegressor(penalty="hierarchical")``
    reads each tree's hierarchy from the fitted ensemble.

    Parameters
    ----------
    lam : float, default=1.0
        Strength, non-negative.
    base : float, default=2.0
        The weight base ``a`` of ``d_v = a**depth(v)`` (> 0).
    tree_groups : list of (G_t, 3) int arrays, default=None
        Per block, the groups as rows ``(start, end, depth)``: the block's
        columns ``start:end`` (local positions, end excluded), nested or
        disjoint, covering every column of the block. None: set later from
        a rule ensemble (:meth:`bind_ensemble`, which the estimators call,
        or :meth:`from_ensemble`).

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.penalties import HierarchicalGroup
    >>> # one tree: root over leaves 0-3, its children over 0-1 and 2-3
    >>> pen = HierarchicalGroup(1.0, base=2.0, tree_groups=[[[0, 4, 0], [0, 2, 1], [2, 4, 1]]])
    >>> w = np.array([3.0, 4.0, 0.0, 0.0])
    >>> pen.value_of(w)       # ||w|| + 2 ||w[:2]|| + 2 ||w[2:]||
    15.0
    >>> pen.prox_of(np.array([3.0, 4.0, 0.1, 0.0]), step=1.0)   # the right subtree drops out
    array([1.2, 1.6, 0. , 0. ])
    """
    cdef readonly double base
    cdef readonly object tree_groups
    cdef Py_ssize_t n_blocks
    cdef const Py_ssize_t[::1] group_ptr, start, end, parent, sizes, col_ptr, leaf_group
    cdef const double[::1] weight

    def __init__(self, double lam=1.0, double base=2.0, tree_groups=None):
        Penalty.__init__(self, lam)
        if not (base > 0.0 and np.isfinite(base)):
            raise ValueError(f"base must be a positive number, got {base!r}")
        self.base = base
        self.flags = 0
        self.tree_groups = None
        self.n_blocks = 0
        if tree_groups is None:
            return
        flat = flatten_groups(tree_groups)
        weight = float(base) ** flat["depth"].astype(np.float64)
        if not np.all(np.isfinite(weight)):
            raise ValueError(f"base**depth overflows (base={base!r})")
        self.tree_groups = [np.array(g, dtype=np.int64) for g in tree_groups]
        self.n_blocks = flat["sizes"].shape[0]
        self.group_ptr = flat["group_ptr"]
        self.start = flat["start"]
        self.end = flat["end"]
        self.parent = flat["parent"]
        self.sizes = flat["sizes"]
        self.col_ptr = np.concatenate([[0], np.cumsum(flat["sizes"])]).astype(np.intp)
        self.leaf_group = flat["leaf_group"]
        self.weight = weight

    @classmethod
    def from_ensemble(cls, ensemble, lam=1.0, base=2.0):
        """The penalty on the trees of ``ensemble`` (a RuleEnsemble)."""
        return cls(lam, base, groups_from_node_paths(ensemble.node_paths, ensemble.block_ptr))

    @classmethod
    def from_node_paths(cls, node_paths, block_ptr, lam=1.0, base=2.0):
        """The penalty from each leaf's internal-node path (ids unique across
        blocks) and the blocks, as a RuleEnsemble stores them."""
        return cls(lam, base, groups_from_node_paths(node_paths, block_ptr))

    cdef int tree(self, const Block* blk, Tree* tr) except -1 nogil:
        cdef Py_ssize_t t = blk.index, g0
        if t < 0 or t >= self.n_blocks or blk.n != self.sizes[t]:
            with gil:
                raise ValueError(
                    f"HierarchicalGroup has no block {t} of {blk.n} columns "
                    f"({self.n_blocks} blocks known): build it for this design")
        g0 = self.group_ptr[t]
        tr.n = blk.n
        tr.G = self.group_ptr[t + 1] - g0
        tr.start = &self.start[g0]
        tr.end = &self.end[g0]
        tr.parent = &self.parent[g0]
        tr.weight = &self.weight[g0]
        tr.leaf_group = &self.leaf_group[self.col_ptr[t]]
        return 0

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        cdef Tree tr
        cdef Py_ssize_t g
        cdef double total = 0.0
        self.tree(blk, &tr)
        cdef double* sq = <double*> malloc(tr.G * sizeof(double))
        if sq == NULL:
            with gil:
                raise MemoryError()
        group_sq(&tr, w, sq)
        for g in range(tr.G):
            total += tr.weight[g] * sqrt(sq[g])
        free(sq)
        return self.lam * total

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Tree tr
        cdef Newton nw
        cdef Py_ssize_t k, G
        cdef bint equal = True
        self.tree(blk, &tr)
        for k in range(1, tr.n):
            if step[k] != step[0]:
                equal = False
                break
        if equal:
            for k in range(tr.n):
                out[k] = z[k] if step[0] > 0.0 else 0.0
            if step[0] > 0.0:
                compose(&tr, out, self.lam, 1.0 / step[0], NULL)
            return 0
        G = tr.G
        cdef double* buf = <double*> malloc((11 * G + tr.n) * sizeof(double))
        cdef unsigned char* alive = <unsigned char*> malloc(G * sizeof(unsigned char))
        if buf == NULL or alive == NULL:
            free(buf)
            free(alive)
            with gil:
                raise MemoryError()
        nw.eta, nw.eta_new, nw.cum, nw.sq = buf, buf + G, buf + 2 * G, buf + 3 * G
        nw.acc_a, nw.acc_b, nw.piv_a = buf + 4 * G, buf + 5 * G, buf + 6 * G
        nw.piv_b, nw.piv, nw.tau, nw.step_dir = buf + 7 * G, buf + 8 * G, buf + 9 * G, buf + 10 * G
        nw.h = buf + 11 * G
        nw.alive = alive
        weighted_prox(&tr, z, step, self.lam, out, &nw)
        free(buf)
        free(alive)
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        """Coordinate-wise: lam_v w_j / ||w_v|| from a nonzero group,
        [-lam_v, lam_v] from a zero one (its other coordinates are 0)."""
        cdef Tree tr
        cdef Py_ssize_t g, k, p
        self.tree(blk, &tr)
        cdef double* buf = <double*> malloc(3 * tr.G * sizeof(double))
        if buf == NULL:
            with gil:
                raise MemoryError()
        cdef double* sq = buf
        cdef double* point = buf + tr.G
        cdef double* width = buf + 2 * tr.G
        group_sq(&tr, w, sq)
        for g in range(tr.G - 1, -1, -1):
            p = tr.parent[g]
            point[g] = (self.lam * tr.weight[g] / sqrt(sq[g]) if sq[g] > 0.0 else 0.0) \
                + (point[p] if p >= 0 else 0.0)
            width[g] = (self.lam * tr.weight[g] if sq[g] == 0.0 else 0.0) \
                + (width[p] if p >= 0 else 0.0)
        for k in range(tr.n):
            g = tr.leaf_group[k]
            lo[k] = w[k] * point[g] - width[g]
            hi[k] = w[k] * point[g] + width[g]
        free(buf)
        return 0

    cdef double block_score(self, const Block* blk, const double* w, const double* grad,
                            const double* step, double* work) except? -1 nogil:
        """The squared distance from -grad to the block's subdifferential:
        fixed on coordinates whose groups are all nonzero; on a zero subtree
        the distance to its dual ball, which is the norm of the subtree's
        prox at -grad (Moreau)."""
        cdef Tree tr
        cdef Py_ssize_t g, k, p
        cdef double total = 0.0, d
        self.tree(blk, &tr)
        cdef double* buf = <double*> malloc(2 * tr.G * sizeof(double))
        if buf == NULL:
            with gil:
                raise MemoryError()
        cdef double* sq = buf
        cdef double* point = buf + tr.G
        cdef double* u = work
        group_sq(&tr, w, sq)
        for g in range(tr.G - 1, -1, -1):
            p = tr.parent[g]
            point[g] = (self.lam * tr.weight[g] / sqrt(sq[g]) if sq[g] > 0.0 else 0.0) \
                + (point[p] if p >= 0 else 0.0)
        for k in range(tr.n):
            g = tr.leaf_group[k]
            if sq[g] > 0.0:
                d = grad[k] + w[k] * point[g]
                total += d * d
                u[k] = 0.0
            else:
                u[k] = -grad[k]
        # soft-threshold the zero groups from the leaves up (their runs hold
        # only coordinates of zero subtrees)
        for g in range(tr.G):
            if sq[g] > 0.0:
                continue
            d = 0.0
            for k in range(tr.start[g], tr.end[g]):
                d += u[k] * u[k]
            d = sqrt(d)
            if d <= self.lam * tr.weight[g]:
                for k in range(tr.start[g], tr.end[g]):
                    u[k] = 0.0
            else:
                for k in range(tr.start[g], tr.end[g]):
                    u[k] *= 1.0 - self.lam * tr.weight[g] / d
        for k in range(tr.n):
            total += u[k] * u[k]
        free(buf)
        return total

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        """The smallest lam with the unit-step prox of the penalty at -grad
        zero (-grad in lam times the dual ball), by bisection."""
        cdef Tree tr
        cdef Py_ssize_t g, k, it
        cdef double lo = 0.0, hi = 0.0, mid, r
        cdef bint zero
        self.tree(blk, &tr)
        cdef double* x = <double*> malloc(tr.n * sizeof(double))
        if x == NULL:
            with gil:
                raise MemoryError()
        for g in range(tr.G):       # a root's group alone zeroes its run
            if tr.parent[g] < 0:
                r = 0.0
                for k in range(tr.start[g], tr.end[g]):
                    r += grad[k] * grad[k]
                hi = fmax(hi, sqrt(r) / tr.weight[g])
        if hi > 0.0:
            for it in range(200):
                mid = 0.5 * (lo + hi)
                for k in range(tr.n):
                    x[k] = -grad[k]
                compose(&tr, x, mid, 1.0, NULL)
                zero = True
                for k in range(tr.n):
                    if x[k] != 0.0:
                        zero = False
                        break
                if zero:
                    hi = mid
                else:
                    lo = mid
                if hi - lo <= 1e-15 * hi:
                    break
        free(x)
        return hi

    def check_blocks(self, block_ptr):
        """The tree structure must be set and match the design's blocks."""
        if self.tree_groups is None:
            raise ValueError(
                "HierarchicalGroup has no tree structure: build it with "
                "HierarchicalGroup.from_ensemble(ensemble) or tree_groups=..., or use it "
                "through FIRERegressor(penalty='hierarchical')")
        sizes = np.diff(np.asarray(block_ptr, dtype=np.int64))
        if sizes.shape[0] != self.n_blocks or np.any(sizes != np.asarray(self.sizes)):
            raise ValueError(
                f"HierarchicalGroup's trees ({self.n_blocks} blocks, sizes "
                f"{np.asarray(self.sizes)[:5].tolist()}...) do not match the design's "
                f"blocks ({sizes.shape[0]} blocks, sizes {sizes[:5].tolist()}...)")

    def bind_ensemble(self, ensemble):
        """The penalty on the trees of ``ensemble``."""
        return HierarchicalGroup.from_ensemble(ensemble, self.lam, self.base)

    def _repr_params(self):
        bound = "" if self.tree_groups is None else f", tree_groups=<{self.n_blocks} trees>"
        return f"lam={self.lam!r}, base={self.base!r}{bound}"

    def __reduce__(self):
        return (HierarchicalGroup, (self.lam, self.base, self.tree_groups))
