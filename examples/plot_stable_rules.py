"""
Stable rules: what random halves of the data agree on
=====================================================

FIRE picks, among thousands of nearly equal leaves of a forest, the few that
fit best, and which ones depends on the sample. :meth:`~firecy.FIRERegressor.stability`
measures it as SIRUS does: refit on the two halves of random splits of the
rows and compare the two rule sets (the Dice-Sorensen index, 1 when the
halves keep the same rules, thresholds compared up to each feature's
deciles). ``stable=True`` trades a little accuracy for rule sets the halves
agree on: rules of one or two conditions, drawn from the most frequent in a
forest of shallow trees (``docs/stability.rst``).

Both are measured on scikit-learn's diabetes data, rules only
(``linear_terms=False``: linear terms are not rules and are not compared),
with 3 splits to keep the example fast (SIRUS's protocol uses 10).
"""

# %%
# Two fits of the same budget
# ---------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor

from firecy import FIRERegressor

X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
common = dict(max_rules=8, n_lambdas=15, cv=3, linear_terms=False, random_state=0)
default = FIRERegressor(RandomForestRegressor(60, max_depth=3, random_state=0), **common)
# a smaller forest of depth-2 trees than the stable mode's default 2,000: faster,
# and less stable (its pool is drawn from fewer trees)
stable = FIRERegressor(RandomForestRegressor(300, max_depth=2, max_features=1 / 3,
                                             random_state=0), stable=True, **common)

# %%
# Stability
# ---------
# ``stability`` refits a clone on both halves of each split (6 fits here).
# What the stable mode costs in accuracy is measured on twelve data sets in
# ``docs/stability.rst``.
results = {}
for name, model in [("default", default), ("stable=True", stable)]:
    model.fit(X, y)
    result = model.stability(X, y, n_splits=3, random_state=0)
    results[name] = (model, result)
    print(f"{name:<12} {model.n_rules_} rules, stability {result.mean:.2f} "
          f"(splits: {np.round(result.dice, 2)})")

# %%
# Which rules the halves keep
# ---------------------------
# After ``stability``, ``rules_`` has a ``stability`` column: the fraction of
# the half fits that keep each rule. The stable fit's rules are short and
# kept by most halves; the default's three-condition leaves by few.
for name, (model, _) in results.items():
    print(name)
    print(model.rules_[["rule", "weight", "stability"]].to_string(index=False))

# %%
# The picture
# -----------
# Each rule's share of the half fits that keep it, for both fits (0: no half
# fit keeps that rule, up to the deciles).
fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), layout="constrained", sharex=True)
for ax, (name, (model, result)) in zip(axes, results.items()):
    table = model.rules_
    at = np.arange(len(table))
    ax.barh(at, table["stability"], color="C0" if name == "default" else "C2")
    for i, share in zip(at, table["stability"]):
        ax.text(share + 0.01, i, f"{share:.2f}", va="center", fontsize=8)
    ax.set_yticks(at, table["rule"], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.08)
    ax.set_title(f"{name}: {model.n_rules_} rules, stability {result.mean:.2f}")
axes[-1].set_xlabel("share of the half fits that keep the rule")
plt.show()
