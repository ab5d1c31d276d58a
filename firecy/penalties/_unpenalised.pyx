"""Blocks the path's ``lam`` does not act on: the zero penalty, or a fixed ridge.

A design may hold blocks that a fit keeps whatever the path's ``lam``: the
stable mode's rules, kept as they come while the path chooses only the
linear terms beside them (``docs/stability.rst``), as glmnet's
``penalty.factor = 0``.  ``Unpenalised`` is that block's penalty: value 0,
the prox is the identity, the subdifferential {0}; or, with ``ridge > 0``,
a fixed ridge ``ridge / 2 * sum_j a_j w_j**2`` scaled by each coordinate's
curvature ``a_j`` (so that it is scale-free, as MCP's concavity is), which
keeps a weight finite where the loss alone would let it run off (a rule
that holds rows of one class, under the logistic loss).  Either way no
``lam`` makes ``w = 0`` stationary unless the gradient is zero, so its
``lambda_max`` is +inf there, and :func:`~firecy.solver.fire_path` starts
its path where these blocks are fitted and every other block is at zero
(:meth:`Unpenalised.unpenalised_blocks` says which blocks those are).
"""
from libc.math cimport INFINITY

from firecy.penalties.base cimport Block, PENALTY_SEPARABLE, Penalty

import numpy as np


cdef class Unpenalised(Penalty):
    """No sparsity penalty: ``lam`` is accepted (the path sets it) and ignored.

    Use it inside :class:`~firecy.penalties.BlockwisePenalty` for blocks that
    every point of a path keeps, beside penalised ones.

    Parameters
    ----------
    lam : float, default=0.0
        Stored for the path, which sets it at each point; it has no effect.
    ridge : float, default=0.0
        A fixed ridge ``ridge / 2 * sum_j a_j w_j**2``, ``a_j`` the
        coordinate's curvature (``Block.curv``; 1 where none is given);
        non-negative. 0: no penalty at all.

    Examples
    --------
    >>> from firecy.penalties import Unpenalised
    >>> pen = Unpenalised()
    >>> pen.value_of([2.0, -1.0])
    0.0
    >>> pen.prox_of([2.0, -0.3])
    array([ 2. , -0.3])
    >>> pen.lambda_max_of([0.0, 0.5]), pen.lambda_max_of([0.0, 0.0])
    (inf, 0.0)

    With a ridge, the prox shrinks by ``step / (step + ridge * a)``:

    >>> Unpenalised(ridge=1.0).prox_of([2.0], step=1.0, curvature=1.0)
    array([1.])
    """
    cdef readonly double ridge

    def __init__(self, double lam=0.0, double ridge=0.0):
        Penalty.__init__(self, lam)
        if not ridge >= 0.0:
            raise ValueError(f"ridge must be a non-negative number, got {ridge!r}")
        self.ridge = ridge
        self.flags = PENALTY_SEPARABLE

    cdef inline double _weight(self, const Block* blk, Py_ssize_t j) noexcept nogil:
        # the ridge's curvature along coordinate j
        return self.ridge * (blk.curv[j] if blk.curv != NULL else 1.0)

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        cdef double total = 0.0
        cdef Py_ssize_t j
        if self.ridge == 0.0:
            return 0.0
        for j in range(blk.n):
            total += 0.5 * self._weight(blk, j) * w[j] * w[j]
        return total

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Py_ssize_t j
        cdef double r
        for j in range(blk.n):
            r = self._weight(blk, j)
            out[j] = z[j] if r == 0.0 else step[j] * z[j] / (step[j] + r)
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(blk.n):
            lo[j] = self._weight(blk, j) * w[j]
            hi[j] = lo[j]
        return 0

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        cdef Py_ssize_t j
        for j in range(blk.n):
            if grad[j] != 0.0:
                return INFINITY
        return 0.0

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        """The exact local model: one group per nonzero coordinate."""
        cdef Py_ssize_t j, n_groups = 0
        for j in range(blk.n):
            if w[j] == 0.0:
                group[j] = -1
            else:
                group[j] = n_groups
                grad[n_groups] = self._weight(blk, j) * w[j]
                hess[n_groups] = self._weight(blk, j)
                n_groups += 1
        return n_groups

    def unpenalised_blocks(self, block_ptr):
        """Every block of the design (``block_ptr``): none is penalised."""
        return np.arange(np.asarray(block_ptr).size - 1)

    def _repr_params(self):
        return f"lam={self.lam!r}" + (f", ridge={self.ridge!r}" if self.ridge else "")

    def __reduce__(self):
        return (Unpenalised, (self.lam, self.ridge))
