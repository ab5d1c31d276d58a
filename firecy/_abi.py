"""The ABI guard for compiled plug-ins, and where firecy's Cython headers are.

A compiled penalty or datafit subclasses a base class declared in a public
header (``firecy/penalties/base.pxd``, ``firecy/datafits/base.pxd``). Cython
compiles the base class's layout and method table into the plug-in, and at
import the plug-in copies firecy's method table into its own, with the size
it was compiled with; it never checks the table's shape. So the headers'
declarations live in modules whose names carry the ABI version
(``firecy.penalties._abi1``, ``firecy.datafits._abi1``): a plug-in imports
the base type from the module named in the header it was built against,
before it copies anything. Built against another version, it looks for a
module that does not exist in this firecy, and :class:`ABIFinder` turns that
lookup into an ImportError that says what to rebuild. docs/writing_penalties.rst
states what is stable.
"""
import re
import sys
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

__all__ = ["PENALTY_ABI_VERSION", "DATAFIT_ABI_VERSION", "get_include", "ABIFinder"]

# the versions of firecy/penalties/_abiN.pxd and firecy/datafits/_abiN.pxd
PENALTY_ABI_VERSION = 1
DATAFIT_ABI_VERSION = 1

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


def _importer():
    """The module being imported that asked for the missing name: the
    nearest import frame whose spec is not firecy's own (best effort)."""
    frame = sys._getframe(2)
    while frame is not None:
        spec = frame.f_locals.get("spec")
        name = getattr(spec, "name", None)
        if isinstance(name, str) and not name.startswith("firecy"):
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
    import firecy

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
    dist = _distribution(module)
    if dist:
        what = f"package {dist} (module {module})"
    elif module:
        what = f"module {module}" + (f" ({origin})" if origin else "")
    else:
        what = "the compiled module being imported"
    return (f"{what} was compiled against firecy's {built}; this firecy "
            f"{firecy.__version__} has {kind_word} ABI {_CURRENT[kind]}. "
            f"Rebuild {dist or module or 'it'} against firecy {firecy.__version__} "
            f"(pip install --no-build-isolation --force-reinstall --no-deps <its source>).")


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
