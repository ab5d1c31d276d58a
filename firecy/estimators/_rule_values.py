"""The estimators' ``rule_values``: the value a rule puts in its design column.

FIRE solves on the design ``M[i, j] = v_j`` when row ``i`` satisfies rule
``j`` (0 otherwise).  With ``rule_values="leaf"``, ``v_j`` is the tree's own
value for the node (the library's leaf value, or the node value of a depth
cut) and ``coef_[j]`` is a multiplier of it; with ``"unit"``, ``v_j = 1``
(indicator columns, as RuleFit) and ``coef_[j]`` is the rule's effect on the
raw score.

Why it matters: the penalty charges ``|coef_j|``, so a unit of effect costs
``lambda / |v_j|``.  A forest's trees are fitted in parallel to the same
target, their values are on one scale, and "leaf" weighs the rules by what
the trees learned.  A booster's trees are fitted in sequence to shrinking
residuals, scaled by the learning rate: its later trees' values are smaller,
so under "leaf" their rules cost more per unit of effect and the selection
keeps rules of the first few trees only.  ``"auto"`` is therefore "unit" for
boosted ensembles and "leaf" for forests (``benchmarks/any_model/RESULTS.md``).

Everything after the fit reads the fitted ``ensemble_``, whose
``leaf_values`` are the values solved on: ``predict``, ``rules_``,
``transform``, the exported code and the risk card agree by construction.
Under "unit" the values move into ``ensemble_.column_scale`` (the default
coefficients), so ``ensemble_.predict_raw(X)`` still reproduces the library
(the cut trees' prediction when ``rule_depth_`` cut them;
``ensemble_.uncut.predict_raw(X)`` is then the library's).
"""
import sys

__all__ = ["apply_rule_values", "check_rule_values", "is_boosted", "resolve_rule_values"]

RULE_VALUES = ("auto", "leaf", "unit")


def check_rule_values(rule_values):
    """``rule_values`` validated: one of "auto", "leaf", "unit"."""
    if not (isinstance(rule_values, str) and rule_values in RULE_VALUES):
        raise ValueError(
            f"rule_values must be 'auto', 'leaf' (the tree's value in each rule's "
            f"column) or 'unit' (every rule's column an indicator), got {rule_values!r}")
    return rule_values


def is_boosted(model, ensemble):
    """Whether the trees ``ensemble`` reads were fitted in sequence (boosting).

    True for more than one boosting round of scikit-learn's GradientBoosting
    and HistGradientBoosting, XGBoost (the rounds the model predicts with:
    ``best_iteration + 1`` after early stopping), LightGBM models that do
    not average their trees, and CatBoost; False for random forests, extra trees, single
    trees and one boosting round of any library (one tree per class, or
    XGBoost's parallel trees of one round: ``XGBRF*``), and LightGBM's
    ``boosting="rf"``.  The trees of one round are fitted to the same
    gradient, on one scale; later rounds fit what the earlier ones left.
    """
    source = ensemble.source
    base = getattr(ensemble, "uncut", None) or ensemble   # one block per tree
    # trees per round: one per output (class) ...
    rounds = base.n_trees // max(int(base.n_outputs), 1)
    if source == "sklearn":
        from sklearn.ensemble import (
            GradientBoostingClassifier,
            GradientBoostingRegressor,
            HistGradientBoostingClassifier,
            HistGradientBoostingRegressor,
        )

        return rounds > 1 and isinstance(
            model, (GradientBoostingClassifier, GradientBoostingRegressor,
                    HistGradientBoostingClassifier, HistGradientBoostingRegressor))
    if source == "xgboost":
        # ... times num_parallel_tree for XGBoost: count its rounds instead
        adapter = ensemble._adapter
        stop = int(adapter.iteration_range[1])
        if stop == 0:   # every round
            xgb = sys.modules["xgboost"]
            booster = model.get_booster() if isinstance(model, xgb.XGBModel) else model
            stop = int(booster.num_boosted_rounds())
        return stop > 1
    if source == "lightgbm":
        # LightGBM's rf mode averages its trees (``average_output``)
        return rounds > 1 and not bool(getattr(ensemble._adapter, "average", False))
    if source == "catboost":
        return rounds > 1
    raise ValueError(f"unknown ensemble source {source!r}")  # pragma: no cover


def resolve_rule_values(rule_values, model, ensemble):
    """"leaf" or "unit": ``rule_values`` with "auto" resolved for ``model``."""
    rule_values = check_rule_values(rule_values)
    if rule_values != "auto":
        return rule_values
    return "unit" if is_boosted(model, ensemble) else "leaf"


def apply_rule_values(rule_values, model, ensemble):
    """The fit's ensemble with the values of ``rule_values``.

    ``ensemble`` is the fit's own (built from the model in this fit, cut or
    not): its ``leaf_values`` are replaced in place under "unit".

    Returns
    -------
    ensemble : RuleEnsemble
    resolved : {"leaf", "unit"}
        ``rule_values`` with "auto" resolved (the estimator's ``rule_values_``).
    note : str or None
        The line of ``summary()`` that says the values are indicators.
    """
    resolved = resolve_rule_values(rule_values, model, ensemble)
    if resolved != "unit":
        return ensemble, resolved, None
    # the values move into the default coefficients: ensemble_.predict_raw(X)
    # still reproduces the library's (or the cut trees') raw prediction
    ensemble.to_indicators()
    # summary() says so: the weights are effects, not multipliers
    how = ("rule_values='auto', a boosted ensemble" if rule_values == "auto"
           else "rule_values='unit'")
    return ensemble, resolved, (
        f"rule values: 1 (each rule's column its indicator; {how}): a weight "
        "is the rule's effect on the raw score")
