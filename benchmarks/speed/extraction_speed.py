"""Benchmark: rule extraction from a deep forest, stage by stage.

The forest of issue 14: 250 unlimited-depth trees (scikit-learn
RandomForestRegressor) on 11,000 friedman1 rows, about 1.7 million rules.
Each stage is timed separately, with the process's peak resident memory after
it (``ru_maxrss``, which only grows):

* ``fit``: the forest itself (not firecy; cached in ``--cache`` to rerun);
* ``extraction``: ``rule_ensemble_from_model`` (the rules);
* ``leaf_table``: ``RuleEnsemble.leaf_table(X)`` (the library's ``apply`` and
  the mapping to design columns);
* ``design``: ``RuleEnsemble.design(X)`` (the CSC design, from leaf ids);
* ``text``: printing 1000 rules spread over the forest, and walking their
  node paths (what a report of the kept rules costs).

Run it against another build with ``PYTHONPATH``::

    PYTHONPATH=/work/baseline python benchmarks/speed/extraction_speed.py
    PYTHONPATH=$PWD python benchmarks/speed/extraction_speed.py --json after.json

``--trees`` / ``--rows`` scale the forest (``--scaling`` times extraction at
several sizes, to check that it is linear in the number of nodes).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deep_forest import forest  # noqa: E402  (the same forest, the same cache)


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(label, fn, out):
    t0 = time.perf_counter()
    res = fn()
    dt = time.perf_counter() - t0
    out[label] = {"seconds": round(dt, 3), "peak_rss_mib": round(peak_mib(), 1)}
    print(f"{label:<12} {dt:8.3f} s   peak RSS {peak_mib():8.1f} MiB", flush=True)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=11000)
    ap.add_argument("--trees", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default="/tmp/firecy_bench_cache",
                    help="directory to cache the fitted forest in ('' for none)")
    ap.add_argument("--scaling", action="store_true",
                    help="also time extraction on 25, 50, 100 and 200%% of the trees")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args(argv)

    import firecy
    from firecy.ensembles import rule_ensemble_from_model

    print(f"firecy from {os.path.dirname(firecy.__file__)}")
    out = {"firecy": os.path.dirname(firecy.__file__), "rows": args.rows,
           "trees": args.trees}
    X, y, model = timed("fit", lambda: forest(args.rows, args.trees, args.cache,
                                              args.seed), out)
    n_nodes = sum(int(e.tree_.node_count) for e in model.estimators_)
    ens = timed("extraction", lambda: rule_ensemble_from_model(model), out)
    print(f"  {ens.n_rules} rules, {n_nodes} nodes: "
          f"{1e6 * out['extraction']['seconds'] / ens.n_rules:.2f} us per rule")
    out.update(n_rules=int(ens.n_rules), n_nodes=n_nodes)
    table = timed("leaf_table", lambda: ens.leaf_table(X), out)
    del table
    M = timed("design", lambda: ens.design(X), out)
    out["design_nnz"] = int(M.nnz)
    del M

    cols = np.linspace(0, ens.n_rules - 1, 1000).astype(int)

    def text():
        from firecy.rules import rule_text

        chars = sum(len(rule_text(ens, int(j))) for j in cols)
        depth = sum(len(ens.node_paths[int(j)]) for j in cols)
        return chars, depth

    chars, depth = timed("text", text, out)
    print(f"  1000 rules: {chars} characters, mean depth {depth / 1000:.1f}")

    if args.scaling:
        out["scaling"] = []
        for frac in (0.25, 0.5, 1.0, 2.0):
            k = max(1, int(round(frac * args.trees)))
            ests = [model.estimators_[i % len(model.estimators_)] for i in range(k)]
            sub = type(model)(n_estimators=k)
            sub.__dict__.update({kk: v for kk, v in model.__dict__.items()
                                 if kk not in ("estimators_", "n_estimators")})
            sub.estimators_ = ests
            nodes = sum(int(e.tree_.node_count) for e in ests)
            t0 = time.perf_counter()
            rule_ensemble_from_model(sub)
            dt = time.perf_counter() - t0
            out["scaling"].append({"trees": k, "nodes": nodes, "seconds": round(dt, 3),
                                   "ns_per_node": round(1e9 * dt / nodes, 1)})
            print(f"scaling: {k:4d} trees {nodes:9d} nodes {dt:7.3f} s "
                  f"{1e9 * dt / nodes:7.1f} ns/node", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
