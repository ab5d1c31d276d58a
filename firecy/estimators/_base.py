"""What every FIRE estimator does, whatever its task: :class:`FIREEstimatorBase`.

Fit (or reuse) the tree ensemble, extract its rules, validate the data, run
the selection over penalty grid x regularisation path (``_selection``), keep
the selected rule weights, predict the raw score and list the rules.  A task
(regression, classification) subclasses it and provides the hooks listed in
the class docstring.  The objective is stated in ``docs/objective.rst``.
"""
import copy
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import KFold, ShuffleSplit, check_cv
from sklearn.utils import check_array, column_or_1d, get_tags
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    has_fit_parameter,
    validate_data,
)

from firecy._dask import is_dask
from firecy._validation import check_not_library_matrix, check_sample_weight
from firecy.ensembles._dispatch import names_seen_by
from firecy.estimators._default_forest import fit_default_forest
from firecy.estimators._model_inspection import (
    inspect_columns,
    is_dataframe,
    is_fitted_model,
    model_feature_names,
    model_n_features,
    unwrap,
)
from firecy.estimators._params import (
    BUILTIN_PENALTIES,
    check_lambdas,
    check_params,
    penalty_grid,
)
from firecy.estimators._rule_depth import rules_at_depth, warn_small_rules
from firecy.estimators._rule_features import RuleFeaturesMixin
from firecy.estimators._rule_values import apply_rule_values
from firecy.estimators._scaling import PowerOfTwoScale, check_finite_design
from firecy.estimators._selection import select_on_paths
from firecy.rules._inputs import column_support

__all__ = ["FIREEstimatorBase"]


