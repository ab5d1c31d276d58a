"""Efron against Breslow ties on one fold of a survival set of the benchmark:
the tied events, the rules and test scores of FIRE (defaults) with each,
and the fit CPU (alternated, twice each, one thread).

    python benchmarks/counts_survival/counts_survival_efron.py mgus2
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
from sklearn.model_selection import KFold

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import counts_survival as cs  # noqa: E402

from firecy import FIRESurvivalRegressor  # noqa: E402
from firecy.datafits._cox_loss import cox_deviance  # noqa: E402


def main(name):
    warnings.simplefilter("ignore")
    X, e, t = cs.survival_set(name)
    y = np.array(list(zip(e, t)), dtype=[("event", bool), ("time", float)])
    _, counts = np.unique(t[e], return_counts=True)
    print(name, "events", int(e.sum()), "distinct event times", len(counts),
          "events sharing a time", int(counts[counts > 1].sum()))
    tr, te = next(KFold(5, shuffle=True, random_state=0).split(X))
    model = cs._xgb("survival:cox").fit(X.iloc[tr], np.where(e[tr], t[tr], -t[tr]))
    cpu = {"breslow": [], "efron": []}
    for rep in range(2):
        for ties in cpu:
            c0 = time.process_time()
            f = FIRESurvivalRegressor(model, random_state=0, ties=ties, n_jobs=1).fit(
                X.iloc[tr], y[tr])
            cpu[ties].append(time.process_time() - c0)
            if rep == 0:
                p = f.predict(X.iloc[te])
                print(ties, "rules", f.n_rules_, f"test C {f.score(X.iloc[te], y[te]):.4f}",
                      f"test PL breslow {cox_deviance(e[te], t[te], p):.4f}",
                      f"efron {cox_deviance(e[te], t[te], p, ties='efron'):.4f}")
    print({k: [round(v, 2) for v in vs] for k, vs in cpu.items()})


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", help="a survival set of counts_survival.py, e.g. mgus2")
    main(ap.parse_args().dataset)
