"""Pick the adapter for a fitted model.

XGBoost, LightGBM and CatBoost are optional: they are only imported when the
model comes from them (then they are already imported by whoever built it).
"""
from __future__ import annotations

import sys

from firecy.ensembles._sklearn import sklearn_adapter

SUPPORTED = (
    "scikit-learn RandomForest/ExtraTrees (regressor, classifier), "
    "GradientBoosting, HistGradientBoosting and DecisionTree models; "
    "XGBoost XGBModel or Booster (gbtree, dart); "
    "LightGBM LGBMModel or Booster; "
    "CatBoost CatBoostRegressor, CatBoostClassifier or CatBoost (symmetric trees)"
)


def _module_root(obj) -> str:
    return type(obj).__module__.split(".")[0]


def make_adapter(model, X=None):
    """The adapter of ``model`` (see :func:`firecy.ensembles.rule_ensemble_from_model`).

    ``X`` (the training frame) is only read by XGBoost, for labels its model
    does not store exactly, and by CatBoost, whose model stores only hashes of
    the labels of its one-hot splits.
    """
    adapter = sklearn_adapter(model)
    if adapter is not None:
        return adapter
    xgb = sys.modules.get("xgboost")
    if xgb is not None and isinstance(model, (xgb.XGBModel, xgb.Booster)):
        from firecy.ensembles._xgboost import XGBoostAdapter

        return XGBoostAdapter(model, X=X)
    lgb = sys.modules.get("lightgbm")
    if lgb is not None and isinstance(model, (lgb.LGBMModel, lgb.Booster)):
        from firecy.ensembles._lightgbm import LightGBMAdapter

        return LightGBMAdapter(model)
    cb = sys.modules.get("catboost")
    if cb is not None and isinstance(model, cb.CatBoost):
        from firecy.ensembles._catboost import CatBoostAdapter

        return CatBoostAdapter(model, X=X)
    cls = type(model)
    raise TypeError(
        f"firecy cannot extract rules from a {cls.__module__}.{cls.__qualname__}; "
        f"supported models: {SUPPORTED}" + _wrapped_hint(model)
    )


def _wrapped_hint(model) -> str:
    """What to pass instead of a meta-estimator that holds a tree model."""
    if hasattr(model, "best_estimator_"):   # a fitted search
        return ("; a fitted search: pass its best_estimator_ (fitted on all the "
                "data when refit=True)")
    if hasattr(model, "steps"):             # a Pipeline
        return ("; a Pipeline: pass its last step, and X transformed by the steps "
                "before it (pipeline[:-1].transform(X)), which is what the trees read")
    if hasattr(model, "regressor_") or hasattr(model, "calibrated_classifiers_"):
        return ("; a model that transforms the target or the probabilities: its "
                "trees' rules do not predict what it predicts; pass the inner model "
                "fitted on its own")
    return ""


def names_seen_by(model, names) -> list:
    """The feature names ``model``'s library gives DataFrame columns ``names``.

    LightGBM renames columns (spaces become ``_``; see
    ``_lightgbm.lightgbm_feature_name``); the others keep them as strings.
    """
    lgb = sys.modules.get("lightgbm")
    if lgb is not None and isinstance(model, (lgb.LGBMModel, lgb.Booster)):
        from firecy.ensembles._lightgbm import lightgbm_feature_name

        return [lightgbm_feature_name(n) for n in names]
    return [str(n) for n in names]
