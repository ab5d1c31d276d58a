"""The logistic loss ``loss(y, eta) = log(1 + exp(eta)) - y eta``, y in {0, 1}
(docs/datafits.rst).

State: the raw prediction ``eta_i = offset_i + b + (M w)_i`` in ``row[0]``
and the weighted derivative ``z_i = s_i (sigmoid(eta_i) - y_i)`` in
``row[1]``; a column shift updates both on the column's rows (one exp per
row), so the column gradient is a plain sum over ``z``. The value is computed
on demand (the engine asks for it once per sweep, Anderson or Newton step),
which keeps the log out of the hot loop. The curvature sigmoid(1 - sigmoid)
is at most 1/4: block updates with that bound minimise a majoriser. The
intercept step is a Newton step on b, safeguarded by the majorised step.
"""
from libc.float cimport DBL_EPSILON
from libc.math cimport exp, fabs, log1p

import numpy as np

from firecy.datafits.base cimport Column, Datafit, DatafitState


cdef inline double sigmoid(double x) noexcept nogil:
    cdef double e
    if x >= 0.0:
        return 1.0 / (1.0 + exp(-x))
    e = exp(x)
    return e / (1.0 + e)


cdef inline double softplus(double x) noexcept nogil:
    """log(1 + exp(x)) without overflow."""
    if x > 0.0:
        return x + log1p(exp(-x))
    return log1p(exp(x))


