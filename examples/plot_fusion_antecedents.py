"""
Fusion and the number of antecedents
====================================

A reader of a rule set has to examine every split node on the paths of the
kept rules: the rule set's *antecedents* (FIRE paper, section 6). Rules taken
from the same tree share the split nodes above them, so a rule set drawn
from a few partial trees has fewer antecedents than the same number of rules
scattered over many trees.

The fusion penalty ``lambda_f * sum_j |w_j - w_{j-1}|`` over the leaves of
each tree (in left-to-right order) pulls neighbouring leaves of one tree
together. This example compares MCP alone with MCP plus fusion at about the
same number of rules, counting antecedents with
:func:`firecy.rules.count_antecedents`.
"""

# %%
# A forest and its rule design
# ----------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor

from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import MCP, MCPFusion
from firecy.rules import count_antecedents
from firecy.solver import BlockDesign, fire_path

X, y = make_friedman1(n_samples=1000, noise=1.0, random_state=0)
forest = RandomForestRegressor(n_estimators=100, max_depth=4, random_state=0).fit(X, y)
ens = rule_ensemble_from_model(forest)
design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)

# %%
# Paths, and the point closest to each rule budget
# ------------------------------------------------
# The paths rarely hit a budget exactly; for each budget the point with the
# rule count closest to it (ties: the larger lambda) is taken, and its rule
# count is reported next to the antecedent count. The last column,
# antecedents per rule, removes most of the effect of the small differences
# in rule count.
budgets = [10, 20, 40]
penalties = {
    "MCP": MCP(gamma=1.1),
    "MCP + fusion 0.5": MCPFusion(gamma=1.1, fusion=0.5),
    "MCP + fusion 2": MCPFusion(gamma=1.1, fusion=2.0),
}


def n_trees(coef):
    ptr = ens.block_ptr
    return sum(bool(np.any(coef[ptr[t]:ptr[t + 1]])) for t in range(ens.n_trees))


results = {}
for name, penalty in penalties.items():
    path = fire_path(design, y, penalty, n_lambdas=60, eps=1e-3, max_rules=max(budgets) + 10)
    rows = []
    for budget in budgets:
        k = int(np.argmin(np.abs(path.n_rules - budget)))
        coef = path.coefs[k]
        rows.append((int(path.n_rules[k]), count_antecedents(ens, coef), n_trees(coef)))
    results[name] = rows

print(f"{'penalty':<18} {'budget':>6} {'rules':>6} {'trees':>6} {'antecedents':>12} "
      f"{'per rule':>9}")
for name, rows in results.items():
    for budget, (r, a, t) in zip(budgets, rows):
        print(f"{name:<18} {budget:>6} {r:>6} {t:>6} {a:>12} {a / r:>9.2f}")

# %%
# Antecedents at each budget
# --------------------------
# Each bar is labelled with the number of rules it has (the paths reach
# slightly different counts near each budget).
fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
width = 0.8 / len(results)
x = np.arange(len(budgets))
for i, (name, rows) in enumerate(results.items()):
    bars = ax.bar(x + (i - (len(results) - 1) / 2) * width, [a for _, a, _ in rows], width,
                  label=name)
    ax.bar_label(bars, labels=[f"{r} rules" for r, _, _ in rows], fontsize=7, padding=2)
ax.set_xticks(x, [f"about {b} rules" for b in budgets])
ax.set_ylabel("distinct antecedents (split nodes)")
ax.set_title("antecedents a reader must examine")
ax.legend()
plt.show()
