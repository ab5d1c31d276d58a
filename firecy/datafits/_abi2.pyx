"""The datafit contract (``Datafit``): generic state-level methods.

The contract itself is ``_abi2.pxd`` (cimported through the public header
``base.pxd``); the mathematics is in docs/datafits.rst.
A subclass implements the per-sample methods (``loss``, ``gradient_hessian``,
``curvature_bound``); this module derives the state-level methods the engine
calls from them, with the raw prediction eta in ``row[0]`` and the weighted
derivative ``z_i = s_i loss'(y_i, eta_i)`` in ``row[1]``. Column methods
gather the column's rows into the state's scratch space and make one
per-sample call per column. ``update_intercept`` is a Newton step on b,
safeguarded by the step the curvature bound gives (which never raises the
value: the bound majorises the loss).
"""
import numpy as np

from firecy._gather cimport gather_dot, gather_sum

ABI_VERSION = DATAFIT_ABI_VERSION

# The header's layout as compiled into firecy, for the layout probes
# (firecy/_abi.py compares it with a plug-in's, see the end of _abi2.pxd)
LAYOUT = FIRECY_DATAFIT_LAYOUT
LAYOUT_HASH = FIRECY_DATAFIT_LAYOUT_HASH
LAYOUT_MEASURES = {
    "version": FIRECY_DATAFIT_VERSION,
    "methods": FIRECY_DATAFIT_METHODS,
    "DatafitState": FIRECY_DATAFIT_STATE_SIZE,
    "Column": FIRECY_DATAFIT_COLUMN_SIZE,
    "Datafit": FIRECY_DATAFIT_OBJECT_SIZE,
}


