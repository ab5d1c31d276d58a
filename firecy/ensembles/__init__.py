"""Tree-ensemble adapters: a fitted model -> :class:`RuleEnsemble`.

A :class:`RuleEnsemble` holds every leaf of the ensemble as a rule (a list of
:class:`Condition`), its value, block (tree) boundaries with leaves in
left-to-right order, per-tree scales and classes, node paths and the baseline,
and builds the leaf table and the sparse design matrix for any data, with
numpy vectorisation.

Supported: scikit-learn forests, extra trees, gradient boosting,
HistGradientBoosting and single decision trees; XGBoost (sklearn wrapper or
Booster; gbtree, dart, random-forest mode); LightGBM (sklearn wrapper or
Booster; gbdt, rf, dart, goss).  XGBoost and LightGBM are optional extras.
"""
from firecy.ensembles._base import RuleEnsemble
from firecy.ensembles._condition import Condition


def rule_ensemble_from_model(model, feature_names=None) -> RuleEnsemble:
    """Extract the rules of a fitted tree ensemble.

    Parameters
    ----------
    model : fitted estimator or booster
        scikit-learn forests, extra trees, (histogram) gradient boosting and
        single decision trees; XGBoost ``XGBModel`` or ``Booster``; LightGBM
        ``LGBMModel`` or ``Booster``.
    feature_names : sequence of str, optional
        Override the model's feature names.

    Returns
    -------
    RuleEnsemble

    Raises
    ------
    TypeError
        If the model is of a kind firecy does not know.
    ValueError
        If the model is not fitted (sklearn's ``NotFittedError`` is a
        ``ValueError``), or cannot be expressed as rules (XGBoost gblinear,
        LightGBM ``linear_tree``, vector-leaf trees).
    """
    return RuleEnsemble.from_model(model, feature_names=feature_names)


__all__ = ["RuleEnsemble", "Condition", "rule_ensemble_from_model"]
