"""
Rules and linear terms
======================

A tree's rule is a step: it adds its weight to the rows it selects and
nothing elsewhere. A smooth effect, disease progression rising with body
mass index, takes many steps to draw. FIRE offers every numeric feature as a
*linear term* beside the rules (``linear_terms=True``, the default): the
feature clipped to its 2.5 % and 97.5 % training quantiles, centred, with a
slope. A kept linear term counts against ``max_rules`` like a rule, so the
model stays as small as asked, and the same penalty chooses between steps
and slopes.

This example fits both on scikit-learn's diabetes data and compares them by
3-fold cross-validation (one split of 442 rows is too noisy to rank them).
"""

# %%
# Rules alone and rules with linear terms
# ---------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import KFold, cross_val_score

from firecy import FIRERegressor
from firecy.plotting import plot_rules

X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
forest = RandomForestRegressor(n_estimators=100, max_depth=3, random_state=0)
settings = dict(max_rules=10, n_lambdas=20, cv=3, random_state=0)
folds = KFold(3, shuffle=True, random_state=0)
for name, linear in [("rules only", False), ("rules and linear terms", True)]:
    model = FIRERegressor(forest, linear_terms=linear, **settings)
    r2 = cross_val_score(model, X, y, cv=folds, scoring="r2")
    print(f"{name:<24} test R2 {r2.mean():.3f} (folds: {np.round(r2, 3)})")

# %%
# What the model says
# -------------------
# ``summary()`` lists the rules, then each linear term with its slope per
# unit of the feature and the range it is clipped to: outside that range the
# term stays at its end value.
fire = FIRERegressor(forest.fit(X, y), linear_terms=True, **settings).fit(X, y)
print(fire.summary(X))
print(f"{fire.n_rules_} rules and {fire.n_terms_ - fire.n_rules_} linear terms "
      f"({fire.n_terms_} terms, budget {fire.max_rules_})")

# %%
# The picture
# -----------
# The rules are drawn as the partial trees they come from; the linear terms
# below them, each with its slope and clip range. (``plot_rules(fire)``
# alone sizes a figure of its own; the gallery shows pyplot's figures.)
fig, ax = plt.subplots(figsize=(11, 6.5), layout="constrained")
plot_rules(fire, X=X, ax=ax)
plt.show()
