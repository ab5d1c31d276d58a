"""``PythonDatafit``: a datafit written in Python, called from the nogil engine.

The wrapped object's per-sample methods run on NumPy arrays with the GIL,
once per engine call (once per column in the hot loop: the base class
gathers the column's rows). Every result is checked (shape, finiteness); a
violation is a ValueError naming the datafit and the method, and an
exception raised by the object propagates out of the solver.
"""
import numpy as np

from firecy._callback_arrays cimport numpy_copy
from firecy._protocol import check_methods, real_array
from firecy.datafits.base cimport Datafit

REQUIRED = (("loss", ("y", "eta")),
            ("gradient", ("y", "eta")),
            ("curvature_bound", ("y",)))
OPTIONAL = (("hessian", ("y", "eta")),
            ("validate", ("y", "sample_weight")))


def check_datafit_protocol(obj, *, bound=True):
    """Raise TypeError unless ``obj`` (an object, or a class when ``bound`` is
    False) implements the Python datafit protocol."""
    check_methods(obj, "datafit", REQUIRED, OPTIONAL, bound=bound)


cdef class PythonDatafit(Datafit):
    """Wrap a datafit written in Python so the nogil engine can call it.

    The wrapped object implements, on 1-D float64 arrays of the same length:

    * ``loss(y, eta) -> array``: the per-sample loss;
    * ``gradient(y, eta) -> array``: its derivative in ``eta``;
    * ``curvature_bound(y) -> array or float``: ``u_i >= sup_eta loss''``,
      finite and positive (a bound that holds for every ``eta``);
    * optionally ``hessian(y, eta) -> array`` (the second derivative; the
      bound is used without it), ``validate(y, sample_weight) -> y`` (check
      the targets; raise ``ValueError``) and the attribute
      ``exact_curvature`` (True when ``loss''`` is constant and equal to the
      bound, as for the squared loss).

    Parameters
    ----------
    obj : object
        The Python datafit.

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.datafits import PythonDatafit
    >>> class Squared:
    ...     def loss(self, y, eta): return 0.5 * (y - eta) ** 2
    ...     def gradient(self, y, eta): return eta - y
    ...     def curvature_bound(self, y): return 1.0
    >>> PythonDatafit(Squared()).loss_of(np.array([1.0]), np.array([3.0]))
    array([2.])
    """

    cdef readonly object obj
    cdef readonly str name

    def __init__(self, obj):
        check_datafit_protocol(obj)
        self.obj = obj
        self.name = type(obj).__name__
        self.n_rows_used = 2
        self.exact_curvature = bool(getattr(obj, "exact_curvature", False))

    cdef object call(self, str method, tuple args):
        try:
            return getattr(self.obj, method)(*args)
        except Exception as exc:
            if hasattr(exc, "add_note"):   # Python >= 3.11
                exc.add_note(f"(raised by the datafit {self.name}.{method}, called by firecy's solver)")
            raise

    cdef object checked(self, object values, Py_ssize_t n, str method, bint scalar_ok=False):
        # real numbers only: a complex result is refused, not cut to its real part
        arr = real_array(values, f"datafit {self.name}", method, n)
        if scalar_ok and arr.ndim == 0:
            arr = np.full(n, float(arr))
        if arr.shape != (n,):
            raise ValueError(
                f"datafit {self.name}: {method} returned shape {arr.shape} for {n} "
                f"samples, expected ({n},)")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"datafit {self.name}: {method} returned NaN or infinity")
        return np.ascontiguousarray(arr)

    cdef int copy_out(self, object values, double* out, Py_ssize_t n) except -1:
        cdef const double[::1] v = values
        cdef Py_ssize_t i
        for i in range(n):
            out[i] = v[i]
        return 0

    cdef int loss(self, const double* y, const double* eta, double* out,
                  Py_ssize_t n) except -1 nogil:
        with gil:
            res = self.call("loss", (numpy_copy(y, n), numpy_copy(eta, n)))
            self.copy_out(self.checked(res, n, "loss"), out, n)
        return 0

    cdef int gradient_hessian(self, const double* y, const double* eta, double* grad,
                              double* hess, Py_ssize_t n) except -1 nogil:
        with gil:
            y_, eta_ = numpy_copy(y, n), numpy_copy(eta, n)
            res = self.call("gradient", (y_, eta_))
            self.copy_out(self.checked(res, n, "gradient"), grad, n)
            if hess != NULL:
                if callable(getattr(self.obj, "hessian", None)):
                    res = self.checked(self.call("hessian", (y_, eta_)), n, "hessian")
                    if np.any(res < 0):
                        raise ValueError(
                            f"datafit {self.name}: hessian returned a negative value")
                else:
                    res = self.checked(self.call("curvature_bound", (y_,)), n,
                                       "curvature_bound", True)
                self.copy_out(res, hess, n)
        return 0

    cdef int curvature_bound(self, const double* y, double* out,
                             Py_ssize_t n) except -1 nogil:
        with gil:
            res = self.checked(self.call("curvature_bound", (numpy_copy(y, n),)), n,
                               "curvature_bound", True)
            if not np.all(res > 0):
                raise ValueError(
                    f"datafit {self.name}: curvature_bound must be positive")
            self.copy_out(res, out, n)
        return 0

    def validate(self, y, sample_weight):
        """The wrapped object's ``validate`` (if any), its result checked."""
        y = np.ascontiguousarray(y, dtype=np.float64)
        method = getattr(self.obj, "validate", None)
        if callable(method):
            y = real_array(method(y, sample_weight), f"datafit {self.name}", "validate",
                           len(sample_weight))
            if y.shape != (len(sample_weight),) or not np.all(np.isfinite(y)):
                raise ValueError(
                    f"datafit {self.name}: validate must return {len(sample_weight)} "
                    "finite targets")
        return np.ascontiguousarray(y)

    def __repr__(self):
        return f"PythonDatafit({self.obj!r})"

    def __reduce__(self):
        return (PythonDatafit, (self.obj,))
