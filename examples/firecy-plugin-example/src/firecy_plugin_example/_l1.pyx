"""The lasso penalty ``lam * sum_j |w_j|``, compiled against firecy's public header.

Every method runs without the GIL inside firecy's engine; none writes to the
object (one penalty may serve solves in several threads). The block's
coordinates come with a ``Block`` (their number, block index, design
columns and curvatures); the lasso needs only their number.
"""
from libc.math cimport fabs, fmax

from firecy.penalties.base cimport Block, PENALTY_SEPARABLE, Penalty


cdef inline double soft_threshold(double z, double t) noexcept nogil:
    if z > t:
        return z - t
    if z < -t:
        return z + t
    return 0.0


cdef class ExampleL1(Penalty):
    """The lasso penalty ``lam * sum_j |w_j|`` (an example plug-in).

    Parameters
    ----------
    lam : float, default=1.0
        Non-negative strength.
    """

    def __init__(self, double lam=1.0):
        Penalty.__init__(self, lam)
        self.flags = PENALTY_SEPARABLE    # coordinates are independent

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        cdef double total = 0.0
        cdef Py_ssize_t k
        for k in range(blk.n):
            total += fabs(w[k])
        return self.lam * total

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Py_ssize_t k
        for k in range(blk.n):
            out[k] = soft_threshold(z[k], self.lam / step[k]) if step[k] > 0.0 else 0.0
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        cdef Py_ssize_t k
        for k in range(blk.n):
            if w[k] > 0.0:
                lo[k] = hi[k] = self.lam
            elif w[k] < 0.0:
                lo[k] = hi[k] = -self.lam
            else:
                lo[k] = -self.lam
                hi[k] = self.lam
        return 0

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        cdef double m = 0.0
        cdef Py_ssize_t k
        for k in range(blk.n):
            m = fmax(m, fabs(grad[k]))
        return m

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        # exact local model (enables firecy's Newton steps): one group per
        # nonzero weight, derivative lam * sign(w), no curvature
        cdef Py_ssize_t k, n_groups = 0
        for k in range(blk.n):
            if w[k] == 0.0:
                group[k] = -1
                continue
            group[k] = n_groups
            grad[n_groups] = self.lam if w[k] > 0.0 else -self.lam
            hess[n_groups] = 0.0
            n_groups += 1
        return n_groups

    def __reduce__(self):
        return (ExampleL1, (self.lam,))

    def __repr__(self):
        return f"ExampleL1(lam={self.lam!r})"
