"""The zero penalty: blocks whose weights are fitted without any penalty.

A design may hold blocks that a fit keeps whatever the path's ``lam``: the
stable mode's rules, kept as they come while the path chooses only the
linear terms beside them (``docs/stability.rst``), as glmnet's
``penalty.factor = 0``.  ``Unpenalised`` is that block's penalty: value 0,
the prox is the identity, the subdifferential {0}; no ``lam`` makes ``w = 0``
stationary unless the gradient is zero, so its ``lambda_max`` is +inf
there, and :func:`~firecy.solver.fire_path` starts its path where the
unpenalised blocks are fitted and every other block is at zero
(:meth:`Unpenalised.unpenalised_blocks` says which blocks those are).
"""
from libc.math cimport INFINITY

from firecy.penalties.base cimport Block, PENALTY_SEPARABLE, Penalty

import numpy as np


cdef class Unpenalised(Penalty):
    """No penalty: ``lam`` is accepted (the path sets it) and ignored.

    Use it inside :class:`~firecy.penalties.BlockwisePenalty` for blocks that
    every point of a path keeps, beside penalised ones.

    Parameters
    ----------
    lam : float, default=0.0
        Stored for the path, which sets it at each point; it has no effect.

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
    """

    def __init__(self, double lam=0.0):
        Penalty.__init__(self, lam)
        self.flags = PENALTY_SEPARABLE

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        return 0.0

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(blk.n):
            out[j] = z[j]
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(blk.n):
            lo[j] = 0.0
            hi[j] = 0.0
        return 0

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        cdef Py_ssize_t j
        for j in range(blk.n):
            if grad[j] != 0.0:
                return INFINITY
        return 0.0

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        """The exact local model: one group per nonzero coordinate, flat."""
        cdef Py_ssize_t j, n_groups = 0
        for j in range(blk.n):
            if w[j] == 0.0:
                group[j] = -1
            else:
                group[j] = n_groups
                grad[n_groups] = 0.0
                hess[n_groups] = 0.0
                n_groups += 1
        return n_groups

    def unpenalised_blocks(self, block_ptr):
        """Every block of the design (``block_ptr``): none is penalised."""
        return np.arange(np.asarray(block_ptr).size - 1)

    def __reduce__(self):
        return (Unpenalised, (self.lam,))
