"""The report's sections, each a function of the fitted model and the data."""
import numpy as np

from firecy._escape import display_value
from firecy.report._html import Html, details, figure, pair, pre, section, table, text
from firecy.report._evaluate import calibration, chosen_rows, comparison_rows, task_of

__all__ = ["summary_section", "rules_section", "pictures_section", "comparison_section",
           "calibration_section", "risk_card_section", "rows_section"]


def summary_section(est, X, names):
    """The summary of the fit: what was fitted, and ``est.summary()``."""
    from firecy.rules import raw_scale_name

    model = est.estimator_
    label = getattr(est, "classes_", [None])[-1]
    account = est.model_
    facts = table(None, [
        ["estimator", type(est).__name__],
        ["tree model", type(model).__name__],
        ["rules kept", account.n_rules],
        ["linear terms kept", account.n_linear_terms],
        *([["confirmatory terms (kept at every lambda, unpenalised)",
            account.n_confirmatory]] if account.n_confirmatory else []),
        ["trees holding a rule", account.n_trees],
        ["antecedents (split nodes to read)", account.n_antecedents],
        ["budget", account.budget_text() or "-"],
        ["constraints", account.constraints_text() or "-"],
        ["lambda", est.lambda_],
        ["other penalty parameters", ", ".join(f"{k} = {v}" for k, v in
                                               sorted(est.best_params_.items())) or "-"],
        ["rule depth", "leaves" if est.rule_depth_ is None else str(est.rule_depth_)],
        ["rule values", est.rule_values_],
        ["raw scale (what the rules add to)", raw_scale_name(est, label)],
        ["training rows described", "-" if X is None else int(X.shape[0])],
    ])
    # the summary's text repeats the rules table below: shown on request; the
    # path, which chose lambda, beside the facts
    return section("summary", "Summary", pair(facts, _path_figure(est)),
                   details("The summary as text (estimator.summary())",
                           pre(est.summary(X=X, feature_names=names))))


def _path_figure(est):
    """The validation error along the path, the selected point starred."""
    from firecy.plotting import plot_path

    fig_path = plot_path(est, budget=est.max_rules_, label="FIRE",
                         selected=_selected_index(est))
    fig_path.axes[0].set_title("validation error along the regularisation path")
    return figure(fig_path, caption=f"Validation error against the "
                                    f"{fig_path.axes[0].get_xlabel()} along the path; the "
                                    f"star marks the selected point.")


def rules_section(est, names):
    """The kept rules: weights, support, importance, conditions."""
    from firecy.rules import rules_table

    # the records, not the DataFrame: pandas with Arrow strings refuses a
    # label that is not UTF-8 (a lone surrogate); the page escapes it
    rules = rules_table(est, feature_names=names, as_frame=False)
    classes = "class" in rules[0] if rules else False
    intervals = any("lower" in r for r in rules)
    headers = (["class"] if classes else []) + [
        "#", "rule", "weight", "support", "importance", "contribution"] + (
        ["interval (held out)"] if intervals else []) + ["conditions", "tree"]
    rows = []
    for i, r in enumerate(rules, 1):
        shown = ([f"[{r['lower']:.4g}, {r['upper']:.4g}]" if r["lower"] == r["lower"] else "-"]
                 if intervals else [])
        rows.append(([r["class"]] if classes else []) + [
            i, r["rule"], r["weight"], r["support"], r["importance"], r["contribution"]]
            + shown + [r["n_conditions"], "confirmatory" if r.get("confirmatory")
                       else "-" if r["tree"] is None else r["tree"]])
    first = 1 + int(classes)
    numeric = {first - 1 if classes else 0} | set(range(first + 1, len(headers)))
    account = est.model_
    note = (f"{account.counts_text()}. support: the fraction of the training rows a rule "
            "holds on; contribution: weight \u00d7 the rule's value, what it adds to the "
            "raw score of a row it holds on (a linear term's: its slope per unit); "
            "importance: the standard deviation of the term over the training rows "
            "(|contribution| \u00d7 sqrt(support (1 \u2212 support)) for a rule); "
            "conditions: the rule's antecedents.")
    body = table(headers, rows, numeric=numeric) if rows else Html("<p>No rule was kept: "
                                                                  "the model is its intercept."
                                                                  "</p>")
    return section("rules", "Rules", body, note)


