"""Markdown tables of the selection study (see :mod:`benchmarks.quality.study`)."""
import itertools

import numpy as np

from benchmarks.quality.selection import evaluate, oracle

__all__ = ["study_report", "variant_label", "VARIANTS"]

# (scheme, align, refined, one_se)
VARIANTS = list(itertools.product(("split", "cv", "rep"), ("lambda", "count"),
                                  (False, True), (False, True)))
# the estimator's current selection and the paper's RuleFit tuning
REFERENCE = ("split", "lambda", False, False)


def variant_label(v):
    scheme, align, refined, one_se = v
    return f"{scheme} / {align}{' / refined' if refined else ''}{' / 1se' if one_se else ''}"


def _per_fold(bundles, ds, n_folds, cfgs, variant, max_rules):
    return [evaluate({c: bundles[ds, k, c] for c in cfgs}, *variant, max_rules)
            for k in range(n_folds)]


def _row(bundles, names, n_folds, cfgs, variant, max_rules):
    """Per dataset: median test, and over all folds: mean rules, mean seconds."""
    med, rules, secs = {}, [], []
    for ds in names:
        res = _per_fold(bundles, ds, n_folds, cfgs, variant, max_rules)
        med[ds] = float(np.median([r["test"] for r in res]))
        rules += [r["n_rules"] for r in res]
        secs += [r["seconds"] for r in res]
    return med, float(np.mean(rules)), float(np.mean(secs))


def _summary(med, ref, names):
    rel = np.array([med[d] / ref[d] - 1 for d in names])
    return (f"{np.mean([med[d] for d in names]):.3f} | {100 * rel.mean():+.1f}% | "
            f"{100 * rel.max():+.1f}% | {int((rel < 0).sum())}/{len(names)}")


def _table(title, rows, names, ref, per_dataset=True):
    head = "| variant | " + (" | ".join(names) + " | " if per_dataset else "") + \
        "mean | vs L1 (mean) | vs L1 (worst) | below L1 | rules | s/fit |"
    out = [f"#### {title}", "", head,
           "|---|" + ("---:|" * len(names) if per_dataset else "") + "---:|" * 6]
    for label, (med, rules, secs) in rows:
        cells = (" | ".join(f"{med[d]:.3f}" for d in names) + " | ") if per_dataset else ""
        out.append(f"| {label} | {cells}{_summary(med, ref, names)} | {rules:.1f} | "
                   f"{secs:.2f} |")
    return out + [""]


def refinement_table(bundles, names, configs, n_folds, max_rules):
    out = ["### 1. Path refinement (bisection in log lambda, warm-started from the left "
           "end, min gap 1e-3)", "",
           "Over every path of the study (full training rows and inner parts). "
           "'missing' counts are rule counts in 1..14 never visited on a path.", "",
           "| config | paths | points (grid) | extra points | jumps >1 (grid) | "
           "missing per path, grid | missing per path, refined | paths complete, grid | "
           "paths complete, refined | time refined / grid |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in configs:
        st = []
        for ds in names:
            for k in range(n_folds):
                b = bundles[ds, k, c]
                paths = [b["full"]] + [p["own"] for s in ("split", "cv", "rep")
                                       for p in b.get(s, [])]
                for p in paths:
                    s = p["stats"]
                    st.append((p["base"].sum(), s["extra"], s["jumps_before"],
                               len(s["missing_base"]), len(s["missing"]),
                               p["seconds"].sum(), p["seconds"][p["base"]].sum()))
        st = np.array(st, dtype=float)
        out.append(f"| {c} | {len(st)} | {st[:, 0].mean():.1f} | {st[:, 1].mean():.1f} | "
                   f"{st[:, 2].mean():.2f} | {st[:, 3].mean():.2f} | {st[:, 4].mean():.2f} | "
                   f"{100 * np.mean(st[:, 3] == 0):.0f}% | {100 * np.mean(st[:, 4] == 0):.0f}% | "
                   f"{st[:, 5].sum() / st[:, 6].sum():.2f} |")
    return out + [""]


def oracle_rows(bundles, names, configs, n_folds, max_rules):
    rows = []
    for c in configs:
        for refined in (False, True):
            med = {ds: float(np.median([oracle(bundles[ds, k, c], refined, max_rules)
                                        for k in range(n_folds)])) for ds in names}
            rows.append((f"{c}: oracle{' refined' if refined else ''}",
                         (med, float("nan"), float("nan"))))
    return rows


def study_report(bundles, names, configs, n_folds, opts):
    mr = opts.max_rules
    l1ref, _, _ = _row(bundles, names, n_folds, ["l1"], REFERENCE, mr)
    out = ["## Study: path refinement, selection, gamma x fusion", "",
           f"{n_folds} outer folds; inner: split = one 80/20 split, cv = {opts.n_cv}-fold, "
           f"rep = {opts.n_rep} random 80/20 splits. Cells: median over outer folds of the "
           "test MSE / Var(y_test). 'vs L1': the per-dataset ratio to L1 selected as the "
           "paper's RuleFit (one split, by lambda, grid path), minus 1; mean over datasets "
           "and worst dataset. s/fit: solver seconds of all paths one selection needs.",
           ""]
    out += refinement_table(bundles, names, configs, n_folds, mr)
    cfg_map = {c: [c] for c in configs}
    out += ["### 2. Selection variants, one configuration at a time", ""]
    for c in configs:
        have = bundles[names[0], 0, c]
        rows = [(variant_label(v), _row(bundles, names, n_folds, cfg_map[c], v, mr))
                for v in VARIANTS if v[0] in have]
        out += _table(f"{c}", rows, names, l1ref)
    out += _table("oracle: best test error on the full path within the budget",
                  oracle_rows(bundles, names, configs, n_folds, mr), names, l1ref)
    grids = {
        "fusion {0, 0.5}, gamma 1.1": ["mcp1.1", "mcp1.1f0.5"],
        "gamma {1.1, 3, 10}, fusion 0.5": ["mcp1.1f0.5", "mcp3f0.5", "mcp10f0.5"],
        "gamma {1.1, 3, 10}, fusion 0": ["mcp1.1", "mcp3", "mcp10"],
        "gamma 1.1 x fusion {0, 0.5} + gamma {3, 10} x fusion 0.5": [
            "mcp1.1", "mcp1.1f0.5", "mcp3f0.5", "mcp10f0.5"],
        "gamma {1.1, 3, 10} x fusion {0, 0.5}": ["mcp1.1", "mcp1.1f0.5", "mcp3", "mcp3f0.5",
                                                 "mcp10", "mcp10f0.5"],
    }
    key_variants = [("split", "count", True, False), ("cv", "count", True, False),
                    ("cv", "count", True, True), ("cv", "lambda", True, False),
                    ("rep", "count", True, False)]
    out += ["### 3. gamma and fusion tuned jointly with the rule count / lambda", ""]
    for title, cfgs in grids.items():
        if not all(c in configs for c in cfgs):
            continue
        rows = [(variant_label(v), _row(bundles, names, n_folds, cfgs, v, mr))
                for v in key_variants if all(v[0] in bundles[names[0], 0, c] for c in cfgs)]
        out += _table(title, rows, names, l1ref)
    return "\n".join(out)
