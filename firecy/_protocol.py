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

__all__ = ["check_methods", "accepts_keyword", "check_compiled_subclass"]


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


def check_compiled_subclass(cls, base, kind):
    """Raise TypeError unless every class of ``cls``'s MRO down to ``base`` is
    compiled (it has its own method table) and at least as large as ``base``.

    A plug-in built against another ABI of firecy's headers never gets this
    far (its import fails, see firecy/_abi.py); this catches a Python
    subclass of a compiled base class, whose methods the engine never calls.
    """
    for klass in cls.__mro__:
        if klass is base:
            return
        if "__pyx_vtable__" not in klass.__dict__:
            raise TypeError(
                f"{klass.__qualname__} subclasses firecy's compiled {base.__name__} in "
                f"Python: the engine calls the compiled methods only. Write it in Cython "
                f"(docs/writing_penalties.rst), or do not subclass {base.__name__}: a plain "
                f"Python object with the {kind} methods is accepted as it is")
        if klass.__basicsize__ < base.__basicsize__:
            raise TypeError(
                f"{klass.__qualname__} (module {klass.__module__}) is laid out for another "
                f"version of firecy's {base.__name__}: rebuild it against this firecy")
