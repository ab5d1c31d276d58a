"""Penalties by name: registration, entry-point discovery, and wrapping."""
from firecy._protocol import check_compiled_subclass
from firecy._registry import Registry
from firecy.penalties._abi2 import Penalty
from firecy.penalties._python import PythonPenalty, check_penalty_protocol


def _check_factory(name, factory):
    """A compiled Penalty class must be compiled against this firecy, a
    Python penalty class must implement the protocol."""
    if isinstance(factory, type):
        if issubclass(factory, Penalty):
            check_compiled_subclass(factory, Penalty, "penalty")
        else:
            check_penalty_protocol(factory, bound=False)


PENALTIES = Registry("penalty", "firecy.penalties", _check_factory)


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
    >>> register_penalty("doc-example-l1", L1, overwrite=True)
    >>> make_penalty("doc-example-l1", lam=0.5)
    L1(lam=0.5)
    """
    PENALTIES.register(name, factory, overwrite=overwrite)


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
    return PENALTIES.names()


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
    return as_penalty(PENALTIES.factory(name)(**params))


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
    :class:`LengthWeightedL1` reads the length of each rule, after merging
    redundant conditions (``x0 <= 2.5 and x0 <= 1.5`` is one condition; an
    interval is two):

    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy.ensembles import rule_ensemble_from_model
    >>> from firecy.penalties import LengthWeightedL1, bind_ensemble
    >>> from firecy.rules import format_conditions
    >>> X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), [0.0, 0.0, 1.0, 5.0]
    >>> ens = rule_ensemble_from_model(DecisionTreeRegressor(max_depth=2).fit(X, y))
    >>> [format_conditions(rule) for rule in ens.rules]
    ['x0 <= 1.5', '1.5 < x0 <= 2.5', 'x0 > 2.5']
    >>> bind_ensemble(LengthWeightedL1(0.1, base=2.0), ens).weights
    array([2., 4., 2.])
    """
    return as_penalty(penalty).bind_ensemble(ensemble)
