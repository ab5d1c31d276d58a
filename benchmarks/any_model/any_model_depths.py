"""Which depth should ``rule_depth="auto"`` take? Fixed depths against
cross-validated choices among them, on the runs of ``any_model.py``.

For every (dataset, seed, library-default model) of ``any_model.py``, FIRE at
its defaults with ``rule_depth`` in 1, 2, 3, 4, None (every leaf) and "auto";
then each strategy "choose among depths D by the fit's own cross-validation
error" (``validation_error_``, the same folds for every depth) is scored by
the test error of the depth it picks, relative to FIRE on the 500-tree depth-3
forest of the same split (as in ``any_model.py``).

    python benchmarks/any_model/any_model_depths.py [--seeds 2] [--log runs.jsonl]
"""
import argparse
import itertools
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DEPTHS = [1, 2, 3, 4, None, "auto"]


def run(seeds, log):
    import any_model
    from sklearn.metrics import log_loss, mean_squared_error
    from sklearn.model_selection import train_test_split

    from firecy import FIREClassifier, FIRERegressor

    out = []
    for seed in range(seeds):
        for name, task in any_model.DATASETS.items():
            X, y = any_model.load(name)
            Xtr, Xte, ytr, yte = train_test_split(
                X, y, test_size=0.25, random_state=seed,
                stratify=y if task == "classification" else None)
            Fire = FIRERegressor if task == "regression" else FIREClassifier
            for mname, model in any_model.models(task, seed).items():
                model.fit(Xtr, ytr)
                for depth in ([None] if mname == "rf3x500" else DEPTHS):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t0 = time.perf_counter()
                        fire = Fire(model, rule_depth=depth, random_state=seed,
                                    n_jobs=2).fit(Xtr, ytr)
                        secs = time.perf_counter() - t0
                    if task == "regression":
                        err = mean_squared_error(yte, fire.predict(Xte))
                    else:
                        err = log_loss(yte, fire.predict_proba(Xte), labels=fire.classes_)
                    row = dict(dataset=name, seed=seed, model=mname, depth=str(depth),
                               test=float(err), cv=float(fire.validation_error_),
                               rules=int(fire.n_rules_), secs=secs)
                    out.append(row)
                    print(row, file=sys.stderr, flush=True)
                    if log:
                        with open(log, "a") as fh:
                            fh.write(json.dumps(row) + "\n")
    return out


def report(rows):
    import pandas as pd

    df = pd.DataFrame(rows)
    ref = df[df.model == "rf3x500"].set_index(["dataset", "seed"]).test
    d = df[df.model != "rf3x500"].copy()
    d["ratio"] = [t / ref[(a, s)] for t, a, s in zip(d.test, d.dataset, d.seed)]
    runs = [grp.set_index("depth") for _, grp in d.groupby(["dataset", "seed", "model"])]
    lines = ["| strategy | within 10% | median error ratio | worst | fits per run |",
             "|---|---|---|---|---|"]

    def line(name, pick, fits):
        r = np.array([g.loc[pick(g)].ratio for g in runs])
        lines.append(f"| {name} | {np.sum(r <= 1.10)}/{len(r)} | {np.median(r):.3f} | "
                     f"{r.max():.2f} | {fits} |")

    for dep in ["1", "2", "3", "4", "None", "auto"]:
        line(f"rule_depth={dep}", lambda g, dep=dep: dep, 1)
    for k in (2, 3, 4):
        for cands in itertools.combinations(["1", "2", "3", "4", "None"], k):
            if k == 4 and "None" in cands:
                continue
            line("CV among " + ", ".join(cands),
                 lambda g, c=cands: min(c, key=lambda x: g.loc[x].cv), k)
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--log", help="append every run to this JSON-lines file")
    ap.add_argument("--load", help="report the runs of a --log file instead of running")
    args = ap.parse_args(argv)
    if args.load:
        with open(args.load) as fh:
            rows = [json.loads(line) for line in fh]
    else:
        rows = run(args.seeds, args.log)
    print(report(rows))


if __name__ == "__main__":
    main()