def _selected_index(est):
    return int(np.argmin(np.abs(np.asarray(est.path_.lambdas) - est.lambda_)))


def pictures_section(est, X, names):
    """The rules drawn as partial trees (the path is in the summary)."""
    from firecy.plotting import plot_rules

    fig_rules = plot_rules(est, feature_names=names, X=X)
    return section("pictures", "Pictures",
                   figure(fig_rules, "The kept rules as the partial trees they come from "
                                     "(#: rank in the rules table; the leaf's contribution)."))


def comparison_section(est, ev, rows=None, note=None):
    """The rule model against the full tree model (given rows: as they are)."""
    if rows is None:
        rows = comparison_rows(est, ev)
        note = ("No labelled rows were given: pass X and y (or X_test and y_test) to "
                "compare the scores." if ev is None else "Scores " + ev.sentence() + ".")
    skip = {"name", "note"}
    keys = [k for r in rows for k in r if k not in skip]
    keys = list(dict.fromkeys(keys))
    names = {"n_terms": "terms", "n_rules": "rules", "n_linear_terms": "linear terms",
             "n_antecedents": "antecedents", "test_mse": "test MSE",
             "test_r2": "test R\u00b2", "test_auc": "test AUC", "test_log_loss": "test log-loss",
             "test_d2": "test D\u00b2", "test_c_index": "test C-index"}
    headers = ["model"] + [names.get(k, k.replace("_", " ")) for k in keys]
    body = table(headers, [[r["name"]] + [r.get(k) for k in keys] for r in rows],
                 numeric=set(range(1, len(headers))))
    notes = [f"{r['name']}: {r['note']}" for r in rows if r.get("note")]
    return section("comparison", "Comparison with the full model", body, note, *notes)


def _reliability_figure(rel, what):
    from firecy.plotting import _require_matplotlib

    Figure = _require_matplotlib()
    fig = Figure(figsize=(4.2, 3.4), layout="constrained")
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="0.6", ls="--", lw=1, label="perfect calibration")
    w = np.asarray(rel["weight"], dtype=float)
    ax.scatter(rel["predicted"], rel["observed"], s=20 + 200 * w / max(w.max(), 1e-300),
               color="#c07a12", edgecolor="black", alpha=0.8, zorder=3,
               label="bins (area: rows)")
    ax.plot(rel["predicted"], rel["observed"], color="#c07a12", lw=1)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(what, parse_math=False)
    ax.set_ylabel("observed frequency")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def calibration_section(est, ev):
    """A classifier's reliability table and diagram on the evaluation rows."""
    if ev is None:
        return section("calibration", "Calibration",
                       "No labelled rows were given: pass X and y (or X_test and y_test).")
    rel, cal, what = calibration(est, ev)
    rows = [[int(g), w, p, o] for g, w, p, o in zip(rel["group"], rel["weight"],
                                                    rel["predicted"], rel["observed"])]
    body = table(["bin", "rows (weight)", "predicted", "observed"], rows,
                 numeric={0, 1, 2, 3})
    return section("calibration", "Calibration",
                   f"Ten equal-frequency bins of the {what}, {ev.sentence()}; CAL (mean "
                   f"|predicted \u2212 observed| over the rows) = {100 * cal:.2f}%.",
                   pair(body, figure(_reliability_figure(rel, what),
                                     "Reliability diagram: predicted against observed, "
                                     "per bin.")))


