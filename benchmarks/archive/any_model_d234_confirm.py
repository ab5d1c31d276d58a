"""Issue 22, session 34: the pre-registered seeds 30-49 check of
``rule_depth=(2, 3, 4)`` on boosted ensembles (rule and its reading:
``benchmarks/any_model/RESULTS.md``, section "Session 34: pre-registered
confirmation ...").

Reads the rows of two ``benchmarks/any_model/any_model.py`` runs over the same seeds,
``--models rf3x500,xgb,lgbm,gb,hgb``, without and with ``--rule-depth 2,3,4``,
and prints per boosted cell (data set, model): the geometric-mean error ratio
to FIRE on ``rf3x500`` (default / variant), the paired t of
log(variant ratio / default ratio), the noise floor, the mean antecedents and
the CPU ratios; then the rule's counts (a)-(e) and its verdict.

    python benchmarks/archive/any_model_d234_confirm.py \\
        --default benchmarks/archive/any_model_d234_default_runs.csv \\
        --variant benchmarks/archive/any_model_d234_variant_runs.csv \\
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
from any_model_unit_compare import _gm, _read  # noqa: E402

BOOSTED = ("xgb", "lgbm", "gb", "hgb")



def compare(default, variant, noise_floor):
    """Per boosted cell, the paired comparison over the seeds both runs hold."""
    seeds = sorted(set(default.seed) & set(variant.seed))
    d, v = (with_ratios(x[x.seed.isin(seeds)]) for x in (default, variant))
    nf = with_ratios(noise_floor)
    nf = nf[nf.model == NOISE_FLOOR]
    # the noise floor's spread: log(rf3x500b / rf3x500) over its saved seeds
    sd_nf = nf.groupby("dataset").error_ratio.apply(lambda r: np.log(r).std())
    rd = d[d.model == REFERENCE].set_index(["dataset", "seed"]).sort_index()
    rv = v[v.model == REFERENCE].set_index(["dataset", "seed"]).sort_index()
    same_ref = int((rd.test_error == rv.loc[rd.index, "test_error"]).sum()), len(rd)
    rows = []
    for (ds, m), cd in d[d.model.isin(BOOSTED)].groupby(["dataset", "model"], sort=False):
        cd = cd.set_index("seed").sort_index()
        cv = v[(v.dataset == ds) & (v.model == m)].set_index("seed").loc[cd.index]
        x = np.log(cv.error_ratio.to_numpy() / cd.error_ratio.to_numpy())
        n = len(x)
        t = x.mean() / (x.std(ddof=1) / np.sqrt(n)) if n > 1 and x.std() > 0 else 0.0
        floor = 2 * sd_nf[ds] / np.sqrt(n)
        rows.append(dict(
            dataset=ds, model=m, seeds=n,
            same_model=bool((cd.model_error.to_numpy() == cv.model_error.to_numpy()).all()),
            gm_default=_gm(cd.error_ratio), gm_variant=_gm(cv.error_ratio),
            change=float(np.exp(x.mean())), floor=float(np.exp(floor)), paired_t=t,
            worse=bool(t > 2 and x.mean() > floor),
            ante_default=cd.antecedents.mean(), ante_variant=cv.antecedents.mean(),
            rules_default=cd.rules.mean(), rules_variant=cv.rules.mean(),
            cpu_default=_gm(cd.time_ratio), cpu_variant=_gm(cv.time_ratio),
            cpu_variant_worst=float(cv.time_ratio.max()),
            depth_used_default=",".join(sorted(set(map(str, cd.depth_used)))),
            depth_used_variant=",".join(sorted(set(map(str, cv.depth_used)))),
        ))
    t = pd.DataFrame(rows)
    runs_d = d[d.model.isin(BOOSTED)]
    runs_v = v[v.model.isin(BOOSTED)]
    return t, runs_d, runs_v, seeds, same_ref


def report(t, runs_d, runs_v, seeds, same_ref):
    f3 = "{:.3f}".format
    hit = lambda val: f"**{f3(val)}**" if val > MISS else f3(val)  # noqa: E731
    out = [f"Seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}); {len(t)} boosted cells, "
           f"{len(runs_d)} runs each side. Reference fits equal in both runs (bitwise test "
           f"error): {same_ref[0]}/{same_ref[1]}; boosters the same model (bitwise model "
           f"error): {int(t.same_model.sum())}/{len(t)} cells.", "",
           "| cell | geo-mean default | variant | change | noise floor | paired t | worse | "
           "antecedents default | variant | rules default | variant | CPU ratio default | "
           "variant | worst variant run |",
           "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for _, r in t.iterrows():
        out.append(
            f"| {r.dataset}/{r.model} | {hit(r.gm_default)} | {hit(r.gm_variant)} | "
            f"{f3(r.change)} | {f3(r.floor)} | {r.paired_t:.1f} | {'yes' if r.worse else ''} | "
            f"{r.ante_default:.1f} | {r.ante_variant:.1f} | {r.rules_default:.1f} | "
            f"{r.rules_variant:.1f} | {r.cpu_default:.2f} | {r.cpu_variant:.2f} | "
            f"{r.cpu_variant_worst:.2f} |")
    a_d, a_v = int((t.gm_default > MISS).sum()), int((t.gm_variant > MISS).sum())
    n_worse = int(t.worse.sum())
    t_above = int((t.paired_t > 2).sum())
    c_d, c_v = _gm(runs_d.error_ratio), _gm(runs_v.error_ratio)
    d_d, d_v = runs_d.antecedents.mean(), runs_v.antecedents.mean()
    e_max = float(t.cpu_variant.max())
    ok = dict(a=a_v <= a_d, b=n_worse == 0, c=c_v <= c_d, d=d_v <= 1.25 * d_d, e=e_max < 5)
    out += ["",
            f"* (a) cells above 1.10: default {a_d}/{len(t)}, variant {a_v}/{len(t)}: "
            f"{'pass' if ok['a'] else 'FAIL'}",
            f"* (b) cells worse (paired t > 2 and beyond the noise floor): {n_worse} "
            f"(paired t > 2 alone: {t_above}; t < -2: {int((t.paired_t < -2).sum())}): "
            f"{'pass' if ok['b'] else 'FAIL'}",
            f"* (c) geo-mean over all boosted runs: default {c_d:.4f}, variant {c_v:.4f} "
            f"(x{c_v / c_d:.4f}): {'pass' if ok['c'] else 'FAIL'}",
            f"* (d) mean antecedents: default {d_d:.2f}, variant {d_v:.2f} "
            f"(x{d_v / d_d:.3f}, limit 1.25): {'pass' if ok['d'] else 'FAIL'}",
            f"* (e) largest per-cell geo-mean CPU ratio of the variant {e_max:.2f} (worst "
            f"single run {t.cpu_variant_worst.max():.2f}), limit 5: "
            f"{'pass' if ok['e'] else 'FAIL'}",
            "",
            "Verdict by the rule: " + ("ADOPTED (all of (a)-(e) hold)." if all(ok.values())
                                       else "NOT ADOPTED (fails "
                                       + ", ".join(f"({k})" for k, v in ok.items() if not v)
                                       + ").")]
    return "\n".join(out) + "\n"


def paired_runs_parser(description, variant="--variant"):
    """The command line of a paired verdict: the default's and the variant's
    saved runs, and the runs that give each data set's noise floor."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--default", nargs="+", required=True)
    p.add_argument(variant, nargs="+", required=True)
    p.add_argument("--noise-floor", nargs="+", required=True,
                   help="saved runs whose rf3x500b rows give each data set's noise floor")
    return p


def main(argv=None):
    args = paired_runs_parser(__doc__.splitlines()[0]).parse_args(argv)
    print(report(*compare(_read(args.default), _read(args.variant),
                          _read(args.noise_floor))))


if __name__ == "__main__":
    main()
