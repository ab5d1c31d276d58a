"""``plot_explanation``: one row's prediction as a waterfall of its terms."""
from __future__ import annotations

import textwrap

import numpy as np

from firecy._escape import display_text, display_value, printable_texts
from firecy.plotting._common import _require_matplotlib, _text_size, wrap_name

__all__ = ["plot_explanation", "one_row", "label_text"]

TERM_GID = "firecy-term"      # a term's bar (a rule or a linear term)
REST_GID = "firecy-rest"      # the terms folded into one bar
TOTAL_GID = "firecy-total"    # the start (intercept + baseline) and the prediction
INTERVAL_GID = "firecy-interval"  # a term's interval (after inference on held-out rows)
_ADDS, _SUBTRACTS = "#c0392b", "#2e6fb0"   # red adds, blue subtracts (as plot_rules)


def one_row(x):
    """``x`` as one row the estimators take: a 1-d array or a pandas Series
    becomes a row (a Series keeps its index as column names); a table must
    have exactly one row."""
    if hasattr(x, "to_frame") and getattr(x, "ndim", 2) == 1:   # pandas Series
        return x.to_frame().T.infer_objects()
    shape = getattr(x, "shape", None)
    if shape is None:
        x = np.asarray(x, dtype=object if any(isinstance(v, str) for v in x) else None)
        shape = x.shape
    if len(shape) == 1:
        return np.asarray(x).reshape(1, -1)
    if len(shape) != 2 or shape[0] != 1:
        raise ValueError(f"plot_explanation draws one row: x must be a 1-d array, a pandas "
                         f"Series or a table of one row, got shape {tuple(shape)}")
    return x


def label_text(text, wrap, max_chars):
    """A term's text for a label: printable, cut to ``max_chars`` characters
    (with an ellipsis) and wrapped at ``wrap`` characters a line."""
    text = display_text(text)
    if len(text) > max_chars:
        text = text[:max(max_chars - 1, 1)].rstrip() + "\u2026"
    wrap = max(int(wrap), 1)
    # at spaces; a word longer than a line (a long feature name) after one of
    # its "_ / - ." (wrap_name), never inside a number at a space's place
    lines = textwrap.wrap(text, wrap, break_long_words=False, break_on_hyphens=False) \
        or [text]
    return "\n".join(wrap_name(line, wrap) if len(line) > wrap else line for line in lines)


def _label_heights(Figure, labels):
    """The heights in inches of the bars' labels (8 points), as drawn."""
    probe = Figure()
    return [_text_size(probe.text(0, 0, s, fontsize=8, parse_math=False))[1] for s in labels]


def _linear_centres(estimator):
    """A linear term's centre by the name of its feature (what its value is
    measured from: the term adds ``slope * (clip(x) - centre)``)."""
    terms = getattr(estimator, "linear_terms_", None)
    if terms is None or not len(terms):
        return {}
    return {str(n): float(c) for n, c in zip(terms.names, terms.center)}


def _value(v):
    if isinstance(v, (float, np.floating)):
        return "missing" if np.isnan(v) else f"{float(v):.6g}"
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return str(int(v))
    return display_value(v)


def _values_text(record, centres):
    """The row's values of the features a term reads: ``(bmi = 32.1, s5 = 4.86)``;
    a linear term's with its centre, so that its bar can be computed by hand."""
    values = record.get("features") or {}
    parts = []
    for name, v in values.items():
        part = f"{display_text(str(name))} = {_value(v)}"
        if record["kind"] == "linear" and str(name) in centres:
            part += f", centre {centres[str(name)]:.6g}"
        parts.append(part)
    return f"(row: {'; '.join(parts)})" if parts else ""


def _term_accounts(estimator):
    """The fitted account's terms by name: each one's interval
    (after :meth:`inference` on held-out rows) and selection frequency (after
    :meth:`stability`), when measured."""
    model = getattr(estimator, "model_", None)
    found = {}
    for t in (model.terms if model is not None else []):
        found.setdefault(t.name, []).append(t)
    return found


def _account_of(accounts, name, label):
    """A term's account: the one of its name (a multi-class model's linear
    term has one per class: the drawn class's)."""
    candidates = accounts.get(name, [])
    if len(candidates) == 1:
        return candidates[0]
    return next((t for t in candidates if t.label == label), None)


def _contribution_interval(term, record):
    """The interval of a term's contribution on the row: a rule's interval is
    on the scale of its contribution where it holds (its 0/1 indicator's
    coefficient), a linear term's is a slope, times the row's value."""
    if term is None or term.interval is None:
        return None
    lo, hi = term.interval
    if record["kind"] == "linear":
        lo, hi = sorted((lo * float(record["value"]), hi * float(record["value"])))
    return lo, hi