def risk_card_section(est, X, y, card=None):
    """The risk card of a binary classifier, built on the training rows (or
    ``card``, a RiskCardClassifier's own)."""
    from firecy.plotting import plot_risk_card
    from firecy.risk import risk_card

    if card is not None:
        return section("risk-card", "Risk card",
                       "The card of the RiskCardClassifier (its card_, built on its "
                       "training rows): add the points of the rules that hold; the table "
                       "reads the score's risk.",
                       pre(card.to_text()),
                       figure(plot_risk_card(card), "The risk card and its reliability on "
                                                    "its training rows."))
    if X is None or y is None:
        return section("risk-card", "Risk card", "The risk card is built on the training "
                                                 "rows: pass X and y.")
    if est.model_.n_linear_terms:
        # said for every reader: a Python user and a command-line user fit rules
        # only differently
        return section("risk-card", "Risk card",
                       "No risk card: a card gives integer points to rules that hold or "
                       "not, and this model has linear terms. Fit rules only for a card "
                       "(linear_terms=False in Python, --no-linear-terms on the command "
                       "line), or build one from the data with RiskCardClassifier "
                       "(firecy card on the command line).")
    try:
        card = risk_card(est, X, y)
    except ValueError as exc:
        return section("risk-card", "Risk card", f"No risk card: {exc}")
    return section("risk-card", "Risk card",
                   "The rules rounded to integer points (firecy.risk.risk_card, on the "
                   f"{int(X.shape[0])} training rows): add the points of the rules that "
                   "hold; the table reads the score's risk.",
                   pre(card.to_text()),
                   figure(plot_risk_card(card), "The risk card and its reliability on the "
                                                "training rows."))


def _values(features):
    return ", ".join(f"{k} = {display_value(v) if isinstance(v, str) else format(v, '.6g')}"
                     if isinstance(v, (str, float, int)) else f"{k} = {v!r}"
                     for k, v in features.items())


def _short_text(record):
    """A term as an explained row's table names it: a rule by its conditions, a
    linear term by its feature and slope (its clip range and centre are in the
    rules table, its value on the row beside it)."""
    if record["kind"] != "linear":
        return record["text"]
    name = next(iter(record["features"]), "")
    return f"{name}: linear, {record['weight']:+.4g} per unit"


def _row_block(est, X, i, label_of, target, names):
    """One explained row: its card (name, prediction, waterfall) and its terms
    that fire (for the rows' common table)."""
    from firecy.rules import raw_scale_name
    from firecy.plotting import plot_explanation
    from firecy.plotting import one_row

    row = X[i:i + 1] if not hasattr(X, "iloc") else X.iloc[i:i + 1]
    records = est.explain(row, fired_only=True, feature_names=names, as_frame=False)
    label = None
    if records and "class" in records[0]:
        labels = list(dict.fromkeys(r["class"] for r in records))
        label = labels[0] if len(labels) == 1 else est.predict(one_row(row))[0]
        label = label.item() if hasattr(label, "item") else label
        records = [r for r in records if r["class"] == label]
    total = float(sum(r["contribution"] for r in records))
    scale = raw_scale_name(est, label)
    facts = f"{scale} = {total:.6g}"
    if hasattr(est, "predict_proba"):
        proba = est.predict_proba(row)[0]
        facts += "; probabilities: " + ", ".join(
            f"{display_value(c)}: {p:.3f}" for c, p in zip(est.classes_, proba))
    if target is not None:
        facts += f"; observed: {target}"
    picture = figure(plot_explanation(est, row, label=label, feature_names=names),
                     f"{label_of}: its column of the table below, as a waterfall.",
                     shown_caption=False)
    card = Html(f'<div><h3>{text(label_of)}</h3>\n<p>{text(facts)}</p>\n{picture}</div>')
    return card, records, total


