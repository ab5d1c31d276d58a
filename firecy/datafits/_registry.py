"""Datafits by name (registration, entry-point discovery) and wrapping."""
from importlib.metadata import entry_points

from firecy._protocol import check_compiled_subclass
from firecy.datafits._abi1 import Datafit
from firecy.datafits._logistic import Logistic
from firecy.datafits._python import PythonDatafit, check_datafit_protocol
from firecy.datafits._quadratic import Quadratic

ENTRY_POINT_GROUP = "firecy.datafits"

_REGISTRY = {"quadratic": Quadratic, "logistic": Logistic}
_entry_points_loaded = False


def register_datafit(name, factory, *, overwrite=False):
    """Register a datafit factory under ``name``.

    The factory is checked here (a compiled :class:`Datafit` subclass must
    be compiled against this firecy; a Python class must implement the
    protocol of :class:`PythonDatafit`); the datafit it returns is checked
    when it is built.

    Parameters
    ----------
    name : str
        The name users pass, e.g. ``solve(..., datafit=name)``.
    factory : callable
        Called without arguments; returns a :class:`Datafit` or an object
        :func:`as_datafit` accepts.
    overwrite : bool, default=False
        Replace an existing registration instead of raising.

    Examples
    --------
    >>> from firecy.datafits import Quadratic, register_datafit, available_datafits
    >>> register_datafit("squared", Quadratic, overwrite=True)
    >>> "squared" in available_datafits()
    True
    """
    if not isinstance(name, str) or not name:
        raise TypeError("a datafit name must be a non-empty string")
    if not callable(factory):
        raise TypeError(f"the factory registered as {name!r} must be callable")
    if isinstance(factory, type):
        if issubclass(factory, Datafit):
            check_compiled_subclass(factory, Datafit, "datafit")
        else:
            check_datafit_protocol(factory, bound=False)
    if name in _REGISTRY and not overwrite and _REGISTRY[name] is not factory:
        raise ValueError(f"a datafit named {name!r} is already registered")
    _REGISTRY[name] = factory


def _load_entry_points():
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _REGISTRY:
            _REGISTRY[ep.name] = ep.load()


def available_datafits():
    """Sorted names of every registered datafit (entry points included).

    Examples
    --------
    >>> from firecy.datafits import available_datafits
    >>> [name for name in available_datafits() if name in ("logistic", "quadratic")]
    ['logistic', 'quadratic']
    """
    _load_entry_points()
    return sorted(_REGISTRY)


def as_datafit(datafit):
    """Return ``datafit`` as a :class:`Datafit` the engine can call.

    Parameters
    ----------
    datafit : None, str, Datafit or object
        None: the squared loss. A name: a registered datafit ("quadratic",
        "logistic", ...). A :class:`Datafit` passes through. Any other object
        implementing the Python datafit protocol (see :class:`PythonDatafit`)
        is wrapped.

    Returns
    -------
    Datafit

    Examples
    --------
    >>> from firecy.datafits import as_datafit
    >>> as_datafit("logistic")
    Logistic()
    """
    if datafit is None:
        return Quadratic()
    if isinstance(datafit, str):
        _load_entry_points()
        try:
            factory = _REGISTRY[datafit]
        except KeyError:
            raise ValueError(
                f"unknown datafit {datafit!r}; available: {', '.join(available_datafits())}"
            ) from None
        return as_datafit(factory())
    if isinstance(datafit, Datafit):
        check_compiled_subclass(type(datafit), Datafit, "datafit")
        return datafit
    if isinstance(datafit, type):
        raise TypeError(f"pass a datafit instance, not the class {datafit.__name__}")
    return PythonDatafit(datafit)
