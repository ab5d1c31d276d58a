"""How stable is the stable pool's frequency ranking itself? (issue 39)

The ceiling of any selection that takes the pool's most frequent rules as
they come (SIRUS's choice): on the halves of ``stability.py``'s splits, the
Dice index (decile-mapped, as there) of the two halves' ``k`` most frequent
pool rules, for k = 5, 10, 14, with no selection at all; beside it, the
Dice of what ``stable=True, linear_terms=False`` keeps from a pool of
``3 * max_rules`` (``sel``).  ``--trees`` sets the pool's forest;
``--binned`` grows it, as SIRUS does, on each feature's training deciles
(every value replaced by its bin among the nine interior deciles of the
half, a threshold read back as the decile it stands for).

    python benchmarks/stability/pool_ranking.py --trees 500 --csv runs.csv
    python benchmarks/stability/pool_ranking.py --trees 2000 --csv runs.csv
    python benchmarks/stability/pool_ranking.py --binned --csv runs.csv
    python benchmarks/stability/pool_ranking.py --from-csv runs.csv
"""
import argparse
import os
import sys
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stability as bench  # noqa: E402

KS = (5, 10, 14)


def binned(X):
    """(X with each value replaced by its bin among the column's nine interior
    deciles, the deciles): SIRUS's q = 10 grid."""
    edges = [np.quantile(X[:, j], np.linspace(0.1, 0.9, 9)) for j in range(X.shape[1])]
    Xb = np.column_stack([np.searchsorted(e, X[:, j], side="right")
                          for j, e in enumerate(edges)]).astype(float)
    return Xb, edges


def unbinned(conditions, edges):
    """Conditions on bins back on the data: ``bin <= k + 0.5`` is ``x <
    edges[k]`` (searchsorted's side="right": bin <= k when fewer than k + 1
    deciles are <= x)."""
    from firecy.ensembles import Condition

    out = []
    for c in conditions:
        k = int(np.floor(float(c.threshold)))
        value = float(edges[c.feature][min(k, len(edges[c.feature]) - 1)])
        out.append(Condition(c.feature, "<" if c.op in ("<", "<=") else ">=", value))
    return out


def ranked_pool(task, X, y, seed, trees):
    """A ``stable=True, linear_terms=False`` fit whose pool holds ``3 * max_rules``
    rules (``stable_columns_``, most frequent first) from ``trees`` trees."""
    from firecy import FIREClassifier, FIRERegressor

    est = (FIRERegressor if task == "regression" else FIREClassifier)(
        stable=True, linear_terms=False, random_state=seed, n_jobs=1)
    est._fit_options = {"n_trees": trees, "pool_per_rule": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est


def run(datasets, splits, trees, csv=None, grid_forest=False):
    from firecy.estimators._stability import dice, rule_signature

    rows = []
    for name in datasets:
        for X, y, task, grid, s, halves in bench.halvings(name, splits):
            ranked, kept = [], []
            for rows_ in halves:
                Xh, edges = binned(X[rows_]) if grid_forest else (X[rows_], None)
                est = ranked_pool(task, Xh, y[rows_], s, trees)
                ens = est.ensemble_

                def sig(j):
                    conds = unbinned(ens.rules[j], edges) if grid_forest else ens.rules[j]
                    return rule_signature(conds, grid)

                ranked.append([sig(j) for j in est.stable_columns_])
                coef = np.asarray(est.coef_).reshape(len(ens.leaf_values), -1).any(axis=1)
                kept.append({sig(j) for j in np.flatnonzero(coef)})
            row = dict(data=name, split=s, trees=f"{trees}{' binned' if grid_forest else ''}",
                       sel=dice(*kept))
            for k in KS:
                row[f"top{k}"] = dice(set(ranked[0][:k]), set(ranked[1][:k]))
            rows.append(row)
            print(row, flush=True)
            bench.save_row(row, csv)
    return pd.DataFrame(rows)


def report(df):
    t = df.groupby(["data", "trees"])[["sel"] + [f"top{k}" for k in KS]].mean().unstack(1)
    t.columns = [f"{c} ({trees} trees)" for c, trees in t.columns]
    return t.round(3).to_markdown()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=",".join(bench.REGRESSION + bench.CLASSIFICATION))
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--binned", action="store_true", help="grow the forest on the deciles")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--from-csv", nargs="+", default=None)
    a = ap.parse_args(argv)
    df = (pd.concat([pd.read_csv(f) for f in a.from_csv]) if a.from_csv
          else run(a.datasets.split(","), a.splits, a.trees, a.csv, a.binned))
    print(report(df))


if __name__ == "__main__":
    main()
