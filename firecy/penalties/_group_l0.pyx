"""Group-L0 over trees, on top of any inner penalty.

GroupL0(inner, lam0) adds ``lam0`` (λ_0) for every tree with a nonzero
weight (the group-L0 block rule of the FAST supplement, Liu & Mazumder,
section D): the block update keeps the inner minimiser only if it beats the
zero block by more than lam0, and blocks are scored by the decrease an
update achieves (the direction vector means nothing for L0). The term is
stated in docs/objective.rst.

Its ``lam`` is the inner penalty's: reading or setting ``GroupL0.lam`` reads
or sets ``inner.lam`` (the contract methods never write to either object).
"""

from firecy.penalties.base cimport Block, PENALTY_SCORE_IS_DECREASE, Penalty

# the sign-bounds flag bit (declared with SignConstrained, _signed.pxd; a
# cimport of that module would be circular: it cimports this one)
cdef enum:
    PENALTY_SIGN_BOUNDS = 4


cdef double prox_decrease(Penalty penalty, const Block* blk, const double* w,
                          const double* grad, const double* step,
                          double* work) except? -1 nogil:
    """The decrease of  sum_k [grad_k (x_k - w_k) + step_k / 2 (x_k - w_k)^2]
    + penalty(x) - penalty(w)  achieved by the prox point x (an L0-type
    block score). work holds 2 n doubles."""
    cdef Py_ssize_t k, n = blk.n
    cdef double* z = work
    cdef double* x = work + n
    cdef double model = 0.0, delta
    for k in range(n):
        z[k] = w[k] - grad[k] / step[k] if step[k] > 0.0 else w[k]
    penalty.prox(blk, z, step, x)
    for k in range(n):
        delta = x[k] - w[k]
        model += grad[k] * delta + 0.5 * step[k] * delta * delta
    model += penalty.value(blk, x) - penalty.value(blk, w)
    return -model


cdef class GroupL0(Penalty):
    """Group-L0 over trees on top of an inner penalty.

    ``inner(w) + lam0 * #{trees t : w_t != 0}``. The path parameter ``lam``
    is the inner penalty's (λ_s; ``GroupL0.lam`` reads and sets
    ``inner.lam``); ``lam0`` has its own path
    (:func:`firecy.solver.group_l0_path`).

    Parameters
    ----------
    inner : Penalty
        E.g. ``L1(lam)``, ``MCP(lam, gamma)``, ``MCPFusion(...)``; a
        penalty with ``lam = 0`` gives group-L0 alone.
    lam0 : float, default=1.0
        Price of every tree that keeps a rule, non-negative.

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.penalties import GroupL0, L1
    >>> pen = GroupL0(L1(0.1), lam0=0.01)
    >>> round(pen.value_of([0.0, 2.0]), 12)
    0.21
    >>> pen.prox_of(np.array([0.3, 0.0]), step=1.0)   # kept: beats zero by > lam0
    array([0.2, 0. ])
    """
    def __init__(self, Penalty inner, double lam0=1.0):
        Penalty.__init__(self, inner.lam)
        if not lam0 >= 0.0:
            raise ValueError(f"lam0 must be non-negative, got {lam0!r}")
        self.inner = inner
        self.lam0 = lam0
        # sign bounds inside (GroupL0(SignConstrained(...))): the engine
        # must see them; the keep-or-zero rule below uses the inner
        # (constrained) prox and value, so it respects them
        self.flags = PENALTY_SCORE_IS_DECREASE | (inner.flags & PENALTY_SIGN_BOUNDS)

    @property
    def lam(self):
        """The inner penalty's ``lam`` (the path parameter)."""
        return self.inner.lam

    @lam.setter
    def lam(self, double value):
        if not value >= 0.0:
            raise ValueError(f"lam must be a non-negative number, got {value!r}")
        # through Python: an inner penalty with its own lam property (Blockwise,
        # SignConstrained) passes it on; the typed C field would skip it
        (<object> self.inner).lam = value
        (<Penalty> self).lam = value

    cdef bint any_nonzero(self, const double* w, Py_ssize_t n) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(n):
            if w[j] != 0.0:
                return True
        return False

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        return self.inner.value(blk, w) + (self.lam0 if self.any_nonzero(w, blk.n) else 0.0)

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef double keep = 0.0, drop = 0.0, d, value_at_zero
        cdef Py_ssize_t j, n = blk.n
        # the inner penalty at w = 0, with out as the zero block (before the
        # prox overwrites it: no scratch to allocate, none to leak)
        for j in range(n):
            out[j] = 0.0
        value_at_zero = self.inner.value(blk, out)
        self.inner.prox(blk, z, step, out)
        if not self.any_nonzero(out, n):
            return 0
        # keep the inner minimiser only if it beats the zero block by lam0
        for j in range(n):
            d = out[j] - z[j]
            keep += 0.5 * step[j] * d * d
            drop += 0.5 * step[j] * z[j] * z[j]
        keep += self.inner.value(blk, out) + self.lam0
        drop += value_at_zero
        if keep >= drop:
            for j in range(n):
                out[j] = 0.0
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        return self.inner.subdiff(blk, w, lo, hi)

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        return self.inner.lambda_max(blk, grad)

    cdef double block_score(self, const Block* blk, const double* w, const double* grad,
                            const double* step, double* work) except? -1 nogil:
        return prox_decrease(self, blk, w, grad, step, work)

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        # lam0 is constant while the block stays nonzero
        return self.inner.local_groups(blk, w, group, grad, hess)

    def check_blocks(self, block_ptr):
        """The inner penalty's check (see :meth:`Penalty.check_blocks`)."""
        self.inner.check_blocks(block_ptr)

    def bind_ensemble(self, ensemble):
        """GroupL0 on the inner penalty bound to ``ensemble``."""
        inner = self.inner.bind_ensemble(ensemble)
        return self if inner is self.inner else GroupL0(inner, self.lam0)

    def restrict_to(self, blocks, columns):
        """GroupL0 on the inner penalty restricted to a sub-design (the inner
        penalty's ``restrict_to``, e.g. a :class:`SignConstrained`'s bounds
        sliced to ``columns``); itself if the inner penalty has none."""
        to = getattr(self.inner, "restrict_to", None)
        return self if to is None else GroupL0(to(blocks, columns), self.lam0)

    def lam0_max_of(self, grad, curvature, *, columns=None, block=0):
        """The smallest lam0 at which no block leaves zero (the lam0 path's
        start): the largest decrease a block update achieves from w = 0."""
        import numpy as np
        grad = np.asarray(grad, dtype=np.float64)
        return max(0.0, GroupL0(self.inner, 0.0).block_score_of(
            np.zeros_like(grad), grad, curvature, curvature, columns=columns, block=block))

    def _repr_params(self):
        return f"{self.inner!r}, lam0={self.lam0!r}"

    def __reduce__(self):
        return (GroupL0, (self.inner, self.lam0))
