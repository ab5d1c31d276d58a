"""Benchmark: what a plug-in penalty costs against firecy's built-in one.

Solves the same lasso problem (a random forest's leaves on Friedman #1) with

* ``L1``: firecy's built-in penalty (the reference);
* ``ExampleL1``: the same penalty compiled in another package against
  firecy's public header (examples/firecy-plugin-example; skipped with a note
  when it is not installed: ``pip install --no-build-isolation
  ./examples/firecy-plugin-example``);
* ``PyL1``: the same penalty written in Python (the ``PythonPenalty`` path:
  one GIL acquisition and a few NumPy calls per block call), with and
  without its local quadratic model (which enables the engine's Newton
  steps);

and reports, for each, the solve time (median over ``--runs`` interleaved
runs), its ratio to ``L1`` (the median of the run-by-run ratios: the runs
are paired, A B A B ..., so a drift of the machine's speed cancels), and the
largest coefficient difference from ``L1``'s solution. The same for a whole
``FIRERegressor`` fit (a 30-point path with validation) by name.

Goals (issue 11): the compiled plug-in gives L1's solution to 1e-10 within
1.2 times its time; the Python one gives the same solution, its slowdown
reported.

Usage::

    python benchmarks/speed/plugin_overhead.py [--runs 7] [--n-samples 5000] [--n-trees 300]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

try:
    import firecy
except ImportError:  # run from a source checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    import firecy

from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor

from firecy import FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import L1, available_penalties, make_penalty
from firecy.solver import BlockDesign, solve


class PyL1:
    """The lasso penalty in plain Python (the Python penalty protocol)."""

    is_separable = True

    def __init__(self, lam=1.0):
        self.lam = lam

    def value(self, w, curvature):
        return self.lam * np.abs(w).sum()

    def prox(self, z, step, curvature):
        return np.sign(z) * np.maximum(np.abs(z) - self.lam / step, 0.0)

    def subdiff(self, w, curvature):
        s = np.sign(w) * self.lam
        return np.where(w == 0, -self.lam, s), np.where(w == 0, self.lam, s)

    def lambda_max(self, grad, curvature):
        return np.abs(grad).max()


class PyL1Newton(PyL1):
    """With its exact local model: the engine may take Newton steps."""

    def local_quadratic(self, w, curvature):
        return self.lam * np.sign(w), np.zeros_like(w)


def timed(fn, runs, names):
    """Interleaved runs of fn(name) for every name; times[name] = list."""
    times = {n: [] for n in names}
    results = {}
    for _ in range(runs):
        for n in names:
            t0 = time.perf_counter()
            results[n] = fn(n)
            times[n].append(time.perf_counter() - t0)
    return times, results


def report(title, times, diffs, ref="L1"):
    print(f"\n{title}")
    print(f"  {'penalty':<22}{'median s':>10}{'ratio to L1':>14}{'ratio range':>18}"
          f"{'max |coef - L1|':>18}")
    for name, ts in times.items():
        ratios = np.array(ts) / np.array(times[ref])
        print(f"  {name:<22}{np.median(ts):>10.4f}{np.median(ratios):>14.3f}"
              f"{f'{ratios.min():.2f}-{ratios.max():.2f}':>18}{diffs[name]:>18.2e}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--n-samples", type=int, default=5000)
    parser.add_argument("--n-trees", type=int, default=300)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--lam", type=float, default=0.01)
    parser.add_argument("--tol", type=float, default=1e-8)
    args = parser.parse_args(argv)

    X, y = make_friedman1(n_samples=args.n_samples, noise=1.0, random_state=0)
    rf = RandomForestRegressor(args.n_trees, max_depth=args.depth, random_state=0,
                               n_jobs=1).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    print(f"firecy {firecy.__version__} ({os.path.dirname(firecy.__file__)}), "
          f"Python {platform.python_version()}, {platform.machine()}")
    print(f"design: {design.n_samples} rows x {design.n_columns} leaves in {design.n_blocks} "
          f"trees (depth {args.depth}); lasso lam={args.lam}, tol={args.tol}, "
          f"{args.runs} interleaved runs")

    penalties = {"L1": lambda: L1(args.lam)}
    if "example_l1" in available_penalties():
        try:
            make_penalty("example_l1", lam=args.lam)
            penalties["ExampleL1 (compiled)"] = lambda: make_penalty("example_l1", lam=args.lam)
        except ImportError as exc:
            print(f"note: example_l1 is registered but cannot be imported: {exc}")
    else:
        print("note: firecy-plugin-example is not installed: no compiled plug-in timed")
    penalties["PyL1 + local model"] = lambda: PyL1Newton(args.lam)
    penalties["PyL1"] = lambda: PyL1(args.lam)

    def run_solve(name):
        return solve(design, y, penalties[name](), tol=args.tol, max_iter=10**7)

    times, res = timed(run_solve, args.runs, list(penalties))
    diffs = {n: float(np.max(np.abs(r.coef - res["L1"].coef))) for n, r in res.items()}
    for n, r in res.items():
        if not r.converged:
            print(f"warning: {n} did not converge")
    report("solve (one lam):", times, diffs)

    names = {"L1": "l1"}
    if "ExampleL1 (compiled)" in penalties:
        names["ExampleL1 (compiled)"] = "example_l1"
    names["PyL1 + local model"] = PyL1Newton()

    def run_fit(name):
        # fusion is a built-in penalties' parameter (a registered one ignores it)
        return FIRERegressor(rf, penalty=names[name], fusion=0.0, n_lambdas=30, max_rules=50,
                             random_state=0).fit(X, y)

    times, est = timed(run_fit, max(3, args.runs // 2), list(names))
    diffs = {n: float(np.max(np.abs(e.coef_ - est["L1"].coef_))) for n, e in est.items()}
    report("FIRERegressor fit by name (30-point path, validation split, <= 50 rules):",
           times, diffs)


if __name__ == "__main__":
    main()
