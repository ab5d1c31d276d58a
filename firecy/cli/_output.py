"""What the commands print and save: the rules, the comparison table, the pictures."""
import os
from pathlib import Path

import numpy as np

from firecy.cli._errors import CLIError
from firecy.cli._glm_task import GLM_COLUMNS
from firecy.cli._job import describe_fit

__all__ = ["prepare_dir", "print_rules", "summary_text", "save_pictures"]


def prepare_dir(out_dir):
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


def _display_estimator(fire, shown):
    """A shallow copy of the fitted estimator ``fire`` whose rules print as
    ``shown`` (:func:`~firecy.cli._rounding.display_ensemble`): the report
    of an estimator gives its linear terms and, for a stable fit, each
    rule's stability, with the same weights."""
    import copy

    display = copy.copy(fire)
    display.ensemble_ = shown
    return display


def _plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


def print_rules(res, args, names, table=True):
    """The extracted rules, then (``table``) the comparison with the forest
    and L1 selection on the test rows (the demo prints its own, from
    cross-validation)."""
    from firecy.rules import rules_report

    from firecy.cli._rounding import display_ensemble
    from firecy.rules import estimator_intercept

    from firecy.rules import linear_rows

    fire = res["fire"]
    linear = [r for _, r in linear_rows(fire, names, len(fire.ensemble_.leaf_values))]
    terms = f" and {_plural(len(linear), 'linear term')}" if linear else ""
    print(f"Rules extracted by FIRE ({_plural(fire.n_rules_, 'rule')}{terms}, "
          f"{describe_fit(args, args.penalty, res['fusion'])}, support on training rows"
          + (", stability: the rule's frequency in the stable fit's forest"
             if getattr(fire, "stable", False) else "") + "):")
    exact = bool(getattr(args, "exact_thresholds", False))
    shown, n_short = display_ensemble(fire.ensemble_, fire.coef_, res["X_tr"], exact=exact)
    intercept, note = estimator_intercept(fire, res["X_tr"])
    print(rules_report(_display_estimator(fire, shown), intercept=intercept,
                       feature_names=names, X=res["X_tr"], intercept_note=note))
    if linear:
        print(linear_terms_note(fire, names))
    constraints = fire.model_.constraints_text()
    if constraints:
        print(f"({constraints}: every rule and slope on those columns has that direction)")
    if n_short:
        print(f"({n_short} threshold(s) printed short, e.g. 27.6 for "
              "27.600000000000005: each selects the same rows as the model's exact "
              "threshold for every value written with up to 15 significant digits, "
              "and the same training rows; --exact prints them exactly; "
              "the exports are exact)")
    if table:
        print()
        print(summary_text(res, res["fire"].max_rules_))


def linear_terms_note(fire, names):
    """How a linear term adds to a prediction, with each kept term's centre,
    in the order the rules' printout lists the terms (it gives their slopes
    and clip ranges)."""
    from firecy._escape import display_text
    from firecy.rules import linear_rows, linear_slopes

    terms, slopes = linear_slopes(fire)
    n_columns, K = len(fire.ensemble_.leaf_values), slopes.shape[1]
    order = dict.fromkeys((r["column"] - n_columns) // K
                          for _, r in linear_rows(fire, names, n_columns))
    centres = ", ".join(f"{display_text(names[int(terms.features[t])])} "
                        f"{float(terms.center[t]):.6g}" for t in order)
    return ("(a linear term adds slope * (x clipped to its range - its centre), 0 for a "
            f"missing x; centres: {centres})")


def summary_text(res, budget):
    """The comparison table: rules, antecedents and test error of each model."""
    lines = []
    has_test = res["X_te"] is not None
    classification = res.get("classification", False)
    columns = GLM_COLUMNS.get(res.get("task"))
    # a FIRE row counts its linear terms with its rules: the budget is of terms
    width = max([36] + [len(r["name"]) for r in res["summary"]])
    head = f"{'model':<{width}} {'terms':>6} {'rules':>6} {'linear':>6} {'antecedents':>11}"
    if has_test and columns:
        head += "".join(" " + format(label, fmt.rstrip("gf").rsplit(".", 1)[0])
                        for _, label, fmt in columns)
    elif has_test:
        head += (f" {'accuracy':>9} {'log-loss':>9} {'AUC':>7}" if classification
                 else f" {'test MSE':>10} {'test R2':>8}")
    lines.append(head)
    for r in res["summary"]:
        ante = "-" if r["n_antecedents"] is None else str(r["n_antecedents"])
        line = (f"{r['name']:<{width}} {r['n_terms']:>6} {r['n_rules']:>6} "
                f"{r['n_linear_terms']:>6} {ante:>11}")
        if has_test and columns:
            line += "".join(" " + format(r[key], fmt) for key, _, fmt in columns)
        elif has_test and classification:
            line += (f" {r['test_accuracy']:>9.4f} {r['test_log_loss']:>9.4f} "
                     f"{r['test_auc']:>7.4f}")
        elif has_test:
            line += f" {r['test_mse']:>10.4g} {r['test_r2']:>8.3f}"
        lines.append(line)
    lines.append(f"({budget_text(res['fire'], budget)}; test rows: "
                 f"{0 if not has_test else len(res['y_te'])})")
    return "\n".join(lines)


def budget_text(fire, budget):
    """What bounded FIRE's terms, as fitted: at most ``budget`` terms (rules
    and linear terms); a stable fit's rules come from its pool (kept whole
    beside linear terms, for the squared and logistic losses), with its
    linear terms on top."""
    from firecy.rules import linear_slopes

    if not getattr(fire, "stable", False):
        return f"budget: at most {budget} terms, each a rule or a linear term"
    found = linear_slopes(fire)
    n_linear = 0 if found is None else int(np.sum(np.any(found[1] != 0, axis=1)))
    pool = len(getattr(fire, "stable_columns_", ()))
    text = (f"budget: a stable pool of {_plural(pool, 'rule')} (at most {budget}), "
            f"{fire.n_rules_} kept")
    return text + (f", plus {_plural(n_linear, 'linear term')}" if n_linear else "")


def _selected_index(est):
    return int(np.argmin(np.abs(np.asarray(est.path_.lambdas) - est.lambda_)))


def save_pictures(res, out_dir, budget, names):
    """Save rules.png and path.png in ``out_dir``; return their paths."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("pictures skipped: matplotlib is not installed "
              "(pip install matplotlib, or pip install 'firecy[plot]')")
        return []
    from firecy.plotting import plot_path, plot_rules

    out_dir = prepare_dir(out_dir)
    fire, l1 = res["fire"], res["l1"]
    fig = plot_rules(fire, feature_names=names, X=res["X_tr"])
    rules_png = out_dir / "rules.png"
    fig.savefig(rules_png, dpi=120)
    fig = plot_path(fire, budget=budget, label=res["summary"][0]["name"],
                    selected=_selected_index(fire))
    if l1 is not None:
        plot_path(l1.path_, ax=fig.axes[0], label="L1 selection", selected=_selected_index(l1))
    fig.axes[0].set_title("validation error along the regularisation path")
    path_png = out_dir / "path.png"
    fig.savefig(path_png, dpi=120)
    return [rules_png, path_png]
