"""The command's options: ``build_parser``, with typed, checked arguments."""
import argparse
import math

from firecy.cli._demo import run_demo
from firecy.cli._errors import PROG
from firecy.cli._card import run_card
from firecy.cli._explain import run_explain
from firecy.cli._extract import run_extract
from firecy.cli._glm_task import check_task_options
from firecy.cli._text_columns import MAX_LABELS
from firecy.estimators import check_rule_depth

__all__ = ["build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line on stderr (exit status 2)."""

    def error(self, message):
        hint = f" (see '{self.prog} --help')"
        self.exit(2, f"{PROG}: error: {message}{hint}\n")

    def parse_args(self, args=None, namespace=None):
        # options that need each other (``check_options``, set by a
        # sub-command) are usage errors too
        ns = super().parse_args(args, namespace)
        check = getattr(ns, "check_options", None)
        message = None if check is None else check(ns)
        if message:
            self.error(message)
        return ns


def _number(name, kind=float, valid=None, requirement=""):
    """An argparse type: ``kind(text)``, checked by ``valid``."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            noun = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{name} must be {noun}, got {text!r}")
        if valid is not None and not valid(value):
            raise argparse.ArgumentTypeError(f"{name} must be {requirement}, got {text}")
        return value

    return parse


def _rule_depth(text):
    """``--rule-depth``: "auto", "leaves" (None), an integer >= 1, or distinct
    integers >= 1 separated by commas ("1,2": a tuple, the union of the cuts)."""
    if text in ("auto", "leaves"):
        return None if text == "leaves" else text
    requirement = ("'auto', 'leaves', an integer >= 1 or distinct integers >= 1 "
                   "separated by commas (e.g. 1,2)")
    try:
        depths = tuple(int(part) for part in text.split(","))
        return check_rule_depth(depths if len(depths) > 1 else depths[0])
    except ValueError:
        raise argparse.ArgumentTypeError(f"--rule-depth must be {requirement}, got {text!r}")


def _positive_int(name):
    return _number(name, int, lambda v: v >= 1, "at least 1")


def _auto_or_positive_int(name):
    """``"auto"`` or a positive int (``--max-rules``)."""
    number = _positive_int(name)

    def parse(text):
        return "auto" if str(text).strip().lower() == "auto" else number(text)
    return parse


def _add_common(p, *, n_trees=500, max_depth=3):
    g = p.add_argument_group("rule extraction")
    g.add_argument("--max-rules", type=_auto_or_positive_int("--max-rules"), default="auto",
                   metavar="N", help="budget: keep at most N terms, rules and linear "
                                     "terms (default auto: 14, i.e. fewer than 15 as in "
                                     "the FIRE paper); with --stable and linear terms, N "
                                     "rules (auto: 10, SIRUS's size) with the linear "
                                     "terms on top")
    g.add_argument("--penalty", choices=["mcp", "l1"], default="mcp",
                   help="sparsity penalty (default mcp)")
    g.add_argument("--gamma", default=1.1,
                   type=_number("gamma", float, lambda v: math.isfinite(v) and v > 1,
                                "a number greater than 1"),
                   help="MCP concavity, > 1; near 1 selects aggressively (default 1.1)")
    g.add_argument("--fusion", default=0.5,
                   type=_number("--fusion", float, lambda v: math.isfinite(v) and v >= 0,
                                "a non-negative number"),
                   help="fusion strength as a ratio of the sparsity strength "
                        "(default 0.5; 0 turns it off)")
    g.add_argument("--n-lambdas", type=_positive_int("--n-lambdas"), default=50, metavar="N",
                   help="points on the regularisation path (default 50)")
    g.add_argument("--selection", choices=["cv", "validation", "budget"], default="cv",
                   help="how the rule set is chosen on the path: K-fold cross-validation "
                        "(default), one held-out 20%% split (faster, noisier), or budget: "
                        "the most rules within --max-rules, no validation (fastest)")
    g.add_argument("--cv", type=_number("--cv", int, lambda v: v >= 2, "at least 2"),
                   default=5, metavar="K", help="folds for --selection cv (default 5)")
    g.add_argument("--one-se", action="store_true",
                   help="one-standard-error rule: the fewest rules within one standard "
                        "error of the best cross-validation error")
    g.add_argument("--no-refine-path", action="store_true",
                   help="do not bisect the path where the number of rules jumps")
    g.add_argument("--tol", default=1e-6,
                   type=_number("--tol", float, lambda v: math.isfinite(v) and v > 0,
                                "a positive number"),
                   help="solver tolerance (default 1e-6; larger is faster, less exact)")
    g.add_argument("--max-iter", type=_positive_int("--max-iter"), default=None,
                   metavar="N",
                   help="block updates per path point before a convergence warning "
                        "(default 1000 per tree)")
    g.add_argument("--rule-depth", type=_rule_depth, default="auto", metavar="D",
                   help="which nodes of each tree are rules: 'auto' (default: the "
                        "largest depth <= 3 whose nodes hold a median of at least "
                        "max(10, 1%%) of the rows), an integer depth D (each tree cut "
                        "at depth D), depths separated by commas (1,2: the union of "
                        "the cuts, single conditions and pairs), or 'leaves' (every leaf)")
    g.add_argument("--rule-values", choices=("auto", "leaf", "unit"), default=None,
                   help="the value in each rule's design column: 'leaf' (the tree's "
                        "value; weights multiply it), 'unit' (indicators; weights are "
                        "the rules' effects) or 'auto' ('unit' for boosted ensembles, "
                        "'leaf' for forests); default: the estimators' default")
    g.add_argument("--linear-terms", action=argparse.BooleanOptionalAction, default=None,
                   help="offer every numeric column as a linear term beside the rules "
                        "(clipped at its 2.5%%/97.5%% quantiles; a kept term counts "
                        "against --max-rules); --no-linear-terms: rules only; default: "
                        "the estimators' default")
    g.add_argument("--confirmatory", action="append", default=None, metavar="TERM",
                   help="a term every fit keeps, unpenalised and not counted against "
                        "--max-rules (confirmatory=; docs/confirmatory.rst): a column's "
                        "name (a linear term) or a rule as firecy prints rules, e.g. "
                        "--confirmatory age --confirmatory 'bmi > 30 and bp > 100'; "
                        "repeat for more")
    g.add_argument("--stable", action="store_true",
                   help="a rule set that random halves of the data agree on (stable=True: "
                        "rules of one or two conditions, the most "
                        "frequent in a forest; docs/stability.rst); the JSON and the "
                        "printed rules give each rule's stability (its frequency in "
                        "that forest)")
    g.add_argument("--exact", "--exact-thresholds", dest="exact_thresholds",
                   action="store_true",
                   help="print every threshold exactly, in the rules shown and the JSON "
                        "rule texts: each text then selects its rows for any input "
                        "(default: the shortest decimal that selects the same rows for "
                        "every value with up to 15 significant digits)")
    g = p.add_argument_group("tree ensemble")
    g.add_argument("--n-trees", type=_positive_int("--n-trees"), default=n_trees, metavar="N",
                   help=f"number of trees (default {n_trees})")
    g.add_argument("--max-depth", type=_positive_int("--max-depth"), default=max_depth,
                   metavar="D", help=f"depth of the trees (default {max_depth})")
    g = p.add_argument_group("run")
    g.add_argument("--seed", type=_number("--seed", int), default=0,
                   help="random seed (default 0)")
    g.add_argument("--test-size", default=0.25, metavar="F",
                   type=_number("--test-size", float, lambda v: 0 <= v < 1, "in [0, 1)"),
                   help="fraction of rows held out to measure test error (default 0.25)")
    g.add_argument("--n-jobs", type=_number("--n-jobs", int), default=-1,
                   help="parallel jobs for the forest and the path (default -1: all cores)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.add_argument("--debug", action="store_true",
                   help="show the full traceback on errors")


def _add_data_options(p):
    """The options that say which columns to read and what to fit (extract, explain)."""
    p.add_argument("--target", metavar="COLUMN",
                   help="name of the column to predict (with --task poisson: the "
                        "counts; --task survival takes --time and --event instead)")
    p.add_argument("--task", choices=["auto", "regression", "classification", "poisson",
                                      "survival"],
                   default="auto",
                   help="auto (default): classification when the target is not numeric "
                        "or has two values, else regression; poisson: counts or rates "
                        "(log link, --exposure); survival: times to an event (Cox "
                        "partial likelihood, --time and --event)")
    p.add_argument("--exposure", metavar="COLUMN",
                   help="with --task poisson: the column of positive exposures (time "
                        "or population at risk); the rules then model the rate")
    p.add_argument("--time", metavar="COLUMN",
                   help="with --task survival: the column of positive times (to the "
                        "event, or to censoring)")
    p.add_argument("--event", metavar="COLUMN",
                   help="with --task survival: the column of event indicators (1 or "
                        "true: the event happened at that time; 0 or false: censored)")
    p.add_argument("--ties", choices=["breslow", "efron"], default=None,
                   help="with --task survival: tied event times in the Cox partial "
                        "likelihood (default breslow; efron is closer to the exact "
                        "likelihood when many events share a time)")
    p.add_argument("--model", choices=["rf", "xgboost", "lightgbm"], default="rf",
                   help="tree ensemble to fit (default rf: random forest). A text column "
                        f"of at most {MAX_LABELS} labels is a category: xgboost and "
                        "lightgbm read it as such (the rules name its labels), rf reads "
                        "its indicator columns 'name=label' (one per label; one for two "
                        "labels, of the second in sorted order); an empty cell stays "
                        "missing")
    p.add_argument("--drop", action="append", default=[], metavar="COLUMN",
                   help="ignore this column (repeatable), e.g. an identifier or free text")


def _rows(text):
    """``--rows``: CSV line numbers separated by commas (line 1 is the header,
    the first data row is line 2)."""
    try:
        rows = [int(part) for part in text.split(",")]
    except ValueError:
        rows = None
    if not rows or any(r < 2 for r in rows):
        raise argparse.ArgumentTypeError(
            f"--rows must be CSV line numbers separated by commas (line 1 is the header, "
            f"the first data row is line 2), e.g. 2,7,11; got {text!r}")
    return list(dict.fromkeys(rows))


def build_parser():
    """The argparse parser of the ``firecy`` command.

    Returns
    -------
    argparse.ArgumentParser
        With the sub-commands ``demo``, ``extract``, ``explain`` and ``card``; the parsed
        arguments' ``func`` runs the command.

    Examples
    --------
    >>> from firecy.cli import build_parser
    >>> args = build_parser().parse_args(
    ...     ["extract", "data.csv", "--target", "price", "--max-rules", "8"])
    >>> args.command, args.data, args.target, args.max_rules
    ('extract', 'data.csv', 'price', 8)
    >>> args.model, args.format, args.gamma, args.fusion    # the defaults
    ('rf', 'json', 1.1, 0.5)
    """
    from firecy._version import __version__

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
                    "a few rules and linear terms with FIRE (MCP + light fusion) and print them; compare "
                    "their test error and antecedents with the forest's and with L1-only "
                    "selection at the same budget, by 5-fold cross-validation repeated "
                    "--repeats times (also at every smaller budget: the budget curve); "
                    "save pictures of the rules, the paths and the budget curve.",
    )
    demo.add_argument("--output-dir", default="firecy_output", metavar="DIR",
                      help="where to save the PNG pictures (default ./firecy_output)")
    demo.add_argument("--repeats", type=_positive_int("--repeats"), default=2, metavar="R",
                      help="repeats of the 5-fold cross-validation that measures the test "
                           "error (default 2: 10 fits of each model)")
    _add_common(demo)
    for action in demo._actions:
        if action.dest == "test_size":
            # the demo's test error is cross-validated (run_demo refuses it)
            action.help = "not used by the demo: its test error is cross-validated (--repeats)"
    demo.set_defaults(func=run_demo)

    ext = sub.add_parser(
        "extract",
        help="extract rules from a model fitted on your CSV file",
        description="Fit a tree ensemble on a CSV file, extract a few rules (and linear "
                    "terms) with FIRE, print them and write them as JSON. Numeric columns are read as "
                    f"numbers, a text column of at most {MAX_LABELS} labels as a category "
                    "(see --model); rows are named by their CSV lines (the header is "
                    "line 1).",
    )
    ext.add_argument("data", metavar="DATA.csv", help="CSV file with a header row")
    _add_data_options(ext)
    # --format (the rules as JSON, a Python function or a SQL expression)
    ext.add_argument("--format", choices=["json", "python", "sql"], default="json",
                     help="write the rules as JSON (default), as a standalone Python "
                          "function, or as a SQL expression")
    ext.add_argument("--sql-table", default="data", metavar="TABLE",
                     help="with --format sql: the table your query reads (as its FROM "
                          "clause names it; default: data); every column is written "
                          "\"TABLE\".\"name\", so that a column the table lacks is an "
                          "error, in SQLite too")
    ext.add_argument("--output", default=None, metavar="FILE",
                     help="file to write the rules to (default rules.json, rules.py or "
                          "rules.sql, by --format)")
    ext.add_argument("--plot-dir", default=None, metavar="DIR",
                     help="also save the pictures (PNG) in DIR")
    ext.add_argument("--report", default=None, metavar="FILE.html",
                     help="also write the run's report: one HTML file (rules, pictures, "
                          "comparison, explained rows) that opens offline in any browser")
    _add_common(ext)
    ext.set_defaults(func=run_extract, check_options=check_task_options)

    exp = sub.add_parser(
        "explain",
        help="why rows of your CSV file get their predictions",
        description="Fit exactly as 'firecy extract' does with the same options (no model "
                    "is saved between commands), then explain rows of the same file, "
                    "named by their CSV line numbers (line 1 is the header, the first "
                    "data row line 2): the intercept (with the ensemble's baseline), the "
                    "contribution of each rule that holds and of each linear term, which "
                    "sum to the prediction on the model's raw scale. Prints the first "
                    "rows, writes every explained row as CSV.",
    )
    exp.add_argument("data", metavar="DATA.csv", help="CSV file with a header row")
    _add_data_options(exp)
    exp.add_argument("--rows", type=_rows, default=None, metavar="LIST",
                     help="the rows to explain, by their CSV line numbers separated by "
                          "commas (line 1 is the header, so the first data row is line 2; "
                          "a text editor's line numbers), e.g. 2,7,11; default: every row")
    exp.add_argument("--output", default="explanations.csv", metavar="FILE",
                     help="CSV file of the explanations: one line per row and term "
                          "(default explanations.csv)")
    exp.add_argument("--plot-dir", default=None, metavar="DIR",
                     help="also save a waterfall picture (PNG) of each row in DIR (the "
                          "first 20)")
    exp.add_argument("--report", default=None, metavar="FILE.html",
                     help="also write the run's report (as 'firecy extract --report')")
    _add_common(exp)
    exp.set_defaults(func=run_explain, check_options=check_task_options)

    card = sub.add_parser(
        "card",
        help="a risk card (integer points per rule) from your CSV file",
        description="Learn a risk card with firecy.risk.RiskCardClassifier from a CSV file "
                    "with a two-valued target: at most --max-rules rules of one or two "
                    "conditions with small integer points, and the risk of each total "
                    "score. Prints the card and its test AUC, log-loss and CAL on the "
                    "held-out rows, and writes the card as JSON.",
    )
    card.add_argument("data", metavar="DATA.csv", help="CSV file with a header row")
    card.add_argument("--target", metavar="COLUMN", required=True,
                      help="the column of the two-valued outcome; the card gives the risk "
                           "of its second value in sorted order")
    card.add_argument("--drop", action="append", default=[], metavar="COLUMN",
                      help="ignore this column (repeatable), e.g. an identifier or free "
                           f"text (a text column of at most {MAX_LABELS} labels is read "
                           "as its indicator columns 'name=label')")
    card.add_argument("--max-rules", type=_positive_int("--max-rules"), default=10,
                      metavar="N", help="the most rules on the card (default 10)")
    card.add_argument("--max-points", type=_positive_int("--max-points"), default=5,
                      metavar="P", help="the most points of one rule (default 5)")
    card.add_argument("--test-size", default=0.25, metavar="F",
                      type=_number("--test-size", float, lambda v: 0 <= v < 1, "in [0, 1)"),
                      help="fraction of rows held out to measure the card (default 0.25)")
    card.add_argument("--seed", type=_number("--seed", int), default=0,
                      help="random seed (default 0)")
    card.add_argument("--n-jobs", type=_number("--n-jobs", int), default=-1,
                      help="parallel jobs (default -1: all cores)")
    card.add_argument("--output", default="card.json", metavar="FILE",
                      help="JSON file of the card (default card.json)")
    card.add_argument("--no-progress", action="store_true", help="no status line")
    card.add_argument("--debug", action="store_true",
                      help="show the full traceback on errors")
    card.set_defaults(func=run_card)
    return parser
