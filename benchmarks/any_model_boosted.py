"""Issue 22: why FIRE at its defaults loses on boosted models (session 33).

The four (dataset, model) cells that miss the 10% goal over 20 seeds
(``any_model_RESULTS.md``) are boosters that are themselves better than the
reference: breast_cancer/xgb, boston/lgbm, housing/xgb, boston/xgb.  This
driver fits FIRE on those cells (and on the library-default random forest of
the same datasets, the control) under a few variants, each chosen without the
test fold, and reports the error ratio to FIRE on ``rf3x500`` (the reference,
refitted here in the same process, same folds).

Variants (``--variants``):

* ``base``: ``FIRE*(model)`` at its defaults (``rule_depth="auto"``).
* ``treenorm``: each tree's rule values divided by the tree's root-mean-square
  value over the training rows (after the depth cut), so every tree's column
  block has the same scale under the penalty; a booster's later trees (whose
  leaf values shrink with ``eta`` and the residuals) cost no more per unit of
  fitted signal than its first ones.  A forest's trees have nearly equal
  scales, so it is nearly a no-op there.
* ``unit``: every rule value set to 1 (indicator columns, RuleFit-like).
* ``gammacv``: ``gamma=[1.1, 3, 10]`` (MCP's concavity chosen by FIRE's own CV:
  more shrinkage of kept coefficients when the folds want it).
* ``l1``: ``penalty="l1"`` (the lasso: kept coefficients shrunk).
* ``d2``, ``d3``, ``d4``: ``rule_depth`` fixed (diagnostic: "auto" chooses among them).
* ``d234``: ``rule_depth=(2, 3, 4)`` (rules of the three depths at once).
* ``gammal1cv``: ``gamma=[1.1, 1e4]``: MCP or (nearly) the lasso, chosen by
  FIRE's own CV.

The variants change the design by wrapping ``firecy.estimators._base.rules_at_depth``
(the ensemble's ``leaf_values`` are what both the design and ``predict`` read),
so nothing in firecy is edited.

    python benchmarks/any_model_boosted.py --seed-list 0,1 --variants base,treenorm \
        --csv /tmp/s33-boosted/runs.csv
    python benchmarks/any_model_boosted.py --from-csv /tmp/s33-boosted/runs.csv
    python benchmarks/any_model_boosted.py --diagnose --seed-list 0,1

Uses ``load`` and ``models`` of ``benchmarks/any_model.py``.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from any_model import DATASETS, REFERENCE, load, models, path_facts  # noqa: E402

MISSES = [("breast_cancer", "xgb"), ("boston", "lgbm"), ("housing", "xgb"), ("boston", "xgb")]
CONTROLS = [("boston", "rf"), ("housing", "rf"), ("breast_cancer", "rf")]
# session 34: every boosted cell of any_model.py (ten data sets x xgb, lgbm)
BOOSTED = [(d, m) for d in DATASETS for m in ("xgb", "lgbm")]
FORESTS = [(d, "rf") for d in DATASETS]

_MODE = {"values": None}


def _tree_rms(ens, rows):
    """Each tree's root-mean-square rule value over the training rows."""
    bp = np.asarray(ens.block_ptr)
    v = np.asarray(ens.leaf_values, dtype=np.float64)
    out = np.empty(len(bp) - 1)
    for t in range(len(bp) - 1):
        lo, hi = bp[t], bp[t + 1]
        w = rows[lo:hi]
        out[t] = np.sqrt(np.sum(w * v[lo:hi] ** 2) / max(np.sum(w), 1e-300))
    return out


def _install_patch():
    import firecy.estimators._base as base

    orig = base.rules_at_depth
    if getattr(orig, "_patched", False):
        return

    def patched(est, ensemble, X, sample_weight):
        ens, table = orig(est, ensemble, X, sample_weight)
        mode = _MODE["values"]
        if mode is not None:
            v = np.asarray(ens.leaf_values, dtype=np.float64).copy()
            bp = np.asarray(ens.block_ptr)
            if mode == "treenorm":
                rms = _tree_rms(ens, np.asarray(est._rule_rows, dtype=np.float64))
                for t in range(len(bp) - 1):
                    if rms[t] > 0:
                        v[bp[t]:bp[t + 1]] /= rms[t]
            elif mode == "unit":
                v[:] = 1.0
            else:
                raise ValueError(mode)
            ens.leaf_values = v
        return ens, table

    patched._patched = True
    base.rules_at_depth = patched


