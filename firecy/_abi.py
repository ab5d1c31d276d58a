"""The ABI guard for compiled plug-ins, and where firecy's Cython headers are.

A compiled penalty or datafit subclasses a base class declared in a public
header (``firecy/penalties/base.pxd``, ``firecy/datafits/base.pxd``). Cython
compiles the base class's layout and method table into the plug-in, and at
import the plug-in copies firecy's method table into its own, with the size
it was compiled with; it never checks the table's shape. Two guards:

* The name. The headers' declarations live in modules whose names carry the
  ABI version (``firecy.penalties._abi2``, ``firecy.datafits._abi2``): a
  plug-in imports the base type from the module named in the header it was
  built against. Built against another version, it looks for a module that
  does not exist in this firecy, and :class:`ABIFinder` turns that lookup
  into an ImportError that says what to rebuild.
* The layout. A plug-in built against an edited header that kept the name
  (a field added to ``Block``, a method inserted, the version constant
  changed) passes the name check. So each header measures its compiled
  layout (the end of ``_abi2.pxd``: version, number of methods, struct
  sizes) and base.pxd declares three *layout probes*, types imported from
  this module by every module that cimports the header. Cython checks the
  size of an imported type against the size the module was compiled with;
  each probe's compiled size is a layout measure, and firecy's probe types
  (made here, :func:`__getattr__`) have firecy's measure. The first two
  probes have a tolerance window (``tp_itemsize``) on one side each, so that
  a mismatch is a Cython *warning* (never an error) on the other side, which
  carries the module's measure: :class:`_LayoutRecorder`, put first in the
  warnings filters while the module imports its probes, records it and the
  third probe's lookup raises the ImportError that says what differs and
  what to rebuild. The third probe is exact (``check_size error``): if the
  warning could not be recorded (the filters were replaced mid-import, a
  Python without them), Cython itself refuses the module with its "size
  changed" ValueError. Either way it is refused before any of its code is
  called: only its method table has been copied (from a padded buffer, see
  the ``_abi2`` modules), nothing run.

docs/writing_penalties.rst states what is stable and what each guard sees.
"""
import re
import sys
import threading
import warnings
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from firecy._version import __version__

__all__ = ["PENALTY_ABI_VERSION", "DATAFIT_ABI_VERSION", "get_include", "ABIFinder"]

# the versions of firecy/penalties/_abiN.pxd and firecy/datafits/_abiN.pxd
PENALTY_ABI_VERSION = 2
DATAFIT_ABI_VERSION = 2

_CURRENT = {"penalties": PENALTY_ABI_VERSION, "datafits": DATAFIT_ABI_VERSION}
_VERSIONED = re.compile(r"^firecy\.(penalties|datafits)\._abi(\d+)$")
# where the base classes lived before the ABI was versioned
_UNVERSIONED = {"firecy.penalties._base": "penalties", "firecy.datafits.base": "datafits"}
# header-only names: cimport them, never import them
_HEADERS = {"firecy.penalties.base": "penalties", "firecy.datafits.base": "datafits"}
_KIND_WORD = {"penalties": "penalty", "datafits": "datafit"}


def get_include():
    """The directory to put on Cython's include path to cimport firecy's headers.

    A package that compiles a penalty or a datafit against firecy passes it
    to ``cythonize(..., include_path=[firecy.get_include()])``, like
    ``numpy.get_include()`` for NumPy's headers.

    Returns
    -------
    str
        The directory that holds the ``firecy`` package (with its ``.pxd``
        files).

    Examples
    --------
    >>> import os, firecy
    >>> os.path.exists(os.path.join(firecy.get_include(), "firecy", "penalties", "base.pxd"))
    True
    """
    return str(Path(__file__).resolve().parent.parent)


def _is_firecy(name):
    return name == "firecy" or name.startswith("firecy.")


def _importer(skip_firecy=True):
    """The module being imported that asked for a name: the nearest import
    frame's spec (with ``skip_firecy``, the nearest that is not firecy's own
    module; best effort)."""
    frame = sys._getframe(2)
    while frame is not None:
        spec = frame.f_locals.get("spec")
        name = getattr(spec, "name", None)
        if isinstance(name, str) and not (skip_firecy and _is_firecy(name)):
            return name, getattr(spec, "origin", None)
        frame = frame.f_back
    return None, None


def _distribution(module_name):
    """The installed distribution that provides ``module_name``, if known."""
    if not module_name:
        return None
    try:
        from importlib.metadata import packages_distributions
        dists = packages_distributions().get(module_name.split(".")[0])
    except Exception:  # metadata is a nicety here, never a new failure
        return None
    return dists[0] if dists else None


