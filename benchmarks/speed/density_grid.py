"""L1 solve time against density: firecy, skglm Lasso, scikit-learn Lasso.

The 8000-rule friedman1 forest (n = 5000, 250 trees of depth 5, y
standardised), lambdas keeping about 5%, 10%, 20% and 40% of the rules, with
and without an intercept. A solver's time is the time of its first run (down
a ladder of tolerances) whose objective is within 1e-7 (relative) of the best
objective any solver reached, all in one process (see compare_peers.py).

To compare two builds of firecy, pin the lambdas to a file and run the
firecy-only part under each build; the reference objective (the best of all
solvers) is stored with the lambdas, so every build is judged against the same
target:

    python benchmarks/speed/density_grid.py --save grid.json            # all solvers
    PYTHONPATH=/work/baseline python benchmarks/speed/density_grid.py --load grid.json --firecy-only
"""
import argparse
import json
import time
import warnings

import numpy as np

from firecy.penalties import L1
from firecy.solver import solve

from compare_peers import TARGET, forest_design, run_ladder

PEER_TOLS = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10]


def lambda_for(design, y, fraction, fit_intercept):
    """The lambda (on a 80-point geometric grid from lambda_max) whose firecy
    solution (tol 1e-6) keeps closest to ``fraction`` of the rules, by
    bisection over the grid (no path: the grid's dense end is slow for slow
    builds)."""
    from firecy.solver import lambda_max

    lmax = lambda_max(design, y, L1(), fit_intercept=fit_intercept)
    grid = lmax * np.logspace(0, -4, 80)
    target = fraction * design.n_columns
    lo, hi = 0, len(grid) - 1
    counts = {}

    def count(k):
        if k not in counts:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                counts[k] = solve(design, y, L1(grid[k]), tol=1e-6,
                                  fit_intercept=fit_intercept).n_rules
        return counts[k]

    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count(mid) < target:
            lo = mid
        else:
            hi = mid
    k = min((lo, hi), key=lambda k: abs(count(k) - target))
    return float(grid[k])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fractions", default="0.05,0.1,0.2,0.4")
    parser.add_argument("--save", help="write the lambdas and reference objectives here")
    parser.add_argument("--load", help="read the lambdas (and reference objectives) from here")
    parser.add_argument("--firecy-only", action="store_true")
    parser.add_argument("--no-sklearn", action="store_true")
    parser.add_argument("--sklearn-fractions", default=None,
                        help="the cells (fractions) where scikit-learn runs (default: all; it "
                             "takes minutes per cell when dense)")
    parser.add_argument("--intercept", default="1,0", help="fit_intercept values (1, 0)")
    parser.add_argument("--firecy-tols", default="1e-4,1e-6,1e-8",
                        help="firecy's tolerance ladder")
    parser.add_argument("--cd-fractions", default="0.05,0.1,0.2",
                        help="the cells (fractions) where --with-cd runs (it is slow when dense)")
    parser.add_argument("--with-cd", action="store_true",
                        help="also firecy with the active-set solver off (coordinate descent "
                             "working set only), in the same process")
    args = parser.parse_args()

    design, y = forest_design(5000, 250, 5)
    y = (y - y.mean()) / y.std()
    M = design.tocsc()
    R = design.n_columns
    print(f"design: {M.shape[0]} rows, {design.n_blocks} trees, {R} rules, nnz {M.nnz}")
    cells = json.load(open(args.load)) if args.load else []
    wanted = [float(v) for v in args.fractions.split(",")]
    icpts = [bool(int(v)) for v in args.intercept.split(",")]
    cells = [c for c in cells if c["fraction"] in wanted and c["fit_intercept"] in icpts]
    firecy_tols = [float(v) for v in args.firecy_tols.split(",")]
    if not cells:
        for fi in (bool(int(v)) for v in args.intercept.split(",")):
            for f in (float(v) for v in args.fractions.split(",")):
                cells.append({"fraction": f, "fit_intercept": fi,
                              "lam": lambda_for(design, y, f, fi)})
    if not args.firecy_only:
        import skglm

        skglm.Lasso(alpha=0.1, tol=1e-2).fit(M[:200], y[:200])  # numba compilation
    summary = []
    for cell in cells:
        lam, fi = cell["lam"], cell["fit_intercept"]
        print(f"\n{cell['fraction']:.0%} of the rules, fit_intercept={fi}, lambda = {lam:.6g}")

        def objective(coef, intercept):
            r = y - intercept - M @ coef
            return 0.5 * np.mean(r * r) + lam * np.abs(coef).sum()

        def firecy_fit(tol):
            res = solve(design, y, L1(lam), tol=tol, fit_intercept=fi, max_iter=10**7)
            return objective(res.coef, res.intercept), res.n_rules

        def firecy_cd_fit(tol):
            from firecy.solver._problem import Problem

            problem = Problem(design, y, None, fi)
            problem.engine.use_active_set = False
            w = np.zeros(R)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = problem.solve(L1(lam), w, tol, 10**7)
            return objective(w, res.intercept), int(np.count_nonzero(w))

        best = cell.get("best")
        ladders = {"firecy": run_ladder("firecy", firecy_fit, firecy_tols, best)}
        if args.with_cd and cell["fraction"] in [float(v) for v in args.cd_fractions.split(",")]:
            cur = min(r[2] for r in ladders["firecy"])
            ladders["firecy_cd"] = run_ladder("firecy (CD only)", firecy_cd_fit, firecy_tols, cur)
        if not args.firecy_only:
            import skglm
            from sklearn.linear_model import Lasso

            def skglm_fit(tol):
                est = skglm.Lasso(alpha=lam, tol=tol, fit_intercept=fi, max_iter=200,
                                  max_epochs=100_000).fit(M, y)
                return objective(est.coef_, est.intercept_), np.count_nonzero(est.coef_)

            def sklearn_fit(tol):
                est = Lasso(alpha=lam, tol=tol, fit_intercept=fi, max_iter=100_000).fit(M, y)
                return objective(est.coef_, est.intercept_), np.count_nonzero(est.coef_)

            cur = min(r[2] for r in ladders["firecy"])
            ladders["skglm"] = run_ladder("skglm Lasso", skglm_fit, PEER_TOLS, cur)
            sk_cells = (None if args.sklearn_fractions is None
                        else [float(v) for v in args.sklearn_fractions.split(",")])
            if not args.no_sklearn and (sk_cells is None or cell["fraction"] in sk_cells):
                cur = min(r[2] for rows in ladders.values() for r in rows)
                ladders["sklearn"] = run_ladder("sklearn Lasso", sklearn_fit, PEER_TOLS[1:-1], cur)
        reached = min(r[2] for rows in ladders.values() for r in rows)
        best = reached if best is None else min(best, reached)
        cell["best"] = best
        row = {"fraction": cell["fraction"], "fit_intercept": fi, "lam": lam}
        for name, rows in ladders.items():
            hit = [r for r in rows if (r[2] - best) / abs(best) <= TARGET]
            row[name] = hit[0][1] if hit else float("nan")
            row[name + "_rules"] = hit[0][3] if hit else rows[-1][3]
        summary.append(row)
        print("  " + "  ".join(f"{k}={v:.3f} s" for k, v in row.items()
                               if k in ("firecy", "firecy_cd", "skglm", "sklearn")))
    if args.save:
        json.dump(cells, open(args.save, "w"), indent=1)
    print("\nsummary (seconds to within 1e-7 of the best objective; nan: never)")
    print(f"{'kept':>6} {'icpt':>5} {'rules':>6} {'firecy':>8} {'CD only':>8} {'skglm':>8} "
          f"{'sklearn':>8} {'CD/firecy':>10} {'skglm/firecy':>13} {'sklearn/firecy':>15}")
    for r in summary:
        cd, sk, sl = (r.get(k, np.nan) for k in ("firecy_cd", "skglm", "sklearn"))
        print(f"{r['fraction']:>6.0%} {int(r['fit_intercept']):>5} {r['firecy_rules']:>6} "
              f"{r['firecy']:>8.3f} {cd:>8.3f} {sk:>8.3f} {sl:>8.3f} {cd / r['firecy']:>10.1f} "
              f"{sk / r['firecy']:>13.1f} {sl / r['firecy']:>15.1f}")


if __name__ == "__main__":
    main()
