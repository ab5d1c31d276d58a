"""Hostile inputs (issue 47, item 17): each a right answer or an error naming the problem.

(a) feature names and labels holding NUL, control characters, ``]]>``,
``--``, markup or a lone surrogate: every picture's SVG is well-formed XML
(parsed by ElementTree), and so is each SVG of the HTML report; (b) a class
label holding a lone surrogate in ``rules_``; (c) ``explain`` on zero rows;
(d) ``stable=True`` on a constant target; (e) too few rows of positive
weight for the folds.
"""
import base64
import io
import re
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

from firecy import FIREClassifier, FIRERegressor
from firecy._escape import display_text
from firecy.rules import rules_table

HOSTILE_NAMES = ["a\x00b", "c\x1bd", "e]]>f", "g--h", "<script>alert(1)</script>",
                 "lone\udc80"]
EVENT = "ev\x00<!--]]>\udc80"


def _quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit()


def _steps(seed=0, n=400):
    """Six features, each of which the target steps on."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(HOSTILE_NAMES)))
    y = (X > 0.3).astype(float) @ np.arange(1.0, 7.0) + 0.1 * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def regressor():
    X, y = _steps()
    forest = RandomForestRegressor(n_estimators=20, max_depth=2, random_state=0)
    est = _quiet(lambda: FIRERegressor(forest, max_rules=20, n_lambdas=15, cv=3,
                                       random_state=0).fit(X, y))
    return est, X, y


@pytest.fixture(scope="module")
def classifier():
    # the hostile names as the columns of a frame (an object Index: pandas'
    # Arrow strings refuse the lone surrogate), and a hostile event label
    X, y = _steps(1)
    frame = pd.DataFrame(X, columns=pd.Index(HOSTILE_NAMES, dtype=object))
    labels = np.where(y > np.median(y), EVENT, "absent").astype(object)
    forest = RandomForestClassifier(n_estimators=20, max_depth=2, random_state=0)
    est = _quiet(lambda: FIREClassifier(forest, max_rules=8, n_lambdas=12, cv=3,
                                        linear_terms=False, random_state=0)
                 .fit(frame, labels))
    return est, frame, labels


def _svg_roots(fig):
    """``fig`` as SVG, text as paths (comments) and as ``<text>``: each parsed."""
    import matplotlib

    roots = []
    for fonttype in ("path", "none"):
        buf = io.BytesIO()
        with matplotlib.rc_context({"svg.fonttype": fonttype}), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Glyph .* missing from")
            fig.savefig(buf, format="svg")
        roots.append(ET.fromstring(buf.getvalue()))   # raises on ill-formed XML
    return roots


def _drawn_texts(fig):
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text)]


def _check_shown(fig, strings, at_least):
    """The hostile strings are drawn, escaped: the test reached them."""
    drawn = "\n".join(_drawn_texts(fig))
    shown = [s for s in strings if display_text(s) in drawn]
    assert len(shown) >= at_least, (shown, drawn[:500])


def test_the_rules_picture_is_well_formed_whatever_the_names(regressor):
    from firecy.plotting import plot_rules

    est, X, _ = regressor
    fig = plot_rules(est, feature_names=HOSTILE_NAMES, X=X)
    _svg_roots(fig)
    _check_shown(fig, HOSTILE_NAMES, 5)
    # a split node names its feature once, as the rule texts print it
    node_names = [t.split("\n")[0] for t in _drawn_texts(fig) if " <= " in t or "\n<=" in t]
    assert node_names and all(n.isprintable() for n in node_names)


def test_the_explanation_and_path_pictures_are_well_formed(regressor, classifier):
    from firecy.plotting import plot_explanation, plot_path

    est, X, _ = regressor
    for row in range(3):
        _svg_roots(plot_explanation(est, X[row], feature_names=HOSTILE_NAMES))
    clf, frame, _ = classifier
    fig = plot_explanation(clf, frame.iloc[0], label=EVENT)
    _svg_roots(fig)
    _check_shown(fig, [EVENT], 1)
    for name in HOSTILE_NAMES:
        fig = plot_path(est.path_, label=name, budget=5)
        _svg_roots(fig)
        _check_shown(fig, [name], 1)


def test_the_risk_card_picture_is_well_formed(classifier):
    from firecy.plotting import plot_risk_card
    from firecy.risk import risk_card

    clf, frame, labels = classifier
    fig = plot_risk_card(risk_card(clf, frame, labels))
    _svg_roots(fig)
    _check_shown(fig, HOSTILE_NAMES, 1)


def _report_svgs(page):
    data = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert data
    return [ET.fromstring(base64.b64decode(d, validate=True)) for d in data]


def test_the_report_embeds_well_formed_pictures(regressor, classifier):
    from firecy.report import report_html

    est, X, y = regressor
    clf, frame, labels = classifier
    for page in (report_html(est, X, y, feature_names=HOSTILE_NAMES),
                 _quiet(lambda: report_html(clf, frame, labels))):
        assert len(_report_svgs(page)) >= 3
        page.encode("utf-8")
        assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", page)
        # the names read as text: the only elements are the report's own
        assert "<script" not in page and "&lt;script&gt;" in page


# ---------------------------------------------------------------------------
# (b) a lone surrogate in a class label
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("labels", [["no", "\udc80"], ["a", "b\udc80", "\udc80"]])
def test_rules_holds_a_label_with_a_lone_surrogate(labels):
    X, y = _steps(2)
    codes = np.digitize(y, np.quantile(y, np.linspace(0, 1, len(labels) + 1)[1:-1]))
    target = np.array(labels, dtype=object)[codes]
    forest = RandomForestClassifier(n_estimators=20, max_depth=2, random_state=0)
    est = _quiet(lambda: FIREClassifier(forest, max_rules=8, n_lambdas=12, cv=3,
                                        random_state=0).fit(X, target))
    table = est.rules_
    records = rules_table(est, as_frame=False)
    assert len(table) == len(records) > 0
    # the labels themselves, not an escape of them
    assert table["class"].tolist() == [r["class"] for r in records]
    assert set(table["class"]) <= set(labels)
    assert any("\udc80" in c for c in table["class"])
    np.testing.assert_array_equal(table["weight"].to_numpy(), [r["weight"] for r in records])
    # printed, the label is escaped: the text is valid UTF-8
    text = repr(table)
    text.encode("utf-8")
    assert "\\udc80" in text


# ---------------------------------------------------------------------------
# (c) explain on zero rows
# ---------------------------------------------------------------------------
def test_explain_of_zero_rows_is_an_empty_table():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"colour": pd.Categorical(rng.choice(["red", "blue", "green"], 300)),
                          "x": rng.normal(size=300)})
    y = 2.0 * (frame["colour"] == "red").to_numpy() + frame["x"].to_numpy()
    model = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype",
                                          random_state=0)
    est = _quiet(lambda: FIRERegressor(model, random_state=0).fit(frame, y))
    full = est.explain(frame.iloc[:2])
    empty = est.explain(frame.iloc[:0])
    assert empty.shape == (0, full.shape[1])
    assert list(empty.columns) == list(full.columns)
    for column in ("row", "fires", "value", "weight", "contribution"):
        assert empty[column].dtype == full[column].dtype
    assert est.explain(frame.iloc[:0], as_frame=False) == []
    # an array of zero rows alike, and the columns are still checked
    X, y = _steps()
    numeric = _quiet(lambda: FIRERegressor(
        RandomForestRegressor(n_estimators=5, max_depth=2, random_state=0),
        random_state=0).fit(X, y))
    assert list(numeric.explain(X[:0]).columns) == list(numeric.explain(X[:1]).columns)
    with pytest.raises(ValueError, match="features"):
        numeric.explain(X[:0, :3])


# ---------------------------------------------------------------------------
# (d) stable=True on a constant target
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("linear_terms", [True, False])
def test_stable_fit_of_a_constant_target_is_its_intercept(linear_terms):
    X, _ = _steps()
    y = np.full(X.shape[0], 2.5)
    fits = [_quiet(lambda: FIRERegressor(
        RandomForestRegressor(n_estimators=5, max_depth=2, random_state=0),
        stable=stable, linear_terms=linear_terms, random_state=0).fit(X, y))
        for stable in (False, True)]
    plain, stable = fits
    assert stable.n_terms_ == plain.n_terms_ == 0
    assert stable.intercept_ == pytest.approx(2.5, rel=1e-12)
    np.testing.assert_allclose(stable.predict(X), plain.predict(X), rtol=1e-12)
    assert len(stable.rules_) == 0 and stable.stable_columns_.size == 0
    assert np.all(np.isnan(stable.path_.stability))


# ---------------------------------------------------------------------------
# (e) too few rows of positive weight for the folds
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("linear_terms", [True, False])
def test_one_row_of_positive_weight_names_sample_weight(linear_terms):
    X, y = _steps()
    forest = RandomForestRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    w = np.zeros(X.shape[0])
    w[7] = 1.0
    est = FIRERegressor(forest, cv=3, linear_terms=linear_terms, random_state=0)
    with pytest.raises(ValueError, match=r"sample_weight is positive on 1 row only, too few "
                                         r"for cv=3: the training rows of 1 of the 3 fold"):
        _quiet(lambda: est.fit(X, y, sample_weight=w))
    # a fixed lam needs no folds: the fit is the intercept
    fixed = _quiet(lambda: FIRERegressor(forest, lam=1.0, linear_terms=linear_terms,
                                         random_state=0).fit(X, y, sample_weight=w))
    np.testing.assert_allclose(fixed.predict(X[:3]), y[7])
