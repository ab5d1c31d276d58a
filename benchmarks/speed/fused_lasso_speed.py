"""Benchmark: the 1-D fused lasso solvers (firecy.penalties._fused_lasso).

Reports, for each C-level solver,

* nanoseconds per element on a signal of length 1,000,000, and
* microseconds per call at length 64 (the size of a tree's leaf block in
  firecy's block updates), cycling through 1,000 different signals ("64
  distinct"), and repeating one signal ("64 same").

timed by ``_fused_lasso._time_solver``: back-to-back calls in one ``nogil``
loop on preallocated (already faulted-in) buffers, so no Python overhead is
included, measured in this thread's CPU time. Each figure is the minimum over
``--runs`` runs (the least disturbed by other processes). The Python
wrappers' per-call time at length 64 is shown too, to size their validation
and allocation overhead.

Why two figures at length 64: the solvers' loops branch on the data, and
with one short signal repeated the branch predictor learns its exact path,
which makes calls 2-3 times cheaper than on fresh data. "64 distinct" is
what a block update pays; "64 same" is the usual microbenchmark.

Goals (issue "fused lasso"): under 30 ns per element at length 1e6, under
2 us per call at length 64.

Signal: piecewise-constant levels (mean run length 20) plus unit noise;
weights uniform on [0.5, 2]; MCP curvature = weights (gamma = 3); lam1 = 0.3.

Usage::

    python benchmarks/speed/fused_lasso_speed.py
    python benchmarks/speed/fused_lasso_speed.py --lams 0.1 1 10 --runs 7 --json out.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

try:
    from firecy.penalties import _fused_lasso as fl
except ImportError:  # run from a source checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    from firecy.penalties import _fused_lasso as fl


SOLVERS = {
    # name: (C solver, uses weights, lam1, gamma)
    "condat (unweighted)": ("condat", False, 0.0, None),
    "dp weighted": ("dp", True, 0.0, None),
    "dp weighted + L1": ("dp", True, 0.3, None),
    "dp weighted + MCP": ("dp_mcp", True, 0.3, 3.0),
}


def make_signal(n, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.geometric(1 / 20, size=n // 5 + 2)
    levels = rng.normal(scale=3.0, size=lengths.size)
    z = np.repeat(levels, lengths)[:n] + rng.normal(size=n)
    weights = rng.uniform(0.5, 2.0, size=n)
    return z, weights


def best_time(solver, z, lam, weights, lam1, gamma, repeat, runs):
    """Minimum over ``runs`` of the seconds per call."""
    return min(
        fl._time_solver(solver, z, lam, weights=weights, lam1=lam1, gamma=gamma,
                        repeat=repeat) / repeat
        for _ in range(runs))


def wrapper_time(name, z, lam, weights, lam1, gamma, repeat):
    solver = SOLVERS[name][0]
    if solver == "condat":
        call = lambda: fl.fused_lasso(z, lam)
    else:
        call = lambda: fl.fused_lasso_weighted(z, lam, weights, lam1, gamma)
    call()
    start = time.perf_counter()
    for _ in range(repeat):
        call()
    return (time.perf_counter() - start) / repeat


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-large", type=int, default=1_000_000)
    parser.add_argument("--n-small", type=int, default=64)
    parser.add_argument("--lams", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)

    z_large, w_large = make_signal(args.n_large)
    pairs = [make_signal(args.n_small, seed=s) for s in range(1, 1001)]
    z_many = np.array([p[0] for p in pairs])
    w_many = np.array([p[1] for p in pairs])
    z_small, w_small = z_many[0], w_many[0]
    small_repeat = max(1, 1_000_000 // max(args.n_small, 1))
    results = []
    print(f"{platform.processor() or platform.machine()}, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    print(f"{'solver':22s} {'lam':>6s} {'ns/elem @' + str(args.n_large):>16s} "
          f"{'us/call @' + str(args.n_small) + ' distinct':>20s} "
          f"{'same':>7s} {'wrapper':>8s}")
    for lam in args.lams:
        for name, (solver, weighted, lam1, gamma) in SOLVERS.items():
            w_l = w_large if weighted else None
            w_s = w_small if weighted else None
            large = best_time(solver, z_large, lam, w_l, lam1, gamma, 1, args.runs)
            distinct = best_time(solver, z_many, lam,
                                 w_many if weighted else None, lam1, gamma,
                                 small_repeat, args.runs)
            same = best_time(solver, z_small, lam, w_s, lam1, gamma,
                             small_repeat, args.runs)
            wrap = wrapper_time(name, z_small, lam, w_s, lam1, gamma, 20000)
            row = dict(solver=name, lam=lam, n_large=args.n_large,
                       ns_per_element=large / args.n_large * 1e9,
                       n_small=args.n_small, us_per_call=distinct * 1e6,
                       us_per_call_same_signal=same * 1e6,
                       wrapper_us_per_call=wrap * 1e6)
            results.append(row)
            print(f"{name:22s} {lam:6g} {row['ns_per_element']:16.1f} "
                  f"{row['us_per_call']:20.3f} "
                  f"{row['us_per_call_same_signal']:7.3f} "
                  f"{row['wrapper_us_per_call']:8.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(machine=platform.machine(), results=results), fh,
                      indent=2)


if __name__ == "__main__":
    main()