cdef class Datafit:
    """Base class of every datafit: the contract the solver talks to.

    Subclass it in Cython (``cimport firecy.datafits.base``) and implement
    ``loss``, ``gradient_hessian`` and ``curvature_bound`` as ``nogil``
    methods, or write the same methods in Python and wrap the object with
    :class:`~firecy.datafits.PythonDatafit` (:func:`~firecy.datafits.as_datafit`
    does it). See docs/datafits.rst.

    Attributes
    ----------
    n_rows_used : int
        How many per-row arrays of the solver's state the datafit uses.
    exact_curvature : bool
        Whether ``loss''`` is constant and equal to the curvature bound (then
        a block update minimises the datafit exactly).

    Examples
    --------
    firecy's two losses are Datafits; the ``*_of`` methods evaluate the
    contract on NumPy arrays. The squared loss has constant curvature 1:

    >>> import numpy as np
    >>> from firecy.datafits import Datafit, Logistic, Quadratic
    >>> quad = Quadratic()
    >>> isinstance(quad, Datafit), quad.exact_curvature
    (True, True)
    >>> y, eta = np.array([1.0, 2.0]), np.array([0.0, 2.0])
    >>> quad.gradient_hessian_of(y, eta)
    (array([-1.,  0.]), array([1., 1.]))
    >>> quad.value_of(y, eta, sample_weight=[3.0, 1.0])   # (3 * 0.5 + 1 * 0) / 4
    0.375

    The logistic loss's curvature is bounded by 1/4:

    >>> logit = Logistic()
    >>> logit.exact_curvature, logit.curvature_bound_of([0.0, 1.0])
    (False, array([0.25, 0.25]))
    """

    def __cinit__(self):
        self.n_rows_used = 2
        self.exact_curvature = False

    # -- per-sample methods: the subclass's job ---------------------------

    cdef int loss(self, const double* y, const double* eta, double* out,
                  Py_ssize_t n) except -1 nogil:
        with gil:
            raise NotImplementedError(f"{type(self).__name__} does not implement loss")

    cdef int gradient_hessian(self, const double* y, const double* eta, double* grad,
                              double* hess, Py_ssize_t n) except -1 nogil:
        with gil:
            raise NotImplementedError(
                f"{type(self).__name__} does not implement gradient_hessian")

    cdef int curvature_bound(self, const double* y, double* out,
                             Py_ssize_t n) except -1 nogil:
        with gil:
            raise NotImplementedError(
                f"{type(self).__name__} does not implement curvature_bound")

    # -- state-level methods, derived from the per-sample ones ------------

    cdef int initialize(self, DatafitState* st, const double* linear) except -1 nogil:
        cdef Py_ssize_t i, n = st.n_samples
        cdef double* eta = st.row[0]
        cdef double* z = st.row[1]
        if not st.fit_intercept:
            st.intercept = 0.0
        for i in range(n):
            eta[i] = st.offset[i] + st.intercept + linear[i]
        self.gradient_hessian(st.y, eta, st.work, NULL, n)
        for i in range(n):
            z[i] = st.weight[i] * st.work[i]
        return 0

    cdef double value(self, DatafitState* st) except? -1 nogil:
        cdef Py_ssize_t i
        cdef double total = 0.0
        self.loss(st.y, st.row[0], st.work, st.n_samples)
        for i in range(st.n_samples):
            total += st.weight[i] * st.work[i]
        return total

    cdef double column_gradient(self, DatafitState* st, const Column* col) except? -1 nogil:
        if col.values == NULL:
            return gather_sum(st.row[1], col.rows, col.n_rows) * col.value
        return gather_dot(col.values, st.row[1], col.rows, col.n_rows)

    cdef int shift_column(self, DatafitState* st, const Column* col,
                          double delta) except -1 nogil:
        cdef Py_ssize_t k, i, n = st.n_samples
        cdef double* ys = st.work
        cdef double* etas = st.work + n
        cdef double* grads = st.work + 2 * n
        if col.values == NULL:
            for k in range(col.n_rows):
                i = col.rows[k]
                ys[k] = st.y[i]
                etas[k] = st.row[0][i] + col.value * delta
        else:
            for k in range(col.n_rows):
                i = col.rows[k]
                ys[k] = st.y[i]
                etas[k] = st.row[0][i] + col.values[k] * delta
        self.gradient_hessian(ys, etas, grads, NULL, col.n_rows)
        for k in range(col.n_rows):
            i = col.rows[k]
            st.row[0][i] = etas[k]
            st.row[1][i] = st.weight[i] * grads[k]
        return 0

    cdef int shift_rows(self, DatafitState* st, const int* rows, double* delta,
                        Py_ssize_t n_rows) except -1 nogil:
        cdef Py_ssize_t k, i, n = st.n_samples
        cdef double* ys = st.work
        cdef double* etas = st.work + n
        cdef double* grads = st.work + 2 * n
        cdef double z_new
        for k in range(n_rows):
            i = rows[k]
            ys[k] = st.y[i]
            etas[k] = st.row[0][i] + delta[i]
        self.gradient_hessian(ys, etas, grads, NULL, n_rows)
        for k in range(n_rows):
            i = rows[k]
            st.row[0][i] = etas[k]
            z_new = st.weight[i] * grads[k]
            delta[i] = z_new - st.row[1][i]
            st.row[1][i] = z_new
        return 0

    cdef double common_gradient(self, DatafitState* st) noexcept nogil:
        return 0.0

    cdef int row_derivatives(self, DatafitState* st, double* grad,
                             double* hess) except -1 nogil:
        cdef Py_ssize_t i
        self.gradient_hessian(st.y, st.row[0], grad, hess, st.n_samples)
        for i in range(st.n_samples):
            grad[i] *= st.weight[i]
            if hess != NULL:
                hess[i] *= st.weight[i]
        return 0

    cdef double update_intercept(self, DatafitState* st) except? -1 nogil:
        cdef Py_ssize_t i, n = st.n_samples
        cdef double g = 0.0, h = 0.0, u = 0.0, f_old, f_new, step
        cdef double* a = st.work
        cdef double* b = st.work + n
        cdef double* c = st.work + 2 * n
        cdef double steps[2]
        cdef int k
        if not st.fit_intercept:
            return 0.0
        self.gradient_hessian(st.y, st.row[0], a, b, n)
        self.curvature_bound(st.y, c, n)
        for i in range(n):
            g += st.weight[i] * a[i]
            h += st.weight[i] * b[i]
            u += st.weight[i] * c[i]
        if g == 0.0 or not u > 0.0:
            return 0.0
        steps[0] = -g / h if h > 0.0 else -g / u   # Newton
        steps[1] = -g / u                          # majorised: never raises F
        f_old = self.value(st)
        for k in range(2):
            step = steps[k]
            for i in range(n):
                a[i] = st.row[0][i] + step
            self.loss(st.y, a, b, n)
            f_new = 0.0
            for i in range(n):
                f_new += st.weight[i] * b[i]
            if f_new < f_old:
                for i in range(n):
                    st.row[0][i] = a[i]
                self.gradient_hessian(st.y, a, b, NULL, n)
                for i in range(n):
                    st.row[1][i] = st.weight[i] * b[i]
                st.intercept += step
                return step if step > 0.0 else -step
        return 0.0

    # -- Python-level access (validation, tests, the Newton steps) --------

    def validate(self, y, sample_weight):
        """Check the targets for this loss; return them as float64.

        Parameters
        ----------
        y : ndarray of float64, shape (n_samples,)
            Finite targets.
        sample_weight : ndarray of float64, shape (n_samples,)
            Non-negative weights summing to one.

        Returns
        -------
        ndarray of float64, shape (n_samples,)
        """
        return np.ascontiguousarray(y, dtype=np.float64)

    def loss_of(self, y, eta):
        """Per-sample loss ``loss(y_i, eta_i)``."""
        cdef const double[::1] y_, e_
        y_, e_ = _pair(y, eta)
        out = np.zeros(y_.shape[0])
        cdef double[::1] o_ = out
        if y_.shape[0]:
            self.loss(&y_[0], &e_[0], &o_[0], y_.shape[0])
        return out

    def gradient_hessian_of(self, y, eta):
        """Per-sample ``(d loss / d eta, d2 loss / d eta2)``."""
        cdef const double[::1] y_, e_
        y_, e_ = _pair(y, eta)
        grad = np.zeros(y_.shape[0])
        hess = np.zeros(y_.shape[0])
        cdef double[::1] g_ = grad, h_ = hess
        if y_.shape[0]:
            self.gradient_hessian(&y_[0], &e_[0], &g_[0], &h_[0], y_.shape[0])
        return grad, hess

    def curvature_bound_of(self, y):
        """Per-sample curvature bound ``u_i >= sup_eta loss''(y_i, eta)``."""
        cdef const double[::1] y_ = np.ascontiguousarray(y, dtype=np.float64)
        out = np.zeros(y_.shape[0])
        cdef double[::1] o_ = out
        if y_.shape[0]:
            self.curvature_bound(&y_[0], &o_[0], y_.shape[0])
        return out

    def value_of(self, y, eta, sample_weight=None):
        """The datafit ``sum_i s_i loss(y_i, eta_i) / sum_i s_i``."""
        loss = self.loss_of(y, eta)
        if sample_weight is None:
            return float(np.mean(loss))
        s = np.asarray(sample_weight, dtype=np.float64)
        return float(np.dot(s, loss) / s.sum())

    def __repr__(self):
        return f"{type(self).__name__}()"


def _pair(y, eta):
    y = np.ascontiguousarray(y, dtype=np.float64)
    eta = np.ascontiguousarray(eta, dtype=np.float64)
    if y.ndim != 1 or y.shape != eta.shape:
        raise ValueError(f"y and eta must be 1-D of one length, got {y.shape} and {eta.shape}")
    return y, eta


# A plug-in compiled with more methods than firecy's Datafit copies that many
# method slots at import, before its layout probes refuse it: give the
# exported table null slots to copy (firecy/_layout.pyx).
from firecy._layout import pad_method_table as _pad_method_table

_pad_method_table(Datafit, FIRECY_DATAFIT_METHODS)
