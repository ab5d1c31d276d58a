"""What the estimators need to know about the data and the ensemble model they get.

DataFrame columns (numeric, categorical), whether a model is fitted or a
classifier, the model inside a ``FrozenEstimator``, and the features it was
fitted with.  Works on scikit-learn estimators and on XGBoost / LightGBM
Boosters alike.
"""
import numpy as np
from sklearn.base import is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

__all__ = ["is_dataframe", "inspect_columns", "is_fitted_model", "is_classifier_model",
           "unwrap", "model_feature_names", "model_n_features"]


def is_dataframe(X):
    """Whether ``X`` looks like a pandas DataFrame."""
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def inspect_columns(X):
    """Split a DataFrame's columns into (non-numeric, categorical) names."""
    import pandas as pd

    bad, categorical = [], []
    for name in X.columns:
        dtype = X[name].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            categorical.append(name)
        elif pd.api.types.is_bool_dtype(dtype) or (
            pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
        ):
            continue
        elif dtype == object:
            try:
                np.asarray(X[name], dtype=np.float64)
            except (TypeError, ValueError):
                bad.append(name)
        else:
            bad.append(name)
    return bad, categorical


def is_fitted_model(model):
    """A model without ``fit`` (a Booster) counts as fitted."""
    if not callable(getattr(model, "fit", None)):
        return True
    try:
        check_is_fitted(model)
    except NotFittedError:
        return False
    except TypeError:
        # not an sklearn estimator: trust common fitted markers
        return any(hasattr(model, a) for a in ("n_features_in_", "booster_", "_Booster"))
    return True


def is_classifier_model(model):
    """``sklearn.base.is_classifier`` that is False for non-estimators (Boosters)."""
    try:
        return bool(is_classifier(model))
    except Exception:
        return False


def unwrap(model):
    """The model the adapters read (``FrozenEstimator`` is unwrapped)."""
    try:
        from sklearn.frozen import FrozenEstimator
    except ImportError:  # pragma: no cover - sklearn < 1.6
        return model
    while isinstance(model, FrozenEstimator):
        model = model.estimator
    return model


def model_feature_names(model):
    """Feature names the model was fitted with, or None.

    LightGBM's automatic names (``Column_0``, ...) mean "fitted on an array".
    """
    try:
        names = getattr(model, "feature_names_in_", None)
    except Exception:  # LightGBM raises when unfitted
        names = None
    if names is None:
        return None
    names = [str(n) for n in names]
    if names == [f"Column_{i}" for i in range(len(names))]:
        return None
    return names


def model_n_features(model):
    """Number of features the model was fitted with, or None when it does not say."""
    n = getattr(model, "n_features_in_", None)
    if n is not None:
        return int(n)
    for meth in ("num_features", "num_feature"):  # xgboost / lightgbm Booster
        f = getattr(model, meth, None)
        if callable(f):
            try:
                return int(f())
            except Exception:
                return None
    return None
