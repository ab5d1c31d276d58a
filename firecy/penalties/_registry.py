"""Penalties by name: registration, entry-point discovery, and wrapping."""
from importlib.metadata import entry_points

from firecy.penalties._base import Penalty, PythonPenalty

ENTRY_POINT_GROUP = "firecy.penalties"

_REGISTRY = {}
_entry_points_loaded = False


def register_penalty(name, factory, *, overwrite=False):
    """Register a penalty factory under ``name``.

    Parameters
    ----------
    name : str
        The name users pass, e.g. ``FIRERegressor(penalty=name)``.
    factory : callable
        Called with keyword parameters (``lam`` and penalty-specific ones);
        returns a :class:`Penalty` or an object :func:`as_penalty` accepts.
    overwrite : bool, default=False
        Replace an existing registration instead of raising.
    """
    if not isinstance(name, str) or not name:
        raise TypeError("a penalty name must be a non-empty string")
    if not callable(factory):
        raise TypeError(f"the factory registered as {name!r} must be callable")
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
            _REGISTRY[ep.name] = ep.load()


def available_penalties():
    """Sorted names of every registered penalty (entry points included)."""
    _load_entry_points()
    return sorted(_REGISTRY)


def make_penalty(name, **params):
    """Build the penalty registered under ``name`` with ``params``.

    Entry points are looked at only for a name not registered in this
    process (the built-in ``"l1"`` and ``"mcp"`` never load a plug-in).
    """
    if name not in _REGISTRY:
        _load_entry_points()
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown penalty {name!r}; available: {', '.join(available_penalties())}"
        ) from None
    return as_penalty(factory(**params))


def as_penalty(penalty):
    """Return ``penalty`` as a :class:`Penalty` the engine can call.

    A :class:`Penalty` passes through; any other object implementing the
    Python penalty protocol (see :class:`PythonPenalty`) is wrapped.
    """
    if isinstance(penalty, Penalty):
        return penalty
    return PythonPenalty(penalty)
