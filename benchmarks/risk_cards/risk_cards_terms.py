"""Where the card's terms come from, and the rounding floor (issue 27): card only.

The folds of ``risk_cards.py`` (5-fold stratified CV, seed 0; ``REPEATS``:
repeated, as its ``--repeats``).  For each rule
model (the forest that gives the candidate terms, and the rule depths; FIRE at
``max_rules=10, tol=1e-4, selection="budget"``) the card at three floors
(``max_loss_decrease``: None, 0.02, 0), scored on the test fold.  One JSON line
per fold and model on stdout, all of them in ``out.json``::

    python benchmarks/risk_cards/risk_cards_terms.py pima,affairs et200d2_12,rf200d2_12 out.json [REPEATS]

Models: ``et``/``rf``/``gb`` (extra trees, random forest, gradient boosting),
the number of trees, ``d`` the depth, then the rule depths (``_12``: single
conditions and pairs, ``_1``: single conditions); ``mf1``: ``max_features=1``;
``mix100_100``: 100 extra trees and 100 best-split trees in one forest;
``qet``: extra trees on each feature's quantile transform of the training rows
(thresholds uniform over the rows, as FasterRisk's quantile binarisation; its
rules read in quantiles: it only measures the candidates).  Results:
benchmarks/risk_cards/RESULTS.md.
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
from scipy.special import expit
from sklearn.ensemble import (ExtraTreesClassifier, GradientBoostingClassifier,
                              RandomForestClassifier)
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.preprocessing import QuantileTransformer

from firecy import FIREClassifier
from firecy.risk import risk_card

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from risk_cards import MixedForest, cv_splits, load  # noqa: E402


def _mix(n_extra, n_best, d):
    return lambda: MixedForest(n_extra, n_best, max_depth=d, random_state=0)


def _et(n, d, **kw):
    return lambda: ExtraTreesClassifier(n, max_depth=d, random_state=0, **kw)


def _rf(n, d):
    return lambda: RandomForestClassifier(n, max_depth=d, random_state=0)


def _gb(n, d):
    return lambda: GradientBoostingClassifier(n_estimators=n, max_depth=d, random_state=0)


# name: (forest factory, rule_depth, on quantile-transformed features)
MODELS = {
    "et200d2_12": (_et(200, 2), (1, 2), False),
    "et200d2_1": (_et(200, 2), 1, False),
    "et500d2_12": (_et(500, 2), (1, 2), False),
    "et500d1": (_et(500, 1), 1, False),
    "et200d2mf1_12": (_et(200, 2, max_features=1), (1, 2), False),
    "qet200d2_12": (_et(200, 2), (1, 2), True),
    "rf200d2_12": (_rf(200, 2), (1, 2), False),
    "rf200d2_1": (_rf(200, 2), 1, False),
    "rf200d1": (_rf(200, 1), 1, False),
    "gb100d2_12": (_gb(100, 2), (1, 2), False),
    "gb200d1": (_gb(200, 1), 1, False),
    "mix100_100d2_12": (_mix(100, 100, 2), (1, 2), False),
    "mix150_50d2_12": (_mix(150, 50, 2), (1, 2), False),
}
FLOORS = {"none": None, "f02": 0.02, "f0": 0.0}


def main(names, models, out, repeats=1):
    warnings.filterwarnings("ignore")
    rows = []
    for name in names:
        X, y = load(name)
        for repeat, fold, tr, te in cv_splits(X, y, 5, repeats):
            Xtr, Xte, ytr, yte = X.iloc[tr], X.iloc[te], y[tr], y[te]
            for m in models:
                make, depth, quantile = MODELS[m]
                A, B = Xtr, Xte
                if quantile:
                    qt = QuantileTransformer(n_quantiles=min(1000, len(tr)),
                                             random_state=0).fit(Xtr)
                    A = type(Xtr)(qt.transform(Xtr), columns=Xtr.columns)
                    B = type(Xte)(qt.transform(Xte), columns=Xte.columns)
                c0 = time.process_time()
                fire = FIREClassifier(make(), rule_depth=depth, max_rules=10, tol=1e-4,
                                      selection="budget", random_state=0).fit(A, ytr)
                c1 = time.process_time()
                eta = fire.decision_function(B)
                r = dict(dataset=name, repeat=repeat, fold=fold, model=m, cpu_fit=c1 - c0,
                         rules=int(np.count_nonzero(fire.coef_)),
                         model_auc=roc_auc_score(yte, eta),
                         model_ll=log_loss(yte, expit(eta), labels=[0, 1]),
                         model_scores=len(np.unique(np.round(eta, 9))))
                for f, dec in FLOORS.items():
                    c2 = time.process_time()
                    card = risk_card(fire, A, ytr, max_loss_decrease=dec)
                    c3 = time.process_time()
                    sc = card.score(B)
                    r.update({
                        f"{f}_auc": roc_auc_score(yte, sc),
                        f"{f}_ll": log_loss(yte, card.predict_proba(B), labels=[0, 1]),
                        f"{f}_train_ratio": card.log_loss_ / card.model_log_loss_,
                        f"{f}_scores": len(np.unique(sc)), f"{f}_terms": len(card.rules),
                        f"{f}_cpu": c3 - c2, f"{f}_train_auc": card.auc_})
                r["model_train_ll"] = card.model_log_loss_
                r["model_train_auc"] = card.model_auc_
                rows.append(r)
                print(json.dumps(r), flush=True)
    with open(out, "w") as f:
        json.dump(rows, f)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", help="comma-separated datasets of risk_cards.py")
    ap.add_argument("models", help="comma-separated rule models, e.g. et200d2_12 (below)")
    ap.add_argument("out", help="JSON file of every fold's rows")
    ap.add_argument("repeats", nargs="?", type=int, default=1,
                    help="repeated 5-fold CV, as risk_cards.py --repeats (default 1)")
    a = ap.parse_args()
    main(a.datasets.split(","), a.models.split(","), a.out, a.repeats)
