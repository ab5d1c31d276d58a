"""``--report FILE`` of ``firecy extract`` and ``firecy explain``: the run's
report in one HTML file (:func:`firecy.report.write_report`)."""
from pathlib import Path

from firecy.cli._errors import CLIError

__all__ = ["save_report"]


def save_report(res, args, names):
    """Write the report of the job ``res`` to ``args.report``; return its path.

    With test rows, the comparison is the command's own table (FIRE, L1
    selection at the same budget and the full model, on the test rows) and
    the explained rows are test rows; with ``--test-size 0`` the report
    compares FIRE with the full model on the training rows and says so. An
    explained row is named by its line in the CSV file (the header is line 1)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CLIError("--report needs matplotlib for its pictures: pip install matplotlib "
                       "(or pip install 'firecy[plot]')") from None
    from firecy.report import write_report

    task = res.get("task") or getattr(args, "task", "regression")
    X_tr, y_tr, X_te, y_te = res["X_tr"], res["y_tr"], res["X_te"], res["y_te"]
    extra = {}
    if task == "poisson":
        # the command's y is [count, exposure]
        extra["exposure"] = y_tr[:, 1]
        y_tr = y_tr[:, 0]
        if y_te is not None:
            extra["exposure_test"] = y_te[:, 1]
            y_te = y_te[:, 0]
    comparison = note = None
    if X_te is not None:
        comparison = res["summary"]
        note = (f"Scores on the {len(X_te)} test rows held out by --test-size "
                f"{args.test_size:g}; the full model's rules are its leaves.")
    lines = res["lines_tr"] if X_te is None else res["lines_te"]
    path = Path(args.report)
    try:
        write_report(res["fire"], path, X_tr, y_tr, X_test=X_te, y_test=y_te,
                     feature_names=names, comparison=comparison, comparison_note=note,
                     title=f"firecy: rules of {Path(str(args.data)).name}",
                     row_names=[f"CSV line {int(k)}" for k in lines], **extra)
    except OSError as exc:
        raise CLIError(f"cannot write {args.report}: {exc.strerror or exc}") from None
    return path
