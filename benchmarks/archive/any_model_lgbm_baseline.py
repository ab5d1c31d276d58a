"""LightGBM's boost-from-average in the first tree vs in the baseline (session 32).

Every LightGBM run of ``any_model.py`` (same splits and models), FIRE fitted
twice on the same model in the same process: ``old``, the first tree's root
value put back into its leaves (as before session 32), then ``new`` (the
adapter's baseline).  Prints one markdown row per (dataset, seed, rule_depth):
the model's own error over the reference's, FIRE's error ratio (old, new),
rules (old, new) and CPU time (``time.process_time``) over the reference fit's
(old, new).  The reference: FIRE on the 500-tree depth-3 forest, every leaf.

    python benchmarks/archive/any_model_lgbm_baseline.py SEEDS [DATASETS] [--depths D,...]

e.g. ``0,1`` or ``2 diabetes,boston,housing --depths auto``.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

# archived beside its raw rows; the maintained benchmark it reads is in ../any_model
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "any_model"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from any_model import DATASETS, load, models  # noqa: E402

from firecy import FIREClassifier, FIRERegressor  # noqa: E402
from firecy.ensembles import _lightgbm  # noqa: E402

_init = _lightgbm.LightGBMAdapter.__init__
OLD = {"on": False}


def _adapter_init(self, model):
    _init(self, model)
    if OLD["on"]:  # the constant back into the first trees' leaves
        for k, c in enumerate(self._base):
            b = self.blocks[k]
            b.values[b.tree.left < 0] += c
        self._base[:] = 0


_lightgbm.LightGBMAdapter.__init__ = _adapter_init


def main(argv=None):
    from sklearn.metrics import log_loss, mean_squared_error
    from sklearn.model_selection import train_test_split

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("seeds")
    p.add_argument("datasets", nargs="?", default=",".join(DATASETS))
    p.add_argument("--depths", default="auto,None,4")
    a = p.parse_args(argv)
    depths = [None if d == "None" else d if d == "auto" else int(d)
              for d in a.depths.split(",")]
    print("| dataset | seed | rule_depth | model/ref | ratio old | ratio new | rules old "
          "| rules new | cpu old | cpu new |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in a.datasets.split(","):
        task = DATASETS[name]
        X, y = load(name)
        Fire = FIRERegressor if task == "regression" else FIREClassifier
        for seed in (int(s) for s in a.seeds.split(",")):
            Xtr, Xte, ytr, yte = train_test_split(
                X, y, test_size=0.25, random_state=seed,
                stratify=y if task == "classification" else None)

            def err(m):
                if task == "regression":
                    return mean_squared_error(yte, m.predict(Xte))
                return log_loss(yte, m.predict_proba(Xte), labels=m.classes_)

            ms = models(task, seed)
            ref = ms["rf3x500"].fit(Xtr, ytr)
            t = time.process_time()
            fr = Fire(ref, rule_depth=None, random_state=seed, n_jobs=1).fit(Xtr, ytr)
            t_ref, e_ref = time.process_time() - t, err(fr)
            lg = ms["lgbm"].fit(Xtr, ytr)
            for depth in depths:
                out = []
                for old in (True, False):
                    OLD["on"] = old
                    t = time.process_time()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        f = Fire(lg, rule_depth=depth, random_state=seed,
                                 n_jobs=1).fit(Xtr, ytr)
                    out.append((err(f) / e_ref, f.n_rules_,
                                (time.process_time() - t) / t_ref))
                (ro, no, co), (rn, nn, cn) = out
                print(f"| {name} | {seed} | {depth} | {err(lg) / e_ref:.3f} | {ro:.3f} | "
                      f"{rn:.3f} | {no} | {nn} | {co:.2f} | {cn:.2f} |", flush=True)


if __name__ == "__main__":
    main()
