"""
A penalty written in Python
===========================

firecy's solver talks to a penalty through a small contract (see
:doc:`/penalties`). The built-in penalties implement it in Cython; any
Python object with the same methods works too, on NumPy arrays of one tree's
leaf weights at a time. This example writes the elastic net, which firecy
does not ship,

.. math::

    P(w) = \\lambda \\|w\\|_1 + \\frac{\\mu}{2} \\|w\\|_2^2,

checks it against two independent references (firecy's compiled ``L1`` when
:math:`\\mu = 0`, and scikit-learn's :class:`~sklearn.linear_model.ElasticNet`
on the rule design), and then uses it in :func:`firecy.solver.solve`,
:func:`firecy.solver.fire_path` and ``FIRERegressor(penalty=...)``.
"""

# %%
# The penalty
# -----------
# Required: an attribute ``lam`` (the path parameter: the solver sets it
# before every call) and four methods. ``curvature`` holds each leaf's
# curvature :math:`a_j` (the diagonal of the data term's Hessian), which this
# penalty does not need. ``local_quadratic`` is optional: an exact quadratic
# model on the current signs, which lets the solver take Newton steps.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import ElasticNet
from sklearn.model_selection import train_test_split

from firecy import FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import L1, as_penalty
from firecy.rules import rules_report
from firecy.solver import BlockDesign, fire_path, solve


class ElasticNetPenalty:
    """lam * ||w||_1 + mu / 2 * ||w||_2^2, written in Python."""

    is_convex = True
    is_separable = True  # prox and subdifferential act leaf by leaf

    def __init__(self, lam=1.0, mu=0.0):
        self.lam = lam
        self.mu = mu

    def value(self, w, curvature):
        return self.lam * np.abs(w).sum() + 0.5 * self.mu * (w @ w)

    def prox(self, z, step, curvature):
        # argmin_x sum_j step_j / 2 (x_j - z_j)^2 + P(x): soft-threshold
        # step * z, then shrink; a leaf with step 0 carries no data and
        # has minimiser 0 (so does every leaf when mu = 0 and step = 0)
        shrunk = np.sign(z) * np.maximum(np.abs(step * z) - self.lam, 0.0)
        denom = step + self.mu
        return np.divide(shrunk, denom, out=np.zeros_like(z), where=denom > 0)

    def subdiff(self, w, curvature):
        # lam * sub|w_j| + mu * w_j, as intervals [lo_j, hi_j]
        lo = np.where(w == 0, -self.lam, self.lam * np.sign(w)) + self.mu * w
        hi = np.where(w == 0, self.lam, self.lam * np.sign(w)) + self.mu * w
        return lo, hi

    def lambda_max(self, grad, curvature):
        # w = 0 is stationary when every |grad_j| <= lam; mu plays no part
        return float(np.abs(grad).max())

    def local_quadratic(self, w, curvature):
        return self.lam * np.sign(w) + self.mu * w, np.full_like(w, self.mu)


# %%
# Before using a penalty, check each method against its definition on a
# few random weights: the prox against a brute-force minimisation over a
# grid, one coordinate at a time (the penalty is separable).
# :func:`~firecy.penalties.as_penalty` wraps the object the way the solver
# will; its ``*_of`` methods call the wrapped methods on NumPy arrays.
rng = np.random.default_rng(0)
pen = as_penalty(ElasticNetPenalty(lam=0.3, mu=0.5))
z, step = rng.normal(size=5), rng.uniform(0.5, 2.0, size=5)
prox = pen.prox_of(z, step, np.ones(5))
grid = np.linspace(-3, 3, 60001)
brute = [grid[np.argmin(s / 2 * (grid - zj) ** 2 + 0.3 * np.abs(grid) + 0.25 * grid ** 2)]
         for zj, s in zip(z, step)]
print("prox:", np.round(prox, 4))
print("largest difference from brute force:", np.max(np.abs(prox - brute)))

