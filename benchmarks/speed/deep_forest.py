"""The deep forest of issue 14, every stage from forest to L1 path, with time
and peak memory per stage.

250 unlimited-depth trees (scikit-learn RandomForestRegressor) on 11,000
friedman1 rows, about 1.7 million rules. Stages:

* ``fit``: the forest (not firecy; cached as a pickle in ``--cache``);
* ``extraction``: ``rule_ensemble_from_model``;
* ``leaf_table``: ``RuleEnsemble.leaf_table(X)``;
* ``design``: ``BlockDesign.from_leaf_table`` (what the solver uses);
* ``path``: ``fire_path(design, y, L1(), n_lambdas=50, eps=1e-4)`` (tol 1e-6);
* ``estimator``: what a user calls, ``FIRERegressor(estimator=forest).fit(X, y)``
  at its defaults (MCP + fusion, 14 rules, 5-fold CV, ``rule_depth="auto"``,
  which cuts these trees at depth 3), with the test R^2 of the rules and of
  the forest on 5000 fresh rows; ``cpu_seconds`` is the fit's CPU time (all
  threads), the figure to read on a loaded machine. ``n_jobs=None`` (the
  default) threads the CV folds over the cores (``threads``);
  ``--n-jobs 1`` runs them in one thread. ``fold_concurrency`` is the fold
  tasks' summed thread CPU over the fold stage's wall span: above 1 only if
  two folds computed at once, i.e. the solves release the GIL.

Results, before/after and the commands: ``benchmarks/speed/RESULTS.md``.

Each stage runs in its own process (``--stage``; the driver runs them all),
which loads what the previous stage cached, so its peak resident memory
(``ru_maxrss``) is the stage's own plus its inputs'. ``--one-process`` runs
all stages in one process instead (the peak a user sees in a script).

    python benchmarks/speed/deep_forest.py [--one-process] [--cache DIR]
    python benchmarks/speed/deep_forest.py --stage estimator [--n-jobs 2] [--cache DIR]
"""
import argparse
import ast
import os
import pickle
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

STAGES = ["fit", "extraction", "leaf_table", "design", "path", "estimator"]


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def data(rows, seed=0):
    from sklearn.datasets import make_friedman1

    return make_friedman1(n_samples=rows, n_features=10, noise=1.0, random_state=seed)


def fit_forest(X, y, trees, seed=0):
    """The deep forest: ``trees`` unlimited-depth trees."""
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=trees, max_depth=None, n_jobs=2,
                                 random_state=seed).fit(X, y)


def forest_path(cache, rows, trees, seed=0):
    return os.path.join(cache, f"forest_{rows}_{trees}_{seed}.pkl")


