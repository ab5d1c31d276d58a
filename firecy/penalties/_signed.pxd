# Sign constraints as a penalty (SignConstrained, _signed.pyx).
from firecy.penalties.base cimport Block, Penalty
from firecy.penalties._fusion cimport FusedPenalty


# Penalty.flags bit 4: "the prox respects bounds the engine cannot see".
# Every coordinate's feasible set is one of R, [0, inf), (-inf, 0] and {0}
# (a half-line at zero, or zero): it always holds 0, and a move that keeps a
# feasible weight's sign (or sets it to zero) stays feasible. The engine then
# makes no move of its own that could leave those sets (no active-set QP,
# Anderson extrapolation kept to the signs its snapshots show, Newton steps
# that stop at zero), and the penalty's value is +inf outside them, so a
# move the engine checks on F is refused there. Declared here, not in the
# ABI header _abi2.pxd: that file's declarations are pinned to the ABI
# version (tests/test_abi.py) and a flag bit needs no new cdef method (an
# older plug-in leaves it 0, the bit was reserved).
cdef enum:
    PENALTY_SIGN_BOUNDS = 4


cdef class SignConstrained(Penalty):
    cdef readonly Penalty inner
    cdef double[::1] _lower, _upper
    cdef Py_ssize_t n_columns
    # 0: separable inner (prox then projection); 1: a FusedPenalty (the
    # bounded dynamic programme)
    cdef int kind
    cdef FusedPenalty fused      # the inner penalty when kind == 1, else None
    cdef int bounds_of(self, const Block* blk, double* lb, double* ub) except -1 nogil
    cdef bint _stationary(self, const double* grad, Py_ssize_t n,
                          const double* lb, const double* ub, double* u_lo, double* u_hi,
                          double lam) noexcept nogil
