"""Do two halves of the data give the same rules? (issue 39)

SIRUS's protocol (Bénard, Biau, Da Veiga, Scornet 2021): split the rows at
random into two disjoint halves, fit each half, compare the two rule sets by
the Dice-Sorensen index 2 |A & B| / (|A| + |B|), every threshold mapped to the
nearest of its feature's ten empirical deciles (on all the rows:
``firecy.estimators._stability.rule_signature``); repeat over ``--splits``
splits.  Each half's model is also scored on the other half (regression: MSE
/ Var(y) of that half; classification: log-loss), and its rules (rules with a
nonzero weight; RuleFit's linear terms are not rules) and fit CPU are kept.
``dice_terms`` compares the halves' terms instead: the rules and the kept
linear terms (firecy's and RuleFit's; a linear term is its feature).

Methods: ``FIRERegressor()`` / ``FIREClassifier()`` at their defaults,
``stable=True``, SIRUS (``sirus.SirusRegressor`` / ``SirusClassifier`` at
their defaults) and RuleFit (``imodels.RuleFitRegressor`` /
``RuleFitClassifier`` at theirs); ``--methods`` picks some.  The ablations
(``ABLATIONS``) are ``stable=True`` with one piece changed (an estimator
parameter, or a fit option: ``est._fit_options``, whose names are those of
the constants of ``firecy.estimators._stable`` and ``_linear_terms`` in
lower case, ``firecy/estimators/_fit_options.py``).  One thread (``n_jobs=1``), CPU seconds.

    python benchmarks/stability/stability.py --splits 10 --csv runs.csv
    python benchmarks/stability/stability.py --from-csv runs.csv    # the tables
"""
import argparse
import os
import re
import sys
import time
import warnings

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "any_model"))
sys.path.insert(0, os.path.join(HERE, ".."))
import any_model as am  # noqa: E402
from _datasets import rdata  # noqa: E402

REGRESSION = ("diabetes", "boston", "housing", "cps1985", "carseats", "auto", "hitters",
              "salaries")
CLASSIFICATION = ("breast_cancer", "biopsy", "pima", "swisslabor")
METHODS = ("fire", "fire_stable", "sirus", "rulefit")


def load(name):
    """(X as a float array, y, task) of a data set."""
    if name == "hitters":   # ISLR: baseball players' log salary, complete rows
        d = rdata("ISLR", "Hitters").dropna()
        d = pd.get_dummies(d, columns=["League", "Division", "NewLeague"], drop_first=True,
                           dtype=float)
        return (d.drop(columns="Salary").to_numpy(float),
                np.log(d["Salary"].to_numpy(float)), "regression")
    if name == "salaries":  # carData: US professors' 9-month salaries
        d = pd.get_dummies(rdata("carData", "Salaries"), columns=["rank", "discipline", "sex"],
                           drop_first=True, dtype=float)
        return d.drop(columns="salary").to_numpy(float), d["salary"].to_numpy(float), \
            "regression"
    X, y = am.load(name)
    task = am.DATASETS[name]
    X, y = X.to_numpy(float), np.asarray(y, float if task == "regression" else int)
    # complete rows (biopsy: 683 of 699, as in the risk-card benchmark): SIRUS
    # refuses missing values
    done = ~np.isnan(X).any(axis=1)
    return X[done], y[done], task


