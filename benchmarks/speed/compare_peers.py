"""firecy against its peers on the same objective, in one process.

Design: a random forest on friedman1 (n = 5000, 250 trees of depth 5, about
8000 rules); lambda picked so that about 20% of the rules are kept.

    L1:  F = 1/(2n) ||y - b - M w||^2 + lam ||w||_1
         firecy L1 | scikit-learn Lasso | skglm Lasso
    MCP: the same datafit plus the textbook MCP(lam, gamma) on a design whose
         columns are rescaled to unit curvature (M_j / sqrt(a_j)), where
         firecy's curvature-scaled MCP and skglm's MCP are the same function
         | firecy MCP | skglm MCPRegression
    Logistic + L1 (binary labels y in {0, 1}, a random-forest classifier's
         design on make_classification, n = 5000, 250 trees of depth 5):
         F = 1/n sum_i [log(1 + exp(eta_i)) - y_i eta_i] + lam ||w||_1,
         eta = b + M w, b unpenalised
         | firecy (datafit="logistic") | scikit-learn LogisticRegression
         (l1_ratio=1, solver="saga", C = 1 / (n lam): sklearn minimises
         C sum_i loss_i + ||w||_1) | skglm SparseLogisticRegression (alpha =
         lam: skglm minimises 1/n sum_i log(1 + exp(-y_i eta_i)) + alpha
         ||w||_1 with labels in {-1, 1}, the same function, and fits an
         unpenalised intercept)

Every solver runs down a ladder of tolerances; a solver's time is the time of
its first run whose objective is within 1e-7 (relative) of the best objective
any solver reached. Machines are shared and noisy: compare the ratios, which
are measured in the same process, not the absolute times.

    python benchmarks/speed/compare_peers.py [--quick] [--only-l1 | --only-logistic]
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

from firecy.penalties import L1, MCP
from firecy.solver import BlockDesign, lambda_max, solve

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _datasets import friedman_forest_design as forest_design  # noqa: E402,F401

TARGET = 1e-7


def pick_lambda(design, y, penalty, fraction, datafit="quadratic"):
    """The lambda of a warm-started path (stopped at the budget) whose number
    of rules is closest to ``fraction`` of all rules."""
    from firecy.solver import fire_path

    target = int(fraction * design.n_columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = fire_path(design, y, penalty, n_lambdas=60, eps=1e-3, max_rules=target,
                         tol=1e-4, datafit=datafit)
    k = int(np.argmin(np.abs(path.n_rules - target)))
    return float(path.lambdas[k])


def run_ladder(name, fit, tols, best_so_far=None):
    """fit(tol) -> (objective, n_rules); returns [(tol, seconds, objective, n_rules)].

    Stops at the first run within TARGET of ``best_so_far`` (a peer never
    needs a tighter tolerance than that to be timed)."""
    rows = []
    for tol in tols:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            obj, n_rules = fit(tol)
            seconds = time.perf_counter() - t0
        rows.append((tol, seconds, obj, n_rules))
        print(f"  {name:<22} tol={tol:<8.0e} {seconds:9.3f} s  F={obj:.12e}  rules={n_rules}",
              flush=True)
        if best_so_far is not None and (obj - best_so_far) / abs(best_so_far) <= TARGET:
            break
    return rows


def best_of(ladders):
    return min(obj for rows in ladders.values() for _, _, obj, _ in rows)


def report(title, ladders):
    best = min(obj for rows in ladders.values() for _, _, obj, _ in rows)
    print(f"\n{title}: best objective {best:.12e}")
    reached = {}
    for name, rows in ladders.items():
        hit = [r for r in rows if (r[2] - best) / abs(best) <= TARGET]
        if hit:
            reached[name] = hit[0]
            tol, seconds, obj, n_rules = hit[0]
            print(f"  {name:<22} {seconds:9.3f} s to within {TARGET:g}  "
                  f"(tol {tol:g}, rules {n_rules}, gap {(obj - best) / abs(best):.1e})")
        else:
            gap = (min(r[2] for r in rows) - best) / abs(best)
            print(f"  {name:<22} never within {TARGET:g} (best gap {gap:.1e})")
    ref = reached.get("firecy")
    if ref:
        for name, (_, seconds, _, _) in reached.items():
            if name != "firecy":
                print(f"  time ratio {name} / firecy = {seconds / ref[1]:.1f}")
    return reached


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller design")
    parser.add_argument("--no-sklearn", action="store_true",
                        help="skip scikit-learn (it is by far the slowest)")
    parser.add_argument("--no-cvxpy", action="store_true", help="skip cvxpy for L1 + fusion")
    parser.add_argument("--only-l1", action="store_true",
                        help="only the L1 comparison (e.g. with scikit-learn, which is slow)")
    parser.add_argument("--only-logistic", action="store_true",
                        help="only the logistic comparison")
    parser.add_argument("--logistic-fractions", default="0.05,0.2",
                        help="fractions of the rules kept in the logistic comparison")
    args = parser.parse_args()
    if args.only_logistic:
        logistic_comparison(args)
        return
    n, T, depth = (2000, 100, 4) if args.quick else (5000, 250, 5)
    design, y = forest_design(n, T, depth)
    M = design.tocsc()
    print(f"design: {n} rows, {design.n_blocks} trees, {design.n_columns} rules, nnz {M.nnz}")

    # -- L1 ---------------------------------------------------------------
    lam = pick_lambda(design, y, L1(), 0.2)
    print(f"\nL1, lambda = {lam:.6g}")
    ladders = {}

    def firecy_l1(tol):
        res = solve(design, y, L1(lam), tol=tol)
        return res.objective, res.n_rules

    def objective_l1(coef, intercept):
        r = y - intercept - M @ coef
        return 0.5 * np.mean(r * r) + lam * np.abs(coef).sum()

    ladders["firecy"] = run_ladder("firecy", firecy_l1, [1e-4, 1e-6, 1e-8, 1e-10])
    import skglm

    skglm.Lasso(alpha=lam, tol=1e-2).fit(M[:200], y[:200])  # numba compilation

    def skglm_l1(tol):
        est = skglm.Lasso(alpha=lam, tol=tol, max_iter=200, max_epochs=100_000).fit(M, y)
        return objective_l1(est.coef_, est.intercept_), np.count_nonzero(est.coef_)

    ladders["skglm Lasso"] = run_ladder("skglm Lasso", skglm_l1, [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10],
                                        best_of(ladders))
    if not args.no_sklearn:
        from sklearn.linear_model import Lasso

        def sklearn_l1(tol):
            est = Lasso(alpha=lam, tol=tol, max_iter=100_000).fit(M, y)
            return objective_l1(est.coef_, est.intercept_), np.count_nonzero(est.coef_)

        ladders["sklearn Lasso"] = run_ladder(
            "sklearn Lasso", sklearn_l1, [1e-4, 1e-5, 1e-6, 1e-7, 1e-8], best_of(ladders))
    report("L1", ladders)
    if args.only_l1:
        return
    layout_comparison(design, y, lam)

    # -- MCP on the unit-curvature design ------------------------------------
    curv = np.asarray(M.multiply(M).mean(axis=0)).ravel()
    unit = BlockDesign.from_leaf_table(
        design.leaf_table, design.leaf_values / np.sqrt(curv), design.block_ptr)
    U = unit.tocsc()
    gamma = 3.0
    lam = pick_lambda(unit, y, MCP(gamma=gamma), 0.2)
    print(f"\nMCP, gamma = {gamma}, lambda = {lam:.6g} (unit-curvature design)")
    ladders = {}

    def firecy_mcp(tol):
        res = solve(unit, y, MCP(lam, gamma), tol=tol)
        return res.objective, res.n_rules

    def objective_mcp(coef, intercept):
        r = y - intercept - U @ coef
        a = np.abs(coef)
        pen = np.where(a <= gamma * lam, lam * a - a * a / (2 * gamma), gamma * lam ** 2 / 2)
        return 0.5 * np.mean(r * r) + pen.sum()

    def skglm_mcp(tol):
        est = skglm.MCPRegression(alpha=lam, gamma=gamma, tol=tol, max_iter=200,
                                  max_epochs=100_000).fit(U, y)
        return objective_mcp(est.coef_, est.intercept_), np.count_nonzero(est.coef_)

    skglm.MCPRegression(alpha=lam, gamma=gamma, tol=1e-2).fit(U[:200], y[:200])
    ladders["firecy"] = run_ladder("firecy", firecy_mcp, [1e-4, 1e-6, 1e-8, 1e-10])
    ladders["skglm MCPRegression"] = run_ladder(
        "skglm MCPRegression", skglm_mcp, [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10],
        best_of(ladders))
    report("MCP", ladders)

    fusion_and_group_l0(design, y, M, args)
    logistic_comparison(args)


def classifier_design(n_samples, n_trees, max_depth, seed=0):
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from firecy.ensembles import rule_ensemble_from_model

    X, y = make_classification(n_samples=n_samples, n_features=20, n_informative=8,
                               flip_y=0.05, random_state=seed)
    rf = RandomForestClassifier(
        n_estimators=n_trees, max_depth=max_depth, random_state=seed, n_jobs=-1
    ).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    return design, y.astype(np.float64)


def logistic_comparison(args):
    """Logistic + L1: firecy, scikit-learn (saga) and skglm on one objective."""
    n, T, depth = (2000, 100, 4) if args.quick else (5000, 250, 5)
    design, y = classifier_design(n, T, depth)
    M = design.tocsc()
    Mr = M.tocsr()
    print(f"\nlogistic design: {n} rows, {design.n_blocks} trees, {design.n_columns} rules, "
          f"nnz {M.nnz}")
    import skglm

    skglm.SparseLogisticRegression(alpha=0.01, tol=1e-2).fit(M[:200], y[:200])  # numba

    for fraction in (float(f) for f in args.logistic_fractions.split(",")):
        lam = pick_lambda(design, y, L1(), fraction, datafit="logistic")

        def objective(coef, intercept):
            eta = intercept + Mr @ coef
            return np.mean(np.logaddexp(0.0, eta) - y * eta) + lam * np.abs(coef).sum()

        def firecy_fit(tol):
            res = solve(design, y, L1(lam), datafit="logistic", tol=tol)
            return res.objective, res.n_rules

        def skglm_fit(tol):
            est = skglm.SparseLogisticRegression(alpha=lam, tol=tol, max_iter=200,
                                                 max_epochs=100_000).fit(M, y)
            return (objective(est.coef_.ravel(), float(np.ravel(est.intercept_)[0])),
                    np.count_nonzero(est.coef_))

        print(f"\nlogistic + L1, {fraction:.0%} of the rules, lambda = {lam:.6g}")
        ladders = {"firecy": run_ladder("firecy", firecy_fit, [1e-4, 1e-6, 1e-8, 1e-10])}
        ladders["skglm SparseLogReg"] = run_ladder(
            "skglm SparseLogReg", skglm_fit, [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10],
            best_of(ladders))
        if not args.no_sklearn:
            from sklearn.linear_model import LogisticRegression

            def sklearn_fit(tol):
                est = LogisticRegression(l1_ratio=1.0, C=1.0 / (n * lam), solver="saga",
                                         tol=tol, max_iter=100_000).fit(Mr, y)
                return (objective(est.coef_.ravel(), float(est.intercept_[0])),
                        np.count_nonzero(est.coef_))

            ladders["sklearn saga"] = run_ladder(
                "sklearn saga", sklearn_fit, [1e-4, 1e-6, 1e-8, 1e-10], best_of(ladders))
        report(f"logistic + L1 ({fraction:.0%})", ladders)


def layout_comparison(design, y, lam):
    """The tree fast path (leaf table, one value per column) against the
    general block-CSC layout on the same design, both to tol 1e-8."""
    general = BlockDesign.from_matrix(design.tocsc(), design.block_ptr)
    times = {}
    for name, d in (("tree layout", design), ("general CSC layout", general)):
        for strategy in ("working_set", "greedy"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                res = solve(d, y, L1(lam), tol=1e-8 if strategy == "working_set" else 1e-5,
                            strategy=strategy, max_iter=400 * d.n_blocks)
                times[name, strategy] = time.perf_counter() - t0
            print(f"  {name:<20} {strategy:<12} {times[name, strategy]:8.3f} s  "
                  f"F={res.objective:.12e}  updates={res.n_iter}")
    for strategy in ("working_set", "greedy"):
        print(f"  general / tree time ratio ({strategy}): "
              f"{times['general CSC layout', strategy] / times['tree layout', strategy]:.2f}")


def fusion_and_group_l0(design, y, M, args):
    """Fusion and group-L0: time to a converged objective; cvxpy where it
    solves the same problem (L1 + fusion)."""
    from firecy.penalties import GroupL0, L1Fusion, MCPFusion
    from firecy.solver import fire_path, group_l0_path

    ptr = design.block_ptr
    ratio = 0.5
    lam = pick_lambda(design, y, L1Fusion(1.0, ratio), 0.05)
    print(f"\nL1 + fusion (ratio {ratio}), lambda = {lam:.6g}")
    ladders = {}

    def firecy_fused(tol):
        res = solve(design, y, L1Fusion(lam, ratio), tol=tol)
        return res.objective, res.n_rules

    ladders["firecy"] = run_ladder("firecy", firecy_fused, [1e-4, 1e-6, 1e-8, 1e-10])
    if not args.no_cvxpy:
        import cvxpy as cp

        def cvxpy_fused(tol):
            w, b = cp.Variable(M.shape[1]), cp.Variable()
            tv = sum(cp.norm1(cp.diff(w[ptr[t]:ptr[t + 1]])) for t in range(len(ptr) - 1))
            prob = cp.Problem(cp.Minimize(
                0.5 * cp.sum_squares(y - b - M @ w) / len(y) + lam * cp.norm1(w)
                + ratio * lam * tv))
            prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
            coef = w.value
            r = y - b.value - M @ coef
            tvv = sum(np.abs(np.diff(coef[ptr[t]:ptr[t + 1]])).sum() for t in range(len(ptr) - 1))
            obj = 0.5 * np.mean(r * r) + lam * np.abs(coef).sum() + ratio * lam * tvv
            return obj, int(np.sum(np.abs(coef) > 1e-8))

        ladders["cvxpy (Clarabel)"] = run_ladder(
            "cvxpy (Clarabel)", cvxpy_fused, [1e-6, 1e-8, 1e-10], best_of(ladders))
    report("L1 + fusion", ladders)

    print("\nMCP + fusion path (gamma 1.1, ratio 0.5, 20 lambdas, eps 1e-2)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        path = fire_path(design, y, MCPFusion(1.0, 1.1, 0.5), n_lambdas=20, eps=1e-2, tol=1e-6)
        seconds = time.perf_counter() - t0
    print(f"  firecy path: {seconds:.3f} s, rules {path.n_rules[1]} .. {path.n_rules[-1]}, "
          f"all converged: {bool(path.converged.all())}")

    print("\ngroup-L0 over trees on MCP (gamma 1.1), 10 lam0 values")
    lam_s = pick_lambda(design, y, MCP(gamma=1.1), 0.02)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        path = group_l0_path(design, y, GroupL0(MCP(lam_s, 1.1), 1.0), n_lam0s=10, eps=1e-2)
        seconds = time.perf_counter() - t0
    n_trees = [int(sum(np.any(c[ptr[t]:ptr[t + 1]] != 0) for t in range(design.n_blocks)))
               for c in path.coefs]
    print(f"  firecy lam0 path: {seconds:.3f} s, trees used {n_trees}, "
          f"all converged: {bool(path.converged.all())}")


if __name__ == "__main__":
    main()
