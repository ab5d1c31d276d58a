"""Why FIRE trails L1 in test concordance on some survival sets: the
selection criterion (the inner-CV Cox partial likelihood on held-out rows,
training rows only) of FIRE's defaults, L1, MCP with gamma 3 and MCP without
fusion, beside their test concordance, on the first two outer folds.

    python benchmarks/counts_survival/counts_survival_selection.py pbc,gbsg,rotterdam
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

METHODS = (("FIRE", {}), ("L1", dict(penalty="l1", fusion=0.0)), ("MCP g3", dict(gamma=3.0)),
           ("MCP nofus", dict(fusion=0.0)))


def main(names):
    warnings.simplefilter("ignore")
    for name in names:
        X, event, t = cs.survival_set(name)
        folds = 3 if name == "rotterdam" else 5
        y = np.array(list(zip(event, t)), dtype=[("event", bool), ("time", float)])
        for k, (tr, te) in enumerate(KFold(folds, shuffle=True, random_state=0).split(X)):
            if k >= 2:
                break
            model = cs._xgb("survival:cox").fit(X.iloc[tr], np.where(event[tr], t[tr], -t[tr]))
            out = []
            for label, p in METHODS:
                f = FIRESurvivalRegressor(model, random_state=0, **p).fit(X.iloc[tr], y[tr])
                # the best inner-CV loss within the budget (what the selection minimises)
                ve = np.where(f.path_.eligible, f.path_.validation_error, np.inf)
                out.append(f"{label}: cv {ve.min():.5f} test C {f.score(X.iloc[te], y[te]):.4f}"
                           f" rules {f.n_rules_}")
            print(name, k, " | ".join(out), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", help="comma-separated survival sets of counts_survival.py")
    main(ap.parse_args().datasets.split(","))
