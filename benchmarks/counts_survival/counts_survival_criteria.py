"""Which inner-CV criterion should select the survival estimator's lambda?
FIRE (defaults) and L1 (``penalty="l1", fusion=0``, same rules, same budget)
are each fitted once per outer fold; the inner-CV held-out predictions of
every eligible path point are recorded, and each criterion below picks a
point from the same full-data path (the same criterion for FIRE and L1).
Printed: the test concordance of each pick, per outer fold, and the paired
FIRE - L1 differences.

Criteria (inner 5-fold CV on the training rows, points within the budget):

* ``pl``      mean over inner folds of the per-fold Cox partial likelihood
              (the estimator's default, glmnet's ungrouped ``deviance``);
* ``pl_1se``  the fewest rules within one standard error of ``pl``'s best;
* ``c``       mean over inner folds of the per-fold Harrell C (the
              estimator's ``score``, what ``GridSearchCV`` would select by);
* ``c_1se``   the fewest rules within one standard error of ``c``'s best;
* ``pooled_pl`` the Cox partial likelihood of the held-out linear predictors
              of all inner folds pooled (each row predicted by the fold model
              that did not see it): the "linear predictor" CV of Dai &
              Breheny (2019), ncvreg's default, one risk set over all rows;
* ``pooled_c`` Harrell's C of the same pooled linear predictors;
* ``vvh``     Verweij & van Houwelingen's (1993) cross-validated partial
              likelihood, glmnet's ``grouped = TRUE`` Cox CV: for each inner
              fold k, the log partial likelihood of the fold model on all
              training rows minus that on the fold's own training rows;
* ``vvh_1se`` the fewest rules within one standard error of ``vvh``'s best.

    python benchmarks/counts_survival/counts_survival_criteria.py --seeds 0 --save grid0.pkl
    python benchmarks/counts_survival/counts_survival_criteria.py --seeds 0 --refine --save refined0.pkl
    python benchmarks/counts_survival/counts_survival_criteria.py --load grid0.pkl,grid1.pkl
    python benchmarks/counts_survival/counts_survival_criteria.py --load grid0.pkl --compare refined0.pkl
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
from firecy.estimators import _survival  # noqa: E402
from firecy.estimators._glm_paths import CoxPaths, cox_validation_loss  # noqa: E402
from firecy.solver import BlockDesign  # noqa: E402
from firecy._metrics import concordance_index  # noqa: E402

CRITERIA = ("pl", "pl_1se", "c", "c_1se", "pooled_pl", "pooled_c", "vvh", "vvh_1se")
_PATHS = []
_CAPTURED = []
_SURVIVAL_TASK = _survival.survival_task


def _recording_loss(y, pred, sample_weight):
    _CAPTURED.append((y.copy(), pred.copy()))
    return cox_validation_loss(y, pred, sample_weight)


def _recording_task(est, data, event, time_):
    """The survival estimator's task, recording every inner fold's held-out
    rows and predictions and every path (n_jobs=None: the folds run in order,
    in this thread)."""
    task = _SURVIVAL_TASK(est, data, event, time_)
    task.validation_loss = _recording_loss
    task.fitter = lambda ensemble: _RecordingPaths(est.ties)
    return task


class _Recording(FIRESurvivalRegressor):
    """FIRESurvivalRegressor whose fit records (see _recording_task)."""

    def fit(self, X, y, sample_weight=None, progress=None):
        _survival.survival_task = _recording_task
        try:
            return super().fit(X, y, sample_weight=sample_weight, progress=progress)
        finally:
            _survival.survival_task = _SURVIVAL_TASK


class _RecordingPaths(CoxPaths):
    """Records every path it fits (the full-data path first, then the folds)."""

    def path(self, *args, **kwargs):
        out = super().path(*args, **kwargs)
        _PATHS.append(out)
        return out


def _per_fold(captured, fn):
    return np.array([[fn(y[:, 0] > 0, y[:, 1], p[:, k]) for k in range(p.shape[1])]
                     for y, p in captured])


def vvh_per_fold(est, X, y, splits, fold_paths):
    """Verweij & van Houwelingen's per-fold terms (minus log partial
    likelihoods, so lower is better), shape (n_folds, n_points)."""
    ens = est.ensemble_
    Xm = est._validate_predict_data(X)
    table = ens.leaf_table_from_ids(ens.apply(Xm))
    csc = BlockDesign.from_leaf_table(table, ens.leaf_values, ens.block_ptr).tocsc()
    base = np.asarray(ens.baseline(Xm), dtype=float)
    event, time_ = y["event"].astype(float), y["time"].astype(float)
    n = len(event)
    out = []
    for (train, _), path in zip(splits, fold_paths):
        eta = base[:, None] + np.asarray(csc @ path.coefs.T)
        # CoxLoss.value is the mean over the rows: times n, the sum
        out.append([n * cox_deviance(event, time_, eta[:, k])
                    - len(train) * cox_deviance(event[train], time_[train], eta[train, k])
                    for k in range(eta.shape[1])])
    return np.array(out)


def choose(captured, n_rules, vvh=None):
    """The path point (index among the eligible ones) each criterion picks.
    ``n_rules``: the rule counts of the eligible points."""
    pl = _per_fold(captured, lambda e, t, r: cox_deviance(e, t, r))
    conc = _per_fold(captured, concordance_index)
    n_folds = pl.shape[0]
    out = {}
    named = [("pl", pl), ("c", -conc)] + ([] if vvh is None else [("vvh", vvh)])
    for name, err in named:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean, sd = np.nanmean(err, axis=0), np.nanstd(err, axis=0)
        best = int(np.nanargmin(mean))
        out[name] = best
        # the same standard error as firecy's one_se: std / sqrt(K - 1)
        bar = mean[best] + sd[best] / np.sqrt(max(n_folds - 1, 1))
        within = np.flatnonzero(mean <= bar)
        out[name + "_1se"] = int(min(within, key=lambda k: (n_rules[k], mean[k], k)))
    y = np.vstack([y for y, _ in captured])
    p = np.vstack([p for _, p in captured])
    pooled_pl = np.array([cox_deviance(y[:, 0], y[:, 1], p[:, k]) for k in range(p.shape[1])])
    pooled_c = np.array([concordance_index(y[:, 0] > 0, y[:, 1], p[:, k])
                         for k in range(p.shape[1])])
    out["pooled_pl"] = int(np.argmin(pooled_pl))
    out["pooled_c"] = int(np.nanargmax(pooled_c))
    return out


def run(name, X, event, t, folds, seed):
    y = np.array(list(zip(event, t)), dtype=[("event", bool), ("time", float)])
    rows = []
    for k, (tr, te) in enumerate(KFold(folds, shuffle=True, random_state=seed).split(X)):
        model = cs._xgb("survival:cox").fit(X.iloc[tr], np.where(event[tr], t[tr], -t[tr]))
        for label, params in (("FIRE", {}), ("L1", dict(penalty="l1", fusion=0.0))):
            _CAPTURED.clear()
            _PATHS.clear()
            c0 = time.process_time()
            f = _Recording(model, random_state=seed, **params).fit(X.iloc[tr], y[tr])
            cpu = time.process_time() - c0
            path = f.path_
            elig = np.flatnonzero(path.eligible)
            assert len(_PATHS) == len(_CAPTURED) + 1
            for fp in _PATHS[1:]:
                assert np.array_equal(fp.lambdas, path.lambdas[elig])
            vvh = vvh_per_fold(f, X.iloc[tr], y[tr], f._splits(len(tr)), _PATHS[1:])
            picks = choose(list(_CAPTURED), path.n_rules[elig], vvh)
            # the default criterion reproduces the estimator's own choice
            assert path.lambdas[elig[picks["pl"]]] == f.lambda_, (name, k, label)
            test_c = {}
            for crit, j in picks.items():
                f.coef_ = path.coefs[elig[j]]
                test_c[crit] = (f.score(X.iloc[te], y[te]), int(path.n_rules[elig[j]]))
            rows.append((name, seed, k, label, cpu, test_c))
            print(name, seed, k, label, f"cpu {cpu:.1f}",
                  " ".join(f"{c}={v[0]:.4f}/{v[1]}" for c, v in test_c.items()), flush=True)
    return rows


def summarise(rows):
    import pandas as pd

    recs = [dict(data=r[0], seed=r[1], fold=r[2], method=r[3], crit=c, c=v[0], rules=v[1])
            for r in rows for c, v in r[5].items()]
    df = pd.DataFrame(recs)
    wide = df.pivot_table(index=["data", "seed", "fold", "crit"], columns="method",
                          values=["c", "rules"])
    wide.columns = [f"{a}_{b}" for a, b in wide.columns]
    wide = wide.reset_index()
    wide["diff"] = wide["c_FIRE"] - wide["c_L1"]
    print("\n| data | criterion | FIRE C | L1 C | FIRE - L1 (mean) | sd of paired diff "
          "| se | FIRE ahead | FIRE rules | L1 rules |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    order = {c: i for i, c in enumerate(CRITERIA)}
    wide = wide.sort_values(["data", "crit"], key=lambda s: s.map(order) if s.name == "crit"
                            else s, kind="stable")
    for (data, crit), g in wide.groupby(["data", "crit"], sort=False):
        d = g["diff"].to_numpy()
        print(f"| {data} | {crit} | {g.c_FIRE.mean():.4f} | {g.c_L1.mean():.4f} "
              f"| {d.mean():+.4f} | {d.std(ddof=1):.4f} | {d.std(ddof=1) / np.sqrt(len(d)):.4f} "
              f"| {int((d > 0).sum())}/{len(d)} | {g.rules_FIRE.mean():.1f} "
              f"| {g.rules_L1.mean():.1f} |")
    print("\nEach criterion over the data sets (each weighted equally):\n")
    print("| criterion | FIRE C | L1 C | FIRE - L1 | data sets FIRE ahead |")
    print("| --- | --- | --- | --- | --- |")
    per = wide.groupby(["crit", "data"])[["c_FIRE", "c_L1", "diff"]].mean()
    for crit in CRITERIA:
        p = per.loc[crit]
        print(f"| {crit} | {p.c_FIRE.mean():.4f} | {p.c_L1.mean():.4f} | {p['diff'].mean():+.4f} "
              f"| {int((p['diff'] > 0).sum())}/{len(p)} |")


def compare(grid_rows, refined_rows, crit="pl"):
    """The default criterion on grid paths against refined paths (same folds)."""
    import pandas as pd

    def frame(rows, tag):
        return pd.DataFrame([dict(data=r[0], seed=r[1], fold=r[2], method=f"{r[3]} {tag}",
                                  c=r[5][crit][0], rules=r[5][crit][1], cpu=r[4])
                             for r in rows])

    df = pd.concat([frame(grid_rows, "grid"), frame(refined_rows, "refined")])
    wide = df.pivot_table(index=["data", "seed", "fold"], columns="method",
                          values=["c", "rules", "cpu"])
    print(f"\n| data | paths | FIRE C | L1 C | FIRE - L1 | sd of paired diff | FIRE ahead "
          f"| FIRE rules | L1 rules | FIRE CPU (s) | L1 CPU (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for data, g in wide.groupby(level="data"):
        for tag in ("grid", "refined"):
            d = (g[("c", f"FIRE {tag}")] - g[("c", f"L1 {tag}")]).to_numpy()
            print(f"| {data} | {tag} | {g[('c', f'FIRE {tag}')].mean():.4f} "
                  f"| {g[('c', f'L1 {tag}')].mean():.4f} | {d.mean():+.4f} | {d.std(ddof=1):.4f} "
                  f"| {int((d > 0).sum())}/{len(d)} | {g[('rules', f'FIRE {tag}')].mean():.1f} "
                  f"| {g[('rules', f'L1 {tag}')].mean():.1f} "
                  f"| {g[('cpu', f'FIRE {tag}')].mean():.1f} "
                  f"| {g[('cpu', f'L1 {tag}')].mean():.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="veteran,pbc,gbsg,rotterdam")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--refine", action="store_true",
                    help="refine the paths where the rule count jumps (off for the "
                         "Cox loss by default: CoxPaths.refine)")
    ap.add_argument("--save", default=None, help="write the raw rows here (pickle)")
    ap.add_argument("--load", default=None, help="summarise saved rows (comma-separated files)")
    ap.add_argument("--compare", default=None,
                    help="with --load (grid paths): saved rows of refined paths, side by side")
    args = ap.parse_args()
    if args.load:
        import pickle

        rows = []
        for fn in args.load.split(","):
            with open(fn, "rb") as fh:
                rows += pickle.load(fh)
        if args.compare:
            refined = []
            for fn in args.compare.split(","):
                with open(fn, "rb") as fh:
                    refined += pickle.load(fh)
            compare(rows, refined)
        else:
            summarise(rows)
        return
    warnings.simplefilter("ignore")
    CoxPaths.refine = bool(args.refine)
    only = set(args.only.split(","))
    rows = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        for name, X, event, t in cs.survival_sets():
            if name in only:
                rows += run(name, X, event, t, args.folds, seed)
                if args.save:
                    import pickle

                    with open(args.save, "wb") as fh:
                        pickle.dump(rows, fh)
    summarise(rows)


if __name__ == "__main__":
    main()