# stable=True with one piece changed (what each piece is worth): the name,
# what it changes, the estimator's parameters, and its fit options
# (``est._fit_options``: the constants of firecy.estimators._stable, and
# _linear_terms's LINEAR_PENALTY, in lower case)
ABLATIONS_BEFORE_THE_FOURTH_RUN = {
    "stable_rules_only": ("rules only", {"linear_terms": False}, {}),
    "stable_pool2": ("a pool of twice max_rules rules", {}, {"pool_per_rule": 2}),
    "stable_trees2000": ("2,000 trees in the pool's forest", {}, {"n_trees": 2000}),
    "stable_freq0": ("one penalty for every pool rule", {}, {"frequency_power": 0.0}),
    "stable_freq2": ("penalty (f_max / f) ** 2", {}, {"frequency_power": 2.0}),
    "stable_rules_only_freq0": ("rules only, one penalty", {"linear_terms": False},
                                {"frequency_power": 0.0}),
    "stable_rules_only_freq2": ("rules only, (f_max / f) ** 2", {"linear_terms": False},
                                {"frequency_power": 2.0}),
    "stable_freq_median": ("penalty (f_median / f)", {}, {"frequency_reference": "median"}),
    "stable_freq_median2": ("penalty (f_median / f) ** 2", {},
                            {"frequency_reference": "median", "frequency_power": 2.0}),
    "stable_penalised_pool": ("the pool's rules penalised beside the lines (before the third "
                              "run)", {}, {"keep_pool_losses": {}, "canonical_side": False, "centre_kept": False}),
    # measured before the ridge on the kept pool (KEEP_POOL_LOSSES pinned to that)
    "stable_near_duplicates": ("pool rules equal up to the training deciles both kept", {},
                               {"distinct_deciles": False, "keep_pool_losses": {"squared": 0.0},
                                "canonical_side": False, "centre_kept": False}),
    "stable_rules_only_near_duplicates": ("rules only, near-duplicates kept",
                                          {"linear_terms": False},
                                          {"distinct_deciles": False, "canonical_side": False, "centre_kept": False}),
    # measured against stable_near_duplicates (the third run's first default)
    "stable_near_duplicates_keep_logistic": (
        "near-duplicates kept; the pool kept unpenalised under the logistic loss too", {},
        {"distinct_deciles": False, "keep_pool_losses": {"squared": 0.0, "logistic": 0.0},
         "canonical_side": False, "centre_kept": False}),
    "stable_keep_logistic_ridge0.03": (
        "the pool kept under the logistic loss with a fixed ridge 0.03", {},
        {"keep_pool_losses": {"squared": 0.0, "logistic": 0.03}, "canonical_side": False, "centre_kept": False}),
    "stable_keep_logistic_ridge0.1": (
        "the pool kept under the logistic loss with a fixed ridge 0.1", {},
        {"keep_pool_losses": {"squared": 0.0, "logistic": 0.1}, "canonical_side": False, "centre_kept": False}),
    "stable_keep_logistic_ridge0.3": (
        "the pool kept under the logistic loss with a fixed ridge 0.3", {},
        {"keep_pool_losses": {"squared": 0.0, "logistic": 0.3}, "canonical_side": False, "centre_kept": False}),
    "stable_no_ridge": ("the kept pool without a ridge (squared loss; the logistic loss keeps "
                        "ridge 0.1)", {}, {"keep_pool_losses": {"squared": 0.0, "logistic": 0.1}, "canonical_side": False, "centre_kept": False}),
    "stable_both_sides": ("a one-condition rule and its complement counted apart", {},
                          {"canonical_side": False, "centre_kept": False}),
    "stable_root_side_uncentred": ("a split's sides as one only at the root; the kept pool not "
                                   "centred", {}, {"canonical_side": True, "centre_kept": False}),
    "stable_root_side": ("a split's sides as one only at the root", {},
                         {"canonical_side": True}),
    "stable_sibling_children": ("the two children of every node counted as one rule", {},
                                {"canonical_side": "node"}),
    "stable_sibling_children_uncentred": ("the two children of every node as one; the kept "
                                          "pool not centred", {},
                                          {"canonical_side": "node", "centre_kept": False}),
    "stable_rules_only_root_side": ("rules only, a split's sides as one only at the root",
                                    {"linear_terms": False}, {"canonical_side": True}),
    "stable_max_rules10": ("a pool of 10 rules (SIRUS's size), max_rules=10", {"max_rules": 10},
                           {}),
    "stable_max_rules12": ("a pool of 12 rules, max_rules=12", {"max_rules": 12}, {}),
    "stable_rules_only_both_sides": ("rules only, a rule and its complement apart",
                                     {"linear_terms": False}, {"canonical_side": False, "centre_kept": False}),
    "stable_ridge_squared0.03": ("a fixed ridge 0.03 on the kept pool under the squared loss too",
                                 {}, {"keep_pool_losses": {"squared": 0.03, "logistic": 0.1},
                                     "canonical_side": False, "centre_kept": False}),
    "stable_ridge_squared0.1": ("a fixed ridge 0.1 on the kept pool under the squared loss too",
                                {}, {"keep_pool_losses": {"squared": 0.1, "logistic": 0.1},
                                     "canonical_side": False, "centre_kept": False}),
    "stable_ridge_squared0.3": ("a fixed ridge 0.3 on the kept pool under the squared loss too",
                                {}, {"keep_pool_losses": {"squared": 0.3, "logistic": 0.1},
                                     "canonical_side": False, "centre_kept": False}),
    "stable_ridge_squared1": ("a fixed ridge 1 on the kept pool under the squared loss too",
                              {}, {"keep_pool_losses": {"squared": 1.0, "logistic": 0.1},
                                     "canonical_side": False, "centre_kept": False}),
    "stable_near_duplicates_rule_factor0.1": (
        "near-duplicates kept; the pool's rules at a tenth of the lines' penalty", {},
        {"distinct_deciles": False, "rule_penalty_factor": 0.1,
         "keep_pool_losses": {"squared": 0.0}, "canonical_side": False, "centre_kept": False}),
    "stable_near_duplicates_rule_factor0.01": (
        "near-duplicates kept; the pool's rules at a hundredth of the lines' penalty", {},
        {"distinct_deciles": False, "rule_penalty_factor": 0.01,
         "keep_pool_losses": {"squared": 0.0}, "canonical_side": False, "centre_kept": False}),
    "stable_near_duplicates_lines_l1": (
        "near-duplicates kept; the linear terms under L1 (not MCP)", {},
        {"distinct_deciles": False, "linear_penalty": "l1",
         "keep_pool_losses": {"squared": 0.0}, "canonical_side": False, "centre_kept": False}),
    "stable_near_duplicates_trees2000": (
        "near-duplicates kept; 2,000 trees", {},
        {"distinct_deciles": False, "n_trees": 2000, "keep_pool_losses": {"squared": 0.0},
         "canonical_side": False, "centre_kept": False}),
}

