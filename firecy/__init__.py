"""firecy: fast interpretable rule extraction from tree ensembles."""
from firecy._version import __version__

from firecy._abi import get_include, install_finder as _install_abi_finder

# before any compiled plug-in can import firecy's ABI modules (firecy/_abi.py)
_install_abi_finder()


def _source_tree_error(missing):
    """The ImportError for a compiled module that is missing because this
    firecy is the source tree (a clone, not built), or None."""
    if not (missing or "").startswith("firecy."):
        return None
    from pathlib import Path

    package = Path(__file__).resolve().parent
    source = package.joinpath(*missing.split(".")[1:]).with_suffix(".pyx")
    if not (source.exists() and (package.parent / "setup.py").exists()):
        return None
    return ImportError(
        f"firecy is being imported from its source tree ({package.parent}), whose "
        f"compiled modules are not built ({missing} is missing): run Python from "
        f"another directory to use the installed firecy, or build the tree in place "
        f"with `python setup.py build_ext --inplace`")


try:
    from firecy.datafits import register_datafit
    from firecy.estimators import (
        FIREClassifier, FIREPoissonRegressor, FIRERegressor, FIRESurvivalRegressor)
    from firecy.penalties import register_penalty
    from firecy import risk  # noqa: E402  (firecy.risk.risk_card & co.)
except ModuleNotFoundError as error:
    source_tree = _source_tree_error(error.name)
    if source_tree is None:
        raise
    raise source_tree from None

__all__ = ["FIREClassifier", "FIREPoissonRegressor", "FIRERegressor",
           "FIRESurvivalRegressor", "get_include", "register_datafit", "register_penalty"]
