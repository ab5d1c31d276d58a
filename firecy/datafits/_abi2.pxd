# The datafit contract of firecy, ABI version 2.
#
# Cimport it through the public header ``firecy.datafits.base``; this file
# holds the declarations under a module name that carries the ABI version
# (the reason is the penalties' and is given in firecy/penalties/_abi2.pxd
# and firecy/_abi.py): a datafit compiled against another version of this
# contract fails to import with an ImportError that says what to rebuild.
# Any change to the declarations below is a new ABI version (a new file
# ``_abiN.pxd``); tests/test_abi.py pins this file's fingerprint. The block
# at the end measures the compiled layout, for the layout probes declared in
# base.pxd (as in firecy/penalties/_abi2.pxd; ABI 2 added it).
#
# The model is the raw prediction eta_i = offset_i + b + (M w)_i and the
# datafit is (1 / sum_i s_i) sum_i s_i loss(y_i, eta_i); the engine keeps
# the sample weights normalised (sum_i s_i = 1). See docs/datafits.rst.
#
# The engine talks to a datafit only through the cdef methods below; all run
# without the GIL. Those that may fail (a datafit written in Python) return
# -1 with a Python exception set (``except -1`` / ``except? -1``).
#
# Per-row state lives in a DatafitState the engine owns and passes by
# pointer: a datafit object holds no solve-specific state, so one object can
# serve two solves in two threads at once. The hot loop calls the
# column-level methods once per column, never once per row.
#
# A datafit needs only the three per-sample methods; the base class derives
# the state-level methods from them (the raw prediction in row[0], the
# weighted derivative s_i loss'(y_i, eta_i) in row[1], one call per column
# on gathered rows). Override the state-level methods for speed.

cdef enum:
    DATAFIT_ABI_VERSION = 2
    DATAFIT_MAX_ROWS = 4      # per-row arrays a datafit may ask for
    DATAFIT_MAX_TOTALS = 4    # running sums a datafit may keep


cdef struct DatafitState:
    Py_ssize_t n_samples
    const double* y               # targets, as returned by Datafit.validate
    const double* weight          # s_i >= 0 with sum_i s_i = 1
    const double* offset          # per-row baseline c(x_i)
    bint fit_intercept
    double intercept              # b (stays 0 without fit_intercept)
    double* row[DATAFIT_MAX_ROWS]     # n_samples doubles each, meaning the datafit's
    double total[DATAFIT_MAX_TOTALS]  # running sums, meaning the datafit's
    double* work                  # 3 * n_samples doubles of scratch


# One column of the design M as the engine hands it over: its nonzero rows
# and their values (values == NULL: every entry equals ``value``, a tree leaf).
cdef struct Column:
    const int* rows
    const double* values
    double value
    Py_ssize_t n_rows


cdef class Datafit:
    # per-row arrays of the state the datafit uses (at most DATAFIT_MAX_ROWS)
    cdef readonly int n_rows_used
    # loss'' is constant and equal to the curvature bound: a block update
    # with step a_j (see curvature_bound) minimises the datafit exactly
    cdef readonly bint exact_curvature

    # -- per-sample, on arrays of n samples (y, eta: targets, raw predictions)
    # out[i] = loss(y_i, eta_i)
    cdef int loss(self, const double* y, const double* eta, double* out,
                  Py_ssize_t n) except -1 nogil
    # grad[i] = d loss / d eta, hess[i] = d2 loss / d eta2 (hess may be NULL)
    cdef int gradient_hessian(self, const double* y, const double* eta, double* grad,
                              double* hess, Py_ssize_t n) except -1 nogil
    # out[i] = u_i >= sup_eta d2 loss(y_i, eta) / d eta2, finite and > 0: the
    # engine's coordinate curvature is a_j = sum_i s_i u_i M_ij^2
    cdef int curvature_bound(self, const double* y, double* out,
                             Py_ssize_t n) except -1 nogil

    # -- state-level; ``linear`` and column shifts are in units of M w
    # set the per-row state for (M w)_i = linear[i] and the intercept in
    # st.intercept (a datafit that profiles the intercept out sets it)
    cdef int initialize(self, DatafitState* st, const double* linear) except -1 nogil
    # the datafit's value at the state
    cdef double value(self, DatafitState* st) except? -1 nogil
    # sum_i M_ij s_i loss'(y_i, eta_i) over the column's rows
    cdef double column_gradient(self, DatafitState* st, const Column* col) except? -1 nogil
    # eta += delta * M[:, j] on the column's rows
    cdef int shift_column(self, DatafitState* st, const Column* col,
                          double delta) except -1 nogil
    # eta_i += delta[i] for i in rows[:n]; on return delta[i] is the change of
    # z_i, where s_i loss'(y_i, eta_i) = z_i + common_gradient() * s_i
    cdef int shift_rows(self, DatafitState* st, const int* rows, double* delta,
                        Py_ssize_t n) except -1 nogil
    # the part of every row's weighted derivative proportional to s_i that
    # shift_rows does not report (the squared loss's profiled intercept)
    cdef double common_gradient(self, DatafitState* st) noexcept nogil
    # grad[i] = s_i loss'(y_i, eta_i), hess[i] = s_i loss''(y_i, eta_i) over
    # all rows (hess may be NULL)
    cdef int row_derivatives(self, DatafitState* st, double* grad,
                             double* hess) except -1 nogil
    # one step on the intercept that does not raise the value; returns
    # |change of b| (0: nothing moved, the row state is unchanged)
    cdef double update_intercept(self, DatafitState* st) except? -1 nogil


