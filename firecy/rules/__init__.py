"""Readable rules: simplification, text, tables, reports, antecedent counts.

A fitted FIRE model keeps a few leaves of a tree ensemble, each with a weight
``w_j``.  Leaf ``j`` is the rule "the row satisfies every split on the path
from the root to the leaf"; a row's prediction is the intercept plus
``w_j * v_j`` (weight times leaf value, the rule's *contribution*) for every
kept rule it satisfies.  This module turns that into something a person can
read:

* :func:`simplify_conditions` merges redundant splits on one feature
  (``x < 5 and x < 10`` becomes ``x < 5``) without changing which rows, missing
  values included, satisfy the rule;
* :func:`rule_text` / :func:`rules_table` / :func:`rules_report` print the kept
  rules with the real feature names and each library's own operators;
* :func:`parse_rule` reads such a text back, so a printed rule can be checked
  (or applied) independently of firecy's objects;
* :func:`count_antecedents` counts the distinct split nodes a reader must
  examine (the "antecedents" of the FIRE paper, section 6);
* :func:`rules_json` exports them for other programs, :func:`rules_python` as a
  standalone Python function and :func:`rules_sql` as a SQL expression, both
  with the library's exact comparisons.

One module per concept: ``_simplify`` (merging), ``_text`` (printing),
``_parse`` (reading back), ``_table``, ``_report``, ``_json``, ``_export``
(Python and SQL),
``_antecedents``, and ``_inputs`` (what they all accept: a rule ensemble with
weights, or a fitted estimator).

Text conventions
----------------
* Operators are the library's: scikit-learn and LightGBM send ``x <= t`` left
  and ``x > t`` right, XGBoost ``x < t`` left and ``x >= t`` right.
  Categorical splits print as ``x in {1, 4}`` / ``x not in {1, 4}``, with
  the category labels of a model fitted on pandas categoricals
  (``colour in {'green', 'red'}``).
* Two bounds on one feature print as an interval, ``0.5 < x <= 2``.
* Thresholds print in the library's precision. A float32 threshold
  (scikit-learn and XGBoost round the input to float32 before comparing)
  prints as the float32 that splits the float32 values where the library
  does, in its shortest form (sklearn's ``0.800000011920929`` prints as
  ``0.8``): read back as a float32 and compared with the input rounded to
  float32, it selects exactly the leaf's rows, for every input.  That is
  why a split between 26.8 and 26.9 prints as ``bmi <= 26.849998``: its
  threshold, 26.8499994, lies below the float32 value of 26.85.  A float64
  threshold (LightGBM, HistGradientBoosting) prints by default as the
  shortest decimal that selects the leaf's rows for every input of at most
  15 significant digits (LightGBM's ``868.2000000000002`` as ``868.2``), and
  LightGBM's zero threshold as ``0.0``; ``exact=True`` prints every
  threshold so that the text selects the leaf's rows for every input (the
  ``repr``).  ``precision=`` rounds for display instead (not exact).
* LightGBM reads every input with ``|x| <= 1.0000000180025095e-35`` (its
  kZeroThreshold, float32(1e-35): :data:`LIGHTGBM_ZERO_THRESHOLD`) as
  exactly 0 before comparing; in a LightGBM rule "zero" means such a value.  :func:`parse_rule`,
  :func:`evaluate_parsed` and :func:`library_reading` implement these
  readings; ``Condition.to_text`` prints one condition with the same code.
* Missing values: with ``show_missing=True`` a condition that a missing value
  satisfies ends in ``(or missing)``; a condition without the suffix is not
  satisfied by a missing value.  LightGBM's ``zero_as_missing`` splits always
  end in ``(or zero/missing)`` / ``(not zero/missing)``.  By default
  (``show_missing="auto"``) suffixes are printed only for features that have
  missing values in the ``X`` given (none when no ``X`` is given): the text is
  then exact for every row without missing values.
* A rule with no condition (a tree with a single leaf) prints as
  ``(all rows)``.
"""
from firecy.ensembles import LIGHTGBM_ZERO_THRESHOLD
from firecy.rules._account import (FittedRuleModel, Term, feature_names_for,  # noqa: F401
                                   fitted_model, raw_scale_name)
from firecy.rules._antecedents import count_antecedents, kept_antecedents
from firecy.rules._export import float64_comparison, rules_python, rules_sql
from firecy.rules._json import rules_json
from firecy.rules._parse import (
    ParsedCondition,
    RuleParseError,
    evaluate_parsed,
    library_reading,
    parse_rule,
)
from firecy.rules._report import rules_report
from firecy.ensembles import simplify_conditions
from firecy.rules._table import rules_table
from firecy.rules._text import ALL_ROWS, format_conditions, rule_text

# shared with firecy's other packages (not public API: see __all__)
from firecy.rules._inputs import (  # noqa: F401
    block_label,
    check_coef,
    column_class,
    column_support,
    feature_names_of,
    is_estimator,
    leaf_support,
    missing_features,
    model_tree_of,
    n_outputs,
    tree_of,
    unknown_outside_blocks,
    unpack,
)
from firecy.rules._json import condition_dict, json_value  # noqa: F401
from firecy.rules._linear import (  # noqa: F401
    LinearTerms,
    linear_rows,
    linear_slopes,
    numeric_columns,
    term_text,
)
from firecy.rules._report import estimator_intercept  # noqa: F401

__all__ = [
    "FittedRuleModel",
    "Term",
    "fitted_model",
    "simplify_conditions",
    "format_conditions",
    "rule_text",
    "rules_table",
    "rules_report",
    "rules_json",
    "rules_python",
    "rules_sql",
    "float64_comparison",
    "count_antecedents",
    "kept_antecedents",
    "parse_rule",
    "evaluate_parsed",
    "ParsedCondition",
    "RuleParseError",
    "ALL_ROWS",
    "LIGHTGBM_ZERO_THRESHOLD",
    "library_reading",
]
