"""``firecy extract DATA.csv --target COLUMN``: rules from a model fitted on your data,
written as JSON, a standalone Python function or a SQL expression (``--format``)."""
from pathlib import Path

from firecy.cli._csv import read_csv
from firecy.cli._errors import CLIError
from firecy.cli._glm_task import GLM_TASKS, read_glm_data, run_glm_job
from firecy.cli._job import run_job
from firecy.cli._output import prepare_dir, print_rules, save_pictures
from firecy.cli._report import save_report
from firecy.cli._text_columns import NATIVE_CATEGORY_MODELS
from firecy._escape import json_text
from firecy.rules import rules_python, rules_sql
from firecy.rules import json_value, rules_json

__all__ = ["run_extract", "read_data", "fit_job", "check_output_file"]


_DEFAULT_OUTPUT = {"json": "rules.json", "python": "rules.py", "sql": "rules.sql"}


def _export_text(fmt, fire, names, doc, task, sql_table="data"):
    """The rules in ``fmt``: the JSON document, a Python function or a SQL expression
    (a classifier's: its margin, one per class for more than two classes)."""
    if fmt == "json":
        return json_text(doc) + "\n"
    if fmt == "python":
        return rules_python(fire, feature_names=names)
    alias = "margin" if task == "classification" else "prediction"
    return rules_sql(fire, feature_names=names, alias=alias, table=sql_table) + "\n"


def _target_text(args):
    """What the rules predict, for the JSON document."""
    if getattr(args, "task", None) == "survival":
        return f"survival (time {args.time}, event {args.event})"
    if getattr(args, "task", None) == "poisson" and getattr(args, "exposure", None):
        return f"{args.target} (exposure {args.exposure})"
    return args.target


def read_data(args):
    """``(X, y)`` of the CSV file, as ``firecy extract`` reads it (sets
    ``args.task``): ``X`` indexed by CSV line numbers, its text columns
    categories for XGBoost and LightGBM, indicator columns otherwise."""
    if getattr(args, "task", "regression") in GLM_TASKS:
        return read_glm_data(args)
    X, y, args.task = read_csv(args.data, args.target, args.drop,
                               getattr(args, "task", "regression"),
                               native_categories=args.model in NATIVE_CATEGORY_MODELS)
    return X, y


def fit_job(args, X, y):
    """Fit as ``firecy extract`` does: the job's results (the split, the
    model, FIRE, L1 selection, the comparison rows)."""
    label = {"rf": "random forest", "xgboost": "XGBoost model",
             "lightgbm": "LightGBM model"}[args.model]
    if getattr(args, "task", "regression") in GLM_TASKS:
        return run_glm_job(X, y, args, label=label)
    return run_job(X, y, args, label=label)


def check_output_file(path, option):
    """A file the command will write: not a directory, in a directory that exists."""
    out = Path(path)
    if out.is_dir():
        raise CLIError(f"{option} {path} is a directory; give a file name")
    if not out.parent.exists():
        raise CLIError(f"{option}: the directory {str(out.parent)!r} does not exist")
    return out


def run_extract(args):
    """``firecy extract``."""
    fmt = getattr(args, "format", "json") or "json"
    if getattr(args, "output", None) is None:
        args.output = _DEFAULT_OUTPUT[fmt]
    X, y = read_data(args)
    out = check_output_file(args.output, "--output")
    if getattr(args, "report", None):
        check_output_file(args.report, "--report")
    if args.plot_dir:
        prepare_dir(args.plot_dir)
    res = fit_job(args, X, y)
    names = list(X.columns)
    print_rules(res, args, names)
    summary = {r["name"]: {k: json_value(v) for k, v in r.items() if k != "name"}
               for r in res["summary"]}
    doc = rules_json(
        res["fire"], names, X=res["X_tr"], exact=bool(getattr(args, "exact_thresholds", False)),
        data=str(args.data), target=_target_text(args), model=args.model,
        n_model_trees=args.n_trees,
        max_depth=args.max_depth, penalty=args.penalty,
        gamma=args.gamma if args.penalty == "mcp" else None, fusion=res["fusion"],
        max_rules=res["fire"].max_rules_, seed=args.seed, test_size=args.test_size, task=args.task,
        n_train=len(res["y_tr"]), n_test=0 if res["y_te"] is None else len(res["y_te"]),
    )
    doc["comparison"] = summary
    try:
        text = _export_text(fmt, res["fire"], names, doc, args.task,
                            getattr(args, "sql_table", "data"))
    except ValueError as exc:
        raise CLIError(f"cannot write the rules as {fmt}: {exc}") from None
    try:
        # UTF-8 whatever the locale: Python reads its source as UTF-8, and
        # the exports are UTF-8 text for any label (the escaping sees to it)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    print()
    print(f"saved {out}")
    if args.plot_dir:
        for p in save_pictures(res, args.plot_dir, res["fire"].max_rules_, names):
            print(f"saved {p}")
    if getattr(args, "report", None):
        print(f"saved {save_report(res, args, names)}")
    return 0
