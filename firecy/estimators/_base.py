"""What every fitted FIRE estimator offers: :class:`FIREEstimatorBase`.

The fit itself is a pipeline of plain functions (``_fit.fit_rule_model``),
which each estimator's ``fit`` calls with its task; this base class holds
what the fitted estimators share: the tags, the data check of ``predict``,
the raw prediction ``baseline + intercept_ + M w`` and the rules table (with
``transform`` and ``summary`` from :class:`RuleFeaturesMixin`, the per-row
``explain`` from :class:`~firecy.estimators._explain.ExplainMixin`).  The
objective is stated in ``docs/objective.rst``; ``docs/fit_flow.rst`` walks
through a fit.
"""
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from firecy.estimators._confirmatory import confirmatory_part
from firecy.estimators._data import allows_nan, validate_predict_data
from firecy.estimators._explain import ExplainMixin
from firecy.estimators._inference import InferenceMixin
from firecy.estimators._rule_features import RuleFeaturesMixin
from firecy.estimators._stability import StabilityMixin
from firecy.estimators._selection import effective_n_jobs
from firecy.rules import linear_slopes

__all__ = ["FIREEstimatorBase", "default_forest"]


def default_forest(est, kind):
    """The unfitted default model of ``est``: 500 trees of depth 3 (the paper's
    setting; with ``stable=True`` ``_stable.N_TREES`` (2,000; another number
    through ``est._fit_options``, see ``_fit_options``) of depth 2,
    single conditions and pairs), seeded with ``est.random_state``, on ``est.n_jobs`` cores."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    forest = RandomForestClassifier if kind == "classification" else RandomForestRegressor
    if getattr(est, "stable", False):
        from firecy.estimators._fit_options import fit_options

        n_trees = fit_options(est).n_trees
        # a third of the features per split (SIRUS's mtry): the roots vary,
        # and a rule's frequency over the trees ranks it
        return forest(n_estimators=n_trees, max_depth=2, max_features=1 / 3,
                      random_state=est.random_state,
                      n_jobs=effective_n_jobs(est.n_jobs, n_trees))
    return forest(n_estimators=500, max_depth=3, random_state=est.random_state,
                  n_jobs=effective_n_jobs(est.n_jobs, 500))


class FIREEstimatorBase(StabilityMixin, InferenceMixin, RuleFeaturesMixin, ExplainMixin,
                        BaseEstimator):
    """Base of the FIRE estimators (internal): what a fitted one offers.

    A subclass's ``fit`` validates the data (``_data.validate_fit_data``),
    builds its :class:`~firecy.estimators._fit.Task` and calls
    :func:`~firecy.estimators._fit.fit_rule_model`.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # NaN in X is left to the ensemble (every supported library routes it)
        tags.input_tags.allow_nan = allows_nan(self.estimator)
        tags.input_tags.sparse = True
        return tags

    def _validate_predict_data(self, X, min_rows=1):
        """``X`` checked against the training columns, as the model reads it."""
        return validate_predict_data(self, X, min_rows)

    def _raw_prediction(self, X):
        """``baseline(X) + intercept_ + M w``, per output."""
        Xm = self._validate_predict_data(X)
        raw = np.asarray(self.ensemble_.predict_raw(Xm, self.coef_), dtype=np.float64)
        linear = self._linear_part(Xm)
        if raw.ndim == 1 and np.ndim(linear) == 2:
            linear = linear[:, 0]
        # the confirmatory terms (confirmatory=): unpenalised, kept at every lambda
        return raw + self.intercept_ + linear + confirmatory_part(self, Xm)

    def _linear_part(self, Xm):
        """Per output, the kept linear terms' sum on the rows of ``Xm``
        (0 without one)."""
        found = linear_slopes(self)
        if found is None:
            return 0.0
        terms, slopes = found
        return terms.centered(Xm) @ slopes

    def _rule_feature_names(self):
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(c) for c in names]
        return list(self.ensemble_.feature_names)

    @property
    def model_(self):
        """The account of the fitted model that every output reads
        (:class:`firecy.rules.FittedRuleModel`): the intercept, every kept
        term (a rule or a linear term: text, weight, support, importance,
        tree, conditions, clip range and centre), and the counts of rules,
        linear terms, trees and antecedents that the summary, ``rules_``, the
        JSON export, the report, the command line and the InterpretML
        explanations print."""
        check_is_fitted(self)
        from firecy.rules import fitted_model

        try:
            return fitted_model(self, self._rule_feature_names())
        except AttributeError as error:
            # a property that raises AttributeError reads as "no attribute model_"
            raise RuntimeError(f"model_ could not be built: {error}") from error

    @property
    def rules_(self):
        """The selected rules as a table (see :func:`firecy.rules.rules_table`):
        rule text, weight, support (the fraction of the training rows, with
        their sample weights), importance, contribution, ..., ``kind``
        ("rule", or "linear" for a kept linear term, after the rules); a
        classifier's with the class each rule speaks for. The texts are exact
        for inputs of at most 15 significant digits;
        ``firecy.rules.rules_table(est, exact=True)`` gives the table with
        texts exact for every input."""
        check_is_fitted(self)
        from firecy.rules import rules_table

        # the estimator itself: its linear terms are rows too
        return rules_table(self, feature_names=self._rule_feature_names(),
                           classes=getattr(self, "classes_", None),
                           support=getattr(self, "_train_support", None),
                           stability=getattr(self, "_rule_stability", None))
