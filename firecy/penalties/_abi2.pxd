# The penalty contract of firecy, ABI version 2.
#
# Cimport it through the public header ``firecy.penalties.base``; this file
# holds the declarations, under a module name that carries the ABI version.
# Why the name: a compiled subclass of ``Penalty`` imports the type from the
# module that declares it, when its own module is imported, before it
# copies the method table. A plug-in built against another version of this
# contract looks for another module name (``_abi3``, ...) and fails to import
# with an ImportError that says what to rebuild (firecy/_abi.py), instead of
# running with a method table of the wrong shape. Any change to the
# declarations below (a method, an argument, a field, an order) is a new ABI
# version: a new file ``_abiN.pxd``. tests/test_abi.py pins this file's
# fingerprint to the version. New optional capabilities that need no new
# cdef method come as ``flags`` bits (an old plug-in leaves them 0).
#
# The name alone cannot see a plug-in built against an edited copy of this
# file that kept the name (a development header, a hand edit). So the C
# layout is checked too: the block at the end measures the compiled
# structures (the version, the number of methods, the sizes of Block and of
# the Penalty object) with the same expressions in firecy and in every module
# that cimports ``firecy.penalties.base``; that module imports the layout
# probes declared in base.pxd, and firecy/_abi.py refuses it when its
# measures differ from firecy's (ABI 2 added this block: ABI 1 had none).
#
# A penalty acts on one block of coordinates (the leaves of one tree) at a
# time. The engine talks to it only through the cdef methods below, all of
# them without the GIL, so a penalty compiled in another package plugs into
# the nogil solver at C speed. A method that fails returns -1 with a Python
# exception set (``except -1`` / ``except? -1``). Methods must not write to
# the penalty object: one object may serve solves in several threads at once
# (allocate scratch space per call, as the fusion penalties do).
#
# Conventions, for the n coordinates of one call:
#   w[k], z[k]  weights / prox centres of the coordinates
#   step[k]     the weights of the quadratic in the prox: the coordinate's
#               curvature a_j on tree blocks (where a block update is an
#               exact minimisation for the squared loss), the block's
#               Lipschitz constant (equal steps) on general blocks; may be 0
#               (a column without data)
#   blk         where the coordinates are (see ``Block``)
#   lam         the penalty's path parameter (the one the path varies)

cdef enum:
    PENALTY_ABI_VERSION = 2

# Penalty.flags: what the engine may assume. Bits not listed are reserved
# (0) and may gain a meaning in a later firecy without a new ABI version.
cdef enum:
    # coordinates are independent (prox and subdiff act coordinate-wise), so
    # the engine may call the methods on any subset of a block's columns
    PENALTY_SEPARABLE = 1
    # block_score is an achievable decrease of the objective (L0-type
    # penalties), not the squared norm of a direction vector
    PENALTY_SCORE_IS_DECREASE = 2


# Where the coordinates of a call are. For a penalty that is not separable
# the engine always passes whole blocks (all the block's columns, in order).
cdef struct Block:
    Py_ssize_t n                # number of coordinates
    Py_ssize_t index            # the block t they belong to (0 .. T - 1)
    const Py_ssize_t* columns   # their design columns j (global, increasing)
    const double* curv          # their curvatures a_j = sum_i s_i u_i M_ij^2
                                # (s normalised to sum 1, u the datafit's
                                # curvature bound): MCP scales its concavity by
                                # it, other penalties may ignore it


