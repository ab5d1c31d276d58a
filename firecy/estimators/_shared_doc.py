"""The parameters the count and survival estimators share with
:class:`~firecy.FIRERegressor`, taken from its docstring so that they are
documented once."""
from firecy.estimators._regressor import FIRERegressor

__all__ = ["shared_parameters"]


def shared_parameters():
    """FIRERegressor's parameter entries after ``estimator``."""
    doc = FIRERegressor.__doc__
    start = doc.index("    penalty : ")
    end = doc.index("    Attributes\n")
    return doc[start:end].rstrip() + "\n"
