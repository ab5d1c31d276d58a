"""scikit-learn estimators that extract rules from tree ensembles (FIRE).

:class:`FIRERegressor` is the estimator for regression,
:class:`FIREClassifier` for classification (binary and multi-class). What it shares with
every FIRE estimator (fitting the ensemble, extracting its rules, selection
along regularisation paths, the rules table) lives in
``_base.FIREEstimatorBase``; the selection in ``_selection``, the parameter
grid in ``_params``, the checks on the given model in ``_model_inspection``.
"""
from firecy.estimators._classifier import FIREClassifier
from firecy.estimators._counts import FIREPoissonRegressor
from firecy.estimators._regressor import FIRERegressor
from firecy.estimators._selection import FIREPath
from firecy.estimators._survival import FIRESurvivalRegressor

# shared with firecy's other packages (not public API: see __all__)
from firecy.estimators._rule_depth import check_rule_depth  # noqa: F401

__all__ = ["FIREClassifier", "FIRERegressor", "FIREPoissonRegressor",
           "FIRESurvivalRegressor", "FIREPath"]
