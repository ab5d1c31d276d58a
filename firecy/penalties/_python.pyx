"""``PythonPenalty``: a penalty written in Python, called from the nogil engine.

The wrapped object's methods run on NumPy arrays with the GIL, once per
engine call (one block). The object is checked once when wrapped (methods,
arguments) and every result is checked on every call (shape, finiteness;
an infinite value only where the contract allows one): a violation is a
ValueError naming the penalty and the method. An exception raised by the
object propagates out of the solver, with a note saying which call raised it.
Nothing is written to the object during a solve: ``lam`` is the object's own
attribute, read by its methods; a method that writes it is an error.
"""
import numpy as np

from firecy._callback_arrays cimport copy_into, numpy_copy
from firecy._protocol import accepts_keyword, check_methods, real_array, real_scalar
from firecy.penalties.base cimport (
    Block, PENALTY_SCORE_IS_DECREASE, PENALTY_SEPARABLE, Penalty)

REQUIRED = (("value", ("w", "curvature")),
            ("prox", ("z", "step", "curvature")),
            ("subdiff", ("w", "curvature")),
            ("lambda_max", ("grad", "curvature")))
OPTIONAL = (("block_score", ("w", "grad", "step", "curvature")),
            ("local_quadratic", ("w", "curvature")))


def check_penalty_protocol(obj, *, bound=True):
    """Raise TypeError unless ``obj`` (an object, or a class when ``bound`` is
    False) implements the Python penalty protocol."""
    check_methods(obj, "penalty", REQUIRED, OPTIONAL, bound=bound)