# %%
# A forest and its rule design
# ----------------------------
X, y = make_friedman1(n_samples=600, noise=1.0, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
forest = RandomForestRegressor(n_estimators=30, max_depth=3, random_state=0)
forest.fit(X_train, y_train)
ens = rule_ensemble_from_model(forest)
design = BlockDesign.from_leaf_table(ens.leaf_table(X_train), ens.leaf_values, ens.block_ptr)
M = ens.design(X_train)  # the same design as a scipy.sparse matrix

# %%
# Check 1: with mu = 0 it is the lasso
# ------------------------------------
# The Python penalty and firecy's compiled :class:`~firecy.penalties.L1`
# solve the same problem, so they reach the same objective value.
lam = 0.1
py = solve(design, y_train, ElasticNetPenalty(lam, mu=0.0), tol=1e-10)
compiled = solve(design, y_train, L1(lam), tol=1e-10)
print(f"Python: {py.n_rules} rules, objective {py.objective:.10f}")
print(f"L1:     {compiled.n_rules} rules, objective {compiled.objective:.10f}")

# %%
# Check 2: scikit-learn's elastic net
# -----------------------------------
# firecy's data term with unit sample weights is scikit-learn's,
# ``1 / (2 n) ||y - b - M w||^2``. scikit-learn writes the penalty as
# ``alpha * l1_ratio * ||w||_1 + alpha * (1 - l1_ratio) / 2 * ||w||_2^2``,
# so ``alpha = lam + mu`` and ``l1_ratio = lam / (lam + mu)``.
mu = 1.0
ours = solve(design, y_train, ElasticNetPenalty(lam, mu), tol=1e-10)
enet = ElasticNet(alpha=lam + mu, l1_ratio=lam / (lam + mu), tol=1e-12, max_iter=100_000)
enet.fit(M, y_train)
print(f"rules kept: firecy {ours.n_rules}, scikit-learn {np.count_nonzero(enet.coef_)}")
print(f"largest weight difference: {np.max(np.abs(ours.coef - enet.coef_)):.2g}; "
      f"intercepts {ours.intercept:.6f} and {enet.intercept_:.6f}")

# %%
# A path and an estimator
# -----------------------
# :func:`~firecy.solver.fire_path` varies the penalty's ``lam`` (on a copy)
# and keeps ``mu``; :class:`~firecy.FIRERegressor` takes the object as its
# ``penalty`` and selects ``lam`` on such a path.
path = fire_path(design, y_train, ElasticNetPenalty(mu=mu), n_lambdas=30, eps=1e-2)
lasso_path = fire_path(design, y_train, L1(), n_lambdas=30, eps=1e-2)

fire = FIRERegressor(forest, penalty=ElasticNetPenalty(mu=mu), max_rules=10, random_state=0)
fire.fit(X_train, y_train)
print(rules_report(fire, X=X_train))
test_mse = np.mean((y_test - fire.predict(X_test)) ** 2)
print(f"test MSE with {fire.n_rules_} rules: {test_mse:.2f}")

# %%
# At the same ``lam`` the elastic net keeps more rules than the lasso: the
# ridge term shrinks the weights, which leaves more of the signal for other
# rules to pick up, and spreads weight over correlated rules. Per rule kept,
# on these data, the lasso predicts as well or better.
M_test = ens.design(X_test)
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
for name, p in {"L1 (compiled)": lasso_path, f"elastic net in Python (mu = {mu})": path}.items():
    mse = np.mean((y_test[:, None] - (M_test @ p.coefs.T + p.intercepts)) ** 2, axis=0)
    ax0.plot(p.lambdas, p.n_rules, marker="o", markersize=3, label=name)
    ax1.plot(p.n_rules, mse, marker="o", markersize=3, label=name)
ax0.set_xscale("log")
ax0.invert_xaxis()
ax0.set(xlabel="lam", ylabel="rules kept", title="rules along the path")
ax1.set(xlabel="rules kept", ylabel="test MSE", title="test error against rules")
for ax in (ax0, ax1):
    ax.grid(True, alpha=0.3)
    ax.legend()
plt.show()
