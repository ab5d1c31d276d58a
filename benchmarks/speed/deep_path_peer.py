"""The deep forest's L1 path (issue 14) against skglm, same design, same lambdas.

Issue 14 stopped at this path: 250 fully grown trees on 11,000 friedman1 rows,
about 1.7 million leaf rules, ``fire_path(design, y, L1(), n_lambdas=50,
eps=1e-4)``; past the data's row count the lasso on leaves holding 1-2 rows is
nearly singular.  This script reports the same path with skglm's ``Lasso``
(working sets + Anderson-accelerated coordinate descent, warm started point to
point) in the same process, so that the time is a ratio to a peer measured in
the same run, at equal objective values:

* firecy's path first (tol 1e-6, its own stopping rule);
* skglm's on the CSC of the same design, at the same lambdas, warm started,
  at ``--skglm-tol`` (default 1e-8); the relative excess of its objective
  over firecy's is printed for every point (negative: skglm is lower).

Both minimise ``1/(2n) ||y - b - M w||^2 + lam ||w||_1`` (firecy's squared
datafit with unit weights; skglm's ``Lasso`` with ``fit_intercept=True``).
The forest comes from ``deep_forest.py``'s cache (``--cache``), which fits it
if absent.

    python benchmarks/speed/deep_path_peer.py [--points 50] [--cache DIR]
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def objective(M, y, w, b, lam):
    r = y - b - M @ w
    return 0.5 * float(r @ r) / y.shape[0] + lam * float(np.abs(w).sum())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=11000)
    ap.add_argument("--trees", type=int, default=250)
    ap.add_argument("--points", type=int, default=50,
                    help="path points solved by both (the first ones of the 50)")
    ap.add_argument("--skglm-tol", type=float, default=1e-8,
                    help="skglm's tolerance (its objective gap to firecy's is reported)")
    ap.add_argument("--time-limit", type=float, default=3600.0,
                    help="skglm starts no new point after this many seconds")
    ap.add_argument("--cache", default="/tmp/firecy_bench_cache")
    args = ap.parse_args(argv)

    import deep_forest
    from skglm import Lasso

    from firecy.ensembles import rule_ensemble_from_model
    from firecy.penalties import L1
    from firecy.solver import BlockDesign, fire_path, lambda_max

    X, y, model = deep_forest.forest(args.rows, args.trees, args.cache)
    ens = rule_ensemble_from_model(model)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    M = design.tocsc()
    print(f"design: {M.shape[0]} rows x {M.shape[1]} rules, {M.nnz} nonzeros", flush=True)

    # the default grid of fire_path: 50 points from lambda_max down to 1e-4 of it
    lam_max = lambda_max(design, y, L1())
    lambdas = np.geomspace(lam_max, 1e-4 * lam_max, 50)[:args.points]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stamps = []
        t0 = time.perf_counter()
        path = fire_path(design, y, L1(), lambdas=lambdas, tol=1e-6,
                         progress=lambda k, n, res: stamps.append(time.perf_counter() - t0))
        t_firecy = time.perf_counter() - t0
    f_obj = np.array([objective(M, y, path.coefs[k], path.intercepts[k], lam)
                      for k, lam in enumerate(lambdas)])
    print(f"firecy: {t_firecy:.1f} s", flush=True)

    # skglm compiles its kernels (numba) on first use: not part of a solve
    import scipy.sparse as sp
    Lasso(alpha=0.1).fit(sp.random(20, 5, density=0.5, format="csc", random_state=0),
                         np.arange(20.0))
    rows = []
    coef = intercept = None
    t0 = time.perf_counter()
    for k, lam in enumerate(lambdas):
        if time.perf_counter() - t0 > args.time_limit:
            break
        est = Lasso(alpha=lam, tol=args.skglm_tol, fit_intercept=True,
                    warm_start=coef is not None, max_iter=200, max_epochs=100000)
        if coef is not None:
            est.coef_, est.intercept_ = coef, intercept
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(M, y)
        coef, intercept = np.array(est.coef_), float(est.intercept_)
        s_obj = objective(M, y, coef, intercept, lam)
        rows.append((k, lam, int(path.n_rules[k]), int(np.count_nonzero(coef)), f_obj[k],
                     s_obj))
        print(rows[-1], f"skglm so far {time.perf_counter() - t0:.1f} s", flush=True)
    t_skglm = time.perf_counter() - t0
    n_done = len(rows)
    t_firecy_done = stamps[n_done - 1] if len(stamps) >= n_done else t_firecy

    print()
    print("| point | lambda | rules firecy | rules skglm | objective firecy | objective skglm "
          "| relative excess of skglm |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]:.4g} | {r[2]} | {r[3]} | {r[4]:.10g} | {r[5]:.10g} "
              f"| {(r[5] - r[4]) / abs(r[4]):.1e} |")
    print()
    print(f"firecy: {t_firecy:.1f} s for {len(lambdas)} points, {t_firecy_done:.1f} s for the "
          f"first {n_done}; skglm: {t_skglm:.1f} s for {n_done} points (tol "
          f"{args.skglm_tol:g}, time limit {args.time_limit:g} s); skglm / firecy on those "
          f"points = {t_skglm / t_firecy_done:.2f}")


if __name__ == "__main__":
    main()