cdef class Logistic(Datafit):
    """The logistic loss ``(1 / sum s) sum_i s_i [log(1 + exp(eta_i)) - y_i eta_i]``.

    Labels are 0 and 1; ``eta`` is the raw prediction (log-odds),
    ``offset + b + M w``. Up to the scaling, scikit-learn's
    ``LogisticRegression`` minimises the same loss (with ``C = 1 / (sum s *
    lam)`` for an L1 penalty ``lam``).

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.datafits import Logistic
    >>> Logistic().loss_of(np.array([0.0, 1.0]), np.array([0.0, 0.0]))
    array([0.69314718, 0.69314718])
    """

    def __cinit__(self):
        self.n_rows_used = 2
        self.exact_curvature = False

    cdef int loss(self, const double* y, const double* eta, double* out,
                  Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        for i in range(n):
            out[i] = softplus(eta[i]) - y[i] * eta[i]
        return 0

    cdef int gradient_hessian(self, const double* y, const double* eta, double* grad,
                              double* hess, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        cdef double p
        for i in range(n):
            p = sigmoid(eta[i])
            grad[i] = p - y[i]
            if hess != NULL:
                hess[i] = p * (1.0 - p)
        return 0

    cdef int curvature_bound(self, const double* y, double* out,
                             Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        for i in range(n):
            out[i] = 0.25
        return 0

    cdef int initialize(self, DatafitState* st, const double* linear) except -1 nogil:
        cdef Py_ssize_t i
        cdef double e
        if not st.fit_intercept:
            st.intercept = 0.0
        for i in range(st.n_samples):
            e = st.offset[i] + st.intercept + linear[i]
            st.row[0][i] = e
            st.row[1][i] = st.weight[i] * (sigmoid(e) - st.y[i])
        return 0

    cdef double value(self, DatafitState* st) except? -1 nogil:
        cdef Py_ssize_t i
        cdef double total = 0.0, e
        for i in range(st.n_samples):
            e = st.row[0][i]
            total += st.weight[i] * (softplus(e) - st.y[i] * e)
        return total

    cdef int shift_column(self, DatafitState* st, const Column* col,
                          double delta) except -1 nogil:
        cdef Py_ssize_t k, i
        cdef double e, step
        cdef double* eta = st.row[0]
        cdef double* z = st.row[1]
        if col.values == NULL:
            step = col.value * delta
            for k in range(col.n_rows):
                i = col.rows[k]
                e = eta[i] + step
                eta[i] = e
                z[i] = st.weight[i] * (sigmoid(e) - st.y[i])
        else:
            for k in range(col.n_rows):
                i = col.rows[k]
                e = eta[i] + col.values[k] * delta
                eta[i] = e
                z[i] = st.weight[i] * (sigmoid(e) - st.y[i])
        return 0

    cdef int shift_rows(self, DatafitState* st, const int* rows, double* delta,
                        Py_ssize_t n_rows) except -1 nogil:
        cdef Py_ssize_t k, i
        cdef double e, z_new
        for k in range(n_rows):
            i = rows[k]
            if delta[i] == 0.0:
                continue
            e = st.row[0][i] + delta[i]
            st.row[0][i] = e
            z_new = st.weight[i] * (sigmoid(e) - st.y[i])
            delta[i] = z_new - st.row[1][i]
            st.row[1][i] = z_new
        return 0

    cdef int row_derivatives(self, DatafitState* st, double* grad,
                             double* hess) except -1 nogil:
        cdef Py_ssize_t i
        cdef double p
        for i in range(st.n_samples):
            grad[i] = st.row[1][i]
            if hess != NULL:
                p = sigmoid(st.row[0][i])
                hess[i] = st.weight[i] * p * (1.0 - p)
        return 0

    cdef double update_intercept(self, DatafitState* st) except? -1 nogil:
        cdef Py_ssize_t i, k
        cdef double g = 0.0, h = 0.0, f_old = 0.0, f_scale = 0.0, f_new, g_new, e, p, step, term
        cdef double steps[2]
        if not st.fit_intercept:
            return 0.0
        for i in range(st.n_samples):
            e = st.row[0][i]
            p = sigmoid(e)
            g += st.row[1][i]
            h += st.weight[i] * p * (1.0 - p)
            term = st.weight[i] * (softplus(e) - st.y[i] * e)
            f_old += term
            # the sum's rounding scale: each term is a difference of two
            # terms of this size
            f_scale += st.weight[i] * (softplus(e) + fabs(st.y[i] * e))
        if g == 0.0:
            return 0.0
        steps[0] = -g / h if h > 0.0 else -4.0 * g   # Newton
        steps[1] = -4.0 * g                          # majorised (curvature <= 1/4)
        for k in range(2):
            step = steps[k]
            f_new = 0.0
            for i in range(st.n_samples):
                e = st.row[0][i] + step
                f_new += st.weight[i] * (softplus(e) - st.y[i] * e)
            if f_new < f_old:
                self.shift_intercept(st, step)
                return fabs(step)
            if fabs(g * step) <= 4.0 * st.n_samples * DBL_EPSILON * f_scale:
                # the step's first-order decrease |g step| is below the
                # rounding of the sum F, which cannot confirm it (near the
                # optimum, where a tight tol still asks the intercept's
                # gradient to shrink): keep the step if it shrinks |g|. F
                # then changes by at most |g step|, below the same rounding
                g_new = 0.0
                for i in range(st.n_samples):
                    g_new += st.weight[i] * (sigmoid(st.row[0][i] + step) - st.y[i])
                if fabs(g_new) < fabs(g):
                    self.shift_intercept(st, step)
                    return fabs(step)
        return 0.0

    cdef void shift_intercept(self, DatafitState* st, double step) noexcept nogil:
        cdef Py_ssize_t i
        cdef double e
        for i in range(st.n_samples):
            e = st.row[0][i] + step
            st.row[0][i] = e
            st.row[1][i] = st.weight[i] * (sigmoid(e) - st.y[i])
        st.intercept += step

    def validate(self, y, sample_weight):
        """Labels must be 0 or 1, with both classes present (positive weight).

        Parameters
        ----------
        y : ndarray of float64, shape (n_samples,)
        sample_weight : ndarray of float64, shape (n_samples,)

        Returns
        -------
        ndarray of float64, shape (n_samples,)
        """
        y = np.ascontiguousarray(y, dtype=np.float64)
        bad = (y != 0.0) & (y != 1.0)
        if np.any(bad):
            found = np.unique(y[bad])[:5]
            raise ValueError(
                f"the logistic datafit needs labels in {{0, 1}}; found {found.tolist()}"
                " (encode the classes as 0 and 1)")
        weighted = y[np.asarray(sample_weight) > 0]
        if weighted.size == 0 or np.all(weighted == weighted[0]):
            raise ValueError(
                "the logistic datafit needs both classes (0 and 1) among the rows with "
                "positive sample weight; y has a single class")
        return y

    def __reduce__(self):
        return (Logistic, ())
