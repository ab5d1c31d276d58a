"""The ``firecy`` command line (also ``python -m firecy``).

``firecy demo``
    Fit a random forest (500 depth-3 trees) on scikit-learn's bundled
    diabetes data (no network), extract a few rules with FIRE and print them;
    measure the test error and antecedents of FIRE, L1-only selection at the
    same budget and the forest by repeated 5-fold cross-validation, at that
    budget and every smaller one (the budget curve), say whether FIRE is
    ahead of L1, and save three pictures (the rules as partial trees; the
    regularisation paths; the budget curve).
``firecy extract DATA.csv --target COLUMN``
    The same on your CSV file; writes the rules as JSON (``--format``:
    Python, SQL); ``--report FILE.html`` also writes the run's report, one
    HTML file (:func:`firecy.report.write_report`).
``firecy explain DATA.csv --target COLUMN --rows 2,7,11``
    Why rows (named by their CSV lines; the header is line 1) get their
    predictions. There is no saved-model format: the command fits exactly as
    ``extract`` does with the same options (the same split and seed, so the
    same rules), then prints each row's intercept (with the ensemble's
    baseline), the rules that hold and every linear term with their
    contributions (summing to the prediction), and writes every explained
    row as CSV (``--output``); ``--plot-dir`` saves a waterfall per row,
    ``--report`` the report.

A text column of at most 32 labels is read as a category (native for
``--model xgboost`` and ``lightgbm``, indicator columns ``name=label`` for
the random forest; :mod:`firecy.cli._text_columns`).

Errors in the input (a missing file or column, text in a numeric column, a
text column of more labels, a missing target value, a bad option) print one
line, ``firecy: error: ...``, on stderr and exit with status 2 (bad option) or 1 (bad data); ``--debug``
shows the traceback instead.

Modules: ``_parser`` (options), ``_demo``, ``_extract`` and ``_explain`` (the
commands), ``_demo_cv`` and ``_demo_plot`` (the demo's cross-validation and
budget picture), ``_report`` (``--report``),
``_job`` (what both run), ``_output`` (printing and pictures), ``_csv``
(reading the data), ``_text_columns`` (text columns as categories),
``_progress`` (progress bar), ``_errors`` (one-line errors).
"""
import re
import sys
import time
import warnings  # noqa: F401 (tests time the progress counter through firecy.cli.time)

from firecy.cli._errors import PROG, CLIError, one_line
from firecy.cli._parser import build_parser
from firecy.cli._progress import fit_with_progress as _fit_fire  # noqa: F401
from firecy.rules import rules_json

__all__ = ["main", "build_parser"]

def _warning_printer():
    """``warnings.showwarning`` for the command: one line, no source path, the
    command's options where the library names its parameters, and each kind
    of warning once (every fold and path point may raise the same one)."""
    shown = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message).strip()
        text = text.splitlines()[0] if text else category.__name__
        text = re.sub(r"^firecy: ", "", text)
        text = re.sub(r"increase max_iter or tol\.?",
                      "raise --max-iter, or --tol for a looser solution", text)
        kind = (category, re.sub(r"[0-9.e+-]+", "#", text))
        if kind in shown:
            return
        shown.add(kind)
        print(f"{PROG}: warning: {text}", file=sys.stderr if file is None else file)

    return show


def main(argv=None):
    """Run the ``firecy`` command; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``firecy`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 on bad data (the error is printed on stderr), 130
        when interrupted. A bad option exits with status 2 (argparse's
        ``SystemExit``).

    Examples
    --------
    Extract five rules from a CSV file and write them as SQL:

    >>> import contextlib, io, os, tempfile
    >>> from sklearn.datasets import load_diabetes
    >>> from firecy.cli import main
    >>> log = io.StringIO()
    >>> with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(log):
    ...     csv = os.path.join(tmp, "diabetes.csv")
    ...     load_diabetes(as_frame=True).frame.to_csv(csv, index=False)
    ...     status = main(["extract", csv, "--target", "target", "--format", "sql",
    ...                    "--output", os.path.join(tmp, "rules.sql"), "--max-rules", "5",
    ...                    "--n-trees", "20", "--n-lambdas", "10", "--cv", "3",
    ...                    "--n-jobs", "1", "--no-progress"])
    ...     sql = open(os.path.join(tmp, "rules.sql")).read()
    >>> status, "CASE WHEN" in sql
    (0, True)
    >>> print(log.getvalue())
    Rules extracted by FIRE (... rule... and ... linear term..., ...
    saved .../rules.sql
    <BLANKLINE>

    A missing file is an error message (on stderr) and status 1:

    >>> main(["extract", "no_such_file.csv", "--target", "y"])
    1
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warning_printer()
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
        print(f"{PROG}: error: {one_line(exc)} (run with --debug for details)",
              file=sys.stderr)
        return 1
