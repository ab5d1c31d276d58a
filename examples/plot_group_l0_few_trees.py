"""
Group-L0: rules from few trees
==============================

A reader pays for every split node on the paths of the kept rules, not for
the rules themselves. Rules that come from the same tree share the nodes
above them, so ten rules from two trees are quicker to read than ten rules
from ten trees.

The group-L0 penalty charges ``lam0`` for every tree that keeps at least one
rule (FIRE paper, section D of the appendix):

.. math::

    P(w) = \\sum_j \\mathrm{MCP}_j(w_j) + \\lambda_0 \\, \\#\\{t : w_t \\neq 0\\}.

With the inner penalty fixed, a path over ``lam0`` opens one tree at a
time, and each open tree brings several of its leaves. This example runs
that path (:func:`firecy.solver.group_l0_path`) and compares it with the MCP
path alone, by trees used, rules, antecedents (split nodes to read) and
held-out error. The data are scikit-learn's synthetic Friedman #1 problem.
"""

# %%
# A forest and its rule design
# ----------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split

from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import MCP, GroupL0
from firecy.rules import count_antecedents, rules_report
from firecy.solver import BlockDesign, fire_path, group_l0_path, lambda_max

X, y = make_friedman1(n_samples=2000, noise=1.0, random_state=0)
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.3, random_state=0)
forest = RandomForestRegressor(n_estimators=100, max_depth=3, random_state=0)
forest.fit(X_train, y_train)

ens = rule_ensemble_from_model(forest)
design = BlockDesign.from_leaf_table(ens.leaf_table(X_train), ens.leaf_values, ens.block_ptr)
M_val = ens.design(X_val)
print(ens)

# %%
# Two paths
# ---------
# The MCP path varies ``lam`` (the sparsity level); the group-L0 path keeps
# the inner MCP at a small ``lam`` (1 % of its ``lambda_max``, where MCP
# alone would keep far too many rules) and varies ``lam0`` from the value at
# which no tree is worth opening downward.
mcp_path = fire_path(design, y_train, MCP(gamma=1.1), n_lambdas=50, max_rules=60)

lam = 0.01 * lambda_max(design, y_train, MCP(gamma=1.1))
gl0_path = group_l0_path(design, y_train, GroupL0(MCP(lam, gamma=1.1), lam0=1.0),
                         n_lam0s=30, max_rules=60)


def summary(path):
    """Trees used, rules, antecedents and validation MSE at each point."""
    pred = M_val @ path.coefs.T + path.intercepts
    mse = np.mean((y_val[:, None] - pred) ** 2, axis=0)
    trees = [len(np.unique(ens.rule_tree[np.flatnonzero(c)])) for c in path.coefs]
    antecedents = [count_antecedents(ens, c) for c in path.coefs]
    return np.array(trees), path.n_rules, np.array(antecedents), mse


paths = {"MCP": summary(mcp_path), "group-L0 + MCP": summary(gl0_path)}

print(f"{'path':<16} {'trees':>5} {'rules':>5} {'antecedents':>11} {'val. MSE':>8}")
for name, (trees, rules, antecedents, mse) in paths.items():
    seen = set()
    for k in range(len(trees)):
        if 0 < trees[k] <= 8 and trees[k] not in seen:  # the first point per tree count
            seen.add(trees[k])
            print(f"{name:<16} {trees[k]:>5} {rules[k]:>5} {antecedents[k]:>11} {mse[k]:>8.2f}")

# %%
# Along the MCP path nearly every rule comes from its own tree. Along the
# group-L0 path each tree that opens brings several leaves: at an equal
# number of trees, and so at a similar number of split nodes to read, the
# rule set fits much better.
fig, axes = plt.subplots(1, 3, figsize=(13, 4), layout="constrained")
for name, (trees, rules, antecedents, mse) in paths.items():
    axes[0].plot(trees, rules, marker="o", markersize=3, label=name)
    axes[1].plot(trees, mse, marker="o", markersize=3, label=name)
    axes[2].plot(antecedents, mse, marker="o", markersize=3, label=name)
axes[0].set(xlabel="trees used", ylabel="rules", title="rules per tree")
axes[1].set(xlabel="trees used", ylabel="validation MSE", title="error against trees")
axes[2].set(xlabel="distinct antecedents (split nodes)", ylabel="validation MSE",
            title="error against reading effort")
for ax in axes:
    ax.grid(True, alpha=0.3)
    ax.legend()
axes[1].set_xlim(0, 20)
axes[2].set_xlim(0, 80)
plt.show()

# %%
# The rules from three trees
# --------------------------
# The first group-L0 point that uses three trees, printed with
# :func:`firecy.rules.rules_report` from the ensemble and the weights.
trees, rules, antecedents, mse = paths["group-L0 + MCP"]
k = int(np.flatnonzero(trees == 3)[0])
print(f"lam0 = {gl0_path.lambdas[k]:.3g}")
print(rules_report(ens, gl0_path.coefs[k], intercept=gl0_path.intercepts[k], X=X_train))