# the runs before the fourth pinned: 500 trees, a pool of 14, every feature
# compared up to the deciles in the pool (the constants of their time)
_BEFORE_FOURTH = {"n_trees": 500, "discrete_limit": 0}
ABLATIONS = {name: (what, {"max_rules": 14, **params}, {**_BEFORE_FOURTH, **patches})
             for name, (what, params, patches) in ABLATIONS_BEFORE_THE_FOURTH_RUN.items()}
ABLATIONS.update({
    # the fourth run (today's default: 2,000 trees, max_rules="auto" = 10,
    # DISCRETE_LIMIT 10)
    "stable_third_run": ("the third run's default: 500 trees, 14 rules, every feature up to "
                         "the deciles", {"max_rules": 14}, dict(_BEFORE_FOURTH)),
    "stable_third_run_trees2000": ("the third run's default with 2,000 trees",
                                   {"max_rules": 14}, {"discrete_limit": 0}),
    "stable_third_run_trees5000": ("the third run's default with 5,000 trees",
                                   {"max_rules": 14}, {"n_trees": 5000, "discrete_limit": 0}),
    "stable_trees500_max_rules14": ("500 trees, a pool of 14", {"max_rules": 14},
                                    {"n_trees": 500}),
    "stable_trees500": ("500 trees", {}, {"n_trees": 500}),
    "stable_rules_only_max_rules10": ("rules only (the penalised pool), a pool of 10 from 2,000 "
                                      "trees", {"linear_terms": False, "max_rules": 10}, {}),
    "stable_rules_only_max_rules14": ("rules only, a pool of 14 from 2,000 trees (today's "
                                      "default)", {"linear_terms": False, "max_rules": 14}, {}),
})


def make(method, task, seed):
    reg = task == "regression"
    kwargs = {}
    options = {}
    if method in ABLATIONS:
        method, kwargs, options = "fire_stable", ABLATIONS[method][1], ABLATIONS[method][2]
    if method in ("fire", "fire_stable"):
        from firecy import FIREClassifier, FIRERegressor

        est = (FIRERegressor if reg else FIREClassifier)(
            random_state=seed, n_jobs=1, stable=method == "fire_stable", **kwargs)
        est._fit_options = dict(options)
        return est
    if method == "sirus":
        import sirus

        return (sirus.SirusRegressor if reg else sirus.SirusClassifier)(random_state=seed,
                                                                         n_jobs=1)
    if method == "rulefit":
        from imodels import RuleFitClassifier, RuleFitRegressor

        return (RuleFitRegressor if reg else RuleFitClassifier)(random_state=seed)
    raise ValueError(method)


_COND = re.compile(r"^\s*x(\d+)\s*(<=|<|>=|>)\s*(\S+)\s*$")


