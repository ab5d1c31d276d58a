"""Datafits: the loss side of the objective (docs/datafits.rst).

``Datafit`` is the contract the solver talks to (the public Cython header
``firecy/datafits/base.pxd``; declared in ``_abi2``, the module named after
its ABI version);
firecy ships the weighted squared loss (``Quadratic``) and the logistic loss
(``Logistic``); ``PythonDatafit`` wraps a datafit written in Python.
"""
from firecy.datafits._logistic import Logistic
from firecy.datafits._multinomial import Multinomial
from firecy.datafits._python import PythonDatafit
from firecy.datafits._quadratic import Quadratic
from firecy.datafits._abi2 import ABI_VERSION, Datafit
from firecy.datafits._registry import (
    as_datafit,
    available_datafits,
    register_datafit,
)

# shared with firecy's other packages (not public API: see __all__)
from firecy.datafits._cox_loss import CoxLoss, check_survival_target, cox_deviance  # noqa: F401
from firecy.datafits._poisson_loss import (  # noqa: F401
    PoissonLoss,
    check_counts,
    log_exposure,
    poisson_deviance,
)

__all__ = [
    "Datafit",
    "Quadratic",
    "Logistic",
    "Multinomial",
    "PythonDatafit",
    "as_datafit",
    "available_datafits",
    "register_datafit",
    "ABI_VERSION",
]