def _rows_table(blocks, names_of_rows):
    """One table for the explained rows: a line per term that fires on any of
    them, a column per row (the contribution, and the row's values it reads)."""
    order, texts = [], {}
    for _, records, _ in blocks:
        for r in records:
            # a forest's baseline is 0: no line of its own (the sums are unchanged)
            if r["kind"] == "baseline" and r["contribution"] == 0:
                continue
            key = (r["term"], r.get("class"))
            if key not in texts:
                order.append(key)
                texts[key] = _short_text(r)
    rows = []
    for key in order:
        line = [texts[key]]
        for _, records, _ in blocks:
            hit = next((r for r in records if (r["term"], r.get("class")) == key), None)
            if hit is None:
                line.append(Html("\u2013"))
            elif hit["features"]:
                line.append(Html(f'{text(format(hit["contribution"], ".6g"))}<br>'
                                 f'<span class="note">{text(_values(hit["features"]))}'
                                 "</span>"))
            else:
                line.append(hit["contribution"])
        rows.append(line)
    rows.append([Html("<strong>sum: the prediction</strong>")]
                + [total for _, _, total in blocks])
    return table(["term"] + list(names_of_rows), rows,
                 numeric=set(range(1, len(blocks) + 1)), digits=6)


def rows_section(est, X, y, which, rows=None, n_rows=3, names=None, row_names=None):
    """A few rows explained term by term (``row_names``: each row's name): the
    rows' waterfalls side by side, then one table of their terms."""
    if X is None:
        return section("rows", "Explained rows", "No rows were given to explain.")
    if row_names is not None and len(row_names) != X.shape[0]:
        raise ValueError(f"row_names has {len(row_names)} names for {X.shape[0]} rows")
    picks = chosen_rows(est, X, rows=rows, n_rows=n_rows)
    blocks, labels = [], []
    for i in picks:
        label_of = (f"Row {i} (position in the {which} rows)" if row_names is None
                    else str(row_names[i]))
        target = None
        if y is not None:
            yi = y[i] if not hasattr(y, "iloc") else y.iloc[i]
            target = (f"event {bool(yi['event'])}, time {float(yi['time']):.6g}"
                      if getattr(np.asarray(y).dtype, "names", None)
                      else display_value(yi.item() if hasattr(yi, "item") else yi))
        blocks.append(_row_block(est, X, i, label_of, target, names))
        labels.append(label_of)
    how = ("the rows asked for" if rows is not None else
           "the rows with the lowest and the highest prediction, and evenly between")
    parts = []
    if blocks:
        parts = [Html('<div class="cards">' + "".join(b[0] for b in blocks) + "</div>"),
                 _rows_table(blocks, labels)]
    return section("rows", "Explained rows",
                   f"Each prediction is the sum of its terms (estimator.explain): the "
                   f"intercept, the ensemble's baseline, the rules that hold on the row"
                   + (" and the linear terms" if est.model_.n_linear_terms else "")
                   + f". Shown: {how}, of the {which} rows. Each waterfall goes from the "
                     "intercept plus baseline to the prediction, a bar per term that adds "
                     "to it; the table gives each term's contribution to each row and, under "
                     "it, the row's values the term reads (\u2013: the rule does not hold).",
                   *parts)


def sections_for(est, X, y, ev, *, rows, n_rows, comparison, comparison_note, names,
                 row_names=None, card=None):
    """Every section of the report, in order: (anchor, title, html)."""
    out = [("summary", "Summary", summary_section(est, X, names)),
           ("rules", "Rules", rules_section(est, names)),
           ("pictures", "Pictures", pictures_section(est, X, names)),
           ("comparison", "Comparison with the full model",
            comparison_section(est, ev, comparison, comparison_note))]
    if task_of(est) == "classification":
        out.append(("calibration", "Calibration", calibration_section(est, ev)))
        if len(est.classes_) == 2:
            out.append(("risk-card", "Risk card", risk_card_section(est, X, y, card)))
    Xr, yr, which = (ev.X, ev.y, ev.which) if ev is not None else (X, y, "given")
    out.append(("rows", "Explained rows",
                rows_section(est, Xr, yr, which, rows, n_rows, names, row_names)))
    return out
