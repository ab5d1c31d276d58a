"""Benchmark: what the user waits for, end to end (issue 48).

One process measures, on ``make_friedman1(n, 10, noise=1)`` (regression) and
its median split (classification), at each size ``n`` of ``--sizes``:

* ``fire_default``: ``FIRERegressor()`` at its defaults, its own forest
  included; ``fire_classifier``: ``FIREClassifier()`` at its defaults;
* ``forest`` and ``extraction``: a given ``RandomForestRegressor(500,
  max_depth=3)`` (not timed as FIRE's), ``forest.apply`` on the training rows
  (the pass over the data the extraction needs), and
  ``FIRERegressor(forest).fit`` (the extraction: rules, design, CV paths);
* ``fire_stable``: ``FIRERegressor(stable=True)``; ``stability``:
  ``fire.stability(X, y)`` (ten half fits) of the default fit;
* ``rulefit``: imodels ``RuleFitRegressor(max_rules=14)`` (its own trees
  included) and ``sirus``: ``SirusRegressor(num_rules=10)``, the peers at the
  same budget; ``rulefit_classifier`` / ``sirus_classifier`` likewise.

Every step reports CPU seconds (``time.process_time``: every thread of the
process), wall seconds, the held-out R2 (AUC for the classifiers) on 20,000
fresh rows, the number of terms, and the process's peak resident memory so
far. ``--parts`` picks steps (the peers and ``stability`` are the slow ones
at 200k rows). Results go to a CSV (one row per size and step), appended.

Run::

    PYTHONPATH=. python benchmarks/speed/end_to_end.py --sizes 2000 20000 \
        --out benchmarks/speed/end_to_end.csv
    PYTHONPATH=. python benchmarks/speed/end_to_end.py --sizes 1000000 \
        --parts fire_default --out benchmarks/speed/end_to_end.csv
"""
from __future__ import annotations

import argparse
import csv
import os
import resource
import time
import warnings

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import r2_score, roc_auc_score

PARTS = ("fire_default", "fire_classifier", "extraction", "fire_stable", "stability",
         "rulefit", "sirus", "rulefit_classifier", "sirus_classifier")
FIELDS = ["n", "part", "cpu_s", "wall_s", "score", "metric", "n_terms", "peak_rss_mib",
          "note"]
N_TEST = 20_000


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def data(n, seed=0):
    X, y = make_friedman1(n + N_TEST, 10, noise=1.0, random_state=seed)
    return X[:n], y[:n], X[n:], y[n:]


def n_terms_of(model):
    if hasattr(model, "model_"):
        return model.model_.n_terms
    if hasattr(model, "rules_") and hasattr(model.rules_, "__len__"):
        return len(model.rules_)
    return ""


def run(n, parts, writer, seed=0):
    from firecy import FIREClassifier, FIRERegressor

    X, y, Xt, yt = data(n, seed)
    cut = np.median(y)
    yc, yct = (y > cut).astype(int), (yt > cut).astype(int)
    done = {}

    def record(part, model, cpu, wall, score, metric, note=""):
        row = dict(n=n, part=part, cpu_s=round(cpu, 3), wall_s=round(wall, 3),
                   score=round(float(score), 4) if score == score else "", metric=metric,
                   n_terms=n_terms_of(model) if model is not None else "",
                   peak_rss_mib=round(peak_mib(), 1), note=note)
        writer(row)
        done[part] = row
        print(f"n={n:>8} {part:<20} CPU {cpu:9.2f} s  wall {wall:9.2f} s  "
              f"{metric} {row['score']}  terms {row['n_terms']}  "
              f"peak {row['peak_rss_mib']} MiB {note}", flush=True)

    fire = None
    if "fire_default" in parts or "stability" in parts:
        fire, cpu, wall = timed(lambda: FIRERegressor().fit(X, y))
        record("fire_default", fire, cpu, wall, r2_score(yt, fire.predict(Xt)), "r2")
    if "fire_classifier" in parts:
        clf, cpu, wall = timed(lambda: FIREClassifier().fit(X, yc))
        record("fire_classifier", clf, cpu, wall,
               roc_auc_score(yct, clf.predict_proba(Xt)[:, 1]), "auc")
    if "extraction" in parts:
        forest, cpu, wall = timed(lambda: RandomForestRegressor(
            500, max_depth=3, random_state=seed).fit(X, y))
        record("forest", None, cpu, wall, r2_score(yt, forest.predict(Xt)), "r2",
               "RandomForestRegressor(500, max_depth=3), given")
        _, cpu, wall = timed(lambda: forest.apply(X))
        record("forest_apply", None, cpu, wall, float("nan"), "")
        ext, cpu, wall = timed(lambda: FIRERegressor(forest).fit(X, y))
        record("extraction", ext, cpu, wall, r2_score(yt, ext.predict(Xt)), "r2",
               f"{cpu / max(done['forest_apply']['cpu_s'], 1e-9):.1f} x forest.apply")
    if "fire_stable" in parts:
        stable, cpu, wall = timed(lambda: FIRERegressor(stable=True).fit(X, y))
        note = (f"{cpu / done['fire_default']['cpu_s']:.2f} x default fit"
                if "fire_default" in done else "")
        record("fire_stable", stable, cpu, wall, r2_score(yt, stable.predict(Xt)), "r2", note)
    if "stability" in parts:
        result, cpu, wall = timed(lambda: fire.stability(X, y, random_state=seed,
                                                         verbose=False))
        record("stability", None, cpu, wall, result.mean, "dice",
               f"{cpu / done['fire_default']['cpu_s']:.2f} x default fit")
    peers = [p for p in parts if p.startswith(("rulefit", "sirus"))]
    for part in peers:
        model = _peer(part, seed)
        target = yc if part.endswith("classifier") else y
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, cpu, wall = timed(lambda: model.fit(X, target))
        if part.endswith("classifier"):
            score, metric = roc_auc_score(yct, model.predict_proba(Xt)[:, 1]), "auc"
        else:
            score, metric = r2_score(yt, model.predict(Xt)), "r2"
        own = "fire_classifier" if part.endswith("classifier") else "fire_default"
        note = (f"firecy / peer CPU {done[own]['cpu_s'] / cpu:.2f}" if own in done else "")
        record(part, model, cpu, wall, score, metric, note)


def _peer(part, seed):
    if part.startswith("rulefit"):
        import imodels

        kind = imodels.RuleFitClassifier if part.endswith("classifier") else \
            imodels.RuleFitRegressor
        return kind(max_rules=14, random_state=seed)
    import sirus

    kind = sirus.SirusClassifier if part.endswith("classifier") else sirus.SirusRegressor
    return kind(num_rules=10, random_state=seed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="CSV to append the rows to")
    args = parser.parse_args()
    rows = []
    for n in args.sizes:
        run(n, args.parts, rows.append, args.seed)
    if args.out:
        new = not os.path.exists(args.out)
        with open(args.out, "a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=FIELDS)
            if new:
                w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
