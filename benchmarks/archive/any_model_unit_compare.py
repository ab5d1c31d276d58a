"""Issue 22: the boosted models before and after ``rule_values="auto"`` (unit values).

Reads the saved rows of ``benchmarks/any_model/any_model.py`` (before: the default
``rule_values="leaf"``; after: a rerun with ``--rule-values auto --models
rf3x500,xgb,lgbm``) and writes, per (dataset, model): the geometric-mean
error ratio to FIRE on ``rf3x500`` of the same split, before and after, the
misses (ratio > 1.10), the change of the geo-mean against the noise floor
(``rf3x500b``'s spread on that dataset), rules, CPU time ratios, and for
classification the misclassification rates.

A cell is "worse beyond the noise floor" when its geo-mean ratio rose by more
than ``2 sd / sqrt(seeds)`` in log (``sd``: the standard deviation over the
seeds of ``log(rf3x500b / rf3x500)``, FIRE on one depth-3 forest against
another: the resolution of a geo-mean over those seeds), and the paired
change over the same splits, ``mean(log(after / before))``, is more than
two of its standard errors above 0.

    python benchmarks/archive/any_model_unit_compare.py --before benchmarks/archive/any_model_runs.csv \
        benchmarks/archive/any_model_runs_new4.csv --after benchmarks/archive/any_model_unit_runs.csv \
        [--seed-list 0,...,9] [--out FILE]

Session 34: ``--models gb,hgb`` compares other boosted models (default
``xgb,lgbm``); ``--noise-floor FILES`` takes the ``rf3x500b`` rows from
saved runs (their own references give the ratios) when the ``--before`` rows
have none, restricted to the seeds compared:

    python benchmarks/archive/any_model_unit_compare.py --models gb,hgb \
        --before benchmarks/archive/any_model_gbhgb_leaf_runs.csv \
        --after benchmarks/archive/any_model_gbhgb_auto_runs.csv \
        --noise-floor benchmarks/archive/any_model_runs.csv benchmarks/archive/any_model_runs_new4.csv
"""
import argparse
import os
import sys

import numpy as np
import pandas as pd

# archived beside its raw rows; the maintained benchmark it reads is in ../any_model
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "any_model"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from any_model import MISS, NOISE_FLOOR, REFERENCE, with_ratios  # noqa: E402

BOOSTED = ("xgb", "lgbm")


def _read(paths):
    df = pd.concat([pd.read_csv(f, keep_default_na=False, na_values=[""]) for f in paths],
                   ignore_index=True)
    df["rule_depth"] = df.rule_depth.astype(str)
    return df


def _gm(x):
    return float(np.exp(np.mean(np.log(np.asarray(x, dtype=float)))))


def compare(before, after, seeds=None, boosted=BOOSTED, noise_floor=None):
    """Per (dataset, model of ``boosted``) the change from ``before`` to
    ``after``; the noise floor from ``noise_floor``'s ``rf3x500b`` rows (the
    same seeds as ``after``) or, without it, from ``before``'s."""
    if seeds is not None:
        before = before[before.seed.isin(seeds)]
        after = after[after.seed.isin(seeds)]
    # only the splits the rerun covers
    keys = set(zip(after.dataset, after.seed))
    before = before[[k in keys for k in zip(before.dataset, before.seed)]]
    b, a = with_ratios(before), with_ratios(after)
    # the reference of a split is the same fit in both runs (forest: "auto" = "leaf")
    rb = b[b.model == REFERENCE].set_index(["dataset", "seed"])
    ra = a[a.model == REFERENCE].set_index(["dataset", "seed"])
    same_ref = (rb.loc[ra.index, "test_error"].to_numpy() == ra.test_error.to_numpy())
    if noise_floor is None:
        nf = b[b.model == NOISE_FLOOR]
    else:
        nf = noise_floor[noise_floor.seed.isin(set(after.seed))
                         & noise_floor.dataset.isin(set(after.dataset))]
        nf = with_ratios(nf)
        nf = nf[nf.model == NOISE_FLOOR]
    sd_nf = nf.groupby("dataset").apply(lambda d: np.log(d.error_ratio).std(),
                                        include_groups=False)
    rows = []
    for (ds, m), db in b[b.model.isin(boosted)].groupby(["dataset", "model"], sort=False):
        da = a[(a.dataset == ds) & (a.model == m)].set_index("seed")
        db = db.set_index("seed").loc[da.index]
        # the boosters are refitted: the same model as before (bitwise error)
        same_model = bool(np.all(db.model_error.to_numpy() == da.model_error.to_numpy()))
        d = np.log(da.error_ratio.to_numpy() / db.error_ratio.to_numpy())
        n = len(d)
        floor = 2 * sd_nf[ds] / np.sqrt(n)
        t = d.mean() / (d.std(ddof=1) / np.sqrt(n)) if n > 1 and d.std() > 0 else 0.0
        rows.append(dict(
            dataset=ds, model=m, seeds=n, same_model=same_model,
            before=_gm(db.error_ratio), after=_gm(da.error_ratio),
            change=float(np.exp(d.mean())), floor=float(np.exp(floor)), paired_t=t,
            worse=bool(d.mean() > floor and t > 2),
            misses_before=int((db.error_ratio > MISS).sum()),
            misses_after=int((da.error_ratio > MISS).sum()),
            rules_before=db.rules.mean(), rules_after=da.rules.mean(),
            max_rules_after=int(da.rules.max()),
            time_before=_gm(db.time_ratio), time_after=_gm(da.time_ratio),
            worst_time_after=float(da.time_ratio.max()),
            cpu_after_over_before=_gm(da.fit_cpu_s.to_numpy() / db.fit_cpu_s.to_numpy()),
            rate_ref=db.ref_rate.mean(), rate_before=db.error_rate.mean(),
            rate_after=da.error_rate.mean(),
        ))
    return pd.DataFrame(rows), same_ref, a, b


