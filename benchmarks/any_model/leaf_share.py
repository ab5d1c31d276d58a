"""Does X fit the model? What the data/model check of the estimators reads
(``firecy/estimators/_diagnostics.py``, issue 37).

For the paper's depth-3 forest and five library-default models (RF, XGBoost,
LightGBM, GB, HGB) on the ten data sets of ``any_model.py``, each fitted on a
70% split, cut as ``rule_depth="auto"`` cuts them: the median over trees of
the largest leaf's share of the rows, and of the fraction of a tree's leaves
that hold a row, on

* ``train``: the model's own training rows;
* ``test``: the held-out rows (cut as for the training rows), and
  ``test-uncut`` (every leaf);
* ``x100`` / ``std``: the training rows multiplied by 100 / standardised after
  the fit (the mistake the check is for).

It prints one line per (data set, model) and how many models the check flags
on each kind of rows (``share >= 0.95 and reached <= 0.5``)::

    python benchmarks/any_model/leaf_share.py
"""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import any_model as am  # noqa: E402


def main():
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from firecy import FIREClassifier, FIRERegressor
    from firecy.ensembles import rule_ensemble_from_model
    from firecy.estimators._diagnostics import MAX_LEAF_SHARE, MAX_REACHED, leaf_concentration
    from firecy.estimators._rule_depth import rules_at_depth

    warnings.simplefilter("ignore")
    kinds = ("train", "test", "test-uncut", "x100", "std")
    rows = []
    for name, task in am.DATASETS.items():
        X, y = am.load(name)
        Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.3, random_state=0)
        scaled = StandardScaler().set_output(transform="pandas").fit_transform(Xtr)
        for mname, model in am.models(task, 0, n_jobs=2, optional=("gb", "hgb")).items():
            if mname in am.NO_NAN and np.isnan(X.to_numpy()).any():
                continue
            model.fit(Xtr, ytr)
            est = (FIRERegressor if task == "regression" else FIREClassifier)()
            out = []
            for Xe, depth in ((Xtr, "auto"), (Xte, "auto"), (Xte, None), (Xtr * 100, "auto"),
                              (scaled, "auto")):
                est.set_params(rule_depth=depth)
                ens, table, _ = rules_at_depth(est, rule_ensemble_from_model(model), Xe, None)
                ptr = np.asarray(ens.block_ptr)
                split = np.diff(ptr) > 1
                share, reached = leaf_concentration(table, ptr, np.ones(len(Xe)))
                out.append((float(np.median(share[split])), float(np.median(reached[split]))))
            rows.append(out)
            print(f"{name:14s} {mname:8s} " + " ".join(
                f"{k} {a:.2f}/{b:.2f}" for k, (a, b) in zip(kinds, out)), flush=True)
    for i, kind in enumerate(kinds):
        flagged = sum(a >= MAX_LEAF_SHARE and b <= MAX_REACHED for a, b in (r[i] for r in rows))
        print(f"{kind}: flagged {flagged} of {len(rows)}")


if __name__ == "__main__":
    main()
