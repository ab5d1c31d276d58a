"""FIRE against L1 at the rule budget on every count and survival data set of
the benchmark, fold by fold (paired), with standard errors.

The data set list is fixed in ``counts_survival.py`` (``survival_sets``,
``count_sets``) before any result is looked at; every set is reported. Per
outer fold (``KFold(folds, shuffle=True, random_state=seed)``) the
benchmark's XGBoost model (``survival:cox`` / ``count:poisson``, 100
depth-3 trees) is fitted once on the training rows, then FIRE at its
defaults and L1 (``penalty="l1", fusion=0``) on the same rules at the same
budget (14), plus any ``--variant`` (estimator parameters as JSON, e.g.
``--variant 'gamma3={"gamma": 3.0}'``; a name starting with ``honest``
selects the rule count by honest inner CV instead, the tree model refitted
in every inner fold: ``honest_fit``). Recorded per fit: the test metric
(survival: Harrell's C, higher better, and the test Cox partial likelihood,
lower better; counts: mean Poisson deviance, lower better), the rules, the
distinct test predictions, the trees used, the fit CPU.

    python benchmarks/counts_survival/counts_survival_paired.py --seeds 0,1 --save p.pkl
    python benchmarks/counts_survival/counts_survival_paired.py --model forest --seeds 0 --save f.pkl

``--model forest`` uses the estimators' own default source (what
``FIRESurvivalRegressor()`` / ``FIREPoissonRegressor()`` fit with no model
given), fitted once per outer fold through the estimator's code path
(``default_source``) and shared by FIRE and L1; ``--check-default`` asserts
the equality with ``estimator=None``. The estimators run with ``n_jobs``
(``--n-jobs``, default 1).
    python benchmarks/counts_survival/counts_survival_paired.py --load p.pkl [--method V --against L1]
"""
import argparse
import json
import os
import pickle
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import counts_survival as cs  # noqa: E402

from firecy import FIREPoissonRegressor, FIRESurvivalRegressor  # noqa: E402
from firecy.datafits._cox_loss import cox_deviance  # noqa: E402
from firecy.datafits._poisson_loss import log_exposure, poisson_deviance  # noqa: E402
from firecy._metrics import concordance_index  # noqa: E402


def _trees_used(fire):
    ptr = np.asarray(fire.ensemble_.block_ptr)
    nz = np.flatnonzero(fire.coef_)
    return int(np.unique(np.searchsorted(ptr, nz, side="right")).size)


def default_source(est, X, y, **fit_kw):
    """The model ``est.fit(X, y, **fit_kw)`` fits when ``est.estimator`` is
    None (the estimators' default forest: 500 depth-3 trees, the estimator's
    ``random_state`` and ``n_jobs``, its weights, row order and ``max_samples``
    rule, on martingale residuals / rates), fitted through ``est``'s own code
    path, so that FIRE and L1 can share it and its CPU is counted once.
    Private methods on purpose: a copy of the forest's settings here would
    drift from the estimators' default (``--check-default`` asserts that a
    fit on this model equals ``fit`` with ``estimator=None``)."""
    assert est.estimator is None
    exposure = fit_kw.pop("exposure", None)
    assert not fit_kw
    if isinstance(est, FIREPoissonRegressor):
        est._fit_log_exposure = log_exposure(exposure, len(y))
    try:
        Xv, yv = est._validate_fit_data(X, y)
        return est._fit_model(Xv, yv, np.ones(Xv.shape[0]), False)
    finally:
        est.__dict__.pop("_fit_log_exposure", None)


def _check_default(Est, model, params, X, y, **fit_kw):
    """Assert that ``Est(model)`` fits as ``Est()`` (estimator=None) does."""
    a = Est(**params).fit(X, y, **fit_kw)
    b = Est(model, **params).fit(X, y, **fit_kw)
    assert np.array_equal(a.coef_, b.coef_) and a.intercept_ == b.intercept_, \
        "the benchmark's forest is not the estimators' default"


def _at_point(f, path, j):
    """``f`` set to point ``j`` of ``path`` (its coefficients and intercept)."""
    f.coef_ = path.coefs[j]
    f.intercept_ = float(path.intercepts[j])
    f.n_rules_ = int(path.n_rules[j])
    return f