# name: (FIRE kwargs on the model, design patch, reference kwargs).  The
# reference kwargs (None: the reference at its defaults) are for the budget
# variants, where the ratio is to the reference at the same budget.
# Since session 34, FIRE's default is rule_values="auto" ("unit" on a booster,
# "leaf" on a forest): "base" is that default; "leaf" is session 33's base.
# Session 33's variants (treenorm, gammacv, l1, d2, ...) were measured with
# "leaf" values; here the unnamed ones run on top of the current default.
VARIANTS = {
    "base": ({}, None, None),
    "leaf": ({"rule_values": "leaf"}, None, None),
    "treenorm": ({"rule_values": "leaf"}, "treenorm", None),
    "unit": ({"rule_values": "unit"}, None, None),
    "gammacv": ({"gamma": [1.1, 3.0, 10.0]}, None, None),
    "l1": ({"penalty": "l1"}, None, None),
    "d2": ({"rule_depth": 2}, None, None),
    "d3": ({"rule_depth": 3}, None, None),
    "d4": ({"rule_depth": 4}, None, None),
    "d234": ({"rule_depth": (2, 3, 4)}, None, None),
    "d123": ({"rule_depth": (1, 2, 3)}, None, None),
    "treenorm_gammacv": ({"rule_values": "leaf", "gamma": [1.1, 3.0, 10.0]}, "treenorm", None),
    # MCP or (nearly) the lasso, whichever FIRE's own CV prefers
    "gammal1cv": ({"gamma": [1.1, 1e4]}, None, None),
    # session 34: under "unit" a fusion pulls adjacent rules' *effects*
    # together (two sides of one split: opposite signs), not the tree's
    # multipliers: no fusion, or fusion chosen by FIRE's CV
    "nofuse": ({"fusion": 0.0}, None, None),
    "fusecv": ({"fusion": [0.0, 0.5]}, None, None),
    # budget diagnostics: FIRE on the model and the reference at the same budget
    "mr20": ({"max_rules": 20}, None, {"max_rules": 20}),
    "mr30": ({"max_rules": 30}, None, {"max_rules": 30}),
    # the lasso on the model's rules at the default budget, against the default reference
    "l1_mr14": ({"penalty": "l1", "max_rules": 14}, None, None),
}


def _error(task, yte, fire, Xte):
    from sklearn.metrics import log_loss, mean_squared_error

    if task == "regression":
        return mean_squared_error(yte, fire.predict(Xte)), np.nan
    p = fire.predict_proba(Xte)
    return log_loss(yte, p, labels=fire.classes_), float(np.mean(fire.predict(Xte) != yte))


def _fit(Fire, model, Xtr, ytr, seed, kwargs, mode=None):
    _MODE["values"] = mode
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c0 = time.process_time()
            fire = Fire(model, random_state=seed, n_jobs=1, **kwargs).fit(Xtr, ytr)
            cpu = time.process_time() - c0
    finally:
        _MODE["values"] = None
    return fire, cpu


def run(seeds, variants, cells, csv):
    from sklearn.model_selection import train_test_split

    from firecy import FIREClassifier, FIRERegressor

    _install_patch()
    by_data = {}
    for d, m in cells:
        by_data.setdefault(d, []).append(m)
    for seed in seeds:
        for name, mnames in by_data.items():
            task = DATASETS[name]
            X, y = load(name)
            Xtr, Xte, ytr, yte = train_test_split(
                X, y, test_size=0.25, random_state=seed,
                stratify=y if task == "classification" else None)
            Fire = FIRERegressor if task == "regression" else FIREClassifier
            ms = models(task, seed, n_jobs=1)
            ref = ms[REFERENCE].fit(Xtr, ytr)
            refs = {}   # the reference's FIRE fit per reference kwargs, once per split

            def reference(extra):
                key = repr(sorted((extra or {}).items()))
                if key not in refs:
                    fref, cref = _fit(Fire, ref, Xtr, ytr, seed,
                                      {"rule_depth": None, **(extra or {})})
                    refs[key] = (_error(task, yte, fref, Xte)[0],
                                 _error(task, ytr, fref, Xtr)[0], cref, fref.n_rules_)
                return refs[key]

            for mname in mnames:
                model = ms[mname].fit(Xtr, ytr)
                for var in variants:
                    kwargs, mode, ref_kwargs = VARIANTS[var]
                    eref, etr_ref, cref, ref_rules = reference(ref_kwargs)
                    fire, cpu = _fit(Fire, model, Xtr, ytr, seed, kwargs, mode)
                    err, rate = _error(task, yte, fire, Xte)
                    etr, _ = _error(task, ytr, fire, Xtr)
                    facts = path_facts(fire)
                    row = dict(dataset=name, model=mname, seed=seed, variant=var,
                               test_error=err, error_rate=rate, train_error=etr,
                               ref_error=eref, ref_train_error=etr_ref,
                               error_ratio=err / eref, rules=fire.n_rules_,
                               ref_rules=ref_rules,
                               depth=str(fire.rule_depth_),
                               rule_values=getattr(fire, "rule_values_", ""),
                               sel_last=facts["sel_last"],
                               path_end_rules=facts["path_end_rules"],
                               cpu=cpu, ref_cpu=cref, cpu_ratio=cpu / cref,
                               best=str(getattr(fire, "best_params_", "")))
                    print(row, file=sys.stderr, flush=True)
                    pd.DataFrame([row]).to_csv(csv, mode="a", index=False,
                                               header=not os.path.exists(csv))


