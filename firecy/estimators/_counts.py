"""Rule extraction for counts and rates: :class:`FIREPoissonRegressor`."""
import numpy as np
from sklearn.utils.validation import check_is_fitted

from firecy.datafits._poisson_loss import check_counts, log_exposure, poisson_deviance
from firecy.estimators._glm_paths import (IRLSEstimatorMixin, PoissonPaths,
                                         poisson_validation_loss)
from firecy.estimators._regressor import FIRERegressor
from firecy.estimators._shared_doc import shared_parameters

__all__ = ["FIREPoissonRegressor"]


class FIREPoissonRegressor(IRLSEstimatorMixin, FIRERegressor):
    r"""Extract a small weighted rule set for counts and rates (FIRE, Poisson loss).

    The rules, penalties, rule budget and selection are those of
    :class:`FIRERegressor` (every parameter means the same); the loss is the
    Poisson deviance with a log link:

    .. math::

        F(w, b) = \frac{1}{\sum_i s_i} \sum_i s_i \bigl(e^{\eta_i} - y_i \eta_i\bigr)
                  + P(w), \qquad
        \eta_i = \log(\mathrm{exposure}_i) + c(x_i) + b + (M w)_i ,

    with ``y`` the counts, ``c(x)`` the ensemble's baseline on its own scale
    (the log rate of a Poisson booster; 0 for a random forest) and ``P`` the
    penalty of :class:`FIRERegressor`. MCP's curvature ``a_j`` is the loss's
    at the null model (``docs/datafits.rst``). It is minimised by
    proximal-Newton steps on the compiled engine (``docs/counts_survival.rst``).

    A separate class rather than ``FIRERegressor(loss="poisson")``: its
    ``predict`` returns rates (not the raw score), ``score`` is D² rather
    than R², and ``fit`` takes an ``exposure``; a parameter that changes what
    ``predict`` means would surprise a pipeline, as it would in
    scikit-learn, which also has a separate ``PoissonRegressor``.

    The other parameters mean what they mean for :class:`FIRERegressor`;
    ``refine_path`` is not used (each path keeps its grid: on the survival
    benchmarks refinement doubled the fit time without changing the test
    scores) and the validation error is the mean Poisson deviance.

    Parameters
    ----------
    estimator : estimator, default=None
        The tree ensemble: ideally a model of the log rate (XGBoost
        ``count:poisson``, LightGBM ``objective="poisson"``,
        ``HistGradientBoostingRegressor(loss="poisson")``), whose leaf values
        and baseline are on that scale; any regression ensemble works (its
        leaf values are then the rules' values). An unfitted one is fitted on
        the rate ``y / exposure`` with weights ``exposure * sample_weight``
        (what a Poisson booster expects). None: ``RandomForestRegressor(
        n_estimators=500, max_depth=3)`` on the rate, as for
        :class:`FIRERegressor`.
{shared}
    Attributes
    ----------
    coef_, intercept_, n_rules_, lambda_, rules_, path_, ...
        As :class:`FIRERegressor`; ``intercept_`` is on the log scale.

    Examples
    --------
    >>> import numpy as np
    >>> from firecy import FIREPoissonRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = rng.poisson(np.exp(0.8 * (X[:, 0] > 0)))
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> forest = RandomForestRegressor(50, max_depth=3, random_state=0)
    >>> fire = FIREPoissonRegressor(forest, random_state=0, cv=3).fit(X, y)
    >>> fire.n_rules_ <= 14, bool(np.all(fire.predict(X) > 0))
    (True, True)
    """

    _validation_loss = staticmethod(poisson_validation_loss)

    def _validate_target(self, y):
        return check_counts(y)

    def _fit_target(self, y, baseline):
        return np.column_stack([y, baseline + self._fit_log_exposure])

    def _path_fitter(self, ensemble):
        return PoissonPaths()

    def _fit_model(self, X, y, sample_weight, weighted):
        # a Poisson model of the rate takes y / exposure with the exposure as
        # weight (the same likelihood as counts with a log-exposure offset)
        e = np.exp(self._fit_log_exposure)
        if np.all(e == 1.0):
            return super()._fit_model(X, y, sample_weight, weighted)
        return super()._fit_model(X, y / e, sample_weight * e, True)

    def fit(self, X, y, sample_weight=None, exposure=None, progress=None):
        """Fit the ensemble (unless fitted), then select and fit the rule weights.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Counts (non-negative; need not be integers).
        sample_weight : array-like of shape (n_samples,), default=None
        exposure : array-like of shape (n_samples,), default=None
            Positive; ``log(exposure)`` is an offset of the log rate.
        progress : callable, default=None
            As :meth:`FIRERegressor.fit`.

        Returns
        -------
        self : object
        """
        n = np.asarray(y).shape[0] if hasattr(y, "__len__") else None
        self._fit_log_exposure = log_exposure(exposure, n)
        try:
            return super().fit(X, y, sample_weight=sample_weight, progress=progress)
        finally:
            del self._fit_log_exposure

    def predict(self, X, exposure=None):
        """The predicted rate ``exp(c(x) + b + M w)``, times ``exposure`` if given.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        exposure : array-like of shape (n_samples,), default=None
            Positive. Given: the expected counts.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        raw = self._raw_prediction(X).reshape(-1)
        return np.exp(raw + log_exposure(exposure, raw.shape[0]))

    def score(self, X, y, sample_weight=None, exposure=None):
        """D²: the fraction of Poisson deviance explained (as scikit-learn's
        ``PoissonRegressor.score``), against the weighted mean rate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Counts.
        sample_weight : array-like of shape (n_samples,), default=None
        exposure : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        check_is_fitted(self)
        y = check_counts(y)
        e = np.exp(log_exposure(exposure, y.shape[0]))
        mu = self.predict(X, exposure=e)
        s = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, float)
        null = e * np.sum(s * y) / np.sum(s * e)
        dev = poisson_deviance(y, mu, s)
        dev0 = poisson_deviance(y, null, s)
        return 1.0 - dev / dev0 if dev0 > 0 else np.nan


FIREPoissonRegressor.__doc__ = FIREPoissonRegressor.__doc__.replace("{shared}", shared_parameters())
