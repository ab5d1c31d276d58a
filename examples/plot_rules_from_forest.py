"""
Rules from a random forest
==========================

Fit a random forest to scikit-learn's diabetes data (bundled with
scikit-learn, nothing is downloaded). Then let :class:`firecy.FIRERegressor`
keep at most 10 of its leaves as weighted rules, print them, and draw them as
the partial trees they come from.

The penalty is the curvature-scaled MCP with ``gamma=1.1`` plus light fusion
(``fusion=0.5``, i.e. ``lambda_f = 0.5 * lambda_s``). ``lambda_s`` is chosen
on a warm-started path by the error on a held-out 20 % of the training rows,
among the path points with at most ``max_rules`` rules.
"""

# %%
# Data and forest
# ---------------
# ``scaled=False`` keeps the features in their original units (age in years,
# bmi in kg/m^2, ...), so the printed thresholds mean something.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split

from firecy import FIRERegressor
from firecy.plotting import plot_rules
from firecy.rules import count_antecedents, rules_report

X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

forest = RandomForestRegressor(n_estimators=150, max_depth=3, random_state=0)
forest.fit(X_train, y_train)

# %%
# Extract the rules
# -----------------
# A fitted forest is used as is: FIRE only learns one weight per leaf.
fire = FIRERegressor(forest, penalty="mcp", gamma=1.1, fusion=0.5, max_rules=10,
                     random_state=0)
fire.fit(X_train, y_train)

print(f"{fire.n_rules_} rules kept out of {fire.ensemble_.n_rules} leaves "
      f"of {fire.ensemble_.n_trees} trees (lambda_s = {fire.lambda_:.4g})")
print(rules_report(fire, X=X_train))

# %%
# The same rules as a table (a pandas DataFrame when pandas is installed):
# ``contribution`` is ``weight * leaf_value``, what the rule adds to the
# prediction of every row that satisfies it.
print(fire.rules_[["rule", "contribution", "tree", "n_conditions"]].to_string())

# %%
# Test error
# ----------
# ``fire.predict`` uses only the kept rules; compare with the whole forest.


def mse(pred):
    return float(np.mean((y_test - pred) ** 2))


print(f"test MSE, {fire.n_rules_} rules : {mse(fire.predict(X_test)):.1f}")
print(f"test MSE, full forest ({fire.ensemble_.n_rules} leaves): "
      f"{mse(forest.predict(X_test)):.1f}")
print(f"test MSE, predicting the training mean: {mse(np.full(len(y_test), y_train.mean())):.1f}")
print(f"distinct antecedents (split nodes) to read: "
      f"{count_antecedents(fire.ensemble_, fire.coef_)}")

# %%
# Draw the rules
# --------------
# Each kept leaf is drawn under the split nodes of its path (its
# antecedents, orange; a node shared by several rules is drawn once), with
# its rank in the report, its contribution and its support on the training
# rows. A node shows the test that sends rows to its "yes" (left) branch.
fig, ax = plt.subplots(figsize=(13, 6), layout="constrained")
plot_rules(fire, X=X_train, ax=ax)
plt.show()
