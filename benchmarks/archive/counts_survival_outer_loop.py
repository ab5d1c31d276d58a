"""The MCP outer loop before and after e1e568b, in one process: CPU of a
default FIRE fit on the first outer fold of each data set with the old
outer loop (``firecy/solver/_irls.py`` at 86dd8c6, read with ``git show``),
with the current one, and of L1 at the same budget.

    python benchmarks/archive/counts_survival_outer_loop.py veteran,pbc,gbsg,Insurance,rotterdam,DoctorVisits
"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

# archived beside its raw rows; the maintained benchmark it reads is in ../counts_survival
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "counts_survival"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import counts_survival as cs  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402

from firecy import FIREPoissonRegressor, FIRESurvivalRegressor  # noqa: E402
from firecy.datafits._poisson_loss import poisson_deviance  # noqa: E402
import firecy.solver._irls as irls  # noqa: E402

OLD = "86dd8c6"


def _old_irls():
    text = subprocess.run(["git", "show", f"{OLD}:firecy/solver/_irls.py"], check=True,
                          capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.abspath(__file__))).stdout
    path = os.path.join(tempfile.mkdtemp(), "irls_old.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("irls_old", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def data(name):
    for nm, X, event, t in cs.survival_sets():
        if nm == name:
            return "surv", X, event, t
    for nm, X, yy, e in cs.count_sets():
        if nm == name:
            return "count", X, yy, (np.ones_like(yy) if e is None else e)


def main(names):
    warnings.simplefilter("ignore")
    irls_old = _old_irls()
    new_solve = irls.irls_solve
    print("| data | fold | FIRE old CPU (s) | FIRE new CPU (s) | L1 CPU (s) | old/new | new/L1 | FIRE old score | FIRE new score | old rules | new rules |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        kind, X, a, b = data(name)
        folds = 3 if name in ("rotterdam", "DoctorVisits") else 5
        tr, te = next(iter(KFold(folds, shuffle=True, random_state=0).split(X)))
        if kind == "surv":
            y = np.array(list(zip(a, b)), dtype=[("event", bool), ("time", float)])
            model = cs._xgb("survival:cox").fit(X.iloc[tr], np.where(a[tr], b[tr], -b[tr]))
            fit = lambda **p: FIRESurvivalRegressor(model, random_state=0, **p).fit(X.iloc[tr], y[tr])
            sc = lambda f: f.score(X.iloc[te], y[te])
        else:
            model = cs._xgb("count:poisson").fit(X.iloc[tr], a[tr] / b[tr], sample_weight=b[tr])
            fit = lambda **p: FIREPoissonRegressor(model, random_state=0, **p).fit(X.iloc[tr], a[tr], exposure=b[tr])
            sc = lambda f: poisson_deviance(a[te], f.predict(X.iloc[te], exposure=b[te]))
        out = {}
        for label, solver, p in (("old", irls_old.irls_solve, {}), ("new", new_solve, {}),
                                 ("l1", new_solve, dict(penalty="l1", fusion=0.0))):
            irls.irls_solve = solver
            c0 = time.process_time(); f = fit(**p); out[label] = (time.process_time() - c0, sc(f), f.n_rules_)
        irls.irls_solve = new_solve
        o, n, l = out["old"], out["new"], out["l1"]
        print(f"| {name} | 0 of {folds} | {o[0]:.2f} | {n[0]:.2f} | {l[0]:.2f} | {o[0]/n[0]:.2f} | {n[0]/l[0]:.2f} | {o[1]:.4f} | {n[1]:.4f} | {o[2]} | {n[2]} |", flush=True)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", help="comma-separated sets of counts_survival.py")
    main(ap.parse_args().datasets.split(","))
