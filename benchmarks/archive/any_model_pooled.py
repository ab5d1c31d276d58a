"""Issue 22: the defaults' error ratio per (data set, model), pooled over every
seed measured, with its uncertainty.

Each argument is ``FILE=MODELS``: the rows of ``FILE`` (a
``benchmarks/any_model/any_model.py --csv`` file) for the comma-separated ``MODELS``, whose ratio is taken
to the same file's reference ``rf3x500`` of the same data set and seed.  A
(data set, seed, model) given twice is an error: say which file holds the
default for which model.  Per cell: seeds, the geometric-mean ratio, the
standard error of the mean log ratio, the two-sided 95% interval of the
geometric mean (t quantiles), and whether that interval lies above 1.10
(a miss the data resolve), below it (a pass they resolve) or straddles it.

    python benchmarks/archive/any_model_pooled.py \\
        benchmarks/archive/any_model_runs.csv=rf,rf3x500b \\
        benchmarks/archive/any_model_runs_new4.csv=rf,rf3x500b \\
        benchmarks/archive/any_model_unit_runs.csv=xgb,lgbm \\
        benchmarks/archive/any_model_gbhgb_auto_runs.csv=gb,hgb \\
        benchmarks/archive/any_model_d234_default_runs.csv=xgb,lgbm,gb,hgb \\
        benchmarks/archive/any_model_cvpick_default_runs.csv=xgb,lgbm,gb,hgb
"""
import argparse
import os
import sys

import numpy as np
import pandas as pd
from scipy import stats

# archived beside its raw rows; the maintained benchmark it reads is in ../any_model
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "any_model"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from any_model import MISS, REFERENCE  # noqa: E402

KEY = ["dataset", "seed", "model"]


def ratios(path, models):
    d = pd.read_csv(path, keep_default_na=False, na_values=[""])
    ref = d[d.model == REFERENCE].set_index(["dataset", "seed"]).test_error
    d = d[d.model.isin(models)].copy()
    d["ratio"] = d.test_error.to_numpy() / ref.loc[list(zip(d.dataset, d.seed))].to_numpy()
    d["file"] = os.path.basename(path)
    return d[KEY + ["ratio", "file"]]


def pooled(specs):
    runs = pd.concat([ratios(path, models.split(",")) for path, models in specs],
                     ignore_index=True)
    twice = runs[runs.duplicated(KEY, keep=False)]
    if len(twice):
        raise ValueError("rows given twice: " + twice.head().to_string())
    rows = []
    for (ds, m), r in runs.groupby(["dataset", "model"], sort=False):
        x = np.log(r.ratio.to_numpy())
        n = len(x)
        se = x.std(ddof=1) / np.sqrt(n)
        q = stats.t.ppf(0.975, n - 1)
        lo, hi = np.exp(x.mean() - q * se), np.exp(x.mean() + q * se)
        where = ("above" if lo > MISS else "below" if hi < MISS else "straddles")
        rows.append(dict(dataset=ds, model=m, seeds=n, geo_mean=np.exp(x.mean()),
                         se_log=se, ci_low=lo, ci_high=hi, vs_110=where,
                         runs_above=int((r.ratio > MISS).sum())))
    return pd.DataFrame(rows)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", help="FILE=MODELS")
    args = p.parse_args(argv)
    specs = [a.rsplit("=", 1) for a in args.runs]
    t = pooled(specs)
    print("| data set | model | seeds | geo-mean ratio | se log | 95% interval | vs 1.10 | "
          "runs above 1.10 |")
    print("|---|---|---:|---:|---:|---|---|---:|")
    for _, r in t.iterrows():
        g = f"**{r.geo_mean:.3f}**" if r.geo_mean > MISS else f"{r.geo_mean:.3f}"
        print(f"| {r.dataset} | {r.model} | {r.seeds} | {g} | {r.se_log:.3f} | "
              f"{r.ci_low:.3f}-{r.ci_high:.3f} | {r.vs_110} | {r.runs_above} |")
    for m, tm in t.groupby("model", sort=False):
        print(f"\n{m}: cells above 1.10 {int((tm.geo_mean > MISS).sum())}/{len(tm)}; "
              f"interval above 1.10 {int((tm.vs_110 == 'above').sum())}, below "
              f"{int((tm.vs_110 == 'below').sum())}, straddling "
              f"{int((tm.vs_110 == 'straddles').sum())}")


if __name__ == "__main__":
    main()
