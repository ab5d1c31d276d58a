"""scikit-learn estimators: :class:`FIRERegressor`.

The objective (the same everywhere in firecy: solver, path, tests,
benchmarks). For a fitted tree ensemble with rule design M (n x R; M[i, j] is
the value of leaf j when row i lands in it, else 0), a per-row baseline
c(x) (0 for random forests, the init prediction of boosting), sample weights
s and the penalty P applied tree by tree,

    F(w, b) = 1 / (2 sum_i s_i) * sum_i s_i (y_i - c(x_i) - b - (M w)_i)^2 + P(w)

    P(w) = sum_j MCP_gamma(w_j; lambda_s)                        (penalty="mcp")
           or lambda_s * sum_j |w_j|                             (penalty="l1")
         + lambda_f * sum_t sum_{j in tree t, j > first} |w_j - w_{j-1}|
                                                   (lambda_f = fusion * lambda_s)
         + lambda_0 * #{trees t with a nonzero w_j}              (group_l0)

MCP's concavity is scaled by each rule's curvature a_j = sum_i s_i M_ij^2 /
sum_i s_i: MCP_j(w) = lambda_s |w| - a_j w^2 / (2 gamma) for |w| <= gamma
lambda_s / a_j and gamma lambda_s^2 / (2 a_j) beyond, so gamma is scale-free
(gamma -> 1+ selects like L0, gamma -> inf is the lasso).
"""
import copy
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold, ShuffleSplit, check_cv
from sklearn.utils import check_array, column_or_1d, get_tags
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    has_fit_parameter,
    validate_data,
)

from firecy._validation import check_int, check_real, check_sample_weight
from firecy._selection import FIREPath, fold_errors_task, full_path_task

__all__ = ["FIRERegressor", "FIREPath"]

_BUILTIN_PENALTIES = ("mcp", "l1")


# ---------------------------------------------------------------- helpers ---

def _is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _inspect_columns(X):
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


def _as_list(value):
    if isinstance(value, (list, tuple, np.ndarray)):
        return list(np.asarray(value, dtype=object).ravel())
    return [value]


def _is_fitted_model(model):
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


def _is_classifier(model):
    """``sklearn.base.is_classifier`` that is False for non-estimators (Boosters)."""
    try:
        return bool(is_classifier(model))
    except Exception:
        return False


def _unwrap(model):
    """The model the adapters read (``FrozenEstimator`` is unwrapped)."""
    try:
        from sklearn.frozen import FrozenEstimator
    except ImportError:  # pragma: no cover - sklearn < 1.6
        return model
    while isinstance(model, FrozenEstimator):
        model = model.estimator
    return model


def _model_feature_names(model):
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


def _model_n_features(model):
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


def _build_penalty(name, gamma, fusion, group_l0):
    """A penalty template (lam=1; the path sets lam) from the named parameters."""
    from firecy import penalties as P

    if name == "mcp":
        if fusion > 0:
            cls = getattr(P, "MCPFusion", None)
            if cls is None:
                raise ValueError(
                    "fusion > 0 needs firecy.penalties.MCPFusion, which this "
                    "build of firecy does not provide"
                )
            pen = cls(1.0, gamma, fusion)
        else:
            pen = P.MCP(1.0, gamma)
    elif name == "l1":
        if fusion > 0:
            cls = getattr(P, "L1Fusion", None)
            if cls is None:
                raise ValueError(
                    "fusion > 0 needs firecy.penalties.L1Fusion, which this "
                    "build of firecy does not provide"
                )
            pen = cls(1.0, fusion)
        else:
            pen = P.L1(1.0)
    else:
        if fusion > 0:
            raise ValueError(
                f"fusion applies to penalty='mcp' or 'l1' only; for the registered "
                f"penalty {name!r} pass a penalty object instead"
            )
        pen = P.make_penalty(name, lam=1.0)
    if group_l0 > 0:
        cls = getattr(P, "GroupL0", None)
        if cls is None:
            raise ValueError(
                "group_l0 > 0 needs firecy.penalties.GroupL0, which this build of "
                "firecy does not provide"
            )
        pen = cls(pen, group_l0)
    return P.as_penalty(pen)


