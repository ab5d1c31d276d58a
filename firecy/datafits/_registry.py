"""Datafits by name (registration, entry-point discovery) and wrapping."""
from firecy._protocol import check_compiled_subclass
from firecy._registry import Registry
from firecy.datafits._abi2 import Datafit
from firecy.datafits._logistic import Logistic
from firecy.datafits._python import PythonDatafit, check_datafit_protocol
from firecy.datafits._quadratic import Quadratic


def _check_factory(name, factory):
    """A compiled Datafit class must be compiled against this firecy, a
    Python datafit class must implement the protocol."""
    if isinstance(factory, type):
        if issubclass(factory, Datafit):
            check_compiled_subclass(factory, Datafit, "datafit")
        else:
            check_datafit_protocol(factory, bound=False)


DATAFITS = Registry("datafit", "firecy.datafits", _check_factory)
DATAFITS.register("quadratic", Quadratic)
DATAFITS.register("logistic", Logistic)


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
    DATAFITS.register(name, factory, overwrite=overwrite)


def available_datafits():
    """Sorted names of every registered datafit (entry points included).

    Examples
    --------
    >>> from firecy.datafits import available_datafits
    >>> [name for name in available_datafits() if name in ("logistic", "quadratic")]
    ['logistic', 'quadratic']
    """
    return DATAFITS.names()


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
        return as_datafit(DATAFITS.factory(datafit)())
    if isinstance(datafit, Datafit):
        check_compiled_subclass(type(datafit), Datafit, "datafit")
        return datafit
    if isinstance(datafit, type):
        raise TypeError(f"pass a datafit instance, not the class {datafit.__name__}")
    return PythonDatafit(datafit)
