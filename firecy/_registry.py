"""Plug-ins by name: one registry type for penalties and datafits.

A :class:`Registry` maps names to factories. Factories come from
``register`` calls (firecy's built-ins, a user's code) and from the
entry points of one group (``firecy.penalties``, ``firecy.datafits``) that
installed packages declare. Entry points are listed on first use and each
is imported only when its name is asked for, so a broken plug-in fails
when someone uses it (with an ImportError that names it), never for
everyone else.
"""
from importlib import metadata

__all__ = ["Registry"]


class Registry:
    """Factories by name, with lazily loaded entry points.

    Parameters
    ----------
    kind : str
        What is registered ("penalty", "datafit"), for messages.
    group : str
        The entry-point group installed plug-ins declare.
    check_factory : callable
        ``check_factory(name, factory)`` raises TypeError for a factory
        that cannot serve (checked when registered or loaded).
    """

    def __init__(self, kind, group, check_factory):
        self.kind = kind
        self.group = group
        self.check_factory = check_factory
        self._factories = {}
        self._pending = {}   # entry points found, not imported yet
        self._listed = False

    def _entry_points(self):
        return metadata.entry_points(group=self.group)

    def _list_entry_points(self):
        if self._listed:
            return
        self._listed = True
        for ep in self._entry_points():
            if ep.name not in self._factories:
                self._pending.setdefault(ep.name, ep)

    def _check(self, name, factory):
        if not callable(factory):
            raise TypeError(f"the factory registered as {name!r} must be callable")
        self.check_factory(name, factory)

    def register(self, name, factory, overwrite=False):
        """Register ``factory`` under ``name`` (checked first)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a {self.kind} name must be a non-empty string")
        self._check(name, factory)
        known = self._factories.get(name)
        if known is not None and known is not factory and not overwrite:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._factories[name] = factory
        self._pending.pop(name, None)

    def names(self):
        """Sorted names, registered and declared by entry points."""
        self._list_entry_points()
        return sorted(set(self._factories) | set(self._pending))

    def factory(self, name):
        """The factory registered as ``name``; an entry point is imported
        (and its factory checked) on first use. Built-ins never look at
        entry points."""
        if name not in self._factories:
            self._list_entry_points()
            if name not in self._pending:
                raise ValueError(f"unknown {self.kind} {name!r}; available: "
                                 f"{', '.join(self.names())}")
            ep = self._pending[name]
            try:
                loaded = ep.load()
            except ImportError as exc:
                raise ImportError(
                    f"the {self.kind} {name!r} (entry point {getattr(ep, 'value', ep)!r} "
                    f"of the group {self.group!r}) cannot be imported: {exc}") from exc
            self._check(name, loaded)
            self._factories[name] = loaded
            del self._pending[name]
        return self._factories[name]
