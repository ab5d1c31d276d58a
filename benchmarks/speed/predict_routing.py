"""Predict-time routing: every tree (before) against the kept rules' trees only.

A fitted FIRE model keeps a handful of rules from a few of the source
model's trees; ``RuleEnsemble.predict_raw(X, coef)`` now routes the rows
through those trees only (``leaf_table(X, blocks=...)``).  This script fits
FIRERegressor at its defaults on three models and times, in one process,
alternating:

* ``full``: the old route, ``ens.predict_raw_from_ids(ens.apply(X), X, coef_)``
  (every tree), plus the intercept;
* ``kept``: ``ens.predict_raw(X, coef_)`` plus the intercept (what
  ``predict`` calls);

and the same for ``transform`` (``full``: the whole leaf table, then the kept
columns, as before).  CPU seconds (``time.process_time``, all threads), the
median of ``--reps`` alternated pairs, on ``--rows`` fresh rows and on 100.
The two predictions are checked equal (``allclose``, rtol 1e-12).

Models (friedman1, 11,000 training rows, seed 0):

* ``deep``: the deep forest of ``deep_forest.py`` (250 unlimited-depth
  trees; cached under ``--cache`` as that script caches it);
* ``rf500_d3``: RandomForestRegressor(500 trees, max_depth=3);
* ``xgb``: XGBRegressor at its defaults (100 rounds of depth 6, one thread);
* ``lgbm``: LGBMRegressor at its defaults (100 rounds of 31 leaves, one thread).

    python benchmarks/speed/predict_routing.py [--models deep,rf500_d3,xgb,lgbm]
        [--rows 5000] [--reps 7] [--cache DIR] [--train-rows 11000]

Results: ``benchmarks/speed/RESULTS.md``, section "Predict routes the
kept trees only".
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deep_forest import data, forest  # noqa: E402


def source_model(name, X, y, cache):
    if name == "deep":  # deep_forest.py's forest, from its cache
        return forest(X.shape[0], 250, cache)[2]
    if name == "rf500_d3":
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(n_estimators=500, max_depth=3, random_state=0).fit(X, y)
    if name == "xgb":
        import xgboost as xgb

        return xgb.XGBRegressor(n_jobs=1, random_state=0).fit(X, y)
    if name == "lgbm":
        import lightgbm as lgb

        return lgb.LGBMRegressor(n_jobs=1, random_state=0, verbose=-1).fit(X, y)
    raise ValueError(name)


def full_predict(est, X):
    ens = est.ensemble_
    Xm = est._validate_predict_data(X)
    return ens.predict_raw_from_ids(ens.apply(Xm), Xm, est.coef_) + est.intercept_


def kept_predict(est, X):
    Xm = est._validate_predict_data(X)
    return est.ensemble_.predict_raw(Xm, est.coef_) + est.intercept_


def full_transform(est, X):
    ens = est.ensemble_
    Xm = est._validate_predict_data(X)
    kept = est._kept_columns()
    table = np.asarray(ens.leaf_table(Xm))
    tree = np.searchsorted(np.asarray(ens.block_ptr), kept, side="right") - 1
    return np.where(table[:, tree] == kept[None, :], ens.leaf_values[kept], 0.0)


def cpu(f, X):
    c0 = time.process_time()
    out = f(X)
    return time.process_time() - c0, out


def pairs(a, b, X, reps):
    ta, tb = [], []
    for _ in range(reps):
        t, ra = cpu(a, X)
        ta.append(t)
        t, rb = cpu(b, X)
        tb.append(t)
    return np.array(ta), np.array(tb), ra, rb


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="deep,rf500_d3,xgb,lgbm")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--train-rows", type=int, default=11000,
                    help="training rows of the models (fewer: a quick check)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--cache", default=".")
    args = ap.parse_args()
    from firecy import FIRERegressor

    X, y = data(args.train_rows)
    X_test, _ = data(args.rows, seed=1)
    print(f"load {os.getloadavg()[0]:.2f}")
    for name in args.models.split(","):
        model = source_model(name, X, y, args.cache)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = FIRERegressor(estimator=model, random_state=0).fit(X, y)
        ens = est.ensemble_
        blocks = ens._active_blocks(ens.leaf_values * est.coef_)
        print(f"\n{name}: {ens.n_trees} trees, {ens.n_rules} columns, rule_depth "
              f"{est.rule_depth_}, {est.n_rules_} rules in {blocks.size} trees")
        for rows in (args.rows, 100):
            Xr = X_test[:rows]
            for what, a, b in (
                    ("predict", lambda Z: full_predict(est, Z), lambda Z: kept_predict(est, Z)),
                    ("transform", lambda Z: full_transform(est, Z), est.transform)):
                ta, tb, ra, rb = pairs(a, b, Xr, args.reps)
                np.testing.assert_allclose(rb, ra, rtol=1e-12, atol=1e-12)
                ratio = np.median(ta / tb)
                print(f"  {what:9s} {rows:5d} rows: full {np.median(ta) * 1e3:9.2f} ms, "
                      f"kept {np.median(tb) * 1e3:8.2f} ms, full/kept (median of pairs) "
                      f"{ratio:6.1f}")
    print(f"\nload {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
