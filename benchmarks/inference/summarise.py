"""The coverage table of benchmarks/inference/RESULTS.md from coverage.py's rows.

Run: ``python benchmarks/inference/summarise.py [benchmarks/inference/runs.csv]``
"""
import sys

import numpy as np
import pandas as pd

from coverage_study import SETTINGS


def main(path):
    rows = pd.read_csv(path)
    refused = rows[rows["term"].isna()].groupby(["setting", "method"]).size()
    terms = rows[rows["term"].notna()].copy()
    terms["covered"] = terms["covered"].astype(str) == "True"
    terms["rejects"] = terms["rejects"].astype(str) == "True"
    print("| setting | method | terms | coverage | cluster SE | mean width | power | refused |")
    print("|---|---|---|---|---|---|---|---|")
    for (s, method), g in terms.groupby(["setting", "method"]):
        task, n, noise, rho = SETTINGS[int(s)]
        # replications are independent, the terms of one are not: the SE of
        # the mean over replications of each one's covered count
        per_rep = g.groupby("rep")["covered"].agg(["sum", "size"])
        ratio = per_rep["sum"].sum() / per_rep["size"].sum()
        resid = per_rep["sum"] - ratio * per_rep["size"]
        se = np.sqrt((resid ** 2).sum()) / per_rep["size"].sum()
        nonzero = g[g["target"].abs() > 1e-9]
        name = (f"{task}, n={n}" + (f", noise {noise:g}" if noise == noise and noise
                                     is not None else "") + f", rho {rho:g}")
        print(f"| {name} | {method} | {len(g)} | {g['covered'].mean():.3f} | {se:.3f} | "
              f"{g['width'].mean():.3f} | {nonzero['rejects'].mean():.3f} | "
              f"{int(refused.get((s, method), 0))} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/inference/runs.csv")