def forest(rows, trees, cache, seed=0):
    """``(X, y, model)``: friedman1 and the deep forest fitted on it, read from
    the directory ``cache`` if a previous run saved it there, else fitted (and
    saved, unless ``cache`` is empty). extraction_speed.py, predict_routing.py
    and deep_path_peer.py share this forest and its cache."""
    X, y = data(rows, seed)
    path = forest_path(cache, rows, trees, seed) if cache else None
    if path and os.path.exists(path):
        with open(path, "rb") as fh:
            return X, y, pickle.load(fh)
    model = fit_forest(X, y, trees, seed)
    if path:
        os.makedirs(cache, exist_ok=True)
        with open(path, "wb") as fh:
            pickle.dump(model, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return X, y, model


def cache_path(args, name):
    if name == "forest.pkl":
        return forest_path(args.cache, args.rows, args.trees)
    return os.path.join(args.cache, f"deep_{args.rows}_{args.trees}_{name}")


def stage_fit(args, st):
    X, y = data(args.rows)
    t0 = time.perf_counter()
    model = fit_forest(X, y, args.trees)
    st["seconds"] = time.perf_counter() - t0
    st["nodes"] = sum(int(e.tree_.node_count) for e in model.estimators_)
    with open(cache_path(args, "forest.pkl"), "wb") as fh:
        pickle.dump(model, fh, protocol=pickle.HIGHEST_PROTOCOL)


def load_forest(args):
    with open(cache_path(args, "forest.pkl"), "rb") as fh:
        return pickle.load(fh)


def stage_extraction(args, st, model=None):
    from firecy.ensembles import rule_ensemble_from_model

    model = load_forest(args) if model is None else model
    t0 = time.perf_counter()
    ens = rule_ensemble_from_model(model)
    st["seconds"] = time.perf_counter() - t0
    st["rules"] = int(ens.n_rules)
    return ens


def stage_leaf_table(args, st, ens=None):
    X, _ = data(args.rows)
    ens = stage_extraction(args, {}, None) if ens is None else ens
    t0 = time.perf_counter()
    table = ens.leaf_table(X)
    st["seconds"] = time.perf_counter() - t0
    np.savez(cache_path(args, "table.npz"), table=table, vals=ens.leaf_values,
             ptr=ens.block_ptr)
    return table, ens


def stage_design(args, st, parts=None):
    from firecy.solver import BlockDesign

    if parts is None:
        z = np.load(cache_path(args, "table.npz"))
        parts = z["table"], z["vals"], z["ptr"]
    t0 = time.perf_counter()
    design = BlockDesign.from_leaf_table(*parts)
    st["seconds"] = time.perf_counter() - t0
    return design


def stage_path(args, st, design=None):
    from firecy.penalties import L1
    from firecy.solver import fire_path

    design = stage_design(args, {}) if design is None else design
    _, y = data(args.rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        path = fire_path(design, y, L1(), n_lambdas=50, eps=1e-4, tol=args.tol)
        st["seconds"] = time.perf_counter() - t0
    st["rules_at_end"] = int(path.n_rules[-1])
    st["converged"] = bool(path.converged.all())
    st["objective_at_end"] = float(path.objectives[-1])


def trace_fold_tasks():
    """Record each CV fold task's thread CPU time and wall interval.

    The GIL check: the fold tasks' thread CPU summed over the wall span of
    the fold stage can exceed 1 only if two tasks computed at the same time,
    which the GIL forbids to Python code (and to a solve that held it).
    """
    import threading

    from firecy.estimators import _selection

    inner = _selection.fold_errors_task
    spans = []
    lock = threading.Lock()

    def traced(*a, **k):
        t0, c0 = time.perf_counter(), time.thread_time()
        out = inner(*a, **k)
        with lock:
            spans.append((t0, time.perf_counter(), time.thread_time() - c0))
        return out

    _selection.fold_errors_task = traced
    return spans


def stage_estimator(args, st, model=None):
    from firecy import FIRERegressor
    from firecy._threads import effective_n_jobs

    model = load_forest(args) if model is None else model
    X, y = data(args.rows)
    X_test, y_test = data(5000, seed=1)
    spans = trace_fold_tasks()
    st["load_before"] = round(os.getloadavg()[0], 2)
    st["threads"] = effective_n_jobs(args.n_jobs, 5)
    t0, c0 = time.perf_counter(), time.process_time()
    # fixed folds: runs (and before / after) fit the same model
    est = FIRERegressor(estimator=model, n_jobs=args.n_jobs, random_state=0).fit(X, y)
    st["seconds"] = time.perf_counter() - t0
    st["cpu_seconds"] = round(time.process_time() - c0, 2)
    st["load_after"] = round(os.getloadavg()[0], 2)
    if spans:
        wall = max(e for _, e, _ in spans) - min(b for b, _, _ in spans)
        cpu = sum(c for _, _, c in spans)
        st["fold_stage_wall"] = round(wall, 2)
        st["fold_tasks_cpu"] = round(cpu, 2)
        st["fold_concurrency"] = round(cpu / wall, 2)  # > 1: tasks ran at once
    st["rule_depth"] = est.rule_depth_
    st["rules"] = int(est.n_rules_)
    st["test_r2"] = round(float(est.score(X_test, y_test)), 4)
    st["forest_test_r2"] = round(float(model.score(X_test, y_test)), 4)


def run_stage(args):
    st = {}
    globals()[f"stage_{args.stage}"](args, st)
    st["peak_mib"] = peak_mib()
    print("RESULT", repr(st), flush=True)


def one_process(args):
    out = {}
    for name in STAGES:
        out[name] = {}
    stage_fit(args, out["fit"])
    out["fit"]["peak_mib"] = peak_mib()
    model = load_forest(args)
    ens = stage_extraction(args, out["extraction"], model)
    out["extraction"]["peak_mib"] = peak_mib()
    table, _ = stage_leaf_table(args, out["leaf_table"], ens)
    out["leaf_table"]["peak_mib"] = peak_mib()
    design = stage_design(args, out["design"], (table, ens.leaf_values, ens.block_ptr))
    out["design"]["peak_mib"] = peak_mib()
    stage_path(args, out["path"], design)
    out["path"]["peak_mib"] = peak_mib()
    stage_estimator(args, out["estimator"], model)
    out["estimator"]["peak_mib"] = peak_mib()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=11000)
    ap.add_argument("--trees", type=int, default=250)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--cache", default="/tmp/firecy_bench_cache")
    ap.add_argument("--stage", choices=STAGES)
    ap.add_argument("--skip-fit", action="store_true", help="reuse the cached forest")
    ap.add_argument("--one-process", action="store_true")
    ap.add_argument("--n-jobs", type=int, default=None,
                    help="the estimator's n_jobs (threads over its CV folds); default None "
                         "(the estimator's default: the available cores)")
    args = ap.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    if args.stage:
        return run_stage(args)
    if args.one_process:
        out = one_process(args)
    else:
        out = {}
        for name in STAGES:
            if name == "fit" and args.skip_fit and os.path.exists(cache_path(args, "forest.pkl")):
                continue
            cmd = [sys.executable, __file__, "--stage", name, "--rows", str(args.rows),
                   "--trees", str(args.trees), "--tol", str(args.tol), "--cache", args.cache]
            if args.n_jobs is not None:
                cmd += ["--n-jobs", str(args.n_jobs)]
            res = subprocess.run(cmd, capture_output=True, text=True, check=True)
            line = [ln for ln in res.stdout.splitlines() if ln.startswith("RESULT ")][-1]
            out[name] = ast.literal_eval(line[len("RESULT "):])
            print(f"{name:<11} {out[name]}", flush=True)
    print("\n| stage | seconds | peak RSS (MiB) | notes |")
    print("|---|---:|---:|---|")
    for name, st in out.items():
        notes = ", ".join(f"{k} {v}" for k, v in st.items() if k not in ("seconds", "peak_mib"))
        print(f"| {name} | {st['seconds']:.2f} | {st['peak_mib']:.0f} | {notes} |")


if __name__ == "__main__":
    main()