def report(csvs):
    df = pd.concat([pd.read_csv(c) for c in csvs])
    df = df.drop_duplicates(["dataset", "model", "seed", "variant"], keep="last")
    df["cell"] = df["dataset"] + "/" + df["model"]
    g = df.groupby(["cell", "variant"])
    out = pd.DataFrame({
        "seeds": g.seed.nunique(),
        "geo_ratio": g.error_ratio.apply(lambda r: float(np.exp(np.mean(np.log(r))))),
        "misses": g.error_ratio.apply(lambda r: int(np.sum(r > 1.10))),
        "rules": g.rules.mean(),
        "cpu_ratio": g.cpu_ratio.median(),
        "train/ref_train": g.apply(lambda s: float(np.exp(np.mean(np.log(
            s.train_error / s.ref_train_error))))),
    }).reset_index()
    print(out.to_markdown(index=False, floatfmt=".3f"))
    return out


def diagnose(seeds):
    """Which trees the kept rules come from, and the trees' value scales."""
    from sklearn.model_selection import train_test_split

    from firecy import FIREClassifier, FIRERegressor

    _install_patch()
    for seed in seeds:
        for name, mname in MISSES + CONTROLS:
            task = DATASETS[name]
            X, y = load(name)
            Xtr, Xte, ytr, yte = train_test_split(
                X, y, test_size=0.25, random_state=seed,
                stratify=y if task == "classification" else None)
            Fire = FIRERegressor if task == "regression" else FIREClassifier
            model = models(task, seed, n_jobs=1)[mname].fit(Xtr, ytr)
            for mode in (None, "treenorm", "unit"):
                fire, _ = _fit(Fire, model, Xtr, ytr, seed, {}, mode)
                ens = fire.ensemble_
                bp = np.asarray(ens.block_ptr)
                coef = np.asarray(fire.coef_).ravel()
                kept = np.flatnonzero(coef)
                trees = np.searchsorted(bp, kept, side="right") - 1
                rms = _tree_rms(ens, np.asarray(fire._rule_rows, dtype=np.float64))
                q = np.quantile(rms, [0, 0.1, 0.5, 0.9, 1]) if mode is None else None
                etr, _ = _error(task, ytr, fire, Xtr)
                ete, _ = _error(task, yte, fire, Xte)
                print(f"seed {seed} {name}/{mname} {mode or 'base'} depth {fire.rule_depth_} "
                      f"trees {len(bp) - 1} kept trees {sorted(trees.tolist())} "
                      f"train {etr:.4g} test {ete:.4g}"
                      + ("" if q is None else
                         f" | tree rms first5 {np.round(rms[:5], 4).tolist()} "
                         f"last5 {np.round(rms[-5:], 4).tolist()} q {np.round(q, 4).tolist()}"),
                      flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed-list", default="0")
    ap.add_argument("--variants", default="base,treenorm")
    ap.add_argument("--cells", default="misses,controls",
                    help="comma list of misses, controls, boosted (10 data sets x xgb, lgbm), "
                         "forests (10 x rf) or dataset/model")
    ap.add_argument("--csv", default="/tmp/s34-boston/runs.csv")
    ap.add_argument("--from-csv", nargs="*")
    ap.add_argument("--diagnose", action="store_true")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seed_list.split(",")]
    if a.from_csv:
        report(a.from_csv)
        return
    if a.diagnose:
        diagnose(seeds)
        return
    cells = []
    for c in a.cells.split(","):
        # "misses", "controls" or one cell as dataset/model
        cells += {"misses": MISSES, "controls": CONTROLS, "boosted": BOOSTED,
                  "forests": FORESTS}.get(c) or [tuple(c.split("/"))]
    run(seeds, a.variants.split(","), cells, a.csv)


if __name__ == "__main__":
    main()
