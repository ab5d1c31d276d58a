"""Step 2 of a fit: the tree ensemble model the rules come from.

:func:`fitted_model` returns the user's fitted model checked against the
data (never refitted, never copied), or clones and fits an unfitted one, or
fits the task's default forest.  What differs between tasks (the target the
model is fitted on, its weights, a classifier's classes) comes in the
:class:`~firecy.estimators._fit.Task`.
"""
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import has_fit_parameter

from firecy._warn import user_stacklevel
from firecy.ensembles import names_seen_by
from firecy.estimators._class_models import booster_task, check_model_classes
from firecy.estimators._data import model_input
from firecy.estimators._default_forest import fit_default_forest
from firecy.estimators._model_inspection import (
    is_classifier_model,
    is_fitted_model,
    model_feature_names,
    model_n_features,
    unwrap,
)

__all__ = ["check_model_kind", "fitted_model"]


def check_model_kind(model, kind, owner):
    """A TypeError when ``model`` is not of the task's ``kind``.

    Parameters
    ----------
    model : the model (unwrapped)
    kind : {"regression", "classification"}
    owner : str
        The FIRE estimator's class name, for the message.
    """
    task = booster_task(model)
    if task is None:
        task = "classification" if is_classifier_model(model) else "regression"
    if task == kind:
        return
    if kind == "classification":
        raise TypeError(
            f"{owner} needs a classification ensemble, got the regressor "
            f"{type(model).__name__} (use FIRERegressor for regression)")
    raise TypeError(
        f"{owner} needs a regression ensemble, got the classifier {type(model).__name__}")


def _check_fitted(model, data, n_features, owner):
    """The names the fitted ``model`` reads X with (None: an array), after
    checking its features against X's."""
    n_model = model_n_features(model)
    if n_model is not None and n_model != n_features:
        raise ValueError(
            f"X has {n_features} features, but the fitted estimator "
            f"{type(model).__name__} expects {n_model}")
    model_names = model_feature_names(model)
    if data.native_categorical:
        return None
    names = data.feature_names
    if model_names is not None and names is not None and list(model_names) != names_seen_by(
            model, names):   # LightGBM renames columns
        raise ValueError(
            f"X's columns {list(names)} differ from the feature names the "
            f"estimator was fitted with {list(model_names)}")
    # a model fitted on an array gets arrays, one fitted on a DataFrame a
    # DataFrame with its own column names
    return model_names


def _check_float32_range(data):
    """A clear error for features the default forest cannot read: scikit-learn's
    trees read X as float32, and a value beyond float32's range (about 3.4e38)
    stopped with "Input X contains infinity or a value too large"."""
    X = data.X
    if hasattr(X, "iloc"):
        return                       # native categories: the forest reads it as given
    if X.shape[0] == 0:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)        # an all-NaN column
        if hasattr(X, "toarray"):
            top = abs(X).max(axis=0)
            top = top.toarray() if hasattr(top, "toarray") else top
        else:
            top = np.nanmax(np.abs(np.asarray(X, dtype=np.float64)), axis=0)
    top = np.nan_to_num(np.asarray(top, dtype=np.float64).reshape(-1), nan=0.0)
    bad = np.flatnonzero(top > np.finfo(np.float32).max)
    if bad.size:
        names = data.feature_names or [f"x{j}" for j in range(top.shape[0])]
        shown = ", ".join(f"{names[j]!r} (|x| up to {top[j]:.3g})" for j in bad[:5])
        raise ValueError(
            f"feature(s) {shown} exceed float32's range (3.4e38), which the default "
            "forest (scikit-learn's trees read X as float32) cannot hold: rescale them, "
            "or give an estimator that reads float64, e.g. "
            "HistGradientBoostingRegressor / HistGradientBoostingClassifier")


def fitted_model(est, data, task):
    """The fitted ensemble model and the column names it reads X with.

    Parameters
    ----------
    est : FIRE estimator
        Reads ``estimator`` (None: ``task.default_model``).
    data : FitData
    task : Task

    Returns
    -------
    model : estimator
        ``est.estimator`` itself when it is fitted, else a fitted clone (or
        the default model, fitted).
    model_names : list of str or None
        The DataFrame columns the model was fitted with (None: an array).
    """
    given = est.estimator
    owner = type(est).__name__
    weight = data.sample_weight if task.model_weight is None else task.model_weight
    weighted = data.weighted or task.model_weight is not None
    if given is not None and is_fitted_model(given):
        inner = unwrap(given)
        check_model_kind(inner, task.kind, owner)
        names = _check_fitted(inner, data, est.n_features_in_, owner)
        if task.classes is not None:
            check_model_classes(inner, task.classes)
        return given, names

    names = None if data.native_categorical else data.feature_names
    to_model = lambda X: model_input(X, names, data.native_categorical)  # noqa: E731
    if given is None:
        _check_float32_range(data)
        return fit_default_forest(task.default_model, data.X, task.model_y, weight,
                                  to_model), names
    if not callable(getattr(given, "fit", None)):
        raise TypeError(f"estimator must be a tree ensemble model, got {type(given).__name__}")
    check_model_kind(unwrap(given), task.kind, owner)
    model = clone(given)
    if weighted and not has_fit_parameter(model, "sample_weight"):
        warnings.warn(
            f"{type(model).__name__}.fit does not accept sample_weight: the ensemble is "
            "fitted unweighted (rule weights still use them)", UserWarning,
            stacklevel=user_stacklevel())
        weighted = False
    Xm = to_model(data.X)
    if weighted:
        model.fit(Xm, task.model_y, sample_weight=np.asarray(weight))
    else:
        model.fit(Xm, task.model_y)
    return model, names
