"""A direction for issue 39, measured outside firecy: keep the stable pool's
rules as they come and let cross-validation choose only the linear terms.

For each half of ``stability.py``'s splits (regression sets): the pool of
``stable=True`` (its ``--k`` most frequent distinct rules from ``--trees``
depth-2 trees; ``FIRERegressor(stable=True, max_rules=k)``), the rules
*unpenalised* and the linear terms under scikit-learn's ``LassoCV``: the
rules and the intercept are partialled out of ``y`` and of the linear
columns (exact for the squared loss), the lasso fits the lines on the
residuals, and least squares gives the rules' weights on what the lines
leave.  Reported like ``stability.py``: the Dice of the halves' kept rules
(decile-mapped) and the cross-half error (MSE / Var(y)).

firecy has no unpenalised block yet, so this is not ``stable=True``; it
shows what such a mode would give (``RESULTS.md``).

    python benchmarks/stability/keep_top_rules.py --k 14 --trees 2000 --csv runs.csv
    python benchmarks/stability/keep_top_rules.py --from-csv runs.csv \
        benchmarks/stability/runs_terms.csv --methods fire,sirus,keep_top14_2000
"""
import argparse
import os
import sys
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stability as bench  # noqa: E402


def fit_half(X, y, k, trees, seed):
    """(predict function, kept rules' design columns, the fitted estimator)."""
    from sklearn.linear_model import LassoCV

    from firecy import FIRERegressor

    est = FIRERegressor(stable=True, max_rules=k, random_state=seed, n_jobs=1)
    est._fit_options = {"n_trees": trees}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    ens, cols = est.ensemble_, est.stable_columns_

    def rules(Z):
        return np.column_stack([ens.rule_mask(j, Z) for j in cols]).astype(float)

    R, L = rules(X), est.linear_terms_.design(X)
    Z = np.column_stack([np.ones(len(y)), R])
    Q, _ = np.linalg.qr(Z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slopes = LassoCV(cv=5, fit_intercept=False, random_state=0).fit(
            L - Q @ (Q.T @ L), y - Q @ (Q.T @ y)).coef_
    weights, *_ = np.linalg.lstsq(Z, y - L @ slopes, rcond=None)

    def predict(Xt):
        return weights[0] + rules(Xt) @ weights[1:] + est.linear_terms_.design(Xt) @ slopes

    kept = [j for j, w in zip(cols, weights[1:]) if abs(w) > 1e-12]
    return predict, kept, est


def run(datasets, splits, k, trees, csv=None):
    from firecy.estimators._stability import dice, rule_signature

    rows = []
    for name in datasets:
        for X, y, task, grid, s, halves in bench.halvings(name, splits):
            sets, errs = [], []
            for tr, te in (halves, halves[::-1]):
                predict, kept, est = fit_half(X[tr], y[tr], k, trees, s)
                errs.append(float(np.mean((y[te] - predict(X[te])) ** 2) / np.var(y[te])))
                sets.append({rule_signature(est.ensemble_.rules[j], grid) for j in kept})
            row = dict(data=name, split=s, method=f"keep_top{k}_{trees}", dice=dice(*sets),
                       error=float(np.mean(errs)), rules=float(np.mean([len(a) for a in sets])))
            rows.append(row)
            print(row, flush=True)
            bench.save_row(row, csv)
    return pd.DataFrame(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=",".join(bench.REGRESSION))
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--k", type=int, default=14)
    ap.add_argument("--trees", type=int, default=2000)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--from-csv", nargs="+", default=None,
                    help="report saved rows (stability.py's too)")
    ap.add_argument("--methods", default=None, help="report these methods only")
    a = ap.parse_args(argv)
    df = (pd.concat([pd.read_csv(f) for f in a.from_csv]) if a.from_csv
          else run(a.datasets.split(","), a.splits, a.k, a.trees, a.csv))
    df = df.drop_duplicates(["data", "split", "method"], keep="last")
    df = df[df.data.isin(a.datasets.split(","))]
    if a.methods:
        df = df[df.method.isin(a.methods.split(","))]
    t = df.groupby(["data", "method"])[["dice", "error", "rules"]].mean().unstack(1)
    t.columns = [f"{method} {what}" for what, method in t.columns]
    print(t[sorted(t.columns)].round(3).to_markdown())


if __name__ == "__main__":
    main()