def _frequency_text(term):
    if term is None or term.stability is None:
        return ""
    return f"kept in {100 * term.stability:.0f}% of half fits"


def _choose_output(estimator, records, X1, label):
    """The records of the output drawn, and its label."""
    if not records or "class" not in records[0]:
        return records, None
    labels = list(dict.fromkeys(r["class"] for r in records))
    if label is None:
        if len(labels) == 1:
            label = labels[0]
        else:
            label = estimator.predict(X1)[0]
            label = label.item() if hasattr(label, "item") else label
    if label not in labels:
        raise ValueError(f"label {display_value(label)} is not among the explained classes "
                         f"[{', '.join(display_value(v) for v in labels)}]")
    return [r for r in records if r["class"] == label], label


def plot_explanation(estimator, x, *, label=None, max_terms=12, wrap=48, max_chars=160,
                     precision=None, feature_names=None, ax=None, figsize=None,
                     figure=None):
    """Draw one row's prediction as a waterfall, from the intercept to the prediction.

    The first bar is the intercept plus the ensemble's baseline; then one bar
    per term with a nonzero contribution on the row (a rule that holds on
    it, or a linear term), largest first, from the running total to the
    running total plus the term's contribution (red adds, blue subtracts),
    labelled with the term's text and, under it, the row's values of the
    features the term reads (a linear term's with its centre: it adds
    ``slope * (clip(x, lower, upper) - centre)``). After
    :meth:`~firecy.FIRERegressor.inference` on held-out rows, a black whisker
    on a term's bar spans the interval of its contribution (from the refit on
    those rows: ``docs/inference.rst``); after
    :meth:`~firecy.FIRERegressor.stability`, the label says how often the
    rule was kept in half fits. The last bar is the
    prediction on the model's raw scale (the sum of :meth:`explain`'s
    contributions: the log-odds, a class's margin, the log-rate, the risk
    score or the prediction).

    Parameters
    ----------
    estimator : fitted FIRE estimator
    x : 1-d array-like, pandas Series, or a table (array, DataFrame, sparse) of one row
    label : class label, optional
        For a multi-class classifier, the class whose margin is drawn
        (default: the predicted class). A binary classifier draws the
        log-odds of ``classes_[1]``.
    max_terms : int, default=12
        The largest number of term bars; the smaller terms are folded into
        one bar, "k other rules" ("k other terms" with linear terms).
    wrap : int, default=48
        Characters per line of a term's label.
    max_chars : int, default=160
        A longer term text is cut there (the list of the row's values at
        twice that), with an ellipsis.
    precision : int, optional
        Round the thresholds in the labels to this many significant digits.
    feature_names : sequence of str, optional
        The names in the labels (default: the estimator's).
    ax : matplotlib Axes, optional
        Draw here (its figure is returned).
    figsize : (float, float), optional
    figure : matplotlib.figure.Figure, optional
        An empty figure to draw into (e.g. ``plt.figure()`` under pyplot);
        by default a standalone ``Figure``.

    Returns
    -------
    matplotlib.figure.Figure
        The term bars carry the gid ``"firecy-term"``, the folded bar
        ``"firecy-rest"``, the start and prediction bars ``"firecy-total"``,
        the intervals' whiskers ``"firecy-interval"``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> from firecy.plotting import plot_explanation
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
    >>> fig = plot_explanation(fire, [3.0, 20.0])
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['intercept + baseline', 'x0 > 2.0 and x1 > 15.0\\n(row: x0 = 3; x1 = 20)', 'prediction']
    """
    Figure = _require_matplotlib()
    from firecy.rules import raw_scale_name

    if int(max_terms) < 1:
        raise ValueError(f"max_terms must be at least 1, got {max_terms}")
    X1 = one_row(x)
    records = estimator.explain(X1, precision=precision, feature_names=feature_names,
                                as_frame=False)
    records, label = _choose_output(estimator, records, X1, label)
    contrib = np.array([r["contribution"] for r in records], dtype=np.float64)
    constant = np.array([r["kind"] in ("intercept", "baseline") for r in records], dtype=bool)
    start = float(contrib[constant].sum())
    fired = ~constant & (contrib != 0)
    centres = _linear_centres(estimator)
    accounts = _term_accounts(estimator)
    fired_records = [r for r, f in zip(records, fired) if f]
    found = [_account_of(accounts, r["term"], label) for r in fired_records]
    texts = [(r["text"], _values_text(r, centres), _frequency_text(t))
             for r, t in zip(fired_records, found)]
    steps = contrib[fired]                 # already largest |contribution| first
    shown = min(int(max_terms), steps.size)
    rest = steps[shown:]
    intervals = [_contribution_interval(t, r) for r, t in zip(fired_records[:shown],
                                                              found[:shown])]
    scale = raw_scale_name(estimator, label)

    labels = ["intercept + baseline"] + [
        label_text(t, wrap, max_chars) + ("\n" + label_text(v, wrap, 2 * max_chars) if v else "")
        + ("\n" + f if f else "")
        for t, v, f in texts[:shown]]
    has_linear = any(r["kind"] == "linear" for r in records)
    if rest.size:
        labels.append(f"{rest.size} other {'terms' if has_linear else 'rules'}")
    labels.append("prediction")
    n_bars = len(labels)
    if figsize is None:
        # bars one apart: neighbouring labels (centred on their bars) must
        # not meet, so a bar's pitch is the largest mean of two neighbours'
        # heights (measured as drawn)
        heights = _label_heights(Figure, labels)
        pitch = max((a + b) / 2 for a, b in zip(heights[:-1], heights[1:])) + 0.15
        figsize = (9.0, max(2.4, n_bars * max(pitch, 0.3) + 1.1))
    own_figure = ax is None
    if ax is not None:
        fig = ax.figure
    else:
        if figure is None:
            fig = Figure(figsize=figsize, layout="constrained")
        else:
            fig = figure
            fig.set_size_inches(figsize)
            fig.set_layout_engine("constrained")
        ax = fig.add_subplot()

    total = start
    ax.barh(0, start, left=0.0, color="0.55", height=0.6, gid=TOTAL_GID)
    ends = [start]
    bars = [(float(c), TERM_GID) for c in steps[:shown]]
    if rest.size:
        bars.append((float(rest.sum()), REST_GID))
    for i, (c, gid) in enumerate(bars, 1):
        ax.barh(i, c, left=total, height=0.6, color=_ADDS if c > 0 else _SUBTRACTS,
                alpha=0.55 if gid == REST_GID else 0.9, gid=gid)
        right = max(total, total + c)
        ax.plot([total, total], [i - 1.3, i + 0.3], color="0.6", lw=0.7, ls=":")
        if i <= len(intervals) and intervals[i - 1] is not None:
            lo_c, hi_c = intervals[i - 1]
            ax.plot([total + lo_c, total + hi_c], [i, i], color="black", lw=1.2,
                    marker="|", markersize=7, gid=INTERVAL_GID)
            ends += [total + lo_c, total + hi_c]
            right = max(right, total + hi_c)
        # the value right of the bar and of its whisker
        ax.annotate(f"{c:+.4g}", (right, i), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=8)
        total += c
        ends.append(total)
    # the prediction is the sum of every term (the folded ones included)
    final = float(contrib.sum())
    ax.barh(n_bars - 1, final, left=0.0, color="0.25", height=0.6, gid=TOTAL_GID)
    ax.plot([total, total], [n_bars - 2 - 0.3, n_bars - 1 + 0.3], color="0.6", lw=0.7, ls=":")
    ax.annotate(f"{final:.4g}", (max(final, 0.0), n_bars - 1), xytext=(4, 0),
                textcoords="offset points", va="center", fontsize=8, fontweight="bold")
    ax.annotate(f"{start:.4g}", (max(start, 0.0), 0), xytext=(4, 0),
                textcoords="offset points", va="center", fontsize=8)
    ax.axvline(0.0, color="0.3", lw=0.8)
    ax.set_yticks(range(n_bars))
    # parse_math=False: a "$" in a feature name or a category prints as itself
    ax.set_yticklabels(labels, fontsize=8, parse_math=False)
    ax.invert_yaxis()
    lo, hi = min(ends + [0.0, final]), max(ends + [0.0, final])
    pad = 0.12 * (hi - lo) if hi > lo else 1.0
    ax.set_xlim(lo - 0.02 * (hi - lo if hi > lo else 1.0), hi + pad)
    ax.set_xlabel(scale, parse_math=False)
    caption = (f"{scale}: {start:.4g} (intercept + baseline) "
               f"{'+' if final >= start else '-'} {abs(final - start):.4g} "
               f"({'rules and linear terms' if has_linear else 'rules'}) = {final:.4g}")
    if any(v is not None for v in intervals):
        level = getattr(estimator, "_interval_level", 0.95)
        caption += (f"; whiskers: {100 * level:.4g}% intervals of the contributions, "
                    "refitted on held-out rows")
    if own_figure:
        # over the whole width (the labels' too), at most 0.08 inch a character
        chars = max(30, int(fig.get_size_inches()[0] / 0.08))
        fig.suptitle(textwrap.fill(caption, chars), fontsize=9, x=0.01, ha="left",
                     parse_math=False)
    else:
        ax.set_title(textwrap.fill(caption, 60), fontsize=9, loc="left", parse_math=False)
    ax.grid(True, axis="x", alpha=0.3)
    return printable_texts(fig)
