"""``firecy card DATA.csv --target y``: a risk card from a CSV file.

Fits :class:`firecy.risk.RiskCardClassifier` on the training part of the rows
(``--test-size``, stratified), prints the card and its AUC, log-loss and CAL on
the held-out rows, and writes the card as JSON (``--output``).
"""
import json
import sys

import numpy as np

from firecy.cli._csv import read_csv
from firecy.cli._errors import CLIError
from firecy.cli._extract import check_output_file
from firecy.rules import json_value

__all__ = ["run_card"]


def card_json(clf, names):
    """The card as a JSON-ready dict: the rules with their points (and
    conditions, exact), the starting points, the scale and the score -> risk
    table."""
    from firecy.rules import condition_dict
    from firecy.ensembles import simplify_conditions

    card, ens = clf.card_, clf.model_.ensemble_
    return {
        "event": json_value(card.event),
        "intercept_points": int(card.intercept_points),
        "scale": float(card.scale),
        "risk": "1 / (1 + exp(-score / scale)), score = intercept_points + the points of "
                "the rules a row satisfies",
        "rules": [{"rule": text, "points": int(p),
                   "conditions": [condition_dict(c, names)
                                  for c in simplify_conditions(ens.rules[int(j)])]}
                  for text, p, j in zip(card.rules, card.points, card.columns)],
        "scores": [int(s) for s in card.scores],
        "risks": [float(r) for r in card.risk],
        "train": {"auc": float(card.auc_), "log_loss": float(card.log_loss_),
                  "cal": float(card.cal_)},
    }


def run_card(args):
    from sklearn.metrics import log_loss, roc_auc_score
    from sklearn.model_selection import train_test_split

    from firecy.cli._progress import status
    from firecy.risk import RiskCardClassifier, calibration_error

    out = check_output_file(args.output, "--output")
    X, y, _ = read_csv(args.data, args.target, args.drop, "classification")
    labels = np.unique(y)
    if labels.size != 2:
        raise CLIError(f"a risk card needs a target of two values; {args.target!r} has "
                       f"{labels.size}")
    if args.test_size > 0:
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=args.test_size,
                                                  stratify=y, random_state=args.seed)
    else:
        X_tr, X_te, y_tr, y_te = X, None, y, None
    status(f"fitting the card on {len(y_tr)} rows", args.no_progress)
    clf = RiskCardClassifier(max_rules=args.max_rules, max_points=args.max_points,
                             random_state=args.seed, n_jobs=args.n_jobs).fit(X_tr, y_tr)
    print(clf.card_)
    doc = {"data": str(args.data), "target": args.target, "seed": args.seed,
           "n_train": len(y_tr), **card_json(clf, list(X.columns))}
    if X_te is not None:
        event = (y_te == clf.classes_[1]).astype(int)
        risk = clf.predict_proba(X_te)[:, 1]
        score = clf.decision_function(X_te)
        test = {"n": len(y_te), "auc": float(roc_auc_score(event, score)),
                "log_loss": float(log_loss(event, risk, labels=[0, 1])),
                "cal": float(calibration_error(event, risk, groups=score))}
        doc["test"] = test
        print(f"\non the {test['n']} held-out rows: AUC {test['auc']:.3f}, "
              f"log-loss {test['log_loss']:.4f}, CAL {100 * test['cal']:.1f}%")
    try:
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    print(f"\nsaved {out}", file=sys.stdout)
    return 0