# -------------------------------------------------------------- estimator ---

class FIRERegressor(RegressorMixin, BaseEstimator):
    r"""Extract a small weighted rule set from a tree ensemble (FIRE).

    Every leaf of every tree is a rule (the conjunction of the splits on its
    path). FIRE learns one weight per rule by minimising, over rule weights
    ``w`` and an unpenalised intercept ``b``,

    .. math::

        F(w, b) = \frac{1}{2 \sum_i s_i} \sum_i s_i
                  \bigl(y_i - c(x_i) - b - (M w)_i\bigr)^2
                + \sum_j \mathrm{MCP}_\gamma(w_j; \lambda_s)
                + \lambda_f \sum_t \sum_{j \in t,\, j > \mathrm{first}} |w_j - w_{j-1}|
                + \lambda_0 \, \#\{t : w_t \neq 0\}

    where ``M[i, j]`` is the value of leaf ``j`` when row ``i`` lands in it
    (else 0), ``c(x)`` the ensemble's baseline (0 for a random forest, the
    initial prediction for boosting), ``s`` the sample weights, the leaves of
    each tree are in left-to-right order, ``lambda_f = fusion * lambda_s`` and
    ``lambda_0 = group_l0``. With ``penalty="l1"`` the MCP term is
    ``lambda_s * sum_j |w_j|``. The MCP concavity is scaled by each rule's
    curvature ``a_j = sum_i s_i M_ij^2 / sum_i s_i``:
    ``MCP_j(w) = lambda_s |w| - a_j w^2 / (2 gamma)`` for
    ``|w| <= gamma lambda_s / a_j``, ``gamma lambda_s^2 / (2 a_j)`` beyond, so
    ``gamma`` is scale-free (``gamma -> 1+`` selects like L0, ``gamma -> inf``
    is the lasso). A rule with zero weight is pruned.

    ``lambda_s`` is either given (``lam``) or chosen on a warm-started path
    of ``n_lambdas`` values from ``lambda_max`` (all weights zero) down to
    ``eps * lambda_max``, by validation error (one held-out split or K-fold
    cross-validation) among the path points with at most ``max_rules``
    rules. ``gamma``, ``fusion`` and ``group_l0`` may be lists: every
    combination gets its own path and the best (combination, lambda) pair
    wins. The selected model is the full-data path on the same lambda grid,
    taken at the selected point.

    Parameters
    ----------
    estimator : estimator, default=None
        The tree ensemble the rules come from: a scikit-learn random forest,
        extra-trees, gradient boosting or histogram gradient boosting
        regressor, an XGBoost or LightGBM regressor (sklearn wrapper or
        Booster). A fitted model is used as is (never refitted, never
        copied); an unfitted one is cloned and fitted on ``X, y`` (with
        ``sample_weight`` when its ``fit`` accepts it). ``None`` fits
        ``RandomForestRegressor(n_estimators=500, max_depth=3,
        random_state=random_state)``, the paper's setting. Note that
        :func:`sklearn.base.clone` (and so cross-validation and grid search)
        clones a fitted estimator into an unfitted one; wrap it in
        :class:`sklearn.frozen.FrozenEstimator` to keep it fitted through
        cloning. The ensemble is fitted once on all of ``X``; selection
        only re-fits rule weights on each fold.
    penalty : {"mcp", "l1"}, str or penalty object, default="mcp"
        The sparsity penalty by name (a name registered with
        :func:`firecy.penalties.register_penalty` also works), or a penalty
        object (a :class:`firecy.penalties.Penalty` or an object with the
        Python penalty protocol); with an object ``gamma`` is ignored and
        ``fusion`` and ``group_l0`` must be 0 (build them into the object).
        The path varies the object's ``lam``.
    lam : float, default=None
        Fixed ``lambda_s``. ``None`` selects it on a path.
    gamma : float or list of float, default=1.1
        MCP concavity, > 1. The paper's choice for very sparse rule sets is
        1.1; larger values shrink more and select less aggressively. A list
        adds it to the selection grid. Ignored for ``penalty="l1"``.
    fusion : float or list of float, default=0.0
        Fusion ratio ``lambda_f / lambda_s`` (>= 0). The paper uses 0.1-0.5
        for sparse selection ("light fusion") and up to 2 for more fused,
        more readable rule sets. A list adds it to the selection grid.
    group_l0 : float or list of float, default=0.0
        ``lambda_0``, the price of every tree that contributes a rule (>= 0).
        A list adds it to the selection grid.
    max_rules : int, default=None
        Rule budget: only path points with at most ``max_rules`` nonzero
        weights in the final (full-data) model are eligible, and paths stop
        after the first point beyond it. The paper extracts "fewer than 15
        rules", i.e. ``max_rules=14``.
    n_lambdas : int, default=50
        Number of path points.
    eps : float, default=1e-3
        The path ends at ``eps * lambda_max``.
    selection : {"validation", "cv"}, default="validation"
        How lambda (and the grid point) is selected: the error on one
        held-out split of ``validation_fraction`` of the rows, or the mean
        error over the folds of ``cv``. Errors are weighted by
        ``sample_weight``.
    validation_fraction : float, default=0.2
        Held-out fraction for ``selection="validation"``, in (0, 1).
    cv : int, cross-validation splitter or iterable, default=5
        Folds for ``selection="cv"``; an int means shuffled ``KFold`` seeded
        with ``random_state``.
    fit_intercept : bool, default=True
        Fit the unpenalised intercept ``b``.
    tol : float, default=1e-6
        Solver tolerance (see :func:`firecy.solver.solve`).
    max_iter : int, default=None
        Maximum block updates per path point (default ``1000 * n_trees``).
    n_jobs : int, default=None
        Parallel (fold x grid point) tasks, through joblib: threads by
        default (the solver releases the GIL); under
        ``joblib.parallel_backend("dask")`` the tasks run on a Dask cluster.
        Also the default forest's ``n_jobs``.
    random_state : int, RandomState instance or None, default=None
        Seeds the default forest and the validation / CV split. An
        ``estimator`` you pass keeps its own ``random_state``.

    Attributes
    ----------
    estimator_ : estimator
        The fitted ensemble model used.
    ensemble_ : RuleEnsemble
        The ensemble's rules, leaf values and design
        (see :func:`firecy.ensembles.rule_ensemble_from_model`).
    coef_ : ndarray of shape (n_rules_total,)
        Rule weights (mostly zero).
    intercept_ : float
        The intercept ``b`` (on top of the ensemble's baseline).
    n_rules_ : int
        Number of nonzero rule weights.
    lambda_ : float
        The selected (or given) ``lambda_s``.
    best_params_ : dict
        The selected ``gamma``, ``fusion``, ``group_l0`` (or ``penalty``).
    penalty_ : Penalty
        The penalty at the selected point (``penalty_.lam == lambda_``).
    path_ : FIREPath
        The selected grid point's path: arrays ``lambdas``, ``n_rules``,
        ``objectives``, ``validation_error`` (also ``coefs``,
        ``intercepts``, ``validation_error_std``, ``eligible``; dict-style
        access works too).
    paths_ : list of FIREPath
        One path per grid point.
    n_iter_ : int
        Block updates the solver made at the selected path point (full data,
        warm-started from the previous point).
    validation_error_ : float
        Validation error of the selected point (NaN when nothing was
        selected: fixed ``lam`` and a single grid point).
    rules_ : pandas.DataFrame
        The selected rules (see :func:`firecy.rules.rules_table`).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names of a DataFrame ``X``; they name the rules' features.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from firecy import FIRERegressor
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> fire = FIRERegressor(max_rules=14, fusion=0.5, random_state=0).fit(X, y)
    >>> fire.n_rules_ <= 14
    True
    """

    def __init__(
        self,
        estimator=None,
        *,
        penalty="mcp",
        lam=None,
        gamma=1.1,
        fusion=0.0,
        group_l0=0.0,
        max_rules=None,
        n_lambdas=50,
        eps=1e-3,
        selection="validation",
        validation_fraction=0.2,
        cv=5,
        fit_intercept=True,
        tol=1e-6,
        max_iter=None,
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.penalty = penalty
        self.lam = lam
        self.gamma = gamma
        self.fusion = fusion
        self.group_l0 = group_l0
        self.max_rules = max_rules
        self.n_lambdas = n_lambdas
        self.eps = eps
        self.selection = selection
        self.validation_fraction = validation_fraction
        self.cv = cv
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state

    # -- tags -----------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._allow_nan()
        return tags

    def _allow_nan(self):
        """NaN in X is left to the ensemble (all supported libraries route it)."""
        est = _unwrap(self.estimator)
        if est is None:
            return True  # RandomForestRegressor routes missing values
        try:
            return bool(get_tags(est).input_tags.allow_nan)
        except Exception:
            return True

    # -- parameters -----------------------------------------------------------
    def _penalty_grid(self):
        """Validate the parameters; return the list of (params, penalty template)."""
        from firecy.penalties import as_penalty

        check_real(self.lam, "lam", low=0.0, allow_none=True)
        check_int(self.max_rules, "max_rules", low=1, allow_none=True)
        check_int(self.n_lambdas, "n_lambdas", low=1)
        eps = check_real(self.eps, "eps", low=0.0, low_inclusive=False)
        if not eps < 1:
            raise ValueError(f"eps must be in (0, 1), got {self.eps!r}")
        if self.selection not in ("validation", "cv"):
            raise ValueError(
                f"selection must be 'validation' or 'cv', got {self.selection!r}"
            )
        vf = check_real(self.validation_fraction, "validation_fraction", low=0.0,
                         low_inclusive=False)
        if not vf < 1:
            raise ValueError(
                f"validation_fraction must be in (0, 1), got {self.validation_fraction!r}"
            )
        if isinstance(self.cv, numbers.Integral) and not isinstance(self.cv, bool):
            check_int(self.cv, "cv", low=2)
        check_real(self.tol, "tol", low=0.0, low_inclusive=False)
        check_int(self.max_iter, "max_iter", low=1, allow_none=True)

        def grid_values(value, name, **kw):
            values = _as_list(value)
            if len(values) == 0:
                raise ValueError(f"{name} is an empty list")
            return [check_real(v, name, **kw) for v in values]

        fusions = grid_values(self.fusion, "fusion", low=0.0)
        l0s = grid_values(self.group_l0, "group_l0", low=0.0)
        gammas = grid_values(self.gamma, "gamma", low=1.0, low_inclusive=False)

        if isinstance(self.penalty, str):
            name = self.penalty.lower()
            if name not in _BUILTIN_PENALTIES:
                from firecy.penalties import available_penalties

                if self.penalty not in available_penalties():
                    others = [p for p in available_penalties() if p not in _BUILTIN_PENALTIES]
                    raise ValueError(
                        f"unknown penalty {self.penalty!r}: use 'mcp', 'l1'"
                        + (f", a registered name ({', '.join(others)})" if others else "")
                        + " or a penalty object"
                    )
                name = self.penalty
            if name != "mcp":
                gammas = [None]
            grid = []
            for g in dict.fromkeys(gammas):
                for f in dict.fromkeys(fusions):
                    for l0 in dict.fromkeys(l0s):
                        params = {"gamma": g, "fusion": f, "group_l0": l0}
                        grid.append((params, _build_penalty(name, g, f, l0)))
            return grid

        if self.penalty is None:
            raise TypeError("penalty must be a name ('mcp', 'l1') or a penalty object, got None")
        if any(f != 0 for f in fusions) or any(v != 0 for v in l0s):
            raise ValueError(
                "with a penalty object, fusion and group_l0 must be 0: build them "
                "into the penalty object"
            )

        try:
            pen = as_penalty(copy.deepcopy(self.penalty))
        except TypeError as exc:
            raise TypeError(f"penalty is neither a known name nor a penalty: {exc}") from None
        return [({"penalty": self.penalty}, pen)]

    # -- data -----------------------------------------------------------------
    def _validate_fit_data(self, X, y):
        """Return (X for the model, y); sets n_features_in_ / feature_names_in_."""
        self._native_categorical = False
        if _is_dataframe(X):
            bad, categorical = _inspect_columns(X)
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
                        "but the default RandomForestRegressor needs numeric input: "
                        "encode them, or pass an estimator that handles categorical "
                        "features (HistGradientBoostingRegressor, XGBoost with "
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
                            dtype=np.float64, input_name="y")
            check_consistent_length(X, y)
            return X, y
        X, y = validate_data(
            self, X, y,
            y_numeric=True,
            ensure_min_samples=2,
            ensure_all_finite="allow-nan" if self._allow_nan() else True,
        )
        return X, np.asarray(y, dtype=np.float64)

    def _to_model_input(self, X):
        """``X`` (validated) in the form the ensemble model was fitted with."""
        if self._native_categorical:
            return X
        names = self._model_names
        if names is None:
            return X
        import pandas as pd

        return pd.DataFrame(X, columns=names)

    def _fit_model(self, X, y, sample_weight, weighted):
        """The fitted ensemble model (sets ``_model_names``: what it was fitted on)."""
        names = getattr(self, "feature_names_in_", None)
        est = self.estimator
        if est is not None and _is_fitted_model(est):
            inner = _unwrap(est)
            if _is_classifier(inner):
                raise TypeError(
                    f"FIRERegressor needs a regression ensemble, got the classifier "
                    f"{type(inner).__name__}"
                )
            n_model = _model_n_features(inner)
            if n_model is not None and n_model != self.n_features_in_:
                raise ValueError(
                    f"X has {self.n_features_in_} features, but the fitted estimator "
                    f"{type(inner).__name__} expects {n_model}"
                )
            model_names = _model_feature_names(inner)
            if self._native_categorical:
                model_names = None
            elif model_names is not None and names is not None and list(model_names) != [
                str(n) for n in names
            ]:
                raise ValueError(
                    f"X's columns {list(names)} differ from the feature names the "
                    f"estimator was fitted with {list(model_names)}"
                )
            # a model fitted on an array gets arrays, one fitted on a
            # DataFrame gets a DataFrame with its own column names
            self._model_names = model_names
            return est
        if est is None:
            from sklearn.ensemble import RandomForestRegressor

            model = RandomForestRegressor(
                n_estimators=500, max_depth=3, random_state=self.random_state,
                n_jobs=self.n_jobs,
            )
        else:
            if not callable(getattr(est, "fit", None)):
                raise TypeError(
                    f"estimator must be a tree ensemble model, got {type(est).__name__}"
                )
            if _is_classifier(est):
                raise TypeError(
                    f"FIRERegressor needs a regression ensemble, got the classifier "
                    f"{type(est).__name__}"
                )
            model = clone(est)
        self._model_names = (
            None if names is None or self._native_categorical else list(names)
        )
        Xm = self._to_model_input(X)
        if weighted:
            if has_fit_parameter(model, "sample_weight"):
                model.fit(Xm, y, sample_weight=sample_weight)
            else:
                warnings.warn(
                    f"{type(model).__name__}.fit does not accept sample_weight: the "
                    "ensemble is fitted unweighted (rule weights still use them)",
                    UserWarning,
                    stacklevel=3,
                )
                model.fit(Xm, y)
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
            ``estimator`` that handles them natively.
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
        self : FIRERegressor
        """
        self._progress = progress
        grid = self._penalty_grid()
        X, y = self._validate_fit_data(X, y)
        n = X.shape[0]
        weighted = sample_weight is not None
        sw = check_sample_weight(sample_weight, n)

        model = self._fit_model(X, y, sw, weighted)
        from firecy.ensembles import rule_ensemble_from_model

        names = getattr(self, "feature_names_in_", None)
        override = None
        if names is not None and self._model_names is None:
            # a model fitted on an array: the DataFrame's columns name the rules
            override = [str(c) for c in names]
        ens = rule_ensemble_from_model(_unwrap(model), feature_names=override)
        n_outputs = int(getattr(ens, "n_outputs", 1))
        if n_outputs != 1:
            raise ValueError(
                f"FIRERegressor needs a single-output regression ensemble; this one has "
                f"{n_outputs} outputs"
            )
        n_model = getattr(ens, "n_features_in_", None)
        if n_model is not None and int(n_model) != self.n_features_in_:
            raise ValueError(
                f"X has {self.n_features_in_} features, but the estimator "
                f"{type(_unwrap(model)).__name__} was fitted with {int(n_model)}"
            )

        Xm = self._to_model_input(X)
        leaf_table = np.ascontiguousarray(ens.leaf_table(Xm), dtype=np.int32)
        leaf_values = np.ascontiguousarray(ens.leaf_values, dtype=np.float64)
        block_ptr = np.asarray(ens.block_ptr, dtype=np.int64)
        target = y - np.asarray(ens.baseline(Xm), dtype=np.float64)

        try:
            self._select(grid, leaf_table, leaf_values, block_ptr, target, sw, n)
        finally:
            del self._progress   # a callback must not stay on (or pickle with) the model
        self.estimator_ = model
        self.ensemble_ = ens
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

    def _select(self, grid, leaf_table, leaf_values, block_ptr, target, sw, n):
        max_rules = self.max_rules
        lambdas = None if self.lam is None else np.array([float(self.lam)])
        if lambdas is None and self.fit_intercept:
            # a constant target: the intercept fits it and lambda_max is
            # rounding noise; one point with every weight at zero
            yw = target[sw > 0]
            if np.ptp(yw) <= 1e-12 * max(1.0, float(np.max(np.abs(yw)))):
                big = (float(np.max(np.abs(leaf_values))) + 1.0) * (
                    float(np.max(np.abs(yw))) + 1.0)
                lambdas = np.array([big])
        common = dict(fit_intercept=bool(self.fit_intercept), tol=float(self.tol),
                      max_iter=self.max_iter, progress=getattr(self, "_progress", None))
        parallel = Parallel(n_jobs=self.n_jobs, prefer="threads")

        # stage 1: full-data path per grid point
        full = parallel(
            delayed(full_path_task)(
                leaf_table, leaf_values, block_ptr, target, sw, pen, lambdas,
                self.n_lambdas, self.eps, max_rules, **common,
            )
            for _, pen in grid
        )
        eligible = [
            np.ones(len(p), dtype=bool) if max_rules is None else p.n_rules <= max_rules
            for p in full
        ]
        # the path stops after the first point beyond the budget: the
        # eligible points are a prefix
        n_eligible = [int(np.argmin(e)) if not e.all() else len(e) for e in eligible]

        select = self.lam is None or len(grid) > 1
        errors = [np.full(len(p), np.nan) for p in full]
        stds = [np.full(len(p), np.nan) for p in full]
        if select:
            splits = self._splits(n)
            tasks = [(g, k) for k in range(len(splits)) for g in range(len(grid))
                     if n_eligible[g] > 0]
            fold_errs = parallel(
                delayed(fold_errors_task)(
                    leaf_table, leaf_values, block_ptr, target, sw,
                    splits[k][0], splits[k][1], grid[g][1],
                    full[g].lambdas[:n_eligible[g]], **common,
                )
                for g, k in tasks
            )
            per_grid = {g: [] for g in range(len(grid))}
            for (g, _), e in zip(tasks, fold_errs):
                per_grid[g].append(e)
            for g, errs in per_grid.items():
                errors[g][:] = np.inf
                stds[g][:] = np.inf
                if errs:
                    errs = np.vstack(errs)
                    errors[g][:n_eligible[g]] = errs.mean(axis=0)
                    stds[g][:n_eligible[g]] = errs.std(axis=0)

        # choose (grid point, path point)
        best = None
        for g, p in enumerate(full):
            for k in range(n_eligible[g]):
                score = errors[g][k] if select else 0.0
                if best is None or score < best[0]:
                    best = (score, g, k)
        if best is None:
            # fixed lam beyond the budget everywhere: keep the sparsest
            counts = [(int(p.n_rules[0]), g) for g, p in enumerate(full)]
            _, g = min(counts)
            best = (np.nan, g, 0)
            warnings.warn(
                f"lam={self.lam!r} gives {full[g].n_rules[0]} rules, more than "
                f"max_rules={max_rules}; increase lam or use lam=None to select it",
                UserWarning,
                stacklevel=3,
            )
        _, g_best, k_best = best

        self.paths_ = [
            FIREPath(
                params=dict(params),
                lambdas=p.lambdas,
                n_rules=p.n_rules,
                objectives=p.objectives,
                intercepts=p.intercepts,
                coefs=p.coefs,
                converged=p.converged,
                n_iter=p.n_iter,
                validation_error=errors[g],
                validation_error_std=stds[g],
                eligible=eligible[g],
            )
            for g, ((params, _), p) in enumerate(zip(grid, full))
        ]
        path = full[g_best]
        self.path_ = self.paths_[g_best]
        self.best_params_ = dict(grid[g_best][0])
        self.coef_ = np.array(path.coefs[k_best], dtype=np.float64)
        self.intercept_ = float(path.intercepts[k_best])
        self.lambda_ = float(path.lambdas[k_best])
        self.n_rules_ = int(np.count_nonzero(self.coef_))
        self.n_iter_ = int(path.n_iter[k_best])
        self.validation_error_ = float(errors[g_best][k_best])

        pen = copy.deepcopy(grid[g_best][1])
        pen.lam = self.lambda_
        self.penalty_ = pen

    # -- predict --------------------------------------------------------------
    def _validate_predict_data(self, X):
        check_is_fitted(self)
        if self._native_categorical:
            if not _is_dataframe(X):
                raise TypeError(
                    "this model was fitted on a DataFrame with categorical columns: "
                    "predict needs a DataFrame with the same columns"
                )
            validate_data(self, X, reset=False, skip_check_array=True)
            return X
        X = validate_data(
            self, X, reset=False,
            ensure_all_finite="allow-nan" if self._allow_nan() else True,
        )
        return self._to_model_input(X)

    def predict(self, X):
        """Predict with the selected rules.

        ``predict(X) = ensemble_.predict_raw(X, coef_) + intercept_``, i.e. the
        ensemble's baseline plus ``b + M w``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        Xm = self._validate_predict_data(X)
        raw = np.asarray(self.ensemble_.predict_raw(Xm, self.coef_), dtype=np.float64)
        return raw.reshape(-1) + self.intercept_

    # -- rules ----------------------------------------------------------------
    def _rule_feature_names(self):
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(c) for c in names]
        return list(self.ensemble_.feature_names)

    @property
    def rules_(self):
        """The selected rules as a table (see :func:`firecy.rules.rules_table`)."""
        check_is_fitted(self)
        from firecy.rules import rules_table

        return rules_table(self.ensemble_, self.coef_, feature_names=self._rule_feature_names())
