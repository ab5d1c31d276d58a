"""Rule extraction for counts and rates: :class:`FIREPoissonRegressor`."""
import numpy as np
from sklearn.utils.validation import check_is_fitted

from firecy._dask import is_dask
from firecy.datafits import check_counts, log_exposure, poisson_deviance
from firecy.estimators._base import default_forest
from firecy.estimators._data import validate_fit_data
from firecy.estimators._fit import Task, fit_rule_model
from firecy.estimators._glm_paths import PoissonPaths, poisson_validation_loss
from firecy.estimators._regressor import FIRERegressor
from firecy.estimators._shared_doc import shared_parameters

__all__ = ["FIREPoissonRegressor", "poisson_task"]


def poisson_task(est, data, offset):
    """The :class:`~firecy.estimators._fit.Task` of :class:`FIREPoissonRegressor`:
    counts with the offset ``log(exposure)`` plus the ensemble's baseline.

    A model of the rate is fitted on ``y / exposure`` with the exposure as
    weight (the same likelihood as counts with a log-exposure offset).
    """
    y = check_counts(data.y)
    e = np.exp(offset)
    plain = bool(np.all(e == 1.0))
    return Task(kind="regression", default_model=default_forest(est, "regression"),
                model_y=y if plain else y / e,
                model_weight=None if plain else data.sample_weight * e,
                pack_target=lambda baseline: np.column_stack([y, baseline + offset]),
                fitter=lambda ensemble: PoissonPaths(),
                validation_loss=poisson_validation_loss, loss="poisson")


class FIREPoissonRegressor(FIRERegressor):
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

    # what explain()'s terms add up to (explanations, plots, reports)
    _raw_scale = "log-rate"

    def fit(self, X, y, sample_weight=None, exposure=None, progress=None):
        """Fit the ensemble (unless fitted), then select and fit the rule weights.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
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
        if is_dask(X, y, sample_weight):   # refused by name: firecy.dask fits FIRERegressor
            from firecy._dask._fit import fit_dask

            return fit_dask(self, X, y, sample_weight, progress=progress)
        n = np.asarray(y).shape[0] if hasattr(y, "__len__") else None
        offset = log_exposure(exposure, n)
        data = validate_fit_data(self, X, y, sample_weight, y_numeric=True,
                                 default_model_name="RandomForestRegressor")
        return fit_rule_model(self, data, poisson_task(self, data, offset), progress)

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
