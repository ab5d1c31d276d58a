"""The risk card in one call: :class:`RiskCardClassifier`.

From ``(X, y)`` alone: the candidate rules of a forest of depth-2 extra trees
(every tree's depth-1 nodes, single conditions, and its depth-2 nodes, pairs:
``rule_depth=(1, 2)``; their cuts moved to readable values in the same gaps
of the training values, :mod:`firecy.risk._readable_cuts`), FIRE's selection of at most ``max_rules`` of them as
0/1 indicators (``rule_values="unit"``) at the rule budget (``selection="budget"``: the card's size is the user's, as
FasterRisk's ``k``), and the rounding to integer points of
:func:`~firecy.risk.risk_card`.  The recipe and its measurements against
FasterRisk are in ``docs/classification.rst`` and
``benchmarks/risk_cards/RESULTS.md``.
"""
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import column_or_1d
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _num_samples, check_is_fitted

from firecy._validation import check_int, check_real
from firecy._warn import user_stacklevel
from firecy.ensembles import check_memory
from firecy.risk._card import risk_card
from firecy.risk._readable_cuts import ReadableExtraTrees, card_rule_texts, unread_values

__all__ = ["RiskCardClassifier"]


class RiskCardClassifier(ClassifierMixin, BaseEstimator):
    """A risk score of small integer points, learned from ``(X, y)`` in one call.

    Fits a forest of ``n_estimators`` depth-2 extra trees, lets
    :class:`~firecy.FIREClassifier` keep at most ``max_rules`` of their rules
    of one or two conditions (``rule_depth=(1, 2)``, each rule a 0/1
    indicator, ``rule_values="unit"``; the path point with the most rules
    within the budget), and rounds that rule model to a card of
    integer points with :func:`~firecy.risk.risk_card`: a person adds the
    points of the rules a row satisfies and reads the risk of the total off
    the card.  ``predict_proba`` is the card's risk, ``decision_function``
    its integer score.

    The trees' cuts are readable: once the forest is grown, each moves inside
    its gap of the training values (no training row changes side): to the
    midpoint for a feature of at most ten distinct values, else to the number
    of fewest significant digits in the gap.  The card prints a cut on a
    two-valued feature as ``x = 0`` / ``x = 1`` (for rows taking one of its
    two values) and on an integer feature as ``x <= 5`` / ``x >= 6`` (exact
    for every integer value); ``decision_function``, ``predict_proba`` and
    ``predict`` warn when rows fall outside those readings (a 2 in a 0/1
    column, 5.3 in an integer one), where the text and the model part.

    Parameters
    ----------
    max_rules : int, default=10
        The most rules on the card (FasterRisk's ``k``).
    max_points : int, default=5
        The most points (in absolute value) of one rule.
    n_estimators : int, default=200
        Extra trees whose nodes are the candidate rules.
    prefer : {"auc", "loss", "small"}, default="auc"
        Which rounding within the log-loss bound: see
        :func:`~firecy.risk.risk_card`.
    max_loss_increase : float, default=0.02
        The bound on the card's training log-loss over the rule model's.
    monotone : dict, sequence, str or None, default=None
        Features the card's risk must be monotone in, passed to
        :class:`~firecy.FIREClassifier` (its forms: ``{feature name or
        index: +1 or -1}``, a sequence of -1/0/+1 per feature, or
        ``"(1,0,-1)"``). +1: the card's score (``decision_function``, so
        also ``predict_proba``) is non-decreasing in the feature for every
        value of the other features, exactly, over its non-missing values;
        -1: non-increasing. A rule with only lower bounds on a constrained
        feature (``x > t``, ``x >= t``) gets points of the constraint's sign
        or none, one with only upper bounds the opposite sign or none, and a
        rule with an interval on it is not offered: the rounding to integer
        points keeps every rule's sign (a point has the sign of the rule's
        contribution or is 0). None: no constraint (the extra trees have
        none of their own).
    random_state : int, RandomState instance or None, default=None
        Seeds the forest (and FIRE's fit).
    n_jobs : int, default=None
        Threads for the forest and FIRE's paths (see
        :class:`~firecy.FIREClassifier`).

    Attributes
    ----------
    card_ : RiskCard
        The card: ``rules`` (their readable text), ``points``, ``intercept_points``, ``scale``,
        the score -> risk table (``scores``, ``risk``), the reliability
        table on the training rows (``table``) and its log-loss, AUC and CAL
        (``log_loss_``, ``auc_``, ``cal_``). ``print(card_)`` shows it.
    model_ : FIREClassifier
        The rule model the card rounds.
    classes_ : ndarray of shape (2,)
        The labels; the card gives the risk of ``classes_[1]``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names of a DataFrame ``X``.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from firecy.risk import RiskCardClassifier
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> clf = RiskCardClassifier(max_rules=5, random_state=0).fit(X, y)
    >>> len(clf.card_.rules) <= 5, int(abs(clf.card_.points).max()) <= 5
    (True, True)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    >>> from sklearn.model_selection import cross_val_score
    >>> bool(cross_val_score(clf, X, y, cv=3, scoring="roc_auc").mean() > 0.9)
    True
    """

    def __init__(self, max_rules=10, max_points=5, n_estimators=200, *, prefer="auc",
                 max_loss_increase=0.02, monotone=None, random_state=None, n_jobs=None):
        self.max_rules = max_rules
        self.max_points = max_points
        self.n_estimators = n_estimators
        self.prefer = prefer
        self.max_loss_increase = max_loss_increase
        self.monotone = monotone
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.allow_nan = True     # the extra trees route missing values
        tags.input_tags.sparse = True
        return tags

    def _rule_model(self):
        """The unfitted FIREClassifier whose rules the card rounds."""
        from firecy import FIREClassifier

        # the extra trees' cuts moved to readable values in the same gaps of
        # the training values (firecy.risk._readable_cuts): the same training
        # rows on each side, so the same design and the same fit
        forest = ReadableExtraTrees(n_estimators=self.n_estimators, max_depth=2,
                                      random_state=self.random_state, n_jobs=self.n_jobs)
        # tol=1e-4: the points are integers (the same rules on 32 of 35
        # benchmark folds as 1e-6, a third less CPU; benchmarks/risk_cards);
        # rules only: a card gives points to rules, not to linear terms.
        # monotone: FIRE's sign bounds on the rules; risk_card's rounding keeps
        # every rule's sign, so the card is as monotone as the model.
        # rule_values="unit": every candidate is its 0/1 indicator, so that the
        # penalty charges every rule's effect on the log-odds alike (a forest's
        # leaf values, event rates, make low-risk groups' rules dearer); on the
        # risk-card benchmark's folds the card ranked better on 7 of 7 data sets
        # by the mean over folds (benchmarks/risk_cards/RESULTS.md)
        return FIREClassifier(forest, rule_depth=(1, 2), rule_values="unit",
                              max_rules=self.max_rules, tol=1e-4, selection="budget",
                              linear_terms=False, monotone=self.monotone,
                              random_state=self.random_state, n_jobs=self.n_jobs)

    def fit(self, X, y, sample_weight=None):
        """Fit the forest, select the rules and round them to the card.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes; the card gives the risk of the second in sorted order.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object

        Raises
        ------
        EnsembleTooLargeError
            Before the forest is grown, when its leaf table (rows x
            ``n_estimators``) would exceed the memory budget
            (:func:`~firecy.ensembles.memory_budget`).
        """
        check_int(self.max_rules, "max_rules", low=1)
        check_int(self.max_points, "max_points", low=1)
        check_int(self.n_estimators, "n_estimators", low=1)
        check_real(self.max_loss_increase, "max_loss_increase", low=0.0)
        if y is not None:
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
            kind = type_of_target(y, input_name="y")
            if kind not in ("binary", "unary"):
                raise ValueError(
                    "Only binary classification is supported. The type of the target is "
                    f"{kind}: RiskCardClassifier gives the risk of one event (y has "
                    f"{np.unique(y).size} classes; use FIREClassifier for several)")
        # sized before the forest is grown: the fit's leaf table is rows x trees
        # (the library's leaf ids as large again), refused now rather than
        # after minutes of growing 5,000 trees
        n_rows = _num_samples(X)
        check_memory(n_rows, self.n_estimators, self.n_estimators,
                     what="the risk card's leaf table",
                     advice="Use fewer rows (a random sample of them) or a smaller "
                            "n_estimators (the default 200 is measured on "
                            "benchmarks/risk_cards).")
        model = self._rule_model().fit(X, y, sample_weight=sample_weight)
        self.card_ = risk_card(model, X, y, max_points=self.max_points,
                               max_loss_increase=self.max_loss_increase, prefer=self.prefer,
                               sample_weight=sample_weight)
        # cuts on a feature of few values print as x = 0, x <= 5, x >= 6
        self.card_.rules, self._readings = card_rule_texts(
            model, self.card_.columns, model.estimator_.feature_values_)
        self.model_ = model
        self.classes_ = model.classes_
        self.n_features_in_ = model.n_features_in_
        if hasattr(model, "feature_names_in_"):
            self.feature_names_in_ = model.feature_names_in_
        return self

    def decision_function(self, X):
        """The card's integer score of each row: the starting points plus the
        points of the rules it satisfies (higher: more risk).

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of int64, shape (n_samples,)
        """
        check_is_fitted(self)
        Xm = self.model_._validate_predict_data(X)   # the model's checks and messages
        for sentence in unread_values(Xm, getattr(self, "_readings", {}),
                                      getattr(self.model_, "feature_names_in_", None)):
            warnings.warn(f"{sentence}: the printed card and predict_proba may disagree on "
                          "those rows", UserWarning, stacklevel=user_stacklevel())
        return self.card_.score(X)

    def predict_proba(self, X):
        """The card's risk of ``classes_[1]``, and its complement.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        from scipy.special import expit

        p = expit(self.decision_function(X) / self.card_.scale)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """The class the card gives a risk of more than one half.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        event = self.decision_function(X) > 0
        return self.classes_[event.astype(np.intp)]