def _last_within(path, k):
    """The path point with the most rules <= ``k`` (then the smallest lambda)."""
    ok = np.flatnonzero(path.n_rules <= k)
    return int(ok[np.argmax(path.n_rules[ok] + 1e-9 * np.arange(ok.size))])


def honest_fit(make, fit_model, loss, tr, seed, params, max_rules=14, folds=5):
    """FIRE with the rule count chosen by *honest* inner CV: the tree model is
    refitted on each inner fold's training rows (the estimators' own CV
    refits only the rule weights, on rules whose leaves were fitted to the
    held-out rows as well), the fold's budget path is scored on the held-out
    rows at every rule count k <= ``max_rules`` (its point with the most rules
    <= k), and the full fit takes its point with the most rules <= the k of
    the lowest mean held-out loss. ``make(model, **params)`` builds the
    estimator, ``fit_model(rows)`` the tree model, ``loss(f, rows)`` the
    held-out loss. Returns the fitted estimator."""
    ks = np.arange(0, max_rules + 1)
    err = []
    for itr, iva in KFold(folds, shuffle=True, random_state=seed).split(tr):
        a, v = tr[itr], tr[iva]
        f = make(fit_model(a), selection="budget", max_rules=max_rules, **params).fit_rows(a)
        path = f.path_
        err.append([loss(_at_point(f, path, _last_within(path, k)), v) for k in ks])
    mean = np.mean(err, axis=0)
    k_best = int(ks[np.argmin(mean)])
    f = make(fit_model(tr), selection="budget", max_rules=max_rules, **params).fit_rows(tr)
    f = _at_point(f, f.path_, _last_within(f.path_, k_best))
    f.honest_k_ = k_best
    return f


def _methods(variants):
    out = [("FIRE", {}), ("L1", dict(penalty="l1", fusion=0.0))]
    return out + list(variants)


def run_survival(name, X, event, t, folds, seed, methods, source="xgb", n_jobs=1,
                 check=False):
    y = np.array(list(zip(event, t)), dtype=[("event", bool), ("time", float)])
    rows = []
    for k, (tr, te) in enumerate(KFold(folds, shuffle=True, random_state=seed).split(X)):
        c0 = time.process_time()
        if source == "xgb":
            model = cs._xgb("survival:cox").fit(X.iloc[tr], np.where(event[tr], t[tr], -t[tr]))
            eta = model.predict(X.iloc[te], output_margin=True)
        else:
            # FIRESurvivalRegressor()'s own forest: a regression forest on the
            # martingale residuals of the null Cox model (higher: more risk;
            # not a log hazard, so the model's "dev" is not comparable)
            model = default_source(FIRESurvivalRegressor(random_state=seed, n_jobs=n_jobs),
                                   X.iloc[tr], y[tr])
            eta = model.predict(X.iloc[te])
            if check:
                _check_default(FIRESurvivalRegressor, model,
                               dict(random_state=seed, n_jobs=n_jobs), X.iloc[tr], y[tr])
        rows.append(dict(data=name, kind="survival", seed=seed, fold=k, method="model",
                         score=concordance_index(event[te], t[te], eta),
                         dev=cox_deviance(event[te], t[te], eta), rules=np.nan,
                         distinct=len(np.unique(eta)), trees=np.nan,
                         cpu=time.process_time() - c0))
        for label, params in methods:
            c0 = time.process_time()
            if label.startswith("honest"):
                def make(m, **kw):
                    est = FIRESurvivalRegressor(m, random_state=seed, n_jobs=n_jobs, **kw)
                    est.fit_rows = lambda rows: est.fit(X.iloc[rows], y[rows])
                    return est

                def fit_model(rows):
                    return cs._xgb("survival:cox").fit(
                        X.iloc[rows], np.where(event[rows], t[rows], -t[rows]))

                def loss(f, rows):
                    return cox_deviance(event[rows], t[rows], f.predict(X.iloc[rows]))

                assert source == "xgb"
                f = honest_fit(make, fit_model, loss, tr, seed, params)
            else:
                f = FIRESurvivalRegressor(model, random_state=seed, n_jobs=n_jobs, **params).fit(
                    X.iloc[tr], y[tr])
            cpu = time.process_time() - c0
            p = f.predict(X.iloc[te])
            rows.append(dict(data=name, kind="survival", seed=seed, fold=k, method=label,
                             score=f.score(X.iloc[te], y[te]),
                             dev=cox_deviance(event[te], t[te], p), rules=f.n_rules_,
                             distinct=len(np.unique(np.round(p, 12))), trees=_trees_used(f),
                             cpu=cpu))
            print(name, seed, k, label, f"C {rows[-1]['score']:.4f} pl {rows[-1]['dev']:.4f} "
                  f"rules {f.n_rules_} cpu {cpu:.1f}", flush=True)
    return rows