class FIREEstimatorBase(RuleFeaturesMixin, BaseEstimator):
    """Base of the FIRE estimators (internal).

    A subclass defines ``__init__`` with at least the parameters of
    :class:`~firecy.FIRERegressor` that this class reads, and the hooks:

    ``_default_model()``
        The unfitted ensemble to fit when ``estimator`` is None.
    ``_check_model_kind(model)``
        Raise a TypeError for a model of the wrong task.
    ``_validate_target(y)``
        The target as the float64 array the paths fit (and, for
        classification, whatever it needs to remember about the labels).
    ``_y_numeric``
        Whether ``validate_data`` converts ``y`` to numbers.
    ``_check_ensemble(ensemble)``
        Raise a ValueError for an ensemble the task cannot use.
    ``_fixed_lambdas(target, sample_weight, leaf_values)``
        A lambda grid to use instead of each path's default, or None.
    ``_fit_target(y, baseline)``
        What the paths fit, per row (default ``y - baseline``: regression).
    ``_path_fitter(ensemble)``
        How a path is fitted and predicts on the rules of ``ensemble`` (the
        fit's own, after the depth cut: its blocks are the design's)
        (``_selection.SquaredLossPaths`` when None, the default).
    ``_validation_loss``
        ``loss(y, pred, sample_weight)``, per column of ``pred``; a
        module-level function, so that Dask workers can unpickle it.
    """

    _y_numeric = True
    _exact_rescaling = False   # squared loss: solve on target and leaf values
                               # scaled by powers of two (``_scaling``)

    # -- tags -----------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._allow_nan()
        return tags

    def _allow_nan(self):
        """NaN in X is left to the ensemble (all supported libraries route it)."""
        est = unwrap(self.estimator)
        if est is None:
            return True  # the default random forest routes missing values
        try:
            return bool(get_tags(est).input_tags.allow_nan)
        except Exception:
            return True

    # -- data -----------------------------------------------------------------
    def _validate_fit_data(self, X, y):
        """Return (X for the model, y); sets n_features_in_ / feature_names_in_."""
        check_not_library_matrix(X)
        self._native_categorical = False
        if is_dataframe(X):
            bad, categorical = inspect_columns(X)
            if bad:
                raise ValueError(
                    f"X has non-numeric column(s) {', '.join(map(repr, bad))}: encode "
                    "them first (e.g. with sklearn.preprocessing.OrdinalEncoder or "
                    "as pandas 'category' dtype for an estimator that handles "
                    "categorical features natively)"
                )
            if categorical:
                if self.estimator is None:
                    raise ValueError(
                        f"X has categorical column(s) {', '.join(map(repr, categorical))} "
                        f"but the default {type(self._default_model()).__name__} needs "
                        "numeric input: encode them, or pass an estimator that handles "
                        "categorical features (HistGradientBoosting, XGBoost with "
                        "enable_categorical=True, LightGBM)"
                    )
                self._native_categorical = True
        if self._native_categorical:
            validate_data(self, X, skip_check_array=True)
            if y is None:
                raise ValueError(
                    f"{type(self).__name__} requires y to be passed, but the target y is None"
                )
            y = check_array(column_or_1d(y, warn=True), ensure_2d=False,
                            dtype=np.float64 if self._y_numeric else None, input_name="y")
            check_consistent_length(X, y)
            return X, self._validate_target(y)
        X, y = validate_data(
            self, X, y,
            y_numeric=self._y_numeric,
            ensure_min_samples=2,
            ensure_all_finite="allow-nan",
        )
        self._check_nan_for_model(X, self.estimator)
        return X, self._validate_target(y)

    def _to_model_input(self, X):
        """``X`` (validated) in the form the ensemble model was fitted with."""
        if self._native_categorical:
            return X
        names = self._model_names
        if names is None:
            return X
        import pandas as pd

        return pd.DataFrame(X, columns=names)

    def _validate_predict_data(self, X):
        check_is_fitted(self)
        check_not_library_matrix(X)
        if self._native_categorical:
            if not is_dataframe(X):
                raise TypeError(
                    "this model was fitted on a DataFrame with categorical columns: "
                    "predict needs a DataFrame with the same columns"
                )
            validate_data(self, X, reset=False, skip_check_array=True)
            return X
        X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan")
        self._check_nan_for_model(X, self.estimator_)
        return self._to_model_input(X)

    def _check_nan_for_model(self, X, model):
        """NaN in X is an error of the wrapped model's, and says so."""
        if not self._allow_nan() and np.isnan(X).any():
            raise ValueError(
                f"Input X contains NaN, which the wrapped "
                f"{type(unwrap(model)).__name__} does not support: impute the missing "
                "values (e.g. sklearn.impute.SimpleImputer) or use a model that routes "
                "them (HistGradientBoosting, XGBoost, LightGBM, or the default random "
                "forest)"
            )

    # -- the ensemble ---------------------------------------------------------
    def _fitted_model(self, names):
        """The fitted ``estimator``, checked against X (sets ``_model_names``)."""
        inner = unwrap(self.estimator)
        self._check_model_kind(inner)
        n_model = model_n_features(inner)
        if n_model is not None and n_model != self.n_features_in_:
            raise ValueError(
                f"X has {self.n_features_in_} features, but the fitted estimator "
                f"{type(inner).__name__} expects {n_model}"
            )
        model_names = model_feature_names(inner)
        if self._native_categorical:
            model_names = None
        elif model_names is not None and names is not None and list(
            model_names
        ) != names_seen_by(inner, names):  # LightGBM renames columns
            raise ValueError(
                f"X's columns {list(names)} differ from the feature names the "
                f"estimator was fitted with {list(model_names)}"
            )
        # a model fitted on an array gets arrays, one fitted on a DataFrame
        # gets a DataFrame with its own column names
        self._model_names = model_names
        return self.estimator

    def _fit_model(self, X, y, sample_weight, weighted):
        """The fitted ensemble model (sets ``_model_names``: what it was fitted on)."""
        names = getattr(self, "feature_names_in_", None)
        est = self.estimator
        if est is not None and is_fitted_model(est):
            return self._fitted_model(names)
        self._model_names = (
            None if names is None or self._native_categorical else list(names)
        )
        if est is None:
            return fit_default_forest(self._default_model(), X, y, sample_weight,
                                      self._to_model_input)
        else:
            if not callable(getattr(est, "fit", None)):
                raise TypeError(
                    f"estimator must be a tree ensemble model, got {type(est).__name__}"
                )
            self._check_model_kind(est)
            model = clone(est)
        Xm = self._to_model_input(X)
        if weighted and not has_fit_parameter(model, "sample_weight"):
            warnings.warn(
                f"{type(model).__name__}.fit does not accept sample_weight: the "
                "ensemble is fitted unweighted (rule weights still use them)",
                UserWarning,
                stacklevel=3,
            )
            weighted = False
        if weighted:
            model.fit(Xm, y, sample_weight=sample_weight)
        else:
            model.fit(Xm, y)
        return model

    # -- fit ------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None, progress=None):
        """Fit the ensemble (unless fitted), then select and fit the rule weights.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric features; a DataFrame's column names name the rules'
            features. Category-dtype columns are passed through to an
            ``estimator`` that handles them natively. A Dask array or
            DataFrame fits with :func:`firecy.dask.fit_dask` (``docs/dask.rst``).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights ``s`` of the objective; also passed to the ensemble's
            ``fit`` and used in the validation error.
        progress : callable, default=None
            Called as ``progress(k, n_points, result)`` after every solved
            path point (full-data paths and validation folds, from worker
            threads: make it thread-safe). ``firecy.cli`` passes a progress
            bar. Needs joblib's thread backend (the default) to be called in
            this process.

        Returns
        -------
        self : object
        """
        if is_dask(X, y, sample_weight):   # rows in a Dask cluster: firecy.dask
            from firecy._dask._fit import fit_dask

            return fit_dask(self, X, y, sample_weight, progress=progress)
        from firecy.ensembles import rule_ensemble_from_model
        from firecy.penalties import bind_ensemble

        check_params(self)
        grid = penalty_grid(self)
        X, y = self._validate_fit_data(X, y)
        n = X.shape[0]
        weighted = sample_weight is not None
        sw = check_sample_weight(sample_weight, n)

        model = self._fit_model(X, y, sw, weighted)
        names = getattr(self, "feature_names_in_", None)
        override = None
        if names is not None:
            # the DataFrame's columns name the rules (a model fitted on an
            # array has no names; LightGBM renames columns with spaces)
            override = [str(c) for c in names]
        Xm = self._to_model_input(X)
        # the training frame: XGBoost < 3.4 keeps non-ASCII labels only in part
        ens = rule_ensemble_from_model(unwrap(model), feature_names=override, X=Xm)
        self._check_ensemble(ens)
        n_model = getattr(ens, "n_features_in_", None)
        if n_model is not None and int(n_model) != self.n_features_in_:
            raise ValueError(
                f"X has {self.n_features_in_} features, but the estimator "
                f"{type(unwrap(model)).__name__} was fitted with {int(n_model)}"
            )

        # the rules: each tree's nodes at rule_depth (sets rule_depth_)
        ens, leaf_table = rules_at_depth(self, ens, Xm, sw if weighted else None)
        # the value in each rule's column (sets rule_values_); every later
        # reader (predict, rules_, transform, export, Dask) reads this ensemble
        ens = apply_rule_values(self, unwrap(model), ens)

        # a penalty on per-rule data (rule lengths, node hierarchy) reads it here
        grid = [(params, bind_ensemble(pen, ens)) for params, pen in grid]

        leaf_values = np.ascontiguousarray(ens.leaf_values, dtype=np.float64)
        block_ptr = np.asarray(ens.block_ptr, dtype=np.int64)
        target = self._fit_target(y, np.asarray(ens.baseline(Xm), dtype=np.float64))
        # a regression target is y minus the baseline; a classifier's target
        # packs class indices with the baseline (its own checks hold for it)
        check_finite_design(target if target.ndim == 1 else None, leaf_values, block_ptr,
                            unwrap(model), X=X)

        # solve in units where target and leaf values are of order one (exact)
        # (from the rows the fit sees: a zero-weight row is as good as absent)
        self._scale = PowerOfTwoScale(target[sw > 0], leaf_values, enabled=self._exact_rescaling
                                      and isinstance(self.penalty, str)
                                      and self.penalty.lower() in BUILTIN_PENALTIES)
        target_s, leaf_values_s = self._scale.scale_data(target, leaf_values)
        # progress is an argument, never an attribute: a callback must not
        # pickle with the model, and two threads may fit one object
        self._select(grid, leaf_table, leaf_values_s, block_ptr, target_s, sw, n,
                     progress=progress, fitter=self._path_fitter(ens))
        warn_small_rules(self, self._rule_rows_n)
        self.estimator_ = model
        self.ensemble_ = ens
        # what rules_ reports as each rule's support: its training rows
        self._train_support = column_support(leaf_table, len(leaf_values), sw)
        return self

    def _splits(self, n):
        if self.selection == "validation":
            splitter = ShuffleSplit(
                n_splits=1, test_size=self.validation_fraction,
                random_state=self.random_state,
            )
        elif isinstance(self.cv, numbers.Integral):
            if self.cv > n:
                raise ValueError(
                    f"cv={self.cv} folds need at least {self.cv} samples, got {n}"
                )
            splitter = KFold(self.cv, shuffle=True, random_state=self.random_state)
        else:
            splitter = check_cv(self.cv)
        return list(splitter.split(np.zeros((n, 1))))

    def _select(self, grid, leaf_table, leaf_values, block_ptr, target, sw, n,
                progress=None, fitter=None):
        """Run the selection; set the fitted attributes from its choice."""
        select = self.lam is None or len(grid) > 1
        by_budget = self.selection == "budget" and self.lam is None
        if by_budget and len(grid) > 1:
            # no held-out loss: nothing to compare penalties with
            raise ValueError(
                "selection='budget' takes the path point at the rule budget of one "
                f"penalty; give single values of the penalty parameters ({len(grid)} "
                "grid points), or use selection='cv'")
        splits = self._splits(n) if select and not by_budget else None
        if self.one_se and splits is not None and len(splits) < 2:
            raise ValueError(f"one_se=True needs at least 2 folds, cv gives {len(splits)}")
        scale, grid_units = self._scale, grid
        grid = scale.scale_grid(grid)
        paths, (g_best, k_best) = select_on_paths(
            grid, leaf_table, leaf_values, block_ptr, target, sw, splits,
            lambdas=self._fixed_lambdas(target, sw, leaf_values),
            n_lambdas=self.n_lambdas, eps=self.eps, max_rules=self.max_rules,
            refine_path=bool(self.refine_path), one_se=bool(self.one_se),
            n_jobs=self.n_jobs, loss=self._validation_loss, lam=self.lam,
            fit_intercept=bool(self.fit_intercept), tol=float(self.tol),
            max_iter=self.max_iter, progress=progress,
            fitter=fitter, by_budget=by_budget,
        )
        self.paths_ = paths = [scale.unscale_path(p) for p in paths]
        self.path_ = path = paths[g_best]
        self.best_params_ = dict(grid[g_best][0])
        self.coef_ = np.array(path.coefs[k_best], dtype=np.float64)
        intercept = np.array(path.intercepts[k_best], dtype=np.float64)
        # one intercept per output for a multi-output fitter
        self.intercept_ = float(intercept) if intercept.ndim == 0 else intercept
        self.lambda_ = float(path.lambdas[k_best])
        self.warm_lambdas_ = np.asarray(path.lambdas)[path.warm_start_chain(k_best)]
        self.n_rules_ = int(np.count_nonzero(self.coef_))
        self.n_iter_ = int(path.n_iter[k_best])
        self.validation_error_ = float(path.validation_error[k_best])
        pen = copy.deepcopy(grid_units[g_best][1])
        pen.lam = self.lambda_
        self.penalty_ = pen

    def _fixed_lambdas(self, target, sample_weight, leaf_values):
        # the data here are scaled (``_scale``); lam, lambdas in the original units
        lambdas = check_lambdas(getattr(self, "lambdas", None))
        if self.lam is not None:
            lam = float(self.lam)
            # the warm path through the given lambdas down to lam (a fitted
            # model's warm_lambdas_ solve it again), or lam alone, from zero
            chain = [] if lambdas is None else sorted({float(v) for v in lambdas
                                                      if v > lam}, reverse=True)
            return np.array(chain + [lam]) / self._scale.lam_factor
        return None if lambdas is None else lambdas / self._scale.lam_factor

    def _fit_target(self, y, baseline):
        return y - baseline

    def _path_fitter(self, ensemble):
        return None

    # -- predict and rules ----------------------------------------------------
    def _raw_prediction(self, X):
        """``baseline(X) + intercept_ + M w``, per output."""
        Xm = self._validate_predict_data(X)
        raw = np.asarray(self.ensemble_.predict_raw(Xm, self.coef_), dtype=np.float64)
        return raw + self.intercept_

    def _rule_feature_names(self):
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(c) for c in names]
        return list(self.ensemble_.feature_names)

    @property
    def rules_(self):
        """The selected rules as a table (see :func:`firecy.rules.rules_table`):
        rule text, weight, support (the fraction of the training rows, with
        their sample weights), importance, contribution, ...; a classifier's
        with the class each rule speaks for."""
        check_is_fitted(self)
        from firecy.rules import rules_table

        return rules_table(self.ensemble_, self.coef_, feature_names=self._rule_feature_names(),
                           classes=getattr(self, "classes_", None),
                           support=getattr(self, "_train_support", None))
