"""The data a FIRE estimator gets: validated once, in the form the model reads.

:func:`validate_fit_data` is the first step of a fit (``_fit.py``): it checks
``X``, ``y`` and the sample weights, sets ``n_features_in_`` /
``feature_names_in_`` on the estimator (scikit-learn's ``validate_data``),
and returns a :class:`FitData`.  :func:`validate_predict_data` is its twin
for ``predict``.  ``X`` may be a NumPy array, a pandas DataFrame (numeric and
category columns) or a SciPy sparse matrix: the ensemble reads each with its
library's own semantics (``docs/ensembles.rst``).
"""
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array, column_or_1d, get_tags
from sklearn.utils.validation import check_consistent_length, check_is_fitted, validate_data

from firecy._validation import check_not_library_matrix, check_sample_weight
from firecy.estimators._model_inspection import inspect_columns, is_dataframe, unwrap

__all__ = ["FitData", "validate_fit_data", "validate_predict_data", "model_input",
           "allows_nan"]

# what the ensembles read without densifying (scikit-learn's trees take both)
_SPARSE_FORMATS = ("csr", "csc")


@dataclass
class FitData:
    """The validated training data of one fit.

    Attributes
    ----------
    X : ndarray, sparse matrix or DataFrame
        The features as validated (a DataFrame only when it has category
        columns, which the model reads natively).
    y : ndarray
        The target as ``validate_data`` returns it (the task encodes it).
    sample_weight : ndarray of float64
        Ones when none were given.
    weighted : bool
        Whether the caller gave sample weights (passed on to the model's fit).
    native_categorical : bool
        ``X`` is a DataFrame with category columns, passed to the model as is.
    feature_names : list of str or None
        The DataFrame's column names: they name the rules' features.
    """

    X: object
    y: np.ndarray
    sample_weight: np.ndarray
    weighted: bool
    native_categorical: bool
    feature_names: list

    @property
    def n_samples(self):
        return self.X.shape[0]


def allows_nan(estimator):
    """Whether ``estimator`` (the model a FIRE estimator wraps) routes NaN.

    The default random forest (None) does, as do HistGradientBoosting,
    XGBoost and LightGBM; a model without scikit-learn tags is trusted to.
    """
    est = unwrap(estimator)
    if est is None:
        return True
    try:
        return bool(get_tags(est).input_tags.allow_nan)
    except Exception:
        return True


def _check_categorical_columns(X, estimator, default_model_name):
    """Whether ``X`` (a DataFrame) has category columns; a ValueError for
    columns no model can read (text), or for category columns the default
    forest cannot take."""
    bad, categorical = inspect_columns(X)
    if bad:
        raise ValueError(
            f"X has non-numeric column(s) {', '.join(map(repr, bad))}: encode "
            "them first (e.g. with sklearn.preprocessing.OrdinalEncoder or "
            "as pandas 'category' dtype for an estimator that handles "
            "categorical features natively)")
    if categorical and estimator is None:
        raise ValueError(
            f"X has categorical column(s) {', '.join(map(repr, categorical))} "
            f"but the default {default_model_name} needs numeric input: encode them, "
            "or pass an estimator that handles categorical features (HistGradientBoosting, "
            "XGBoost with enable_categorical=True, LightGBM)")
    return bool(categorical)


def _check_nan(X, estimator):
    """NaN in X is an error of the wrapped model's, and says so."""
    if allows_nan(estimator):
        return
    values = X.data if sp.issparse(X) else X
    if np.isnan(values).any():
        raise ValueError(
            f"Input X contains NaN, which the wrapped {type(unwrap(estimator)).__name__} "
            "does not support: impute the missing values (e.g. "
            "sklearn.impute.SimpleImputer) or use a model that routes them "
            "(HistGradientBoosting, XGBoost, LightGBM, or the default random forest)")


def training_fingerprint(X):
    """A cheap fingerprint of a fit's rows (their shape and a hash of the first
    1,000), or None for rows it cannot hash (a Dask collection)."""
    import joblib

    if not hasattr(X, "shape") or type(X).__module__.split(".")[0] == "dask":
        return None
    try:
        head = X.iloc[:1000] if hasattr(X, "iloc") else X[:1000]
        return (tuple(X.shape), joblib.hash(head))
    except Exception:   # a matrix type joblib cannot hash: no check, no failure
        return None


def validate_fit_data(est, X, y, sample_weight, *, y_numeric, default_model_name):
    """Step 1 of a fit: ``X``, ``y`` and the weights, checked.

    Sets ``est.n_features_in_`` (and ``feature_names_in_`` for a DataFrame).

    Parameters
    ----------
    est : FIRE estimator
        Its ``estimator`` decides whether NaN and category columns are allowed.
    X, y, sample_weight
        As given to ``fit``.
    y_numeric : bool
        Convert ``y`` to float64 (regression, counts, survival times).
    default_model_name : str
        The default model's class name, for the category-column error.

    Returns
    -------
    FitData
    """
    check_not_library_matrix(X)
    # inference(method="holdout") refuses the training rows
    est._train_fingerprint = training_fingerprint(X)
    native = is_dataframe(X) and _check_categorical_columns(X, est.estimator,
                                                            default_model_name)
    if native:
        validate_data(est, X, skip_check_array=True)
        if y is None:
            raise ValueError(
                f"{type(est).__name__} requires y to be passed, but the target y is None")
        y = check_array(column_or_1d(y, warn=True), ensure_2d=False,
                        dtype=np.float64 if y_numeric else None, input_name="y")
        check_consistent_length(X, y)
    else:
        X, y = validate_data(est, X, y, y_numeric=y_numeric, ensure_min_samples=2,
                             ensure_all_finite="allow-nan", accept_sparse=_SPARSE_FORMATS)
        _check_nan(X, est.estimator)
    names = getattr(est, "feature_names_in_", None)
    return FitData(X=X, y=y, sample_weight=check_sample_weight(sample_weight, X.shape[0]),
                   weighted=sample_weight is not None, native_categorical=native,
                   feature_names=None if names is None else [str(c) for c in names])


def model_input(X, model_names, native_categorical):
    """``X`` (validated) in the form the ensemble model was fitted with: a
    DataFrame with the model's column names for a model fitted on one
    (sparse: a DataFrame of sparse columns), else ``X`` itself."""
    if native_categorical or model_names is None:
        return X
    import pandas as pd

    columns = list(model_names)
    try:
        columns = pd.Index(columns)
    except UnicodeEncodeError:
        # pandas' Arrow strings hold UTF-8 only: a name with a lone surrogate
        columns = pd.Index(columns, dtype=object)
    if sp.issparse(X):
        return pd.DataFrame.sparse.from_spmatrix(X, columns=columns)
    return pd.DataFrame(X, columns=columns)


def validate_predict_data(est, X, min_rows=1):
    """``X`` for a fitted estimator's ``predict``: checked against the
    training columns, in the form its model reads (with at least
    ``min_rows`` rows)."""
    check_is_fitted(est)
    check_not_library_matrix(X)
    if est._native_categorical:
        if not is_dataframe(X):
            raise TypeError(
                "this model was fitted on a DataFrame with categorical columns: "
                "predict needs a DataFrame with the same columns")
        validate_data(est, X, reset=False, skip_check_array=True)
        return X
    X = validate_data(est, X, reset=False, ensure_all_finite="allow-nan",
                      accept_sparse=_SPARSE_FORMATS, ensure_min_samples=min_rows)
    _check_nan(X, est.estimator_)
    return model_input(X, est._model_names, False)