def run_counts(name, X, y, exposure, folds, seed, methods, source="xgb", n_jobs=1,
               check=False):
    rows = []
    e = np.ones_like(y) if exposure is None else exposure
    for k, (tr, te) in enumerate(KFold(folds, shuffle=True, random_state=seed).split(X)):
        c0 = time.process_time()
        if source == "xgb":
            model = cs._xgb("count:poisson").fit(X.iloc[tr], y[tr] / e[tr], sample_weight=e[tr])
        else:
            # FIREPoissonRegressor()'s own forest, on the rate (exposure weights)
            model = default_source(FIREPoissonRegressor(random_state=seed, n_jobs=n_jobs),
                                   X.iloc[tr], y[tr], exposure=e[tr])
            if check:
                _check_default(FIREPoissonRegressor, model,
                               dict(random_state=seed, n_jobs=n_jobs), X.iloc[tr], y[tr],
                               exposure=e[tr])
        mu = np.maximum(model.predict(X.iloc[te]), 1e-12) * e[te]
        rows.append(dict(data=name, kind="counts", seed=seed, fold=k, method="model",
                         score=poisson_deviance(y[te], mu), dev=np.nan, rules=np.nan,
                         distinct=len(np.unique(mu)), trees=np.nan,
                         cpu=time.process_time() - c0))
        for label, params in methods:
            c0 = time.process_time()
            if label.startswith("honest"):
                def make(m, **kw):
                    est = FIREPoissonRegressor(m, random_state=seed, n_jobs=n_jobs, **kw)
                    est.fit_rows = lambda rows: est.fit(X.iloc[rows], y[rows], exposure=e[rows])
                    return est

                def fit_model(rows):
                    return cs._xgb("count:poisson").fit(X.iloc[rows], y[rows] / e[rows],
                                                        sample_weight=e[rows])

                def loss(f, rows):
                    return poisson_deviance(y[rows], f.predict(X.iloc[rows], exposure=e[rows]))

                assert source == "xgb"
                f = honest_fit(make, fit_model, loss, tr, seed, params)
            else:
                f = FIREPoissonRegressor(model, random_state=seed, n_jobs=n_jobs, **params).fit(
                    X.iloc[tr], y[tr], exposure=e[tr])
            cpu = time.process_time() - c0
            mu = f.predict(X.iloc[te], exposure=e[te])
            rows.append(dict(data=name, kind="counts", seed=seed, fold=k, method=label,
                             score=poisson_deviance(y[te], mu), dev=np.nan, rules=f.n_rules_,
                             distinct=len(np.unique(np.round(np.log(mu / e[te]), 12))),
                             trees=_trees_used(f), cpu=cpu))
            print(name, seed, k, label, f"dev {rows[-1]['score']:.4f} rules {f.n_rules_} "
                  f"cpu {cpu:.1f}", flush=True)
    return rows


