"""The ``firecy`` command line (also ``python -m firecy``).

``firecy demo``
    Fit a random forest (500 depth-3 trees) on scikit-learn's bundled
    diabetes data (no network), extract a few rules with FIRE, print them with
    the test error of the rules, the forest and L1-only selection at the same
    rule budget, and save two pictures (the rules as partial trees; the
    regularisation paths).
``firecy extract DATA.csv --target COLUMN``
    The same on your CSV file; writes the rules as JSON.

Errors in the input (a missing file or column, text in a numeric column, a
missing target value, a bad option) print one line, ``firecy: error: ...``,
on stderr and exit with status 2 (bad option) or 1 (bad data); ``--debug``
shows the traceback instead.
"""
from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from firecy.rules._json import rules_json  # noqa: F401 (firecy.cli.rules_json)

__all__ = ["main", "build_parser", "rules_json"]

PROG = "firecy"


class CLIError(Exception):
    """A problem with the user's input: printed as one line, exit status 1."""


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line on stderr (exit status 2)."""

    def error(self, message):
        hint = f" (see '{self.prog} --help')"
        self.exit(2, f"{PROG}: error: {message}{hint}\n")


# ---------------------------------------------------------------------------
# argument types
# ---------------------------------------------------------------------------
def _positive_int(name):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}")
        if v < 1:
            raise argparse.ArgumentTypeError(f"{name} must be at least 1, got {v}")
        return v

    return parse


def _int(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")


def _nonneg_float(name):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}")
        if not (math.isfinite(v) and v >= 0):
            raise argparse.ArgumentTypeError(f"{name} must be a non-negative number, got {text}")
        return v

    return parse


def _gamma(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"gamma must be a number, got {text!r}")
    if not (math.isfinite(v) and v > 1):
        raise argparse.ArgumentTypeError(f"gamma must be a number greater than 1, got {text}")
    return v


def _fraction(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError(f"the test fraction must be in [0, 1), got {text}")
    return v


def _add_common(p, *, n_trees=500, max_depth=3):
    g = p.add_argument_group("rule extraction")
    g.add_argument("--max-rules", type=_positive_int("--max-rules"), default=14, metavar="N",
                   help="rule budget: keep at most N rules (default 14, i.e. fewer than "
                        "15 as in the FIRE paper)")
    g.add_argument("--penalty", choices=["mcp", "l1"], default="mcp",
                   help="sparsity penalty (default mcp)")
    g.add_argument("--gamma", type=_gamma, default=1.1,
                   help="MCP concavity, > 1; near 1 selects aggressively (default 1.1)")
    g.add_argument("--fusion", type=_nonneg_float("--fusion"), default=None,
                   help="fusion strength as a ratio of the sparsity lambda "
                        "(lambda_f = fusion * lambda_s; default 0.5 with mcp, 0 with l1; "
                        "0 turns it off)")
    g.add_argument("--n-lambdas", type=_positive_int("--n-lambdas"), default=50, metavar="N",
                   help="points on the regularisation path (default 50)")
    g = p.add_argument_group("tree ensemble")
    g.add_argument("--n-trees", type=_positive_int("--n-trees"), default=n_trees, metavar="N",
                   help=f"number of trees (default {n_trees})")
    g.add_argument("--max-depth", type=_positive_int("--max-depth"), default=max_depth,
                   metavar="D", help=f"depth of the trees (default {max_depth})")
    g = p.add_argument_group("run")
    g.add_argument("--seed", type=_int, default=0, help="random seed (default 0)")
    g.add_argument("--test-size", type=_fraction, default=0.25, metavar="F",
                   help="fraction of rows held out to measure test error (default 0.25)")
    g.add_argument("--n-jobs", type=_int, default=-1,
                   help="parallel jobs for the forest and the path (default -1: all cores)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.add_argument("--debug", action="store_true",
                   help="show the full traceback on errors")


def build_parser():
    """The argparse parser of the ``firecy`` command."""
    from firecy import __version__

    parser = _Parser(
        prog=PROG,
        description="Extract a small, readable set of rules from a tree ensemble "
                    "with FIRE (Liu & Mazumder, KDD 2023).",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    demo = sub.add_parser(
        "demo",
        help="run FIRE on the bundled diabetes data (no download)",
        description="Fit a random forest on scikit-learn's bundled diabetes data, extract "
                    "a few rules with FIRE (MCP + light fusion), compare their test error "
                    "with the forest and with L1-only selection at the same rule budget, "
                    "and save pictures of the rules and of the paths.",
    )
    demo.add_argument("--output-dir", default="firecy_output", metavar="DIR",
                      help="where to save the PNG pictures (default ./firecy_output)")
    _add_common(demo)
    demo.set_defaults(func=run_demo)

    ext = sub.add_parser(
        "extract",
        help="extract rules from a model fitted on your CSV file",
        description="Fit a tree ensemble on a CSV file, extract a few rules with FIRE, "
                    "print them and write them as JSON.",
    )
    ext.add_argument("data", metavar="DATA.csv", help="CSV file with a header row")
    ext.add_argument("--target", required=True, metavar="COLUMN",
                     help="name of the column to predict (numeric)")
    ext.add_argument("--model", choices=["rf", "xgboost", "lightgbm"], default="rf",
                     help="tree ensemble to fit (default rf: random forest)")
    ext.add_argument("--drop", action="append", default=[], metavar="COLUMN",
                     help="ignore this column (repeatable), e.g. an identifier or text")
    ext.add_argument("--output", default="rules.json", metavar="FILE",
                     help="JSON file to write the rules to (default rules.json)")
    ext.add_argument("--plot-dir", default=None, metavar="DIR",
                     help="also save the pictures (PNG) in DIR")
    _add_common(ext)
    ext.set_defaults(func=run_extract)
    return parser


# ---------------------------------------------------------------------------
# progress
# ---------------------------------------------------------------------------
class _Progress:
    """Progress of a path fit: a callable ``progress(k, n_points, result)``.

    Shows a tqdm bar when tqdm is installed, else a counter on stderr.  It
    counts solved path points, so it stays right when several paths (grid
    points, validation folds) report from worker threads at once.
    """

    def __init__(self, desc, enabled=True):
        import threading

        self.desc, self.enabled = desc, enabled and sys.stderr is not None
        self.bar, self.count, self.shown = None, 0, False
        self.lock = threading.Lock()
        self.t0 = time.perf_counter()

    def __call__(self, k, n, result=None):
        if not self.enabled:
            return
        with self.lock:
            self.count += 1
            if self.bar is None:
                try:
                    from tqdm.auto import tqdm
                except ImportError:
                    tqdm = None
                self.bar = (tqdm(desc=self.desc, file=sys.stderr, leave=False,
                                 unit=" points", dynamic_ncols=True)
                            if tqdm is not None else False)
            n_rules = getattr(result, "n_rules", None)
            if self.bar is not False:
                self.bar.update(1)
                if n_rules is not None:
                    self.bar.set_postfix_str(f"{n_rules} rules")
            elif time.perf_counter() - self.t0 > 0.5:
                extra = "" if n_rules is None else f", {n_rules} rules"
                sys.stderr.write(f"\r{self.desc}: {self.count} points{extra}   ")
                sys.stderr.flush()
                self.shown = True

    def close(self):
        if self.bar is not None and self.bar is not False:
            self.bar.close()
        elif self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


class _Ticker:
    """Elapsed time on an interactive stderr while a step without progress runs."""

    def __init__(self, desc, enabled=True):
        import threading

        self.desc = desc
        self.enabled = enabled and sys.stderr is not None and sys.stderr.isatty()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        t0 = time.perf_counter()
        while not self.stop.wait(0.5):
            sys.stderr.write(f"\r{self.desc} ... {time.perf_counter() - t0:.1f} s")
            sys.stderr.flush()

    def __enter__(self):
        if self.enabled:
            self.thread.start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.stop.set()
            self.thread.join()
            sys.stderr.write("\r" + " " * (len(self.desc) + 16) + "\r")
            sys.stderr.flush()
        return False


def _accepts(func, name):
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _fit_fire(est, X, y, desc, show_progress):
    """``est.fit(X, y)`` with a progress bar when the estimator reports progress."""
    bar = _Progress(desc, show_progress)
    try:
        if _accepts(est.fit, "progress"):
            est.fit(X, y, progress=bar)
        elif "progress" in est.get_params():
            est.set_params(progress=bar)
            est.fit(X, y)
            est.set_params(progress=None)
        else:
            # this estimator does not report its path: show the elapsed time
            if show_progress:
                _status(f"{desc} ...")
            with _Ticker(desc, show_progress):
                est.fit(X, y)
    finally:
        bar.close()
    return est


def _status(msg, quiet=False):
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# the job
# ---------------------------------------------------------------------------
def _make_forest(kind, n_trees, max_depth, seed, n_jobs):
    if kind == "rf":
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(n_estimators=n_trees, max_depth=max_depth,
                                     random_state=seed, n_jobs=n_jobs)
    if kind == "xgboost":
        try:
            from xgboost import XGBRegressor
        except ImportError:
            raise CLIError(
                "--model xgboost needs xgboost: pip install 'firecy[xgboost]'") from None
        return XGBRegressor(n_estimators=n_trees, max_depth=max_depth, learning_rate=0.1,
                            random_state=seed, n_jobs=n_jobs)
    try:
        from lightgbm import LGBMRegressor
    except ImportError:
        raise CLIError("--model lightgbm needs lightgbm: pip install 'firecy[lightgbm]'") from None
    return LGBMRegressor(n_estimators=n_trees, max_depth=max_depth,
                         num_leaves=2 ** max_depth, learning_rate=0.1, random_state=seed,
                         n_jobs=n_jobs, verbose=-1)


def _make_fire(model, args, penalty, fusion):
    from firecy.estimators import FIRERegressor

    params = dict(estimator=model, penalty=penalty, max_rules=args.max_rules,
                  n_lambdas=args.n_lambdas, random_state=args.seed, n_jobs=args.n_jobs)
    valid = FIRERegressor().get_params()
    if penalty == "mcp":
        params["gamma"] = args.gamma
    if fusion and "fusion" in valid:
        params["fusion"] = fusion
    return FIRERegressor(**{k: v for k, v in params.items() if k in valid})


def _mse(y, pred):
    return float(np.mean((np.asarray(y, dtype=float) - np.asarray(pred, dtype=float)) ** 2))


def _r2(y, pred):
    y = np.asarray(y, dtype=float)
    ss = float(np.sum((y - y.mean()) ** 2))
    return 1.0 - float(np.sum((y - np.asarray(pred, dtype=float)) ** 2)) / ss if ss else math.nan


def _describe(penalty, gamma, fusion):
    if penalty == "l1":
        name = "L1 (lasso, RuleFit-style)"
        return name + (f" + fusion {fusion:g}" if fusion else "")
    return f"MCP (gamma {gamma:g})" + (f" + fusion {fusion:g}" if fusion else "")


def _run_job(X, y, args, *, label, fusion_l1=0.0):
    """Fit the forest, FIRE and L1 selection; return everything needed to report."""
    from sklearn.model_selection import train_test_split

    from firecy.rules import count_antecedents

    quiet = args.no_progress
    if args.fusion is None:
        args.fusion = 0.5 if args.penalty == "mcp" else 0.0
    # plain arrays: the libraries rename or reject some column names (spaces,
    # brackets); the rules are printed with the real names
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if args.test_size > 0:
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=args.test_size,
                                                  random_state=args.seed)
    else:
        X_tr, X_te, y_tr, y_te = X, None, y, None
    forest = _make_forest(getattr(args, "model", "rf"), args.n_trees, args.max_depth,
                          args.seed, args.n_jobs)
    t0 = time.perf_counter()
    _status(f"fitting {label}: {args.n_trees} trees of depth {args.max_depth} "
            f"on {len(y_tr)} rows ...", quiet)
    forest.fit(X_tr, y_tr)
    fusion = args.fusion
    fire = _make_fire(forest, args, args.penalty, fusion)
    try:
        _fit_fire(fire, X_tr, y_tr,
                  f"FIRE path, {_describe(args.penalty, args.gamma, fusion)}", not quiet)
    except ValueError as exc:
        if not fusion or "fusion" not in str(exc) or "provide" not in str(exc):
            raise
        # this build has no fused penalty: fall back to the sparsity penalty alone
        _status(f"note: fusion is not available in this build of firecy ({_one_line(exc)}); "
                f"using {args.penalty.upper()} without fusion")
        fusion = 0.0
        fire = _make_fire(forest, args, args.penalty, fusion)
        _fit_fire(fire, X_tr, y_tr,
                  f"FIRE path, {_describe(args.penalty, args.gamma, fusion)}", not quiet)
    l1 = None
    if args.penalty != "l1" or fusion:
        l1 = _make_fire(forest, args, "l1", fusion_l1)
        _fit_fire(l1, X_tr, y_tr, "L1 path (comparison)", not quiet)
    elapsed = time.perf_counter() - t0
    res = dict(X_tr=X_tr, X_te=X_te, y_tr=y_tr, y_te=y_te, forest=forest, fire=fire, l1=l1,
               fusion=fusion, elapsed=elapsed)
    rows = []
    for name, est in [("FIRE " + _describe(args.penalty, args.gamma, fusion), fire),
                      ("L1 selection, same budget", l1), (f"full {label}", forest)]:
        if est is None:
            continue
        is_fire = est is fire or est is l1
        entry = dict(name=name,
                     n_rules=int(est.n_rules_) if is_fire else int(_n_leaves(forest)),
                     n_antecedents=(count_antecedents(est.ensemble_, est.coef_)
                                    if is_fire else None))
        if X_te is not None:
            pred = est.predict(X_te)
            entry.update(test_mse=_mse(y_te, pred), test_r2=_r2(y_te, pred))
        rows.append(entry)
    res["summary"] = rows
    return res


def _n_leaves(forest):
    from firecy.ensembles import rule_ensemble_from_model

    return rule_ensemble_from_model(forest).n_rules


def _summary_text(res, budget):
    lines = []
    has_test = res["X_te"] is not None
    head = f"{'model':<36} {'rules':>6} {'antecedents':>11}"
    if has_test:
        head += f" {'test MSE':>10} {'test R2':>8}"
    lines.append(head)
    for r in res["summary"]:
        ante = "-" if r["n_antecedents"] is None else str(r["n_antecedents"])
        line = f"{r['name']:<36} {r['n_rules']:>6} {ante:>11}"
        if has_test:
            line += f" {r['test_mse']:>10.4g} {r['test_r2']:>8.3f}"
        lines.append(line)
    lines.append(f"(rule budget: at most {budget} rules; test rows: "
                 f"{0 if not has_test else len(res['y_te'])})")
    return "\n".join(lines)


def _save_pictures(res, out_dir, budget, names):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("pictures skipped: matplotlib is not installed "
              "(pip install matplotlib, or pip install 'firecy[plot]')")
        return []
    from firecy.plotting import plot_path, plot_rules

    out_dir = _prepare_dir(out_dir)
    fire, l1 = res["fire"], res["l1"]
    fig = plot_rules(fire, feature_names=names, X=res["X_tr"])
    rules_png = out_dir / "rules.png"
    fig.savefig(rules_png, dpi=120)
    fig = plot_path(fire.path_, budget=budget, label=res["summary"][0]["name"],
                    selected=_selected_index(fire))
    if l1 is not None:
        plot_path(l1.path_, ax=fig.axes[0], label="L1 selection", selected=_selected_index(l1))
    fig.axes[0].set_title("validation error along the regularisation path")
    path_png = out_dir / "path.png"
    fig.savefig(path_png, dpi=120)
    return [rules_png, path_png]


def _prepare_dir(out_dir):
    """Create the output directory (before any work) or fail with one line."""
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CLIError(f"cannot create the output directory {str(out_dir)!r}: "
                       f"{exc.strerror or exc}") from None
    if not os.access(out_dir, os.W_OK):
        raise CLIError(f"cannot write to the output directory {str(out_dir)!r}")
    return out_dir


def _selected_index(est):
    path = getattr(est, "path_", None)
    lam = getattr(est, "lambda_", None)
    if path is None or lam is None:
        return None
    try:
        lambdas = np.asarray(path["lambdas"], dtype=float)
        return int(np.argmin(np.abs(lambdas - float(lam))))
    except (KeyError, TypeError, ValueError):
        return None


def run_demo(args):
    """``firecy demo``."""
    from sklearn.datasets import load_diabetes

    from firecy.rules import rules_report

    _prepare_dir(args.output_dir)
    # numpy arrays, not a DataFrame: the demo must run without pandas
    data = load_diabetes(scaled=False)
    X, y = np.asarray(data.data, dtype=float), np.asarray(data.target, dtype=float)
    names = [str(n) for n in data.feature_names]
    print("firecy demo: scikit-learn's diabetes data (442 patients, 10 features: age, sex, "
          "bmi, bp = blood pressure, s1-s6 = blood serum measurements; target: disease "
          "progression one year later)")
    res = _run_job(X, y, args, label="random forest")
    fire = res["fire"]
    print()
    print(f"Rules extracted by FIRE ({fire.n_rules_} rules, "
          f"{_describe(args.penalty, args.gamma, res['fusion'])}, support on training rows):")
    print(rules_report(fire, feature_names=names, X=res["X_tr"]))
    print()
    print(_summary_text(res, args.max_rules))
    print()
    for p in _save_pictures(res, args.output_dir, args.max_rules, names):
        print(f"saved {p}")
    print(f"done in {res['elapsed']:.1f} s")
    return 0


# ---------------------------------------------------------------------------
# extract
# ---------------------------------------------------------------------------
def _read_csv(path, target, drop):
    p = Path(path)
    if not p.exists():
        raise CLIError(f"no such file: {path}")
    if p.is_dir():
        raise CLIError(f"{path} is a directory, not a CSV file")
    try:
        import pandas as pd
    except ImportError:
        raise CLIError("firecy extract needs pandas to read CSV files: "
                       "pip install 'firecy[pandas]'") from None
    try:
        df = pd.read_csv(p)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CLIError(f"cannot read {path} as CSV: {msg}") from None
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None
    if target not in df.columns:
        cols = ", ".join(map(str, df.columns[:20])) + (", ..." if df.shape[1] > 20 else "")
        raise CLIError(f"target column {target!r} is not in {path} (columns: {cols})")
    unknown = [c for c in drop if c not in df.columns]
    if unknown:
        raise CLIError(f"--drop: no column {unknown[0]!r} in {path}")
    if target in drop:
        raise CLIError("--drop: cannot drop the target column")
    y = df[target]
    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        if pd.api.types.is_bool_dtype(y):
            y = y.astype(float)
        else:
            bad = y[pd.to_numeric(y, errors="coerce").isna() & y.notna()]
            example = f" (e.g. {bad.iloc[0]!r})" if len(bad) else ""
            raise CLIError(f"target column {target!r} is not numeric{example}; "
                           f"firecy extract fits regression models")
    n_missing = int(y.isna().sum())
    if n_missing:
        rows = ", ".join(str(i + 2) for i in np.flatnonzero(y.isna().to_numpy())[:5])
        raise CLIError(f"target column {target!r} has {n_missing} missing value(s) "
                       f"(CSV line(s) {rows}{', ...' if n_missing > 5 else ''}); "
                       f"remove or fill those rows")
    if not np.all(np.isfinite(y.to_numpy(dtype=float))):
        raise CLIError(f"target column {target!r} contains infinite values")
    X = df.drop(columns=[target, *drop])
    if X.shape[1] == 0:
        raise CLIError(f"{path} has no feature columns besides the target")
    for c in X.columns:
        col = X[c]
        if pd.api.types.is_bool_dtype(col):
            X[c] = col.astype(float)
        elif not pd.api.types.is_numeric_dtype(col):
            bad = col[pd.to_numeric(col, errors="coerce").isna() & col.notna()]
            example = f" (e.g. {bad.iloc[0]!r})" if len(bad) else ""
            raise CLIError(f"column {str(c)!r} is not numeric{example}; encode it as numbers "
                           f"or leave it out with --drop {c}")
    X = X.astype(float)
    X.columns = [str(c) for c in X.columns]
    if len(X) < 10:
        raise CLIError(f"{path} has {len(X)} data row{'' if len(X) == 1 else 's'}; "
                       f"at least 10 are needed")
    return X, y.astype(float)


def run_extract(args):
    """``firecy extract``."""
    from firecy.rules import rules_report
    from firecy.rules._json import json_value, rules_json

    X, y = _read_csv(args.data, args.target, args.drop)
    out = Path(args.output)
    if out.is_dir():
        raise CLIError(f"--output {args.output} is a directory; give a file name")
    if not out.parent.exists():
        raise CLIError(f"--output: the directory {str(out.parent)!r} does not exist")
    if args.plot_dir:
        _prepare_dir(args.plot_dir)
    label = {"rf": "random forest", "xgboost": "XGBoost model",
             "lightgbm": "LightGBM model"}[args.model]
    res = _run_job(X, y, args, label=label)
    fire = res["fire"]
    names = list(X.columns)
    print(f"Rules extracted by FIRE ({fire.n_rules_} rules, "
          f"{_describe(args.penalty, args.gamma, res['fusion'])}, support on training rows):")
    print(rules_report(fire, feature_names=names, X=res["X_tr"]))
    print()
    print(_summary_text(res, args.max_rules))
    summary = {r["name"]: {k: json_value(v) for k, v in r.items() if k != "name"}
               for r in res["summary"]}
    doc = rules_json(
        fire, names, X=res["X_tr"],
        data=str(args.data), target=args.target, model=args.model, n_trees=args.n_trees,
        max_depth=args.max_depth, penalty=args.penalty,
        gamma=args.gamma if args.penalty == "mcp" else None, fusion=res["fusion"],
        max_rules=args.max_rules, seed=args.seed, test_size=args.test_size,
        n_train=len(res["y_tr"]), n_test=0 if res["y_te"] is None else len(res["y_te"]),
    )
    doc["comparison"] = summary
    try:
        out.write_text(json.dumps(doc, indent=2) + "\n")
    except OSError as exc:
        raise CLIError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    print()
    print(f"saved {out}")
    if args.plot_dir:
        for p in _save_pictures(res, args.plot_dir, args.max_rules, names):
            print(f"saved {p}")
    return 0


# ---------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------
def _one_line(exc):
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    first = text.splitlines()[0]
    return first if len(first) < 400 else first[:397] + "..."


def main(argv=None):
    """Run the ``firecy`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CLIError as exc:
        if args.debug:
            raise
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, ImportError, MemoryError, OSError) as exc:
        if args.debug:
            raise
        print(f"{PROG}: error: {_one_line(exc)} (run with --debug for details)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