def signatures(method, model, grid):
    """The model's rules, each as the set of its decile-mapped conditions;
    and its terms: those rules and its kept linear terms, ``("linear", j)``."""
    from firecy.ensembles import Condition
    from firecy.estimators._stability import kept_signatures, rule_signature

    if method.startswith("fire") or method in ABLATIONS:
        rules = {sig for _, sig in kept_signatures(model, grid).values()}
        features = model.linear_terms_.features
        slopes = np.asarray(model.linear_coef_).reshape(len(features), -1) \
            if len(features) else []
        lines = {("linear", int(f)) for f, c in zip(features, slopes) if np.any(c != 0)}
        return rules, rules | lines
    out = set()
    if method == "sirus":
        for rule in model.rules_:
            conds = [Condition(c.feature, c.op, float(c.value)) for c in rule.conditions
                     if c.op != "in"]
            out.add(rule_signature(conds, grid))
        return out, out
    rules = model._get_rules()
    kept = rules.coef != 0
    for text in rules.loc[(rules.type == "rule") & kept, "rule"]:
        conds = []
        for part in text.split(" and "):
            m = _COND.match(part)
            conds.append(Condition(int(m.group(1)), m.group(2), float(m.group(3))))
        out.add(rule_signature(conds, grid))
    lines = {("linear", int(name[1:])) for name in rules.loc[(rules.type == "linear") & kept,
                                                            "rule"]}
    return out, out | lines


def error(task, model, X, y):
    if task == "regression":
        return float(np.mean((y - model.predict(X)) ** 2) / np.var(y))
    from sklearn.metrics import log_loss

    p = np.clip(model.predict_proba(X)[:, 1], 1e-6, 1 - 1e-6)
    return float(log_loss(y, p, labels=[0, 1]))


def fit(method, task, X, y, seed):
    model = make(method, task, seed)
    kw = {"feature_names": [f"x{i}" for i in range(X.shape[1])]} if method == "rulefit" else {}
    t = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y, **kw)
    return model, time.process_time() - t