def summarise(df, method="FIRE", against="L1"):
    """Paired ``method - against`` per data set: mean, sd, standard error,
    folds ahead; survival on test C (and on test partial likelihood), counts
    on test deviance (sign flipped so that positive is ``method`` better)."""
    wide = df.pivot_table(index=["data", "kind", "seed", "fold"], columns="method",
                          values=["score", "dev", "rules", "distinct", "trees", "cpu"])
    print(f"\n{method} against {against}, paired over the outer folds (+: {method} better; "
          "survival: test C, counts: test deviance, sign flipped; se = sd / sqrt(folds)):\n")
    print(f"| data | n folds | metric | {method} | {against} | model | {method} better by (mean) "
          f"| se | mean / se | folds {method} ahead | {method} rules | {against} rules "
          f"| {method} distinct test predictions | {against} distinct | {method} trees "
          f"| {against} trees | {method} CPU (s) | {against} CPU (s) | test PL: {method} better by "
          "| se |")
    print("|" + " --- |" * 20)
    wins = ties = 0
    order = list(dict.fromkeys(df.data))
    for data in order:
        g = wide.xs(data, level="data")
        kind = g.index.get_level_values("kind")[0]
        sign = 1.0 if kind == "survival" else -1.0
        a, b = g[("score", method)].to_numpy(), g[("score", against)].to_numpy()
        d = sign * (a - b)
        se = d.std(ddof=1) / np.sqrt(len(d))
        wins += d.mean() > 0
        pl = ""
        if kind == "survival":
            dp = -(g[("dev", method)] - g[("dev", against)]).to_numpy()
            pl = f"{dp.mean():+.4f} | {dp.std(ddof=1) / np.sqrt(len(dp)):.4f}"
        else:
            pl = " | "
        metric = "C" if kind == "survival" else "deviance"
        print(f"| {data} | {len(d)} | {metric} | {a.mean():.4f} | {b.mean():.4f} "
              f"| {g[('score', 'model')].mean():.4f} | {d.mean():+.4f} | {se:.4f} "
              f"| {d.mean() / se if se > 0 else np.nan:+.1f} | {int((d > 0).sum())}/{len(d)} "
              f"| {g[('rules', method)].mean():.1f} | {g[('rules', against)].mean():.1f} "
              f"| {g[('distinct', method)].mean():.1f} | {g[('distinct', against)].mean():.1f} "
              f"| {g[('trees', method)].mean():.1f} | {g[('trees', against)].mean():.1f} "
              f"| {g[('cpu', method)].mean():.1f} | {g[('cpu', against)].mean():.1f} | {pl} |")
    print(f"\n{method} ahead of {against} (mean over folds) on {wins} of {len(order)} data sets.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="comma-separated data set names")
    ap.add_argument("--skip", default="", help="comma-separated data set names")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=JSON estimator parameters, fitted beside FIRE and L1")
    ap.add_argument("--no-base", action="store_true",
                    help="fit only the variants (and the model), not FIRE and L1")
    ap.add_argument("--model", choices=("xgb", "forest"), default="xgb",
                    help="the rules' source: the benchmark's XGBoost model, or the "
                         "estimators' default forest (500 depth-3 trees; martingale "
                         "residuals / rates)")
    ap.add_argument("--n-jobs", type=int, default=1,
                    help="the estimators' n_jobs (and the default forest's)")
    ap.add_argument("--check-default", action="store_true",
                    help="--model forest: also fit FIRE with estimator=None and assert "
                         "that it equals the fit on the shared forest")
    ap.add_argument("--save", default=None)
    ap.add_argument("--load", default=None, help="comma-separated pickles to summarise")
    ap.add_argument("--method", default="FIRE")
    ap.add_argument("--against", default="L1")
    args = ap.parse_args()
    if args.load:
        rows = []
        for fn in args.load.split(","):
            with open(fn, "rb") as fh:
                rows += pickle.load(fh)
        df = pd.DataFrame(rows).drop_duplicates(["data", "seed", "fold", "method"])
        summarise(df, args.method, args.against)
        return
    variants = [(v.split("=", 1)[0], json.loads(v.split("=", 1)[1])) for v in args.variant]
    methods = variants if args.no_base else _methods(variants)
    only = None if args.only is None else set(args.only.split(","))
    skip = set(args.skip.split(","))
    warnings.simplefilter("ignore")
    rows = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        sets = [("s",) + s for s in cs.survival_sets()] + [("c",) + s for s in cs.count_sets()]
        for kind, name, X, a, b in sets:
            if (only is not None and name not in only) or name in skip:
                continue
            run = run_survival if kind == "s" else run_counts
            rows += run(name, X, a, b, args.folds, seed, methods, args.model, args.n_jobs,
                        args.check_default)
            if args.save:
                with open(args.save, "wb") as fh:
                    pickle.dump(rows, fh)
    if args.no_base and len(methods) < 2:
        return
    summarise(pd.DataFrame(rows), methods[0][0] if args.no_base else args.method,
              methods[1][0] if args.no_base else args.against)


if __name__ == "__main__":
    main()
