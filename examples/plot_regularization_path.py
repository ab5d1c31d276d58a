"""
Regularisation paths with and without fusion
============================================

The lower-level API: turn a fitted forest into a rule design, then run
:func:`firecy.solver.fire_path` with the curvature-scaled MCP and with
MCP plus fusion, both warm-started from ``lambda_max`` (no rule) downward.
For each path the example plots the number of rules against ``lambda`` and
the error on held-out rows against the number of rules.

The data are scikit-learn's synthetic Friedman #1 regression problem
(generated, nothing is downloaded).
"""

# %%
# A forest and its rule design
# ----------------------------
# :func:`~firecy.ensembles.rule_ensemble_from_model` reads every leaf of every
# tree (leaves of a tree in left-to-right order). The solver works on a
# :class:`~firecy.solver.BlockDesign` in the tree layout: for each row, the
# column (leaf) it lands in per tree, plus the leaf values.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split

from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import MCP, MCPFusion
from firecy.solver import BlockDesign, fire_path

X, y = make_friedman1(n_samples=1500, noise=1.0, random_state=0)
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.3, random_state=0)

forest = RandomForestRegressor(n_estimators=150, max_depth=4, random_state=0)
forest.fit(X_train, y_train)

ens = rule_ensemble_from_model(forest)
design = BlockDesign.from_leaf_table(ens.leaf_table(X_train), ens.leaf_values, ens.block_ptr)
M_val = ens.design(X_val)  # scipy.sparse CSC, the same columns
print(ens)
print(design)

# %%
# Two paths
# ---------
# A penalty passed to ``fire_path`` is a template: its ``lam`` is replaced by
# each grid value, its other parameters stay fixed. The default grid has
# ``n_lambdas`` values spaced log-uniformly from ``lambda_max`` down to
# ``eps * lambda_max``; ``max_rules`` stops the path after the first point
# with more rules than that.
penalties = {
    "MCP (gamma 1.1)": MCP(gamma=1.1),
    "MCP (gamma 1.1) + fusion 0.5": MCPFusion(gamma=1.1, fusion=0.5),
}
paths = {}
for name, penalty in penalties.items():
    path = fire_path(design, y_train, penalty, n_lambdas=40, eps=1e-2, max_rules=80)
    pred = M_val @ path.coefs.T + path.intercepts  # one column per path point
    val_mse = np.mean((y_val[:, None] - pred) ** 2, axis=0)
    paths[name] = (path, val_mse)
    best = int(np.argmin(val_mse))
    print(f"{name}: lambda_max = {path.lambda_max:.4g}, {len(path)} points, "
          f"all converged: {bool(path.converged.all())}; lowest validation MSE "
          f"{val_mse[best]:.3f} with {path.n_rules[best]} rules")

# %%
# The two penalties have different ``lambda_max``: at ``w = 0`` the fusion
# term's subdifferential adds to the sparsity term's, so zero stays optimal
# down to a smaller ``lambda``. The left panel shows ``lambda`` relative to
# each path's own ``lambda_max``.
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
for name, (path, val_mse) in paths.items():
    ax0.plot(path.lambdas / path.lambda_max, path.n_rules, marker="o", markersize=3,
             label=name)
    ax1.plot(path.n_rules, val_mse, marker="o", markersize=3, label=name)
ax0.set_xscale("log")
ax0.invert_xaxis()
ax0.set_xlabel("lambda / lambda_max")
ax0.set_ylabel("number of rules")
ax0.set_title("rules along the path")
ax1.axhline(np.mean((y_val - forest.predict(X_val)) ** 2), color="0.4", linestyle="--",
            label=f"full forest ({ens.n_rules} leaves)")
ax1.set_xlabel("number of rules")
ax1.set_ylabel("validation MSE")
ax1.set_title("held-out error against rule count")
for ax in (ax0, ax1):
    ax.grid(True, alpha=0.3)
    ax.legend()
plt.show()
