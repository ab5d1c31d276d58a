"""The monotone constraints a fitted model was trained with, read from the model.

A user who trained XGBoost, LightGBM, CatBoost or a scikit-learn model with
monotone constraints has said what the data must not overrule; FIRE takes
those constraints by default (issue 49). Each library keeps them in its own
form, read here into one: an ``int8`` array over the model's features, ``+1``
non-decreasing, ``-1`` non-increasing, ``0`` free.

Where each library keeps them (each read from a fitted model, checked in
tests/test_model_monotone.py):

* scikit-learn (HistGradientBoosting, forests, extra trees, single trees):
  the ``monotonic_cst`` parameter, a sequence over the features or (HGB) a
  dict by the names in ``feature_names_in_``;
* XGBoost: the booster's configuration (``save_config``), where the training
  parameter ``monotone_constraints`` is stored as ``"(1,-1,0)"`` whatever form
  was given. A booster loaded from a model file holds no training parameters:
  its constraints are unknown (None);
* LightGBM: the booster's ``params`` (also read from a model file, which
  stores its parameters);
* CatBoost: ``get_all_params()["monotone_constraints"]``, a dict from the
  feature index (as a string) to its constraint, whatever form was given.
"""
import json
import re

import numpy as np

from firecy.ensembles._dispatch import _module_root

__all__ = ["model_monotone_constraints", "parse_monotone_list"]

_TUPLE_TEXT = re.compile(r"^\(?\s*(-?\d+(\s*,\s*-?\d+)*)?\s*\)?$")


def parse_monotone_list(value, n_features, what="monotone constraints"):
    """Constraints in a list form -> an ``int8`` array of length ``n_features``.

    Accepts a sequence of -1/0/+1 (LightGBM's and scikit-learn's form, a
    shorter one padded with zeros as XGBoost does) or XGBoost's text
    ``"(1,0,-1)"``.

    Examples
    --------
    >>> from firecy.ensembles._monotone import parse_monotone_list
    >>> parse_monotone_list("(1,0,-1)", 3)
    array([ 1,  0, -1], dtype=int8)
    >>> parse_monotone_list([1], 3)
    array([1, 0, 0], dtype=int8)
    """
    if isinstance(value, str):
        text = value.strip()
        if not _TUPLE_TEXT.match(text):
            raise ValueError(f"{what}: cannot read {value!r} (expected a form like '(1,0,-1)')")
        inner = text.strip("()").strip()
        value = [int(v) for v in inner.split(",")] if inner else []
    values = np.asarray(list(value))
    if values.ndim != 1:
        raise ValueError(f"{what} must be a flat sequence, got shape {values.shape}")
    if values.size > n_features:
        raise ValueError(f"{what} give {values.size} values for {n_features} features")
    if values.size and not np.all(np.isin(values, (-1, 0, 1))):
        bad = [v for v in values.tolist() if v not in (-1, 0, 1)]
        raise ValueError(f"{what} must be -1, 0 or +1, got {bad[0]!r}")
    out = np.zeros(n_features, dtype=np.int8)
    out[:values.size] = values.astype(np.int8)
    return out


def model_monotone_constraints(model, n_features, feature_names=None):
    """The monotone constraints ``model`` was trained with.

    Parameters
    ----------
    model : fitted estimator or booster
        A model :func:`rule_ensemble_from_model` reads.
    n_features : int
        The number of features the model was trained on.
    feature_names : sequence of str, optional
        The features' names, for constraints given by name (HGB's dict form);
        by default the model's ``feature_names_in_``.

    Returns
    -------
    ndarray of int8 of shape (n_features,) or None
        ``+1`` non-decreasing, ``-1`` non-increasing, ``0`` free; None when
        the model has no constraint (or, an XGBoost booster loaded from a
        file, keeps none).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from firecy.ensembles import model_monotone_constraints
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> hgb = HistGradientBoostingRegressor(max_iter=3, monotonic_cst=[1, 0, -1])
    >>> model_monotone_constraints(hgb.fit(X, X[:, 0]), 3)
    array([ 1,  0, -1], dtype=int8)
    """
    root = _module_root(model)
    if root == "xgboost":
        found = _xgboost_constraints(model, n_features)
    elif root == "lightgbm":
        booster = getattr(model, "booster_", model)
        found = booster.params.get("monotone_constraints") if hasattr(booster, "params") else None
        found = None if found in (None, "", []) else parse_monotone_list(
            found, n_features, "the LightGBM model's monotone_constraints")
    elif root == "catboost":
        found = _catboost_constraints(model, n_features)
    else:
        found = _sklearn_constraints(model, n_features, feature_names)
    if found is None or not np.any(found):
        return None
    return found


def _xgboost_constraints(model, n_features):
    booster = model.get_booster() if hasattr(model, "get_booster") else model
    try:
        config = json.loads(booster.save_config())
        text = config["learner"]["gradient_booster"]["tree_train_param"]["monotone_constraints"]
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return parse_monotone_list(text, n_features, "the XGBoost model's monotone_constraints")


def _catboost_constraints(model, n_features):
    found = model.get_all_params().get("monotone_constraints")
    if not found:
        return None
    out = np.zeros(n_features, dtype=np.int8)
    for index, value in found.items():
        out[int(index)] = int(value)
    return out


def _sklearn_constraints(model, n_features, feature_names):
    # a forest's trees carry the forest's parameter; read the model's own
    found = getattr(model, "monotonic_cst", None)
    if found is None:
        return None
    if isinstance(found, dict):
        names = list(feature_names if feature_names is not None
                     else getattr(model, "feature_names_in_", []))
        out = np.zeros(n_features, dtype=np.int8)
        for name, value in found.items():
            if name not in names:
                raise ValueError(f"the model's monotonic_cst names {name!r}, which is not "
                                 f"one of its features")
            out[names.index(name)] = parse_monotone_list([value], 1, "monotonic_cst")[0]
        return out
    return parse_monotone_list(found, n_features, "the model's monotonic_cst")