def halvings(name, splits):
    """The protocol's splits of a data set: (X, y, task, its decile grid,
    split number, the two halves' rows), the same for every script here."""
    from firecy.estimators._stability import decile_grid

    X, y, task = load(name)
    grid = decile_grid(X)
    rng = np.random.default_rng(0)
    n = len(y)
    for s in range(splits):
        order = rng.permutation(n)
        yield X, y, task, grid, s, (order[: n // 2], order[n // 2: 2 * (n // 2)])


def save_row(row, csv):
    """Append ``row`` to the CSV file ``csv`` (with a header if it is new;
    nothing when ``csv`` is None): a long run keeps what it measured."""
    if csv:
        pd.DataFrame([row]).to_csv(csv, mode="a", index=False, header=not os.path.exists(csv))


def run(datasets, methods, splits, csv=None):
    from firecy.estimators._stability import dice

    rows = []
    for name in datasets:
        for X, y, task, grid, s, halves in halvings(name, splits):
            for method in methods:
                sets, term_sets, errs, cpus, sizes, n_terms = [], [], [], [], [], []
                for h, (tr, te) in enumerate((halves, halves[::-1])):
                    model, cpu = fit(method, task, X[tr], y[tr], s)
                    sig, terms = signatures(method, model, grid)
                    sets.append(sig)
                    term_sets.append(terms)
                    sizes.append(len(sig))
                    n_terms.append(len(terms))
                    errs.append(error(task, model, X[te], y[te]))
                    cpus.append(cpu)
                row = dict(data=name, task=task, split=s, method=method, dice=dice(*sets),
                           error=float(np.mean(errs)), rules=float(np.mean(sizes)),
                           cpu=float(np.mean(cpus)), dice_terms=dice(*term_sets),
                           terms=float(np.mean(n_terms)))
                rows.append(row)
                print(f"{name:14s} split {s} {method:12s} dice {row['dice']:.3f} error "
                      f"{row['error']:.4f} rules {row['rules']:.1f} cpu {row['cpu']:.2f}",
                      flush=True)
                save_row(row, csv)
    return pd.DataFrame(rows)


def report(df, reference="fire_stable"):
    """Per data set: mean Dice (its SD), mean cross-half error, rules, CPU per
    method; then the issue's goals checked for stable=True."""
    g = df.groupby(["data", "method"])
    t = g.agg(dice=("dice", "mean"), dice_sd=("dice", "std"), error=("error", "mean"),
              rules=("rules", "mean"), cpu=("cpu", "mean"), splits=("split", "count"))
    lines = ["| data | method | splits | Dice (SD) | cross-half error | rules | fit CPU s |",
             "|---|---|---|---|---|---|---|"]
    for (data, method), r in t.iterrows():
        lines.append(f"| {data} | {method} | {int(r.splits)} | {r.dice:.3f} ({r.dice_sd:.3f}) "
                     f"| {r.error:.4f} | {r.rules:.1f} | {r.cpu:.2f} |")
    out = ["\n".join(lines), ""]
    if {"fire", "fire_stable", "sirus"} <= set(df.method):
        goal = ["| data | stable Dice >= SIRUS | stable error / defaults' (<= 1.05) | "
                "stable error < SIRUS | stable CPU / defaults' (<= 10) |",
                "|---|---|---|---|---|"]
        for data in t.index.get_level_values(0).unique():
            s, d, r = t.loc[(data, "fire_stable")], t.loc[(data, "fire")], t.loc[(data, "sirus")]
            goal.append(f"| {data} | {s.dice:.3f} vs {r.dice:.3f}: "
                        f"{'yes' if s.dice >= r.dice else 'no'} | {s.error / d.error:.3f} | "
                        f"{'yes' if s.error < r.error else 'no'} | {s.cpu / d.cpu:.2f} |")
        out.append("\n".join(goal))
    if "dice_terms" in df and df.dice_terms.notna().any():
        out += ["", terms_report(df)]
    variants = [m for m in t.index.get_level_values(1).unique()
                if m not in METHODS + (reference,)]
    if variants:   # a variant of stable=True against others: Dice / error per data set
        present = set(t.index.get_level_values(1))
        cols = [reference] + sorted(variants + ["fire_stable"] * (
            reference != "fire_stable" and "fire_stable" in present))
        rows = _pair_table(t, cols, "error", "{:.3f}")
        wins = ["| count over data sets | - | " + " | ".join(
            f"Dice higher on {_count(t, m, reference, 'dice', np.greater)}, error lower on "
            f"{_count(t, m, reference, 'error', np.less)}" for m in cols[1:]) + " |"]
        out += ["", "\n".join(rows + wins)]
    return "\n".join(out)


def terms_report(df):
    """Per data set and method measured with terms: the Dice of the halves'
    terms (rules and kept linear terms; SIRUS has rules only), and the terms
    each half keeps."""
    d = df[df.dice_terms.notna()]
    t = d.groupby(["data", "method"]).agg(dice=("dice_terms", "mean"), terms=("terms", "mean"))
    methods = list(t.index.get_level_values(1).unique())
    return "\n".join(_pair_table(t, methods, "terms", "{:.1f}"))


def _pair_table(t, methods, column, fmt):
    """Rows of a table with a data set per row and a method per column, each
    cell ``Dice / column`` (``-`` where the method has no rows)."""
    rows = ["| data | " + " | ".join(f"{m} Dice / {column}" for m in methods) + " |",
            "|---|" + "---|" * len(methods)]
    for data in t.index.get_level_values(0).unique():
        cells = [f"{t.loc[(data, m)].dice:.3f} / " + fmt.format(t.loc[(data, m)][column])
                 if (data, m) in t.index else "-" for m in methods]
        rows.append(f"| {data} | " + " | ".join(cells) + " |")
    return rows


def _count(t, method, reference, column, better):
    """On how many data sets ``method`` is better than ``reference`` in ``column``."""
    n = 0
    for data in t.index.get_level_values(0).unique():
        if (data, method) in t.index and (data, reference) in t.index:
            n += bool(better(t.loc[(data, method), column], t.loc[(data, reference), column]))
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=",".join(REGRESSION + CLASSIFICATION))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--csv", default=None, help="append each split's rows here")
    ap.add_argument("--from-csv", nargs="+", default=None, help="report saved rows")
    ap.add_argument("--reference", default="fire_stable",
                    help="the variant the others are counted against in the last table")
    a = ap.parse_args(argv)
    if a.from_csv:
        df = pd.concat([pd.read_csv(f) for f in a.from_csv])
        # a row measured twice (a resumed run): the last one counts
        df = df.drop_duplicates(["data", "split", "method"], keep="last")
        if a.methods != ap.get_default("methods"):   # report these methods only
            df = df[df.method.isin(a.methods.split(","))]
    else:
        df = run(a.datasets.split(","), a.methods.split(","), a.splits, a.csv)
    print(report(df, a.reference))


if __name__ == "__main__":
    main()