# The layout probe's measures (see firecy/penalties/_abi2.pxd, whose block
# this one mirrors, and firecy/_abi.py): C names of the declarations above in
# the module firecy.datafits._abi2; FIRECY_DATAFIT_LAYOUT packs the version
# mod 16, the methods mod 64, the size of DatafitState mod 256 and those of
# Column and of the Datafit object mod 64.
cdef extern from *:
    """
    #ifndef FIRECY_ABI_PROBE_RANGE
    #define FIRECY_ABI_PROBE_RANGE ((size_t)1 << 30)
    #endif
    #define FIRECY_DATAFIT_VERSION ((size_t)__pyx_e_6firecy_8datafits_5_abi2_DATAFIT_ABI_VERSION)
    #define FIRECY_DATAFIT_METHODS \
        (sizeof(struct __pyx_vtabstruct_6firecy_8datafits_5_abi2_Datafit) / sizeof(void (*)(void)))
    #define FIRECY_DATAFIT_STATE_SIZE sizeof(struct __pyx_t_6firecy_8datafits_5_abi2_DatafitState)
    #define FIRECY_DATAFIT_COLUMN_SIZE sizeof(struct __pyx_t_6firecy_8datafits_5_abi2_Column)
    #define FIRECY_DATAFIT_OBJECT_SIZE sizeof(struct __pyx_obj_6firecy_8datafits_5_abi2_Datafit)
    #define FIRECY_DATAFIT_LAYOUT ((size_t)(FIRECY_DATAFIT_VERSION % 16 + 16 * ( \
        FIRECY_DATAFIT_METHODS % 64 + 64 * (FIRECY_DATAFIT_STATE_SIZE % 256 + 256 * ( \
        FIRECY_DATAFIT_COLUMN_SIZE % 64 + 64 * (FIRECY_DATAFIT_OBJECT_SIZE % 64))))))
    #define FIRECY_DATAFIT_LAYOUT_HASH ((size_t)((((((unsigned long long)FIRECY_DATAFIT_VERSION \
        * 1000003ULL + FIRECY_DATAFIT_METHODS) * 1000003ULL + FIRECY_DATAFIT_STATE_SIZE) \
        * 1000003ULL + FIRECY_DATAFIT_COLUMN_SIZE) * 1000003ULL + FIRECY_DATAFIT_OBJECT_SIZE) \
        % 1073741789ULL))
    #define FIRECY_DATAFIT_PROBE_UP char[sizeof(PyObject) + FIRECY_DATAFIT_LAYOUT]
    #define FIRECY_DATAFIT_PROBE_DOWN \
        char[sizeof(PyObject) + FIRECY_ABI_PROBE_RANGE - FIRECY_DATAFIT_LAYOUT]
    #define FIRECY_DATAFIT_PROBE_EXACT char[sizeof(PyObject) + FIRECY_DATAFIT_LAYOUT_HASH]
    """
    const size_t FIRECY_ABI_PROBE_RANGE
    const size_t FIRECY_DATAFIT_VERSION
    const size_t FIRECY_DATAFIT_METHODS
    const size_t FIRECY_DATAFIT_STATE_SIZE
    const size_t FIRECY_DATAFIT_COLUMN_SIZE
    const size_t FIRECY_DATAFIT_OBJECT_SIZE
    const size_t FIRECY_DATAFIT_LAYOUT
    const size_t FIRECY_DATAFIT_LAYOUT_HASH
