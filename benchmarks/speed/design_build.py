"""Benchmark: build the design matrix (and the leaf table) from a fitted model.

Times only firecy's part -- library leaf ids -> leaf table / CSC design --
separately from the library's own leaf-id call, and measures its peak memory
with tracemalloc (numpy reports its buffers to tracemalloc), compared with the
size of the design itself (data + indices + indptr).

Goal (issue "RuleEnsemble"): 100,000 rows x 500 trees of depth 6 in under 2 s
and under 1.5 times the design's size.

Usage::

    python benchmarks/speed/design_build.py                       # XGBoost, the goal size
    python benchmarks/speed/design_build.py --library sklearn     # sklearn RandomForest
    python benchmarks/speed/design_build.py --rows 20000 --trees 100 --json out.json
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import time
import tracemalloc

import sys

import numpy as np

try:
    from firecy.ensembles import rule_ensemble_from_model
except ImportError:  # run from a source checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    from firecy.ensembles import rule_ensemble_from_model


def make_data(n_rows, n_features, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
    y = X[:, 0] + np.sin(3 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.5 * rng.normal(size=n_rows)
    return X, y


def fit_model(library, X, y, n_trees, depth, n_jobs):
    """A model of n_trees full-ish trees of the given depth, fitted quickly."""
    if library == "xgboost":
        import xgboost as xgb

        # hist with few bins and row subsampling keeps 500 rounds on 100k rows
        # to well under a minute on 2 cores.
        return xgb.XGBRegressor(
            n_estimators=n_trees, max_depth=depth, tree_method="hist", max_bin=32,
            subsample=0.5, learning_rate=0.1, n_jobs=n_jobs, random_state=0,
        ).fit(X, y)
    if library == "lightgbm":
        import lightgbm as lgb

        return lgb.LGBMRegressor(
            n_estimators=n_trees, max_depth=depth, num_leaves=2 ** depth,
            min_child_samples=5, max_bin=32, subsample=0.5, subsample_freq=1,
            n_jobs=n_jobs, random_state=0, verbose=-1,
        ).fit(X, y)
    if library == "sklearn":
        from sklearn.ensemble import RandomForestRegressor

        # max_samples small: the trees stay depth-limited and fitting is fast.
        return RandomForestRegressor(
            n_estimators=n_trees, max_depth=depth, max_samples=2000,
            max_features=0.5, n_jobs=n_jobs, random_state=0,
        ).fit(X, y)
    raise ValueError(library)


def design_bytes(M):
    return M.data.nbytes + M.indices.nbytes + M.indptr.nbytes


def best_time(fn, repeat):
    """Best wall-clock and best CPU time (this process) over ``repeat`` runs.

    The CPU time is what to compare on a shared machine: the wall time of a
    single-threaded numpy step grows with the machine's load, its CPU time
    much less.
    """
    walls, cpus = [], []
    out = None
    for _ in range(repeat):
        out = None
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus), out


def peak_memory(fn):
    """Peak bytes traced while fn runs, above what was allocated before it."""
    gc.collect()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base, out


def run(library, n_rows, n_trees, depth, n_features, repeat, n_jobs, fit_rows):
    X, y = make_data(n_rows, n_features)
    # Growing the trees on a subsample keeps the fit short; they are still
    # full depth-`depth` trees, and the design is built for all n_rows rows.
    m = min(fit_rows or n_rows, n_rows)
    t0 = time.perf_counter()
    model = fit_model(library, X[:m], y[:m], n_trees, depth, n_jobs)
    t_fit = time.perf_counter() - t0

    t0 = time.perf_counter()
    ens = rule_ensemble_from_model(model)
    t_extract = time.perf_counter() - t0

    t0 = time.perf_counter()
    ids = ens.apply(X)  # the library's own leaf-id call: not ours
    t_ids = time.perf_counter() - t0

    t_design, c_design, M = best_time(lambda: ens.design_from_ids(ids), repeat)
    nbytes = design_bytes(M)
    del M
    t_table, c_table, table = best_time(lambda: ens.leaf_table_from_ids(ids), repeat)
    table_bytes = table.nbytes
    t_from_table, c_from_table, M = best_time(
        lambda: ens.design_from_leaf_table(table), repeat)
    del M, table

    peak_design, M = peak_memory(lambda: ens.design_from_ids(ids))
    del M
    peak_table, table = peak_memory(lambda: ens.leaf_table_from_ids(ids))
    del table

    return {
        "library": library,
        "rows": n_rows,
        "trees": ens.n_trees,
        "depth": depth,
        "rules": ens.n_rules,
        "nnz": n_rows * ens.n_trees,
        "fit_rows": m,
        "fit_s": t_fit,
        "extract_rules_s": t_extract,
        "library_leaf_ids_s": t_ids,
        "leaf_ids_dtype": str(ids.dtype),
        "design_from_ids_s": t_design,
        "design_from_ids_cpu_s": c_design,
        "design_bytes": nbytes,
        "design_peak_bytes": peak_design,
        "design_peak_ratio": peak_design / nbytes,
        "leaf_table_from_ids_s": t_table,
        "leaf_table_from_ids_cpu_s": c_table,
        "leaf_table_bytes": table_bytes,
        "leaf_table_peak_bytes": peak_table,
        "design_from_leaf_table_s": t_from_table,
        "design_from_leaf_table_cpu_s": c_from_table,
        "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus",
        "numpy": np.__version__,
    }


def report(r):
    mib = 2.0 ** 20
    print(f"{r['library']}: {r['rows']:,} rows x {r['trees']} trees of depth {r['depth']} "
          f"({r['rules']:,} rules, {r['nnz']:,} nonzeros)")
    print(f"  fit on {r['fit_rows']:,} rows {r['fit_s']:.1f} s, "
          f"rule extraction {r['extract_rules_s']:.2f} s, "
          f"library leaf ids {r['library_leaf_ids_s']:.2f} s ({r['leaf_ids_dtype']})")
    print(f"  design from leaf ids:   {r['design_from_ids_s']:.3f} s "
          f"(cpu {r['design_from_ids_cpu_s']:.3f} s), "
          f"peak {r['design_peak_bytes'] / mib:.0f} MiB = "
          f"{r['design_peak_ratio']:.2f} x the design ({r['design_bytes'] / mib:.0f} MiB)")
    print(f"  leaf table from ids:    {r['leaf_table_from_ids_s']:.3f} s "
          f"(cpu {r['leaf_table_from_ids_cpu_s']:.3f} s), "
          f"peak {r['leaf_table_peak_bytes'] / mib:.0f} MiB "
          f"(table {r['leaf_table_bytes'] / mib:.0f} MiB)")
    print(f"  design from leaf table: {r['design_from_leaf_table_s']:.3f} s "
          f"(cpu {r['design_from_leaf_table_cpu_s']:.3f} s)")
    if r["load_average_1min"] is not None:
        print(f"  machine load average {r['load_average_1min']:.2f} on {os.cpu_count()} cpus")
    ok_t = r["design_from_ids_s"] < 2.0
    ok_m = r["design_peak_ratio"] < 1.5
    print(f"  goal (< 2 s, < 1.5 x design): time {'met' if ok_t else 'MISSED'}, "
          f"memory {'met' if ok_m else 'MISSED'}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--library", default="xgboost", choices=["xgboost", "lightgbm", "sklearn"])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--trees", type=int, default=500)
    p.add_argument("--depth", type=int, default=6)
    p.add_argument("--features", type=int, default=20)
    p.add_argument("--fit-rows", type=int, default=20_000,
                   help="rows the model is fitted on (0: all)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--json", help="also write the results to this file")
    a = p.parse_args(argv)
    r = run(a.library, a.rows, a.trees, a.depth, a.features, a.repeat, a.n_jobs,
            a.fit_rows)
    report(r)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(r, fh, indent=2)


if __name__ == "__main__":
    main()