def abi_error_message(name):
    """The message for an import of the missing module ``name``, or None if
    ``name`` is not one of firecy's ABI module names."""

    match = _VERSIONED.match(name)
    if match is None and name not in _UNVERSIONED and name not in _HEADERS:
        return None
    module, origin = _importer()
    compiled = bool(origin) and origin.endswith(tuple(EXTENSION_SUFFIXES))
    kind = match.group(1) if match else _UNVERSIONED.get(name) or _HEADERS[name]
    kind_word = _KIND_WORD[kind]
    if match:
        if int(match.group(2)) == _CURRENT[kind]:
            return None   # this firecy's own module is missing: a broken install
        built = f"{kind_word} ABI {int(match.group(2))}"
    elif compiled and name in _UNVERSIONED:
        built = f"unversioned {kind_word} header (firecy before {kind_word} ABI 1)"
    else:
        return (f"{name} is not a Python module: the {kind_word} contract's Cython "
                f"header is firecy/{kind}/base.pxd (cimport firecy.{kind}.base, with "
                f"include_path=[firecy.get_include()]); from Python, import its classes "
                f"from firecy.{kind}")
    what, who = _describe(module, origin)
    return (f"{what} was compiled against firecy's {built}; this firecy "
            f"{__version__} has {kind_word} ABI {_CURRENT[kind]}. "
            f"Rebuild {who} against firecy {__version__} "
            f"(pip install --no-build-isolation --force-reinstall --no-deps <its source>).")


def _describe(module, origin):
    """How a message names the compiled module: (what, who to rebuild)."""
    dist = _distribution(module)
    if dist:
        return f"package {dist} (module {module})", dist
    if module:
        return f"module {module}" + (f" ({origin})" if origin else ""), module
    return "the compiled module being imported", "it"


class ABIFinder(MetaPathFinder):
    """Turns an import of a missing ABI module of firecy into a clear ImportError.

    Installed at the end of ``sys.meta_path`` by ``import firecy``: it is
    asked only about names no other finder found, and answers only for
    firecy's ABI module names (``firecy.penalties._abiN`` and
    ``firecy.datafits._abiN`` of another version N, the unversioned names of
    earlier firecy versions, and the header-only names).
    """

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(("firecy.penalties.", "firecy.datafits.")):
            return None
        message = abi_error_message(fullname)
        if message is None:
            return None
        raise ImportError(message, name=fullname)


def install_finder():
    """Put one :class:`ABIFinder` at the end of ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, ABIFinder) for f in sys.meta_path):
        sys.meta_path.append(ABIFinder())


# -- the layout probes (see the module docstring) ------------------------------

# Cython's size check and the probes' ranges: the compiled size of a probe
# is sizeof(PyObject) + measure, with measures below _PROBE_RANGE (the
# FIRECY_ABI_PROBE_RANGE of the headers)
_PROBE_RANGE = 1 << 30
_PROBES = {
    "_PenaltyLayoutUp": ("penalties", "up"),
    "_PenaltyLayoutDown": ("penalties", "down"),
    "_PenaltyLayout": ("penalties", "exact"),
    "_DatafitLayoutUp": ("datafits", "up"),
    "_DatafitLayoutDown": ("datafits", "down"),
    "_DatafitLayout": ("datafits", "exact"),
}
# the digits of FIRECY_PENALTY_LAYOUT / FIRECY_DATAFIT_LAYOUT, lowest first:
# (measure, radix, what it is)
_DIGITS = {
    "penalties": [("version", 64, "the penalty ABI version constant"),
                  ("methods", 64, "the number of Penalty methods"),
                  ("Block", 256, "the size of Block"),
                  ("Penalty", 256, "the size of the Penalty object")],
    "datafits": [("version", 16, "the datafit ABI version constant"),
                 ("methods", 64, "the number of Datafit methods"),
                 ("DatafitState", 256, "the size of DatafitState"),
                 ("Column", 64, "the size of Column"),
                 ("Datafit", 64, "the size of the Datafit object")],
}
# a Cython type-import warning about one of the two windowed probes
_PROBE_WARNING = re.compile(
    r"firecy\._abi\.(_(?:Penalty|Datafit)Layout(?:Up|Down)) size changed, may indicate "
    r"binary incompatibility\. Expected (\d+) from C header, got (\d+) from PyObject")
_probe_types = {}


def _contract(kind):
    """This firecy's contract module of ``kind`` (firecy.penalties._abiN)."""
    from importlib import import_module

    return import_module(f"firecy.{kind}._abi{_CURRENT[kind]}")


