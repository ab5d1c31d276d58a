"""Datafits: the loss side of the objective (docs/datafits.rst).

``Datafit`` is the contract the solver talks to (``firecy/datafits/base.pxd``);
firecy ships the weighted squared loss (``Quadratic``) and the logistic loss
(``Logistic``); ``PythonDatafit`` wraps a datafit written in Python.
"""
from firecy.datafits._logistic import Logistic
from firecy.datafits._python import PythonDatafit
from firecy.datafits._quadratic import Quadratic
from firecy.datafits._registry import (
    API_VERSION,
    as_datafit,
    available_datafits,
    register_datafit,
)
from firecy.datafits.base import Datafit

__all__ = [
    "Datafit",
    "Quadratic",
    "Logistic",
    "PythonDatafit",
    "as_datafit",
    "available_datafits",
    "register_datafit",
    "API_VERSION",
]
