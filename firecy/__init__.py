"""firecy: fast interpretable rule extraction from tree ensembles."""
__version__ = "0.1.0"

from firecy._abi import get_include, install_finder as _install_abi_finder

# before any compiled plug-in can import firecy's ABI modules (firecy/_abi.py)
_install_abi_finder()

from firecy.datafits import register_datafit
from firecy.estimators import FIRERegressor
from firecy.penalties import register_penalty

__all__ = ["FIRERegressor", "get_include", "register_datafit", "register_penalty"]
