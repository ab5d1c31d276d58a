"""firecy: fast interpretable rule extraction from tree ensembles."""
__version__ = "0.1.0"
from firecy.estimators import FIRERegressor
