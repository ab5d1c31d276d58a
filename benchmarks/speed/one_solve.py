"""One solve or path of a named workload, for timing one build against another
from outside (``farm-bench``: the process, design loading included).

    farm-bench -n 5 --timeout 900 -- env PYTHONPATH=. python benchmarks/speed/one_solve.py mcp \\
        --vs "env PYTHONPATH=/work/baseline python benchmarks/speed/one_solve.py mcp"

Workloads (the designs of compare_peers.py, cached as .npz in $TMPDIR after
the first run so that a timed run does not fit a forest):

* ``l1:LAM`` / ``l1-noicpt:LAM``: one L1 solve (tol 1e-8) on the 8000-rule
  friedman1 forest, y standardised, with / without an intercept;
* ``mcp``: MCP(lam, 3) at 5% of lambda_max on that forest (tol 1e-8);
* ``mcp_fusion_path``: the MCP + fusion path (gamma 1.1, ratio 0.5, 20
  points down to 1e-2 lambda_max, tol 1e-6) on that forest;
* ``logistic:FRAC``: logistic + L1 at FRAC of lambda_max on the
  random-forest classifier design (5000 rows, 250 trees of depth 5).

Prints the objective reached and the number of rules, so that two builds are
checked to solve the same problem.
"""
import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))


def cached(name, make):
    path = os.path.join(tempfile.gettempdir(), f"firecy_bench_{name}.npz")
    if not os.path.exists(path):
        design, y = make()
        np.savez(path, table=design.leaf_table, vals=design.leaf_values, ptr=design.block_ptr,
                 y=y)
    from firecy.solver import BlockDesign

    z = np.load(path)
    return BlockDesign.from_leaf_table(z["table"], z["vals"], z["ptr"]), z["y"]


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("workload", help="l1:LAM, l1-noicpt:LAM, mcp, mcp_fusion_path or "
                                     "logistic:FRAC (below)")
    work = ap.parse_args().workload

    from compare_peers import classifier_design, forest_design
    from firecy.penalties import L1, MCP, MCPFusion
    from firecy.solver import fire_path, lambda_max, solve

    kind, _, arg = work.partition(":")
    if kind == "logistic":
        design, y = cached("classifier", lambda: classifier_design(5000, 250, 5))
    else:
        design, y = cached("friedman", lambda: forest_design(5000, 250, 5))
        y = (y - y.mean()) / y.std()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind in ("l1", "l1-noicpt"):
            res = solve(design, y, L1(float(arg)), tol=1e-8, fit_intercept=kind == "l1",
                        max_iter=10**7)
            out = res.objective, res.n_rules
        elif kind == "mcp":
            lam = 0.05 * lambda_max(design, y, MCP(1.0, 3.0))
            res = solve(design, y, MCP(lam, 3.0), tol=1e-8)
            out = res.objective, res.n_rules
        elif kind == "mcp_fusion_path":
            path = fire_path(design, y, MCPFusion(1.0, 1.1, 0.5), n_lambdas=20, eps=1e-2,
                             tol=1e-6)
            out = path.objectives[-1], path.n_rules[-1]
        elif kind == "logistic":
            lam = float(arg) * lambda_max(design, y, L1(), datafit="logistic")
            res = solve(design, y, L1(lam), datafit="logistic", tol=1e-8)
            out = res.objective, res.n_rules
        else:
            raise SystemExit(f"unknown workload {work!r}")
    print(f"{work}: {time.perf_counter() - t0:.3f} s, objective {out[0]:.12e}, rules {out[1]}")


if __name__ == "__main__":
    main()
