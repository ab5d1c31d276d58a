"""The selection study of issue 12, on the benchmark's datasets and folds.

    python -m benchmarks.quality.study [--datasets ...] [--folds 5] [--trees 500]
                                       [--configs l1 mcp1.1f0.5 ...] [--out FILE]

For every (dataset, outer fold, penalty configuration) it computes the
paths of :func:`benchmarks.quality.selection.bundle` (cached on disk), then
prints markdown tables:

1. path refinement: extra solves, counts missing before / after, cost;
2. selection variants per configuration (inner scheme x alignment x
   refinement x one-standard-error rule): median test error per dataset,
   their mean, rules, seconds per fit;
3. tuning gamma and fusion jointly with lambda.

The comparison with best subset and SIRUS is in ``benchmarks/quality/rule_quality.py``;
RESULTS.md beside this file summarises both.
"""
import argparse
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import data  # noqa: E402
from benchmarks.quality.selection import Options, bundle  # noqa: E402

CONFIGS = {
    "l1": ("l1",),
    "mcp1.1": ("mcp", 1.1, 0.0),
    "mcp1.1f0.5": ("mcp", 1.1, 0.5),
    "mcp3": ("mcp", 3.0, 0.0),
    "mcp3f0.5": ("mcp", 3.0, 0.5),
    "mcp10": ("mcp", 10.0, 0.0),
    "mcp10f0.5": ("mcp", 10.0, 0.5),
}


# configurations studied with every inner scheme; the others (the gamma x
# fusion grid) with one split and K-fold CV only, to keep the study's cost
# within the machine's budget
CORE = ("l1", "mcp1.1", "mcp1.1f0.5")


def compute(datasets, config_names, n_folds, trees, seed, opts, log=print):
    """{(dataset, fold, config name): bundle}; core configurations first."""
    out = {}
    order = [c for c in config_names if c in CORE] + [c for c in config_names
                                                       if c not in CORE]
    for group in ([c for c in order if c in CORE], [c for c in order if c not in CORE]):
        for ds in datasets:
            t0 = time.perf_counter()
            for k in range(n_folds):
                for name in group:
                    schemes = ("split", "cv", "rep") if name in CORE else ("split", "cv")
                    out[ds, k, name] = bundle(ds, n_folds, k, trees, seed, CONFIGS[name],
                                              opts, schemes)
            if group:
                log(f"# computed {ds} {group} in {time.perf_counter() - t0:.0f} s",
                    file=sys.stderr, flush=True)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="*")
    p.add_argument("--configs", nargs="*", default=list(CONFIGS))
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--trees", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    names = data.select_names(args.datasets)
    opts = Options()
    bundles = compute(names, args.configs, args.folds, args.trees, args.seed, opts)
    from benchmarks.quality.report import study_report

    text = study_report(bundles, names, args.configs, args.folds, opts)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
