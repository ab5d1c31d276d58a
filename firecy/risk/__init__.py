"""Risk scores from binary rule models: integer points, a score -> risk table,
and the calibration (CAL) and rank accuracy (AUC) of Ustun & Rudin, *Learning
Optimized Risk Scores* (JMLR 2019), section 2.

:class:`RiskCardClassifier` learns a card from ``(X, y)`` in one call (a
scikit-learn classifier: ``cross_val_score`` and ``GridSearchCV`` work);
:func:`risk_card` rounds a fitted binary :class:`~firecy.FIREClassifier` to
a card a person can use without a computer: a few rules with small integer
points, starting points, and the risk of each total score.  ``print(card)``
shows it; :meth:`RiskCard.plot` (:func:`firecy.plotting.plot_risk_card`)
draws the points table, the full score table and the reliability curve.
``docs/classification.rst`` states the rounding and its bound.
"""
from firecy.risk._card import RiskCard, risk_card
from firecy.risk._classifier import RiskCardClassifier
from firecy.risk._metrics import calibration_error, rank_auc, reliability_table

__all__ = ["RiskCardClassifier", "risk_card", "RiskCard", "calibration_error", "rank_auc",
           "reliability_table"]
