"""Issue 38 for counts and survival: FIRE with and without linear terms on
the data sets and models of ``benchmarks/counts_survival/counts_survival.py``
(its loaders, by import): an XGBoost ``count:poisson`` / ``survival:cox``
model (100 trees of depth 3) fitted on each training fold, then
``FIREPoissonRegressor`` / ``FIRESurvivalRegressor`` on it at the defaults,
``linear_terms=False`` and ``True``; 5-fold CV (``KFold``, shuffled,
``random_state=seed``). Reported per data set: the median over seeds of the
mean test score over the folds (Poisson deviance, lower better; Harrell's
C, higher better) and the median number of terms.

    python benchmarks/linear_terms/glm.py --only veteran,pbc,Insurance,medpar \\
        --seeds 0,1 [--csv rows.csv]
"""
import argparse
import os
import sys
import warnings

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "counts_survival"))


def run(name, kind, X, a, b, seeds):
    from counts_survival import _xgb

    from firecy import FIREPoissonRegressor, FIRESurvivalRegressor
    from firecy.datafits._poisson_loss import poisson_deviance

    rows = []
    for seed in seeds:
        for k, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=seed).split(X)):
            if kind == "survival":
                event, time_ = a, b
                y = np.array(list(zip(event, time_)), dtype=[("event", bool), ("time", float)])
                model = _xgb("survival:cox").fit(X.iloc[tr],
                                                 np.where(event[tr], time_[tr], -time_[tr]))
            else:
                y, e = a, (np.ones_like(a) if b is None else b)
                model = _xgb("count:poisson").fit(X.iloc[tr], y[tr] / e[tr], sample_weight=e[tr])
            for lin in (False, True):
                if kind == "survival":
                    fire = FIRESurvivalRegressor(model, random_state=seed, linear_terms=lin,
                                                 n_jobs=1).fit(X.iloc[tr], y[tr])
                    score = fire.score(X.iloc[te], y[te])
                else:
                    fire = FIREPoissonRegressor(model, random_state=seed, linear_terms=lin,
                                                n_jobs=1).fit(X.iloc[tr], y[tr], exposure=e[tr])
                    score = poisson_deviance(y[te], fire.predict(X.iloc[te], exposure=e[te]))
                rows.append(dict(dataset=name, kind=kind, seed=seed, fold=k,
                                 method="fire_lin" if lin else "fire", score=score,
                                 terms=fire.n_terms_))
            print(name, seed, k, [f"{r['method']} {r['score']:.4f} ({r['terms']})"
                                  for r in rows[-2:]], flush=True)
    return rows


def main():
    from counts_survival import count_sets, survival_sets

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="veteran,pbc,gbsg,lung,Insurance,DoctorVisits,medpar,"
                                       "rwm1984")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--csv")
    args = ap.parse_args()
    only = set(args.only.split(","))
    seeds = [int(s) for s in args.seeds.split(",")]
    warnings.simplefilter("ignore")
    rows = []
    for name, X, event, t in survival_sets():
        if name in only:
            rows += run(name, "survival", X, event, t, seeds)
    for name, X, y, e in count_sets():
        if name in only:
            rows += run(name, "counts", X, y, e, seeds)
    df = pd.DataFrame(rows)
    if args.csv:
        df.to_csv(args.csv, index=False)
    per_seed = df.groupby(["dataset", "kind", "method", "seed"], sort=False).agg(
        score=("score", "mean"), terms=("terms", "median")).reset_index()
    agg = per_seed.groupby(["dataset", "kind", "method"], sort=False).agg(
        score=("score", "median"), lo=("score", "min"), hi=("score", "max"),
        terms=("terms", "median")).reset_index()
    print("| data set | score | rules only | with linear terms |")
    print("|---|---|---:|---:|")
    for name in dict.fromkeys(agg["dataset"]):
        part = agg[agg["dataset"] == name].set_index("method")
        what = "C-index (higher better)" if part["kind"].iloc[0] == "survival" \
            else "Poisson deviance (lower better)"
        cells = [f"{part.loc[m, 'score']:.4f} [{part.loc[m, 'lo']:.4f}-{part.loc[m, 'hi']:.4f}]"
                 f" ({part.loc[m, 'terms']:g})" for m in ("fire", "fire_lin")]
        print(f"| {name} | {what} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
