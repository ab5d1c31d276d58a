"""Rule extraction for survival times: :class:`FIRESurvivalRegressor`."""
from functools import partial

import numpy as np
from sklearn.utils.validation import check_is_fitted

from firecy._dask import is_dask
from firecy.datafits import check_survival_target
from firecy.estimators._base import default_forest
from firecy.estimators._data import validate_fit_data
from firecy.estimators._fit import Task, fit_rule_model
from firecy.estimators._glm_paths import CoxPaths, cox_validation_loss
from firecy.estimators._model_inspection import unwrap
from firecy.estimators._regressor import FIRERegressor
from firecy.estimators._shared_doc import shared_parameters
from firecy._metrics import concordance_index

__all__ = ["FIRESurvivalRegressor", "martingale_residuals", "survival_task"]


def martingale_residuals(event, time, sample_weight):
    """``d_i - Lambda_0(t_i)``: the martingale residuals of the null Cox model
    (Breslow's cumulative hazard), what a model without a survival loss is
    fitted to (a rule with positive mean residual holds more events than its
    time at risk predicts)."""
    # relative weights (the hazard is a ratio of weight sums): all weights
    # 1.1 give exactly the residuals of weights 1
    top = np.max(sample_weight)
    sample_weight = sample_weight / top if top > 0 else sample_weight
    order = np.argsort(time, kind="stable")
    ts, ds, ss = time[order], (event * sample_weight)[order], sample_weight[order]
    at_risk = np.cumsum(ss[::-1])[::-1]
    uniq, first = np.unique(ts, return_index=True)
    d_g = np.add.reduceat(ds, first)
    hazard = np.cumsum(d_g / at_risk[first])
    cum = hazard[np.searchsorted(uniq, time)]
    return event - cum


def survival_task(est, data, event, time):
    """The :class:`~firecy.estimators._fit.Task` of :class:`FIRESurvivalRegressor`:
    the Cox partial likelihood, the ensemble's baseline as offset.

    An unfitted model is fitted on what it takes: an XGBoost ``survival:cox``
    model on the signed times (negative: censored), a scikit-survival model
    on the structured target, any other regressor on the martingale
    residuals of the null Cox model.
    """
    model = unwrap(est.estimator)
    params = getattr(model, "get_params", lambda: {})()
    if type(model).__module__.startswith("sksurv"):
        model_y = np.array(list(zip(event.astype(bool), time)),
                           dtype=[("event", bool), ("time", float)])
    elif params.get("objective") == "survival:cox":
        model_y = np.where(event > 0, time, -time)
    else:
        model_y = martingale_residuals(event, time, data.sample_weight)
    return Task(kind="regression", default_model=default_forest(est, "regression"),
                model_y=model_y,
                pack_target=lambda baseline: np.column_stack([event, time, baseline]),
                fitter=lambda ensemble: CoxPaths(est.ties),
                validation_loss=partial(cox_validation_loss, ties=est.ties), loss="cox")


