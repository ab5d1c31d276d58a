"""Tree-ensemble adapters: a fitted model -> :class:`RuleEnsemble`.

A :class:`RuleEnsemble` holds every leaf of the ensemble as a rule (a list of
:class:`Condition`), its value, block (tree) boundaries with leaves in
left-to-right order, per-tree scales and classes, node paths and the baseline,
and builds the leaf table and the sparse design matrix for any data, with
numpy vectorisation.

Supported: scikit-learn forests, extra trees, gradient boosting,
HistGradientBoosting and single decision trees; XGBoost (sklearn wrapper or
Booster; gbtree, dart, random-forest mode); LightGBM (sklearn wrapper or
Booster; gbdt, rf, dart, goss); CatBoost (CatBoostRegressor, CatBoostClassifier
or CatBoost; symmetric trees).  XGBoost, LightGBM and CatBoost are optional
extras.
"""
from firecy.ensembles._base import RuleEnsemble
from firecy.ensembles._condition import Condition
from firecy.ensembles._memory import EnsembleTooLargeError, memory_budget
from firecy.ensembles._monotone import model_monotone_constraints

# shared with firecy's other packages (not public API: see __all__)
from firecy.ensembles._condition import LIGHTGBM_ZERO_THRESHOLD  # noqa: F401
from firecy.ensembles._condition_text import (  # noqa: F401
    ALL_ROWS,
    MISSING_SUFFIX,
    NOT_ZERO_MISSING_SUFFIX,
    ZERO_MISSING_SUFFIX,
    format_conditions,
)
from firecy.ensembles._depth import (  # noqa: F401
    choose_rule_depth,
    column_weights,
    cut_at_depth,
    min_rows_per_rule,
    tree_depths,
    union_of_cuts,
)
from firecy.ensembles._dispatch import names_seen_by  # noqa: F401
from firecy.ensembles._equal_rules import equal_rule_groups  # noqa: F401
from firecy.ensembles._monotone import parse_monotone_list  # noqa: F401
from firecy.ensembles._memory import _gb, check_memory  # noqa: F401
from firecy.ensembles._simplify import CATEGORICAL, simplify_conditions  # noqa: F401
from firecy.ensembles._threshold_text import short_threshold  # noqa: F401


def rule_ensemble_from_model(model, feature_names=None, *, X=None) -> RuleEnsemble:
    """Extract the rules of a fitted tree ensemble.

    Parameters
    ----------
    model : fitted estimator or booster
        scikit-learn forests, extra trees, (histogram) gradient boosting and
        single decision trees; XGBoost ``XGBModel`` or ``Booster``; LightGBM
        ``LGBMModel`` or ``Booster``; CatBoost ``CatBoostRegressor``,
        ``CatBoostClassifier`` or ``CatBoost`` (symmetric trees).
    feature_names : sequence of str, optional
        Override the model's feature names.
    X : DataFrame, optional
        The data the model was fitted on (its category columns suffice: the
        same categories in the same order).  Only read for an XGBoost model
        written by XGBoost 3.1 to 3.3 from a pandas frame whose category
        labels are not all ASCII: such a model stores those labels cut short,
        so firecy takes them from ``X``, after checking that they are the ones
        the model stored.  Also read for a CatBoost model with one-hot
        categorical splits, which stores only a hash of each label: the
        labels are X's, hashed by CatBoost.  Ignored otherwise.

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
        LightGBM ``linear_tree``, vector-leaf trees, CatBoost trees that are
        not symmetric or split on target statistics of categories), or is
        an XGBoost model whose category labels are stored cut short, or a
        CatBoost model with one-hot splits, and ``X`` does not give them.

    Examples
    --------
    A depth-2 tree has four leaves, so four rules, each the conjunction of
    the splits on its path:

    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy.ensembles import rule_ensemble_from_model
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> ens = rule_ensemble_from_model(tree, feature_names=["age", "dose"])
    >>> ens.n_rules, ens.leaf_values
    (4, array([0., 1., 4., 6.]))
    >>> [ens.rule_text(j) for j in range(ens.n_rules)]
    ['age <= 2.0 and dose <= 15.0', 'age <= 2.0 and dose > 15.0',
     'age > 2.0 and dose <= 15.0', 'age > 2.0 and dose > 15.0']

    The design has one column per rule, holding the leaf's value on the rows
    that land in it; with every weight 1 it gives back the tree's prediction:

    >>> M = ens.design(X).toarray()
    >>> M[:4]
    array([[0., 0., 0., 0.],
           [0., 1., 0., 0.],
           [0., 0., 4., 0.],
           [0., 0., 0., 6.]])
    >>> bool(np.allclose(M.sum(axis=1), tree.predict(X)))
    True

    XGBoost and LightGBM models work the same way:

    >>> import xgboost
    >>> booster = xgboost.XGBRegressor(n_estimators=2, max_depth=2).fit(X, y)
    >>> ens = rule_ensemble_from_model(booster)
    >>> ens.source, ens.n_trees
    ('xgboost', 2)
    >>> bool(np.allclose(ens.predict_raw(X), booster.predict(X, output_margin=True), atol=1e-5))
    True
    """
    return RuleEnsemble.from_model(model, feature_names=feature_names, X=X)


__all__ = ["RuleEnsemble", "Condition", "EnsembleTooLargeError", "memory_budget",
           "model_monotone_constraints", "rule_ensemble_from_model"]
