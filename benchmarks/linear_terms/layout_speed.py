"""CPU time of solves on the tree, mixed and general layouts (issue 38, item 1).

    python benchmarks/linear_terms/layout_speed.py WORKLOAD [--repeat R] [--layout L]

Runs ``R`` times one workload on the friedman1 forest design of
``benchmarks/speed/one_solve.py`` (5000 rows, 250 trees of depth 5, cached in
$TMPDIR) and prints the CPU time (``time.process_time``) of the solves
alone, their median, the objective and the rule count (so that two builds
are checked to solve the same problem). It runs under any firecy build that
has the tree layout; ``--layout mixed|general`` needs this branch.

Workloads:

* ``l1:LAM``: one L1 solve (tol 1e-8), y standardised;
* ``greedy:LAM``: the same with ``strategy="greedy"`` (tol 1e-5): the
  engine's incremental gradient, a row kernel per changed row;
* ``mcp:FRAC``: MCP(lam, 3) at FRAC of lambda_max (tol 1e-8);
* ``logistic:FRAC``: logistic + L1 at FRAC of lambda_max, the classifier design;
* ``path``: the L1 path, 20 points down to 1e-2 lambda_max (tol 1e-6).

``--layout mixed`` appends 10 linear terms (the friedman1 features clipped at
their 2.5% / 97.5% quantiles, scaled to unit standard deviation) as blocks of
one column; ``--layout general`` stores the same matrix in the general layout.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "speed"))


def linear_columns(n_samples, seed=0):
    """The friedman1 features of the forest design, clipped and scaled."""
    from sklearn.datasets import make_classification, make_friedman1

    X, _ = make_friedman1(n_samples=n_samples, noise=1.0, random_state=seed)
    if X.shape[1] < 10:
        X = make_classification(n_samples=n_samples, n_features=10, random_state=seed)[0]
    lo, hi = np.quantile(X, [0.025, 0.975], axis=0)
    L = np.clip(X, lo, hi)
    return (L - L.mean(axis=0)) / L.std(axis=0)


def main():
    from one_solve import cached
    from compare_peers import classifier_design, forest_design
    from firecy.penalties import L1, MCP
    from firecy.solver import BlockDesign, fire_path, lambda_max, solve

    parser = argparse.ArgumentParser()
    parser.add_argument("workload")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--layout", default="tree", choices=["tree", "mixed", "general"])
    args = parser.parse_args()
    kind, _, arg = args.workload.partition(":")
    if kind == "logistic":
        design, y = cached("classifier", lambda: classifier_design(5000, 250, 5))
    else:
        design, y = cached("friedman", lambda: forest_design(5000, 250, 5))
        y = (y - y.mean()) / y.std()
    if args.layout != "tree":
        if kind == "logistic":
            from sklearn.datasets import make_classification
            X = make_classification(n_samples=5000, n_features=20, n_informative=8,
                                    flip_y=0.05, random_state=0)[0][:, :10]
            lo, hi = np.quantile(X, [0.025, 0.975], axis=0)
            L = np.clip(X, lo, hi)
            L = (L - L.mean(axis=0)) / L.std(axis=0)
        else:
            L = linear_columns(design.n_samples)
        design = design.with_general_blocks(L, np.arange(L.shape[1] + 1))
        if args.layout == "general":
            design = BlockDesign.from_matrix(design.tocsc(), design.block_ptr)
    times = []
    for _ in range(args.repeat):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.process_time()
            if kind == "l1":
                res = solve(design, y, L1(float(arg)), tol=1e-8, max_iter=10**7)
                out = res.objective, res.n_rules
            elif kind == "greedy":
                res = solve(design, y, L1(float(arg)), tol=1e-5, strategy="greedy",
                            max_iter=10**7)
                out = res.objective, res.n_rules
            elif kind == "mcp":
                lam = float(arg) * lambda_max(design, y, MCP(1.0, 3.0))
                res = solve(design, y, MCP(lam, 3.0), tol=1e-8)
                out = res.objective, res.n_rules
            elif kind == "logistic":
                lam = float(arg) * lambda_max(design, y, L1(), datafit="logistic")
                res = solve(design, y, L1(lam), datafit="logistic", tol=1e-8)
                out = res.objective, res.n_rules
            elif kind == "path":
                path = fire_path(design, y, L1(1.0), n_lambdas=20, eps=1e-2, tol=1e-6)
                out = path.objectives[-1], path.n_rules[-1]
            else:
                raise SystemExit(f"unknown workload {kind!r}")
            times.append(time.process_time() - t0)
    print(f"{args.workload} [{design.layout if hasattr(design, 'layout') else 'tree'}]: "
          f"median CPU {np.median(times):.4f} s over {len(times)} "
          f"(min {min(times):.4f}), objective {out[0]:.12e}, rules {out[1]}")


if __name__ == "__main__":
    main()