cdef class PythonPenalty(Penalty):
    """Wrap a penalty written in Python so the nogil engine can call it.

    The wrapped object implements, on 1-D float64 arrays of one block:

    * ``value(w, curvature) -> float``: finite;
    * ``prox(z, step, curvature) -> array``: ``argmin_x sum_k step_k / 2
      (x_k - z_k)^2 + penalty(x)``, finite;
    * ``subdiff(w, curvature) -> (lo, hi)``: the subdifferential interval
      of each coordinate, ``lo <= hi``, infinite ends allowed, never NaN;
    * ``lambda_max(grad, curvature) -> float``: the smallest ``lam`` for
      which 0 is stationary, ``>= 0``, ``inf`` allowed (no ``lam`` makes 0
      stationary);
    * optionally ``block_score(w, grad, step, curvature) -> float``
      (see :class:`Penalty`) and ``local_quadratic(w, curvature) ->
      (grad, hess) or None`` (the exact diagonal local model on the
      nonzero coordinates; enables the engine's Newton steps; without it a
      separable penalty gets the model :class:`Penalty` derives from
      ``subdiff``);

    a numeric attribute ``lam`` (the path sets it; the methods read it) and
    optionally the flags ``is_separable`` and ``score_is_decrease`` (default
    False). A method that also takes the keywords ``columns`` (the design
    columns of the block's coordinates, an int array) and ``block`` (the
    block's index) receives them: that is how a Python penalty reads
    per-column data. Optional hooks, called
    from Python: ``check_blocks(block_ptr)`` and ``bind_ensemble(ensemble)``
    (see :class:`Penalty`).

    Each engine call takes the GIL once for the whole block. The protocol is
    checked when the object is wrapped, every result on every call.

    Parameters
    ----------
    obj : object
        The Python penalty.

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.penalties import PythonPenalty
    >>> class Ridge:
    ...     lam = 1.0
    ...     is_separable = True
    ...     def value(self, w, curvature): return 0.5 * self.lam * w @ w
    ...     def prox(self, z, step, curvature): return step * z / (step + self.lam)
    ...     def subdiff(self, w, curvature): return self.lam * w, self.lam * w
    ...     def lambda_max(self, grad, curvature): return np.inf if grad.any() else 0.0
    >>> PythonPenalty(Ridge()).prox_of(np.array([2.0]), step=1.0)
    array([1.])
    """

    cdef readonly object obj
    cdef readonly str name
    cdef object score_method, local_method
    cdef frozenset with_columns

    def __init__(self, obj):
        check_penalty_protocol(obj)
        lam = getattr(obj, "lam", None)
        try:
            lam = float(lam)
        except (TypeError, ValueError):
            raise TypeError(
                f"{type(obj).__name__} must have a numeric attribute 'lam', got {lam!r}"
            ) from None
        Penalty.__init__(self, lam)
        self.obj = obj
        self.name = type(obj).__name__
        self.flags = ((PENALTY_SEPARABLE if getattr(obj, "is_separable", False) else 0)
                      | (PENALTY_SCORE_IS_DECREASE if getattr(obj, "score_is_decrease", False)
                         else 0))
        self.score_method = getattr(obj, "block_score", None)
        self.local_method = getattr(obj, "local_quadratic", None)
        self.with_columns = frozenset(
            m for m, _ in REQUIRED + OPTIONAL if callable(getattr(obj, m, None))
            and accepts_keyword(getattr(obj, m), "columns")
            and accepts_keyword(getattr(obj, m), "block"))

    @property
    def lam(self):
        """The wrapped object's ``lam``."""
        return float(self.obj.lam)

    @lam.setter
    def lam(self, double value):
        if not value >= 0.0:
            raise ValueError(f"lam must be a non-negative number, got {value!r}")
        self.obj.lam = value
        (<Penalty> self).lam = value

    # -- calls and result checks (with the GIL held) ----------------------

    cdef object call(self, str method, const Block* blk, tuple args):
        cdef Py_ssize_t k
        func = getattr(self.obj, method)
        lam = getattr(self.obj, "lam", None)
        try:
            if method in self.with_columns:
                cols = np.zeros(blk.n, dtype=np.intp)
                for k in range(blk.n):
                    cols[k] = blk.columns[k]
                res = func(*args, columns=cols, block=blk.index)
            else:
                res = func(*args)
        except Exception as exc:
            if hasattr(exc, "add_note"):   # Python >= 3.11
                exc.add_note(f"(raised by the penalty {self.name}.{method}, called by firecy's solver)")
            raise
        self.check_lam_unchanged(lam, method)
        return res

    cdef int check_lam_unchanged(self, object before, str method) except -1:
        """A method that writes ``lam`` changes the objective in the middle of
        a solve (every later call sees another penalty), and the same object
        may serve other solves at once: an error, not a silently different
        model. The engine cannot just read ``lam`` once: the object's own
        methods read it. Only a change made by the call itself counts, so a
        ``lam`` set between solves is fine."""
        after = getattr(self.obj, "lam", None)
        if after is before:
            return 0
        try:
            same = float(after) == float(before)
        except (TypeError, ValueError):
            same = False
        if not same:
            raise ValueError(
                f"penalty {self.name}: {method} changed the penalty's lam from {before!r} "
                f"to {after!r} during the solve; the methods must only read lam (the path "
                "sets it between solves): compute with a local variable instead")
        return 0

    cdef object array_result(self, object res, Py_ssize_t n, str what):
        # real numbers only: a complex result is refused, not cut to its real part
        arr = real_array(res, f"penalty {self.name}", what, n)
        if arr.shape != (n,):
            raise ValueError(
                f"penalty {self.name}: {what} returned shape {arr.shape}, expected ({n},)")
        return np.ascontiguousarray(arr)

    cdef double scalar_result(self, object res, str what, bint inf_ok) except? -1:
        value = real_scalar(res, f"penalty {self.name}", what)
        if value != value or (not inf_ok and not np.isfinite(value)):
            raise ValueError(f"penalty {self.name}: {what} returned {value!r}, expected a "
                             + ("number (inf allowed), not NaN" if inf_ok else "finite number"))
        return value

    cdef int finite_out(self, object res, double* out, Py_ssize_t n, str what) except -1:
        arr = self.array_result(res, n, what)
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"penalty {self.name}: {what} returned NaN or infinity")
        return copy_into(arr, out, n)

    cdef tuple pair_result(self, object res, Py_ssize_t n, str what, str a, str b):
        try:
            first, second = res
        except (TypeError, ValueError):
            raise ValueError(f"penalty {self.name}: {what} must return a pair ({a}, {b}), "
                             f"got {type(res).__name__}") from None
        return (self.array_result(first, n, f"{what} {a}"),
                self.array_result(second, n, f"{what} {b}"))

    # -- the contract ------------------------------------------------------

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        with gil:
            res = self.call("value", blk, (numpy_copy(w, blk.n), numpy_copy(blk.curv, blk.n)))
            return self.scalar_result(res, "value", False)

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Py_ssize_t n = blk.n
        with gil:
            res = self.call("prox", blk,
                            (numpy_copy(z, n), numpy_copy(step, n), numpy_copy(blk.curv, n)))
            self.finite_out(res, out, n, "prox")
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        cdef Py_ssize_t n = blk.n
        with gil:
            res = self.call("subdiff", blk, (numpy_copy(w, n), numpy_copy(blk.curv, n)))
            lo_, hi_ = self.pair_result(res, n, "subdiff", "lo", "hi")
            if np.any(np.isnan(lo_)) or np.any(np.isnan(hi_)):
                raise ValueError(f"penalty {self.name}: subdiff returned NaN")
            if np.any(lo_ > hi_) or np.any(lo_ == np.inf) or np.any(hi_ == -np.inf):
                raise ValueError(f"penalty {self.name}: subdiff returned an empty interval "
                                 "(lo > hi, lo = +inf or hi = -inf)")
            copy_into(lo_, lo, n)
            copy_into(hi_, hi, n)
        return 0

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        cdef double value
        with gil:
            res = self.call("lambda_max", blk,
                            (numpy_copy(grad, blk.n), numpy_copy(blk.curv, blk.n)))
            value = self.scalar_result(res, "lambda_max", True)
            if value < 0.0:
                raise ValueError(f"penalty {self.name}: lambda_max returned {value!r} < 0")
            return value

    cdef double block_score(self, const Block* blk, const double* w, const double* grad,
                            const double* step, double* work) except? -1 nogil:
        cdef double score
        cdef Py_ssize_t n = blk.n
        with gil:
            if self.score_method is not None:
                res = self.call("block_score", blk, (numpy_copy(w, n), numpy_copy(grad, n),
                                                     numpy_copy(step, n), numpy_copy(blk.curv, n)))
                score = self.scalar_result(res, "block_score", False)
                if score < 0.0 and not self.flags & PENALTY_SCORE_IS_DECREASE:
                    raise ValueError(
                        f"penalty {self.name}: block_score returned {score!r} < 0 (a negative "
                        "score needs score_is_decrease = True)")
                return score
        return Penalty.block_score(self, blk, w, grad, step, work)

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        cdef Py_ssize_t k, n = blk.n, n_groups = 0
        if self.local_method is None:
            # no local_quadratic: the model the base class derives from
            # subdiff (a separable penalty), else none
            return Penalty.local_groups(self, blk, w, group, grad, hess)
        with gil:
            res = self.call("local_quadratic", blk, (numpy_copy(w, n), numpy_copy(blk.curv, n)))
            if res is None:
                return -2
            g_, h_ = self.pair_result(res, n, "local_quadratic", "grad", "hess")
            if not (np.all(np.isfinite(g_)) and np.all(np.isfinite(h_))):
                raise ValueError(f"penalty {self.name}: local_quadratic returned NaN or infinity")
            for k in range(n):    # one group per nonzero coordinate
                if w[k] != 0.0:
                    group[k] = n_groups
                    grad[n_groups] = g_[k]
                    hess[n_groups] = h_[k]
                    n_groups += 1
                else:
                    group[k] = -1
        return n_groups

    # -- Python-level hooks -----------------------------------------------

    def check_blocks(self, block_ptr):
        """The wrapped object's ``check_blocks`` (if any)."""
        method = getattr(self.obj, "check_blocks", None)
        if callable(method):
            method(block_ptr)

    def bind_ensemble(self, ensemble):
        """The wrapped object's ``bind_ensemble`` (if any), wrapped."""
        method = getattr(self.obj, "bind_ensemble", None)
        if not callable(method):
            return self
        bound = method(ensemble)
        return self if bound is self.obj else PythonPenalty(bound)

    def _repr_params(self):
        return repr(self.obj)

    def __reduce__(self):
        return (PythonPenalty, (self.obj,))
