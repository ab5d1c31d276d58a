# The penalty contract of firecy.
#
# A penalty acts on one block of coordinates (the leaves of one tree). The
# engine only ever talks to a penalty through the cdef methods below, all of
# which run without the GIL, so that a penalty compiled in another package
# (``cimport firecy.penalties._base``, subclass ``Penalty``) plugs into the
# nogil solver loop at C speed. Every method returns -1 with a Python
# exception set on failure (``except -1`` / ``except? -1``); compiled
# penalties normally never fail, Python penalties (see ``PythonPenalty``) may.
#
# Conventions, for a block of ``n`` coordinates:
#   w[j]      current weights of the block
#   curv[j]   the coordinate's own curvature a_j = sum_i s_i M_ij^2 with the
#             sample weights s normalised to sum to one (the diagonal of the
#             Hessian of the datafit); MCP scales its
#             concavity by it, other penalties may ignore it
#   step[j]   the weights of the quadratic in the prox (see ``prox``); equal
#             to ``curv`` when the engine minimises the block exactly
#   lam       the penalty's path parameter (the one the path varies)

cdef class Penalty:
    cdef public double lam
    # the value is convex in w: sub-gradient distances certify optimality
    cdef public bint is_convex
    # coordinates of a block are independent (prox and subdifferential act
    # coordinate-wise); fusion and group penalties are not
    cdef public bint is_separable
    # block_score is an achievable decrease of the objective (L0-type
    # penalties), not the squared norm of the direction vector
    cdef public bint score_is_decrease

    # sum of the penalty over the block
    cdef double value(self, const double* w, const double* curv,
                      Py_ssize_t n) except? -1 nogil

    # out = argmin_x  sum_j step[j] / 2 * (x_j - z_j)^2 + penalty(x)
    # step[j] may be 0 (the coordinate carries no data); out may not alias z.
    cdef int prox(self, const double* z, const double* step,
                  const double* curv, double* out, Py_ssize_t n) except -1 nogil

    # the subdifferential of the penalty at w, coordinate by coordinate, as
    # intervals [lo[j], hi[j]] (for nonconvex penalties: the Clarke / limiting
    # subdifferential used by the paper's direction vector)
    cdef int subdiff(self, const double* w, const double* curv,
                     double* lo, double* hi, Py_ssize_t n) except -1 nogil

    # the smallest lam for which w = 0 is a stationary point of the block
    # when the datafit gradient at w = 0 is grad
    cdef double lambda_max(self, const double* grad, const double* curv,
                           Py_ssize_t n) except? -1 nogil

    # the greedy selection score of the block (larger = update first). The
    # default is the squared norm of the direction vector
    #   d_j = max(0, lo_j + grad_j, -grad_j - hi_j);
    # L0-type penalties override it with the decrease an update achieves.
    # work must hold 3 * n doubles.
    cdef double block_score(self, const double* w, const double* grad,
                            const double* step, const double* curv,
                            double* work, Py_ssize_t n) except? -1 nogil

    # optional: the penalty's local quadratic model at w on its nonzero
    # coordinates: grad[j], hess[j] (diagonal) such that near w, with the
    # signs / regions of w kept, penalty(w + d) = penalty(w) + grad.d
    # + 1/2 sum hess_j d_j^2 exactly. Returns 1 when provided, 0 when the
    # penalty has no such model (the engine then skips Newton steps).
    cdef int local_quadratic(self, const double* w, const double* curv,
                             double* grad, double* hess, Py_ssize_t n) except -1 nogil

    # optional, general form of the above for penalties whose coordinates
    # move in groups (fused leaves): group[j] = -1 (stays at zero) or the
    # index g of its group (numbered 0, 1, ... in order); grad[g], hess[g]
    # are the penalty's derivatives along a move of all of group g by the
    # same amount (exact while signs and the order of fused values hold).
    # Returns the number of groups, or -2 when there is no such model. The
    # default derives it from local_quadratic: one group per nonzero weight.
    cdef Py_ssize_t local_groups(self, const double* w, const double* curv,
                                 Py_ssize_t* group, double* grad, double* hess,
                                 Py_ssize_t n) except -1 nogil


# The exact decrease of  sum_j [grad_j (x_j - w_j) + step_j / 2 (x_j - w_j)^2]
#   + penalty(x) - penalty(w)  achieved by the prox point x, for L0-type scores.
cdef double prox_decrease(Penalty penalty, const double* w, const double* grad,
                          const double* step, const double* curv,
                          double* work, Py_ssize_t n) except? -1 nogil


cdef class PythonPenalty(Penalty):
    cdef public object obj