def _probe_type(name):
    """firecy's probe type ``name``: its size is firecy's own measure."""
    probe = _probe_types.get(name)
    if probe is None:
        from firecy._layout import sized_type

        kind, role = _PROBES[name]
        head = object.__basicsize__   # sizeof(PyObject), as in the headers
        contract = _contract(kind)
        if role == "up":     # a smaller measure warns, a larger one passes
            probe = sized_type(f"firecy._abi.{name}", head + contract.LAYOUT, _PROBE_RANGE)
        elif role == "down":  # the mirror image: a larger measure warns
            probe = sized_type(f"firecy._abi.{name}",
                               head + _PROBE_RANGE - contract.LAYOUT, _PROBE_RANGE)
        else:                # exact: anything else is Cython's ValueError
            probe = sized_type(f"firecy._abi.{name}", head + contract.LAYOUT_HASH)
        _probe_types[name] = probe
    return probe


class _LayoutRecorder:
    """The message pattern of a warnings filter that records the windowed
    probes' size warnings (and only those) instead of showing them.

    ``warnings`` calls ``match(text)`` on a filter's message pattern; this
    one is first in ``warnings.filters`` (action ``"ignore"``) only while a
    module imports its probes, so neither a user's filters nor ``-W error``
    sees the warning, and a module whose layout matches never warns at all.
    Measures are kept per thread (two threads may import at once).
    """

    def __init__(self):
        self._local = threading.local()
        self._users = 0
        self.entry = ("ignore", self, RuntimeWarning, None, 0)

    def match(self, text):
        found = _PROBE_WARNING.match(text)
        if found is None:
            return False
        name, compiled = found.group(1), int(found.group(2))
        measure = compiled - object.__basicsize__
        if _PROBES[name][1] == "down":
            measure = _PROBE_RANGE - measure
        self.seen.setdefault(_PROBES[name][0], measure)
        return True

    @property
    def seen(self):
        if not hasattr(self._local, "seen"):
            self._local.seen = {}
        return self._local.seen

    def start(self, kind):
        """Before a module's first probe of ``kind``: filter first."""
        self.seen.pop(kind, None)
        self._users += 1
        _set_first_filter(self.entry)

    def finish(self, kind):
        """Before its last probe: the measure recorded for ``kind``, if any."""
        self._users = max(0, self._users - 1)
        if self._users == 0:
            _remove_filter(self.entry)
        return self.seen.pop(kind, None)


def _set_first_filter(entry):
    filters = warnings.filters
    if not (filters and filters[0] is entry):
        _remove_filter(entry)
        filters.insert(0, entry)
        _filters_mutated()


def _remove_filter(entry):
    filters = warnings.filters
    while any(f is entry for f in filters):
        filters.remove(entry)
        _filters_mutated()


def _filters_mutated():
    # the warnings registries cache decisions per filters version
    mutated = getattr(warnings, "_filters_mutated", None) or getattr(
        warnings, "_filters_mutated_lock_held", None)
    if mutated is not None:
        try:
            mutated()
        except Exception:   # a cache hint, never a new failure
            pass


_recorder = _LayoutRecorder()


def layout_error_message(kind, measure, module=None, origin=None):
    """The message for a module compiled against a ``kind`` header whose
    layout measure ``measure`` differs from this firecy's.

    Parameters
    ----------
    kind : {"penalties", "datafits"}
    measure : int
        The module's FIRECY_PENALTY_LAYOUT / FIRECY_DATAFIT_LAYOUT.
    module, origin : str, optional
        The module's name and file.

    Returns
    -------
    str
    """

    ours = _contract(kind).LAYOUT_MEASURES
    differs = []
    for key, radix, label in _DIGITS[kind]:
        theirs, measure = measure % radix, measure // radix
        if theirs != ours[key] % radix:
            # a digit is the measure modulo its radix (exact for any
            # plausible header: a Block of 256 bytes would read 0)
            differs.append(f"{label}: {theirs} in its header, {ours[key]} here")
    what, who = _describe(module, origin)
    kind_word = _KIND_WORD[kind]
    return (f"{what} was compiled against a firecy {kind_word} header whose layout differs "
            f"from this firecy {__version__}'s ({'; '.join(differs) or 'layout'}); "
            f"rebuild {who} against firecy {__version__} "
            f"(pip install --no-build-isolation --force-reinstall --no-deps <its source>).")


def __getattr__(name):
    """The layout probes, made on demand: each lookup is a step of a module's
    import (see the module docstring)."""
    if name not in _PROBES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    kind, role = _PROBES[name]
    if role == "up":
        _recorder.start(kind)
    elif role == "exact":
        measure = _recorder.finish(kind)
        if measure is not None:
            module, origin = _importer(skip_firecy=False)
            raise ImportError(layout_error_message(kind, measure, module, origin),
                              name=module, path=origin)
    return _probe_type(name)