class FIRESurvivalRegressor(FIRERegressor):
    r"""Extract a small weighted rule set for survival times (FIRE, Cox loss).

    The rules, penalties, rule budget and selection are those of
    :class:`FIRERegressor` (every parameter means the same); the loss is the
    Cox partial likelihood with Breslow's ties (Efron's with ``ties="efron"``):

    .. math::

        F(w) = \frac{1}{\sum_i s_i} \sum_i s_i d_i \Bigl(\log \sum_{k: t_k \ge t_i}
               s_k e^{\eta_k} - \eta_i\Bigr) + P(w), \qquad
        \eta_i = c(x_i) + (M w)_i ,

    ``d`` the event indicators, ``t`` the times, ``c(x)`` the ensemble's
    baseline on its own scale (the log hazard of an XGBoost ``survival:cox``
    model). There is no intercept (the loss ignores a constant). MCP's
    curvature ``a_j`` is the loss's Hessian diagonal at ``w = 0``
    (``docs/datafits.rst``).

    The other parameters mean what they mean for :class:`FIRERegressor`;
    ``fit_intercept`` and ``refine_path`` are not used (the Cox loss has no
    intercept; each path keeps its grid: refinement doubled the fit time
    without changing the test concordance) and the validation error is the
    Cox partial likelihood on the held-out rows, averaged over the folds
    (``benchmarks/counts_survival/RESULTS.md`` compares it with the
    concordance, one-standard-error and pooled criteria: none changes FIRE
    against L1 beyond fold noise).

    Parameters
    ----------
    estimator : estimator, default=None
        The tree ensemble: an XGBoost ``survival:cox`` model, a
        scikit-survival ``GradientBoostingSurvivalAnalysis``, or any
        regression ensemble. An unfitted one is fitted on what it takes: an
        XGBoost ``survival:cox`` model on the signed times (negative:
        censored), a scikit-survival model on the structured target, any
        other regressor on the martingale residuals of the null Cox model.
        None: ``RandomForestRegressor(n_estimators=500, max_depth=3)`` on those
        residuals.
{shared}    ties : {"breslow", "efron"}, default="breslow"
        Tied event times in the partial likelihood (the fit and the inner-CV
        loss): Breslow's approximation (glmnet's, skglm's default), or
        Efron's (scikit-survival's ``CoxPHSurvivalAnalysis`` default, R's
        ``coxph``; ``docs/datafits.rst``), closer to the exact likelihood when
        many events share a time. Without tied event times they are equal.

    Attributes
    ----------
    coef_, n_rules_, lambda_, rules_, path_, ...
        As :class:`FIRERegressor` (``intercept_`` is 0).

    Examples
    --------
    >>> import numpy as np
    >>> from firecy import FIRESurvivalRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> time = rng.exponential(np.exp(-1.0 * (X[:, 0] > 0)))
    >>> y = np.array(list(zip(rng.uniform(size=300) < 0.8, time)),
    ...              dtype=[("event", bool), ("time", float)])
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> forest = RandomForestRegressor(50, max_depth=3, random_state=0)
    >>> fire = FIRESurvivalRegressor(forest, random_state=0, cv=3).fit(X, y)
    >>> fire.n_rules_ <= 14, fire.score(X, y) > 0.6
    (True, True)
    """

    # what explain()'s terms add up to (explanations, plots, reports)
    _raw_scale = "risk score (log relative hazard)"

    def __init__(
        self,
        estimator=None,
        *,
        penalty="mcp",
        lam=None,
        lambdas=None,
        gamma=1.1,
        fusion=0.5,
        group_l0=0.0,
        max_rules="auto",
        rule_depth="auto",
        rule_values="auto",
        linear_terms=True,
        monotone=None,
        linear_sign=None,
        stable=False,
        confirmatory=None,
        n_lambdas=50,
        eps=1e-3,
        selection="cv",
        validation_fraction=0.2,
        cv=5,
        refine_path=True,
        one_se=False,
        fit_intercept=True,
        tol=1e-6,
        max_iter=None,
        n_jobs=None,
        random_state=None,
        ties="breslow",
    ):
        super().__init__(
            estimator, penalty=penalty, lam=lam, lambdas=lambdas, gamma=gamma, fusion=fusion,
            group_l0=group_l0, max_rules=max_rules, rule_depth=rule_depth,
            rule_values=rule_values, linear_terms=linear_terms, monotone=monotone,
            linear_sign=linear_sign, stable=stable, confirmatory=confirmatory,
            n_lambdas=n_lambdas, eps=eps, selection=selection,
            validation_fraction=validation_fraction, cv=cv, refine_path=refine_path,
            one_se=one_se, fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
            n_jobs=n_jobs, random_state=random_state)
        self.ties = ties

    def fit(self, X, y, sample_weight=None, progress=None):
        """Fit the ensemble (unless fitted), then select and fit the rule weights.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        y : structured array of shape (n_samples,)
            ``(event, time)`` pairs as scikit-survival makes them
            (``sksurv.util.Surv.from_arrays``), or an (n, 2) array
            ``[event, time]``; times positive, at least one event.
        sample_weight : array-like of shape (n_samples,), default=None
        progress : callable, default=None

        Returns
        -------
        self : object
        """
        if is_dask(X, y, sample_weight):   # refused by name: firecy.dask fits FIRERegressor
            from firecy._dask._fit import fit_dask

            return fit_dask(self, X, y, sample_weight, progress=progress)
        if self.ties not in ("breslow", "efron"):
            raise ValueError(f"ties must be 'breslow' or 'efron', got {self.ties!r}")
        event, time = check_survival_target(y)
        data = validate_fit_data(self, X, time, sample_weight, y_numeric=True,
                                 default_model_name="RandomForestRegressor")
        return fit_rule_model(self, data, survival_task(self, data, event, time), progress)

    def predict(self, X):
        """Risk scores: the log partial hazard ``c(x) + M w`` (higher: earlier event).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._raw_prediction(X).reshape(-1)

    def score(self, X, y, sample_weight=None):
        """Harrell's concordance index of ``predict(X)`` (unweighted).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : structured array of (event, time)
        sample_weight : ignored

        Returns
        -------
        float
        """
        check_is_fitted(self)
        event, time = check_survival_target(y)
        return float(concordance_index(event > 0, time, self.predict(X)))


FIRESurvivalRegressor.__doc__ = FIRESurvivalRegressor.__doc__.replace("{shared}", shared_parameters())
