"""Is the estimators' inner CV optimistic for survival, and for which method?

The survival estimator's inner CV refits only the rule weights: the rules
(the leaves of the XGBoost ``survival:cox`` model, and their values) were
fitted to every outer-training row, the held-out rows of each inner fold
included. Per outer fold, for each inner fold, FIRE (defaults) and L1
(``penalty="l1", fusion=0``) are fitted with ``selection="budget"`` (the
path point with the most rules <= 14) on the inner training rows, on the
rules of

* ``standard``: the model fitted on all outer-training rows (what the
  estimators' CV does), or
* ``honest``: a model refitted on the inner training rows only,

and scored by the Cox partial likelihood of the held-out inner rows (lower
is better). Printed per outer fold: the mean held-out loss of each, the
FIRE - L1 differences, and FIRE - L1 on the outer test rows (budget fits on
the outer model).

    python benchmarks/counts_survival/counts_survival_honest.py gbsg,pbc 3
    python benchmarks/counts_survival/counts_survival_honest.py gbsg 3 3,10   # + FIRE, gamma 3 and 10

With gammas, each is another FIRE (``gamma=g``, fusion 0.5) and a second
table row per fold gives the mean honest held-out loss of every method.
"""
import argparse
import os
import sys
import warnings

import numpy as np
from sklearn.model_selection import KFold

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import counts_survival as cs  # noqa: E402

from firecy import FIRESurvivalRegressor  # noqa: E402
from firecy.datafits._cox_loss import cox_deviance  # noqa: E402

METHODS = {"FIRE": {}, "L1": dict(penalty="l1", fusion=0.0)}


def main(names, n_outer, gammas=()):
    for g in gammas:
        METHODS[f"FIRE gamma {g:g}"] = dict(gamma=g)
    base = ("FIRE", "L1")
    warnings.simplefilter("ignore")
    for name, X, e, t in cs.survival_sets():
        if name not in names:
            continue
        y = np.array(list(zip(e, t)), dtype=[("event", bool), ("time", float)])

        def fit_model(rows):
            return cs._xgb("survival:cox").fit(X.iloc[rows], np.where(e[rows], t[rows], -t[rows]))

        for k, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=0).split(X)):
            if k >= n_outer:
                break
            outer_model = fit_model(tr)
            res = {}
            for itr, iva in KFold(5, shuffle=True, random_state=0).split(tr):
                a, v = tr[itr], tr[iva]
                inner_model = fit_model(a)
                for mode, model in (("standard", outer_model), ("honest", inner_model)):
                    for label, params in METHODS.items():
                        if mode == "standard" and label not in base:
                            continue
                        f = FIRESurvivalRegressor(model, selection="budget", **params).fit(
                            X.iloc[a], y[a])
                        res.setdefault((mode, label), []).append(
                            cox_deviance(e[v], t[v], f.predict(X.iloc[v])))
            test = {}
            for label, params in METHODS.items():
                if label not in base:
                    continue
                f = FIRESurvivalRegressor(outer_model, selection="budget", **params).fit(
                    X.iloc[tr], y[tr])
                test[label] = cox_deviance(e[te], t[te], f.predict(X.iloc[te]))
            mean = {key: np.mean(v) for key, v in res.items()}
            if gammas:
                print(f"| {name} | {k} honest | " + " | ".join(
                    f"{l} {mean[('honest', l)]:.4f}" for l in METHODS) + " |", flush=True)
            print(f"| {name} | {k} | " + " | ".join(f"{mean[(m, l)]:.4f}" for m in
                                                    ("standard", "honest") for l in base)
                  + f" | {mean[('standard', 'FIRE')] - mean[('standard', 'L1')]:+.4f}"
                  f" | {mean[('honest', 'FIRE')] - mean[('honest', 'L1')]:+.4f}"
                  f" | {test['FIRE'] - test['L1']:+.4f} |", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", help="comma-separated survival sets of counts_survival.py")
    ap.add_argument("outer_folds", nargs="?", type=int, default=5,
                    help="how many of the 5 outer folds to run (default all)")
    ap.add_argument("gammas", nargs="?", default="",
                    help="comma-separated MCP gammas: each one more FIRE (fusion 0.5)")
    a = ap.parse_args()
    names = a.datasets.split(",")
    for name in names:
        if name not in cs.SURVIVAL_SETS:
            ap.error(f"unknown survival set {name!r}; known: {', '.join(cs.SURVIVAL_SETS)}")
    main(set(names), a.outer_folds, [float(g) for g in a.gammas.split(",") if g])
