"""The risk card's picture and report (issue 47, item 9): the full score table,
no text overlapping another or leaving the figure, and a RiskCardClassifier
drawn and reported as itself."""
import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.text import Text  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402

from firecy import FIREClassifier  # noqa: E402
from firecy._display import risk_percent  # noqa: E402
from firecy.plotting import plot_risk_card  # noqa: E402
from firecy.risk import RiskCardClassifier, risk_card  # noqa: E402


def _cards():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    rng = np.random.default_rng(0)
    Xn = X.iloc[:, :6].copy()
    Xn["smoker"] = rng.integers(0, 2, len(X)).astype(float)
    Xn["visits"] = rng.integers(0, 8, len(X)).astype(float)
    yn = (rng.uniform(size=len(X)) < 0.3 + 0.3 * Xn["smoker"]).astype(int) | (y == 0)
    forest = RandomForestClassifier(30, max_depth=2, random_state=0)
    fire = FIREClassifier(forest, max_rules=4, linear_terms=False, random_state=0).fit(X, y)
    long_names = X.iloc[:, :8].rename(columns=lambda c: c.replace(" ", "_") * 3)
    return {
        "breast_cancer": RiskCardClassifier(random_state=0).fit(X, y),
        "noisy": RiskCardClassifier(random_state=1).fit(Xn, yn),
        "few_rules": RiskCardClassifier(max_rules=2, n_estimators=30,
                                        random_state=0).fit(X, y),
        "long_names": RiskCardClassifier(max_rules=10, max_points=3, n_estimators=60,
                                         random_state=0).fit(long_names, y),
        "risk_card": risk_card(fire, X, y),
    }


@pytest.fixture(scope="module")
def cards():
    return _cards()


def _texts(fig):
    """Every text the figure draws, with its window extent: the texts of each
    axes and of the figure, titles, axis labels, legend texts and the tick
    labels inside the axis limits (matplotlib keeps the others undrawn)."""
    fig.canvas.draw()   # an Agg canvas: the figure is drawn, its layout final
    renderer = fig.canvas.get_renderer()
    found = list(fig.texts)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        found += list(ax.texts) + [ax.title, ax._left_title, ax._right_title,
                                   ax.xaxis.label, ax.yaxis.label]
        if ax.get_legend() is not None:
            found += list(ax.get_legend().get_texts())
        if ax.axison:
            lo, hi = sorted(ax.get_xlim())
            found += [t for t in ax.get_xticklabels() if lo <= t.get_position()[0] <= hi]
            lo, hi = sorted(ax.get_ylim())
            found += [t for t in ax.get_yticklabels() if lo <= t.get_position()[1] <= hi]
    assert not set(found) - set(fig.findobj(Text))   # all are the figure's
    return [(t.get_text(), t.get_window_extent(renderer)) for t in found
            if t.get_visible() and t.get_text().strip()], fig.bbox


@pytest.mark.parametrize("name", ["breast_cancer", "noisy", "few_rules", "long_names",
                                  "risk_card"])
def test_no_text_overlaps_and_none_leaves_the_figure(cards, name):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    card = cards[name]
    fig = plot_risk_card(card)
    FigureCanvasAgg(fig)
    texts, figbox = _texts(fig)
    assert len(texts) > 20
    for i, (a, box) in enumerate(texts):
        assert (box.x0 >= figbox.x0 - 0.5 and box.x1 <= figbox.x1 + 0.5
                and box.y0 >= figbox.y0 - 0.5 and box.y1 <= figbox.y1 + 0.5), (a, box, figbox)
        for b, other in texts[i + 1:]:
            assert not box.overlaps(other), (a, b)


@pytest.mark.parametrize("name", ["breast_cancer", "noisy", "risk_card"])
def test_the_score_table_is_complete(cards, name):
    # every reachable score and its risk is drawn, beyond the old cut at 14
    card = getattr(cards[name], "card_", cards[name])
    fig = plot_risk_card(cards[name])
    left = [t.get_text() for t in fig.axes[0].texts]
    scores = [str(int(s)) for s in card.scores]
    risks = [risk_percent(r) for r in card.risk]
    # the cells in order: one SCORE row then one RISK row per chunk of 10
    cells = [t for t in left if t not in ("SCORE", "RISK")]
    drawn = cells[cells.index(next(c for c in cells if c.startswith("SCORE ="))) + 1:]
    expect = []
    for k in range(0, len(scores), 10):
        expect += scores[k:k + 10] + risks[k:k + 10]
    assert drawn == expect
    assert "..." not in left
    if name == "breast_cancer":
        assert len(scores) > 14   # the old picture stopped at 14 scores


def test_a_risk_card_classifier_is_drawn_and_reported(cards, tmp_path):
    from firecy.report import write_report

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    clf = cards["breast_cancer"]
    fig = plot_risk_card(clf)
    assert fig.axes[0].texts[2].get_text().replace("\n", " ") == clf.card_.rules[0]
    html = write_report(clf, tmp_path / "card.html", X, y).read_text(encoding="utf-8")
    assert "RiskCardClassifier: " in html and "Risk card" in html
    # the card reported is the classifier's own (its text, not rounded again)
    import html as html_lib

    assert html_lib.escape(clf.card_.to_text(), quote=False) in html
    with pytest.raises(TypeError, match="RiskCard"):
        plot_risk_card(clf.model_)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        plot_risk_card(RiskCardClassifier())
    with pytest.raises(ValueError, match="per_row"):
        plot_risk_card(clf, per_row=0)


def test_a_given_figure_gets_the_same_layout(cards):
    # a pyplot figure with a layout engine: the card's own layout replaces it,
    # so its texts sit where they sit in a standalone figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    given = Figure(layout="constrained")
    FigureCanvasAgg(given)
    fig = plot_risk_card(cards["noisy"], figure=given)
    assert fig is given
    alone = plot_risk_card(cards["noisy"])
    FigureCanvasAgg(alone)
    a, _ = _texts(given)
    b, _ = _texts(alone)
    assert [t for t, _ in a] == [t for t, _ in b]
    np.testing.assert_allclose([box.bounds for _, box in a], [box.bounds for _, box in b])