cdef class Penalty:
    cdef public double lam
    # PENALTY_* bits, set by the subclass's constructor
    cdef readonly unsigned int flags

    # the penalty's value on the block
    cdef double value(self, const Block* blk, const double* w) except? -1 nogil

    # out = argmin_x  sum_k step[k] / 2 (x_k - z_k)^2 + penalty(x), exactly
    # (the engine accepts the point without a check: an exact minimiser is
    # what makes every block update lower the objective). out may not alias z.
    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil

    # the subdifferential of the penalty at w, coordinate by coordinate (the
    # other coordinates held fixed), as intervals [lo[k], hi[k]]; for
    # nonconvex penalties the Clarke / limiting subdifferential. lo may be
    # -inf and hi +inf, never NaN, lo <= hi.
    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil

    # the smallest lam for which w = 0 is a stationary point of the block
    # when the datafit's gradient at w = 0 is grad (+inf when no lam makes it)
    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil

    # the greedy selection score of the block (larger: update first). The
    # default is the squared norm of the direction vector
    #   d_k = max(0, lo_k + grad_k, -grad_k - hi_k)
    # from subdiff. Zero (below the tolerance) must mean the block is
    # stationary, or close enough that the engine's confirming sweep decides.
    # work holds 3 n doubles of scratch.
    cdef double block_score(self, const Block* blk, const double* w, const double* grad,
                            const double* step, double* work) except? -1 nogil

    # optional: the penalty's exact local model at w for the engine's Newton
    # steps. group[k] = -1 (the coordinate stays at zero) or the index g of
    # its group (numbered 0, 1, ... in order of first appearance);
    # grad[g], hess[g] are the penalty's first and second derivatives along
    # a move of every coordinate of group g by the same amount, exact while
    # the signs / regions of w hold (a separable penalty: one group per
    # nonzero coordinate). Returns the number of groups, or -2 when the
    # penalty has no such model (the default: the engine then takes no
    # Newton step).
    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil


# The layout probe's measures (see the top of this file and firecy/_abi.py).
# The C names are the ones Cython gives the declarations above in the module
# firecy.penalties._abi2; each macro is expanded where it is used, after
# Cython has defined those structs. FIRECY_PENALTY_LAYOUT packs the measures
# as digits (the version mod 64, the methods mod 64, the two sizes mod 256)
# so that firecy can say which differ; FIRECY_PENALTY_LAYOUT_HASH mixes the
# full values; both are below FIRECY_ABI_PROBE_RANGE (2**30). The
# FIRECY_*_PROBE_* names are the probes' object types: their sizes carry the
# measures to Cython's type-import size check (base.pxd).
cdef extern from *:
    """
    #ifndef FIRECY_ABI_PROBE_RANGE
    #define FIRECY_ABI_PROBE_RANGE ((size_t)1 << 30)
    #endif
    #define FIRECY_PENALTY_VERSION ((size_t)__pyx_e_6firecy_9penalties_5_abi2_PENALTY_ABI_VERSION)
    #define FIRECY_PENALTY_METHODS \
        (sizeof(struct __pyx_vtabstruct_6firecy_9penalties_5_abi2_Penalty) / sizeof(void (*)(void)))
    #define FIRECY_PENALTY_BLOCK_SIZE sizeof(struct __pyx_t_6firecy_9penalties_5_abi2_Block)
    #define FIRECY_PENALTY_OBJECT_SIZE sizeof(struct __pyx_obj_6firecy_9penalties_5_abi2_Penalty)
    #define FIRECY_PENALTY_LAYOUT ((size_t)(FIRECY_PENALTY_VERSION % 64 + 64 * ( \
        FIRECY_PENALTY_METHODS % 64 + 64 * (FIRECY_PENALTY_BLOCK_SIZE % 256 + 256 * ( \
        FIRECY_PENALTY_OBJECT_SIZE % 256)))))
    #define FIRECY_PENALTY_LAYOUT_HASH ((size_t)(((((unsigned long long)FIRECY_PENALTY_VERSION \
        * 1000003ULL + FIRECY_PENALTY_METHODS) * 1000003ULL + FIRECY_PENALTY_BLOCK_SIZE) \
        * 1000003ULL + FIRECY_PENALTY_OBJECT_SIZE) % 1073741789ULL))
    #define FIRECY_PENALTY_PROBE_UP char[sizeof(PyObject) + FIRECY_PENALTY_LAYOUT]
    #define FIRECY_PENALTY_PROBE_DOWN \
        char[sizeof(PyObject) + FIRECY_ABI_PROBE_RANGE - FIRECY_PENALTY_LAYOUT]
    #define FIRECY_PENALTY_PROBE_EXACT char[sizeof(PyObject) + FIRECY_PENALTY_LAYOUT_HASH]
    """
    const size_t FIRECY_ABI_PROBE_RANGE
    const size_t FIRECY_PENALTY_VERSION
    const size_t FIRECY_PENALTY_METHODS
    const size_t FIRECY_PENALTY_BLOCK_SIZE
    const size_t FIRECY_PENALTY_OBJECT_SIZE
    const size_t FIRECY_PENALTY_LAYOUT
    const size_t FIRECY_PENALTY_LAYOUT_HASH
