"""Nanoseconds per touched nonzero in the engine's inner loops, next to scipy's
sparse mat-vecs over the same design (the memory-speed floor), in one process.

Design: the 8000-rule friedman1 forest of compare_peers.py (5000 rows, 250
trees of depth 5, 1.25M nonzeros), cached by one_solve.py.

* ``pass``: ``engine.objective_at(pen, w)`` recomputes the linear predictor
  (M w) and every column's gradient (M^T r) from the leaf table: two passes
  over the nonzeros. Floor: scipy ``M @ w`` + ``M.T @ r`` on the CSC design
  (float64 values, int32 indices).
* ``cd``: an MCP solve (coordinate descent, working set; MCP never runs the
  active-set solver): its block updates each touch the n rows of one tree,
  so touched nonzeros <= n_updates * n (an upper bound: the ns figure is a
  lower bound on the true cost per touched nonzero).
* ``active set``: an L1 solve at about 20% density; each of its rounds
  recomputes the gradient of every column (one pass) besides the support's
  Cholesky work, so ns per (rounds * nnz) mixes both.

    python benchmarks/speed/inner_loop.py [--repeat 20]
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))


def best_time(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    from compare_peers import forest_design
    from one_solve import cached

    from firecy.penalties import L1, MCP
    from firecy.solver import lambda_max
    from firecy.solver._problem import Problem

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()

    design, y = cached("friedman", lambda: forest_design(5000, 250, 5))
    y = (y - y.mean()) / y.std()
    M = design.tocsc()
    nnz, n = M.nnz, design.n_samples
    rng = np.random.default_rng(0)
    w = np.where(rng.random(design.n_columns) < 0.2, rng.normal(size=design.n_columns), 0.0)
    r = rng.normal(size=n)
    Mt = M.T.tocsr()  # scipy's M.T @ r on CSC is a CSR mat-vec of the transpose

    t_mv = best_time(lambda: M @ w, args.repeat)
    t_rmv = best_time(lambda: M.T @ r, args.repeat)
    t_rmv_csr = best_time(lambda: Mt @ r, args.repeat)
    problem = Problem(design, y, None, True)
    pen = L1(0.01)
    t_pass = best_time(lambda: problem.engine.objective_at(pen, w), args.repeat)
    print(f"design: {n} rows, {design.n_columns} columns, {nnz} nonzeros")
    print(f"scipy M @ w (CSC)            {1e9 * t_mv / nnz:6.2f} ns/nnz  ({1e3 * t_mv:.2f} ms)")
    print(f"scipy M.T @ r (CSC)          {1e9 * t_rmv / nnz:6.2f} ns/nnz  ({1e3 * t_rmv:.2f} ms)")
    print(f"scipy M.T @ r (CSR of M.T)   {1e9 * t_rmv_csr / nnz:6.2f} ns/nnz  "
          f"({1e3 * t_rmv_csr:.2f} ms)")
    print(f"firecy pass (M w + M^T r)    {1e9 * t_pass / (2 * nnz):6.2f} ns/nnz  "
          f"({1e3 * t_pass:.2f} ms for 2 x nnz; scipy's pair {1e3 * (t_mv + t_rmv):.2f} ms, "
          f"ratio {t_pass / (t_mv + t_rmv):.2f})")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lam = 0.05 * lambda_max(design, y, MCP(1.0, 3.0))
        problem = Problem(design, y, None, True)
        w0 = np.zeros(design.n_columns)
        t0 = time.perf_counter()
        res = problem.solve(MCP(lam, 3.0), w0, 1e-8, 10**7)
        t_cd = time.perf_counter() - t0
    touched = res.n_iter * n
    print(f"firecy CD (MCP solve)        {1e9 * t_cd / touched:6.2f} ns per row of a block "
          f"update ({res.n_iter} block updates x {n} rows, {t_cd:.2f} s)")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = Problem(design, y, None, True)
        w0 = np.zeros(design.n_columns)
        t0 = time.perf_counter()
        problem.solve(L1(0.0045), w0, 1e-8, 10**7)
        t_as = time.perf_counter() - t0
        qp = problem.engine.qp
    if qp is not None:
        print(f"firecy active set (L1 solve) {1e9 * t_as / (qp.n_rounds * nnz):6.2f} ns per "
              f"(round x nnz) ({qp.n_rounds} rounds, {np.count_nonzero(w0)} rules, "
              f"{qp.n_added} adds, {qp.n_dropped} drops, {t_as:.2f} s)")


if __name__ == "__main__":
    main()
