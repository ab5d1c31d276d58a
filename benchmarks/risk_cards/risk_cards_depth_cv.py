"""The card's rule depth chosen by inner CV (issue 27).

On each training fold of the risk_cards benchmark: ExtraTreesClassifier(200,
max_depth=2) fitted once; an inner 3-fold CV of the training rows refits FIRE
(``selection="budget"``, ``max_rules=10``) on the same forest at
``rule_depth=1`` and ``(1, 2)`` and picks the depth of the higher mean
validation AUC of the rule model (``pick``; ``pick_ll``: the lower log-loss);
the cards at both depths are scored on the test fold, which plays no part in
the choice.  The forest is fitted once on all the training rows, so its
thresholds have seen each inner validation part (as in FIRE's own CV, which
refits the path, not the forest).  CPU seconds of each part.  One JSON line per fold::

    python benchmarks/risk_cards/risk_cards_depth_cv.py pima,affairs out.json
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
from scipy.special import expit
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold

from firecy import FIREClassifier
from firecy.risk import risk_card

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from risk_cards import load  # noqa: E402

DEPTHS = {"1": 1, "12": (1, 2)}


def _fire(forest, depth):
    # a fitted forest: FIRE reads its rules and does not refit it
    return FIREClassifier(forest, rule_depth=depth, max_rules=10, tol=1e-4,
                          selection="budget", random_state=0)


def main(names, out):
    warnings.filterwarnings("ignore")
    rows = []
    for name in names:
        X, y = load(name)
        cv = StratifiedKFold(5, shuffle=True, random_state=0)
        for fold, (tr, te) in enumerate(cv.split(X, y)):
            Xtr, Xte, ytr, yte = X.iloc[tr], X.iloc[te], y[tr], y[te]
            c0 = time.process_time()
            et = ExtraTreesClassifier(200, max_depth=2, random_state=0).fit(Xtr, ytr)
            c1 = time.process_time()
            full = {k: _fire(et, d).fit(Xtr, ytr) for k, d in DEPTHS.items()}
            c2 = time.process_time()
            val = {k: [] for k in DEPTHS}
            vll = {k: [] for k in DEPTHS}
            inner = StratifiedKFold(3, shuffle=True, random_state=1)
            for itr, iva in inner.split(Xtr, ytr):
                for k, d in DEPTHS.items():
                    e = _fire(et, d).fit(Xtr.iloc[itr], ytr[itr]).decision_function(Xtr.iloc[iva])
                    val[k].append(roc_auc_score(ytr[iva], e))
                    vll[k].append(log_loss(ytr[iva], expit(e), labels=[0, 1]))
            c3 = time.process_time()
            pick = max(DEPTHS, key=lambda k: np.mean(val[k]))
            pick_ll = min(DEPTHS, key=lambda k: np.mean(vll[k]))
            r = dict(dataset=name, fold=fold, pick=pick, pick_ll=pick_ll, cpu_forest=c1 - c0,
                     cpu_two_fires=c2 - c1, cpu_inner=c3 - c2,
                     **{f"val_auc_{k}": float(np.mean(v)) for k, v in val.items()})
            for k, f in full.items():
                c4 = time.process_time()
                card = risk_card(f, Xtr, ytr)
                r["cpu_card"] = time.process_time() - c4
                r[f"card_auc_{k}"] = roc_auc_score(yte, card.score(Xte))
                r[f"card_ll_{k}"] = log_loss(yte, card.predict_proba(Xte), labels=[0, 1])
                r[f"model_auc_{k}"] = roc_auc_score(yte, f.decision_function(Xte))
                r[f"terms_{k}"] = len(card.rules)
            r["card_auc_cv"] = r[f"card_auc_{pick}"]
            r["card_auc_cvll"] = r[f"card_auc_{pick_ll}"]
            rows.append(r)
            print(json.dumps(r), flush=True)
    with open(out, "w") as f:
        json.dump(rows, f)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", help="comma-separated datasets of risk_cards.py")
    ap.add_argument("out", help="JSON file of every fold's row")
    a = ap.parse_args()
    main(a.datasets.split(","), a.out)
