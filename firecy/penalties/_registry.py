"""Penalties by name: registration, entry-point discovery, and wrapping."""
from importlib.metadata import entry_points

from firecy._protocol import check_compiled_subclass
from firecy.penalties._abi1 import Penalty
from firecy.penalties._python import PythonPenalty, check_penalty_protocol

ENTRY_POINT_GROUP = "firecy.penalties"

_REGISTRY = {}
_PENDING = {}   # entry points found, not loaded yet
_entry_points_loaded = False


def _check_factory(name, factory):
    """Check what can be checked before the factory is called: a compiled
    Penalty class must be compiled against this firecy, a Python penalty
    class must implement the protocol."""
    if not callable(factory):
        raise TypeError(f"the factory registered as {name!r} must be callable")
    if isinstance(factory, type):
        if issubclass(factory, Penalty):
            check_compiled_subclass(factory, Penalty, "penalty")
        else:
            check_penalty_protocol(factory, bound=False)


def register_penalty(name, factory, *, overwrite=False):
    """Register a penalty factory under ``name``.

    The factory is checked here (a compiled :class:`Penalty` subclass must
    be compiled against this firecy; a Python class must implement the
    protocol of :class:`PythonPenalty`); the penalty it returns is checked
    when it is built.

    Parameters
    ----------
    name : str
        The name users pass, e.g. ``FIRERegressor(penalty=name)``.
    factory : callable
        Called with keyword parameters (``lam`` and penalty-specific ones);
        returns a :class:`Penalty` or an object :func:`as_penalty` accepts.
        A penalty that needs per-rule data gets it from its
        ``bind_ensemble`` method (see :class:`Penalty`).
    overwrite : bool, default=False
        Replace an existing registration instead of raising.

    Examples
    --------
    >>> from firecy.penalties import L1, make_penalty, register_penalty
    >>> register_penalty("lasso", L1, overwrite=True)
    >>> make_penalty("lasso", lam=0.5)
    L1(lam=0.5)
    """
    if not isinstance(name, str) or not name:
        raise TypeError("a penalty name must be a non-empty string")
    _check_factory(name, factory)
    if name in _REGISTRY and not overwrite and _REGISTRY[name] is not factory:
        raise ValueError(f"a penalty named {name!r} is already registered")
    _REGISTRY[name] = factory


def _load_entry_points():
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _REGISTRY:
            _PENDING.setdefault(ep.name, ep)


def _factory(name):
    """The factory registered as ``name``; an entry point is loaded (and its
    factory checked) on first use, so that a broken plug-in only fails when
    it is asked for."""
    if name in _PENDING and name not in _REGISTRY:
        ep = _PENDING[name]
        try:
            loaded = ep.load()
        except ImportError as exc:
            raise ImportError(
                f"the penalty {name!r} (entry point {getattr(ep, 'value', ep)!r} of the "
                f"group {ENTRY_POINT_GROUP!r}) cannot be imported: {exc}") from exc
        _check_factory(name, loaded)
        _REGISTRY[name] = loaded
        del _PENDING[name]
    return _REGISTRY[name]


def available_penalties():
    """Sorted names of every registered penalty (entry points included).

    Returns
    -------
    list of str

    Examples
    --------
    >>> from firecy.penalties import available_penalties
    >>> [name for name in available_penalties() if name in ("l1", "mcp")]
    ['l1', 'mcp']
    """
    _load_entry_points()
    return sorted(set(_REGISTRY) | set(_PENDING))


def make_penalty(name, **params):
    """Build the penalty registered under ``name`` with ``params``.

    Entry points are looked at only for a name not registered in this
    process (the built-in ``"l1"`` and ``"mcp"`` never load a plug-in).

    Parameters
    ----------
    name : str
    **params
        Passed to the factory.

    Returns
    -------
    Penalty

    Examples
    --------
    >>> from firecy.penalties import make_penalty
    >>> make_penalty("mcp", lam=0.1, gamma=3.0)
    MCP(lam=0.1, gamma=3.0)
    """
    if name not in _REGISTRY:
        _load_entry_points()
    if name not in _REGISTRY and name not in _PENDING:
        raise ValueError(
            f"unknown penalty {name!r}; available: {', '.join(available_penalties())}")
    return as_penalty(_factory(name)(**params))


def as_penalty(penalty):
    """Return ``penalty`` as a :class:`Penalty` the engine can call.

    A compiled :class:`Penalty` passes through (checked: compiled, against
    this firecy); any other object implementing the Python penalty protocol
    (see :class:`PythonPenalty`) is checked and wrapped.

    Parameters
    ----------
    penalty : Penalty or object

    Returns
    -------
    Penalty

    Examples
    --------
    >>> from firecy.penalties import L1, as_penalty
    >>> as_penalty(L1(0.1))
    L1(lam=0.1)
    """
    if isinstance(penalty, Penalty):
        check_compiled_subclass(type(penalty), Penalty, "penalty")
        return penalty
    if isinstance(penalty, type):
        raise TypeError(f"pass a penalty instance, not the class {penalty.__name__}")
    return PythonPenalty(penalty)


def bind_ensemble(penalty, ensemble):
    """``penalty`` for the rules of ``ensemble`` (its ``bind_ensemble`` hook).

    Parameters
    ----------
    penalty : Penalty or object
    ensemble : RuleEnsemble

    Returns
    -------
    Penalty

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from firecy.ensembles import rule_ensemble_from_model
    >>> from firecy.penalties import LengthWeightedL1, bind_ensemble
    >>> X, y = make_regression(50, 3, random_state=0)
    >>> rf = RandomForestRegressor(2, max_depth=2, random_state=0).fit(X, y)
    >>> bind_ensemble(LengthWeightedL1(0.1, base=2.0), rule_ensemble_from_model(rf)).weights
    array([4., 4., 4., 4., 4., 4., 4., 4.])
    """
    return as_penalty(penalty).bind_ensemble(ensemble)
