"""Checks of objects that implement a contract in Python (penalties, datafits).

An object passed as a penalty or a datafit is checked once, when it is
wrapped or registered: every required method is present and callable with
the arguments the engine passes; every result is then checked on every call
by the wrapper (``firecy/penalties/_python.pyx``,
``firecy/datafits/_python.pyx``). A compiled subclass is checked too: it must
be compiled (a Python subclass of the compiled base class would never be
called by the engine) and laid out like the base class it was built against.
"""
import inspect
import numbers

import numpy as np

__all__ = ["check_methods", "accepts_keyword", "check_compiled_subclass", "real_array",
           "real_scalar"]

# dtype kinds of real numbers: signed, unsigned, floating
_REAL_KINDS = "iuf"


def real_array(values, owner, what, n):
    """``values`` as a float64 array of shape ``(n,)``, or a ValueError
    naming ``owner`` ("penalty Name") and the method ``what``.

    Anything but real numbers (complex, object, strings, bool) is refused
    before the cast: NumPy casts a complex array to float by dropping the
    imaginary part with a mere ComplexWarning, and an object array of
    numbers-like objects converts silently.
    """
    try:
        arr = np.asarray(values)
    except Exception:   # a ragged sequence and the like
        arr = None
    if arr is None or arr.dtype.kind not in _REAL_KINDS:
        got = type(values).__name__ if arr is None else (
            f"{type(values).__name__} of dtype {arr.dtype}")
        raise ValueError(f"{owner}: {what} returned {got}, expected a float array "
                         f"of shape ({n},)")
    return arr.astype(np.float64, copy=False)


def real_scalar(value, owner, what):
    """``value`` as a Python float, or a ValueError naming ``owner`` and the
    method ``what`` (a complex number is refused rather than cut to its real
    part). A one-element real array is accepted as its element."""
    if isinstance(value, numbers.Real):
        return float(value)
    arr = None
    if not isinstance(value, (str, bytes)):
        try:
            arr = np.asarray(value)
        except Exception:
            arr = None
    if arr is not None and arr.size == 1 and arr.dtype.kind in _REAL_KINDS:
        return float(arr.reshape(()))
    if isinstance(value, numbers.Complex) or (arr is not None and arr.dtype.kind == "c"):
        raise ValueError(f"{owner}: {what} returned a complex number ({value!r}), "
                         "expected a real number")
    raise ValueError(f"{owner}: {what} returned {type(value).__name__}, expected a number")


def _placeholder_call(func, n_args, bound):
    """Whether ``func`` accepts ``n_args`` positional arguments (plus ``self``
    when ``bound`` is False). None when Python cannot tell (builtins)."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    args = [object()] * (n_args + (0 if bound else 1))
    for keywords in ({}, {"columns": None, "block": None}):   # see PythonPenalty
        try:
            sig.bind(*args, **keywords)
        except TypeError:
            continue
        return True
    return False


def check_methods(obj, kind, required, optional=(), *, bound=True):
    """Raise TypeError unless ``obj`` has each method with the right arity.

    Parameters
    ----------
    obj : object or class
        The object (``bound=True``) or its class (``bound=False``).
    kind : str
        "penalty" or "datafit", for the message.
    required, optional : sequence of (name, argument names)
        The methods and the positional arguments the engine passes.
    """
    name = obj.__name__ if isinstance(obj, type) else type(obj).__name__
    missing = [m for m, _ in required if not callable(getattr(obj, m, None))]
    if missing:
        raise TypeError(
            f"{name} cannot be used as a {kind}: it has no method(s) {', '.join(missing)}")
    for method, args in list(required) + list(optional):
        func = getattr(obj, method, None)
        if func is None:
            continue
        if not callable(func):
            raise TypeError(f"{kind} {name}: {method} is not callable")
        if _placeholder_call(func, len(args), bound) is False:
            raise TypeError(
                f"{kind} {name}: {method} must accept the arguments "
                f"({', '.join(args)}), got {method}{inspect.signature(func)}")


def accepts_keyword(func, keyword):
    """Whether ``func`` takes ``keyword`` (by name or through ``**kwargs``)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is p.VAR_KEYWORD or (p.name == keyword and p.kind in (
        p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)) for p in params)


# the contract's methods (cdef: the engine calls them in C); a Python
# subclass that defines one of these names expects it to be called
CONTRACT_METHODS = {
    "penalty": ("value", "prox", "subdiff", "lambda_max", "block_score", "local_groups"),
    "datafit": ("loss", "gradient_hessian", "curvature_bound", "initialize", "value",
                "column_gradient", "shift_column", "shift_rows", "common_gradient",
                "row_derivatives", "update_intercept"),
}


def check_compiled_subclass(cls, base, kind):
    """Raise TypeError unless every class of ``cls``'s MRO down to ``base`` is
    compiled against this firecy, or is a Python class that leaves the
    contract's methods alone.

    A plug-in built against another ABI of firecy's headers never gets this
    far (its import fails, see firecy/_abi.py). This catches a compiled class
    laid out for another version of ``base``, and a Python subclass that
    defines a contract method: the engine calls the compiled methods only, so
    the Python one would be silently ignored. A Python subclass that only adds
    Python-level hooks (``check_blocks``, ``bind_ensemble``, ``__repr__``)
    is fine.
    """
    for klass in cls.__mro__:
        if klass is base:
            return
        if "__pyx_vtable__" not in klass.__dict__:
            overridden = [m for m in CONTRACT_METHODS[kind] if m in klass.__dict__]
            if overridden:
                raise TypeError(
                    f"{klass.__qualname__} subclasses firecy's compiled {base.__name__} in "
                    f"Python and defines {', '.join(overridden)}: the engine calls the "
                    f"compiled methods only. Write it in Cython (docs/writing_penalties.rst), "
                    f"or do not subclass {base.__name__}: a plain Python object with the "
                    f"{kind} methods is accepted as it is")
            continue
        if klass.__basicsize__ < base.__basicsize__:
            raise TypeError(
                f"{klass.__qualname__} (module {klass.__module__}) is laid out for another "
                f"version of firecy's {base.__name__}: rebuild it against this firecy")
