"""The weighted squared loss ``loss(y, eta) = (y - eta)^2 / 2`` (docs/datafits.rst).

State: the residual without the intercept ``r_i = y_i - offset_i - (M w)_i``
in ``row[0]`` and the running sums ``S1 = sum_i s_i r_i`` (``total[0]``) and
``S2 = sum_i s_i r_i^2`` (``total[1]``). The intercept is profiled out:
``b = S1`` after every change (0 without an intercept), so the value
``(S2 - 2 b S1 + b^2) / 2`` costs O(1) and a column shift touches only the
column's rows. The weighted derivative is ``s_i (eta_i - y_i) = -s_i r_i +
b s_i``: ``shift_rows`` reports changes of ``-s_i r_i`` and
``common_gradient`` is ``b``. The curvature is exactly 1 per sample, so
block updates with the coordinate curvature are exact minimisations.
"""
from firecy.datafits.base cimport Column, Datafit, DatafitState


cdef class Quadratic(Datafit):
    """The weighted squared loss ``(1 / 2 sum s) sum_i s_i (y_i - eta_i)^2``.

    With unit weights and no offset this is scikit-learn's ``Lasso`` datafit
    ``1 / (2 n) ||y - b - M w||^2``.

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.datafits import Quadratic
    >>> Quadratic().loss_of(np.array([1.0, 2.0]), np.array([0.0, 2.0]))
    array([0.5, 0. ])
    """

    def __cinit__(self):
        self.n_rows_used = 1
        self.exact_curvature = True

    cdef int loss(self, const double* y, const double* eta, double* out,
                  Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        for i in range(n):
            out[i] = 0.5 * (y[i] - eta[i]) * (y[i] - eta[i])
        return 0

    cdef int gradient_hessian(self, const double* y, const double* eta, double* grad,
                              double* hess, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        for i in range(n):
            grad[i] = eta[i] - y[i]
            if hess != NULL:
                hess[i] = 1.0
        return 0

    cdef int curvature_bound(self, const double* y, double* out,
                             Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        for i in range(n):
            out[i] = 1.0
        return 0

    cdef int initialize(self, DatafitState* st, const double* linear) except -1 nogil:
        cdef Py_ssize_t i
        cdef double* r = st.row[0]
        cdef double S1 = 0.0, S2 = 0.0
        for i in range(st.n_samples):
            r[i] = st.y[i] - st.offset[i] - linear[i]
            S1 += st.weight[i] * r[i]
            S2 += st.weight[i] * r[i] * r[i]
        st.total[0] = S1
        st.total[1] = S2
        st.intercept = S1 if st.fit_intercept else 0.0
        return 0

    cdef double value(self, DatafitState* st) except? -1 nogil:
        cdef double b = st.intercept
        return 0.5 * (st.total[1] - 2.0 * b * st.total[0] + b * b)

    cdef double column_gradient(self, DatafitState* st, const Column* col) except? -1 nogil:
        cdef Py_ssize_t k = 0, i, i1, n = col.n_rows
        cdef double acc = 0.0, mass = 0.0, acc1 = 0.0, mass1 = 0.0
        cdef const double* r = st.row[0]
        cdef const double* s = st.weight
        cdef const int* rows = col.rows
        cdef const double* v = col.values
        # two rows per step, each sum split in two: four independent chains
        # of adds (one chain is bound by the add's latency, not the gathers)
        if v == NULL:
            while k + 2 <= n:
                i = rows[k]
                i1 = rows[k + 1]
                acc += s[i] * r[i]
                mass += s[i]
                acc1 += s[i1] * r[i1]
                mass1 += s[i1]
                k += 2
            if k < n:
                i = rows[k]
                acc += s[i] * r[i]
                mass += s[i]
            return -col.value * ((acc + acc1) - st.intercept * (mass + mass1))
        while k + 2 <= n:
            i = rows[k]
            i1 = rows[k + 1]
            acc += v[k] * s[i] * r[i]
            mass += v[k] * s[i]
            acc1 += v[k + 1] * s[i1] * r[i1]
            mass1 += v[k + 1] * s[i1]
            k += 2
        if k < n:
            i = rows[k]
            acc += v[k] * s[i] * r[i]
            mass += v[k] * s[i]
        return -((acc + acc1) - st.intercept * (mass + mass1))

    cdef int shift_column(self, DatafitState* st, const Column* col,
                          double delta) except -1 nogil:
        cdef Py_ssize_t k, i
        cdef double old, new, sd, S1 = st.total[0], S2 = st.total[1]
        cdef double* r = st.row[0]
        cdef const double* s = st.weight
        cdef double step
        if col.values == NULL:
            step = col.value * delta
            for k in range(col.n_rows):
                i = col.rows[k]
                old = r[i]
                new = old - step
                r[i] = new
                sd = s[i] * (new - old)
                S1 += sd
                S2 += sd * (new + old)
        else:
            for k in range(col.n_rows):
                i = col.rows[k]
                old = r[i]
                new = old - col.values[k] * delta
                r[i] = new
                sd = s[i] * (new - old)
                S1 += sd
                S2 += sd * (new + old)
        st.total[0] = S1
        st.total[1] = S2
        st.intercept = S1 if st.fit_intercept else 0.0
        return 0

    cdef int shift_rows(self, DatafitState* st, const int* rows, double* delta,
                        Py_ssize_t n_rows) except -1 nogil:
        cdef Py_ssize_t k, i
        cdef double d, old, sd
        cdef double* r = st.row[0]
        for k in range(n_rows):
            i = rows[k]
            d = -delta[i]
            if d == 0.0:
                continue
            old = r[i]
            r[i] = old + d
            sd = st.weight[i] * d
            st.total[0] += sd
            st.total[1] += sd * (2.0 * old + d)
            delta[i] = -sd          # change of z_i = -s_i r_i
        st.intercept = st.total[0] if st.fit_intercept else 0.0
        return 0

    cdef double common_gradient(self, DatafitState* st) noexcept nogil:
        return st.intercept

    cdef int row_derivatives(self, DatafitState* st, double* grad,
                             double* hess) except -1 nogil:
        cdef Py_ssize_t i
        for i in range(st.n_samples):
            grad[i] = -st.weight[i] * (st.row[0][i] - st.intercept)
            if hess != NULL:
                hess[i] = st.weight[i]
        return 0

    cdef double update_intercept(self, DatafitState* st) except? -1 nogil:
        return 0.0   # profiled: b = S1 after every change

    def __reduce__(self):
        return (Quadratic, ())