def report(t, same_ref, a, b):
    f3 = "{:.3f}".format
    out = []
    n_ref = len(same_ref)
    out.append(f"Reference fits (rf3x500, rule_values='auto' = 'leaf') equal to the saved "
               f"rows bitwise (test error): {int(same_ref.sum())}/{n_ref}; boosters refitted "
               f"to the same model (bitwise model error) in {int(t.same_model.sum())}/{len(t)} "
               "cells.\n")
    out.append("| dataset | model | seeds | geo-mean before | after | change | noise floor | "
               "paired t | worse | misses before | after | rules before | after | max | "
               "time ratio before | after | worst | CPU after/before |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
               "---:|---:|")
    for _, r in t.iterrows():
        hit = lambda v: f"**{f3(v)}**" if v > MISS else f3(v)  # noqa: E731
        out.append(
            f"| {r.dataset} | {r.model} | {r.seeds} | {hit(r.before)} | {hit(r.after)} | "
            f"{f3(r.change)} | {f3(r.floor)} | {r.paired_t:.1f} | {'yes' if r.worse else ''} | "
            f"{r.misses_before}/{r.seeds} | {r.misses_after}/{r.seeds} | "
            f"{r.rules_before:.1f} | {r.rules_after:.1f} | {r.max_rules_after} | "
            f"{f3(r.time_before)} | {f3(r.time_after)} | {r.worst_time_after:.2f} | "
            f"{f3(r.cpu_after_over_before)} |")
    runs = int(t.seeds.sum())
    out.append("")
    out.append(
        f"Boosted cells above 1.10 (geo-mean): before {int((t.before > MISS).sum())}/{len(t)}, "
        f"after {int((t.after > MISS).sum())}/{len(t)}; misses per run: before "
        f"{int(t.misses_before.sum())}/{runs}, after {int(t.misses_after.sum())}/{runs}; "
        f"geo-mean over all boosted runs: before "
        f"{_gm(np.repeat(t.before, 1)):.3f} (of cells), after {_gm(t.after):.3f}; cells "
        f"better / worse (geo-mean): {int((t.change < 1).sum())} / {int((t.change > 1).sum())}; "
        f"worse beyond the noise floor: {int(t.worse.sum())}.")
    c = t[t.rate_ref.notna() & (t.rate_ref > 0)]
    if len(c):
        out.append("")
        out.append("Classification, misclassification rate (mean over the seeds; ratio of "
                   "the mean rates to the reference's):")
        out.append("")
        out.append("| dataset | model | ref rate | rate before | after | rate ratio before | "
                   "after |")
        out.append("|---|---|---:|---:|---:|---:|---:|")
        for _, r in c.iterrows():
            out.append(f"| {r.dataset} | {r.model} | {f3(r.rate_ref)} | {f3(r.rate_before)} | "
                       f"{f3(r.rate_after)} | {f3(r.rate_before / r.rate_ref)} | "
                       f"{f3(r.rate_after / r.rate_ref)} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", nargs="+", required=True)
    p.add_argument("--after", nargs="+", required=True)
    p.add_argument("--seed-list")
    p.add_argument("--models", default=",".join(BOOSTED),
                   help="comma-separated boosted models to compare (default: xgb,lgbm)")
    p.add_argument("--noise-floor", nargs="+",
                   help="saved runs whose rf3x500b rows give the noise floor "
                        "(default: the --before rows)")
    p.add_argument("--out")
    args = p.parse_args(argv)
    seeds = None if not args.seed_list else [int(s) for s in args.seed_list.split(",")]
    nf = None if not args.noise_floor else _read(args.noise_floor)
    t, same_ref, a, b = compare(_read(args.before), _read(args.after), seeds,
                                tuple(args.models.split(",")), nf)
    text = report(t, same_ref, a, b)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
