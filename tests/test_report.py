"""The report in one file (issue 40, item 2).

The file must parse (html.parser, with every element closed where HTML
needs it; html5lib in strict mode when installed), load nothing (no
``src``/``href`` but data URIs and in-page anchors, no script, no external
style), hold the text of every kept rule and one picture per figure (each a
valid SVG), and survive the hostile strings of the export tests as feature
names, categories and class labels: the page's elements and attributes are
only the report's own, and each hostile string reads back as its escaped
text. Where a headless Chromium is installed, one test renders the report
and fails on any console message (an error, a blocked load).
"""
import base64
import shutil
import subprocess
import warnings
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from test_explain import CASES, _fit
from test_export_hostile import CODE_LIKE, STRINGS, categorical_frame, quiet_fit

from firecy import FIREClassifier, FIRERegressor
from firecy._escape import display_text
from firecy.report import report_html, write_report
from firecy.rules import rules_table
from firecy.report._html import text

matplotlib.use("Agg")

# the report's own markup: every element and attribute it writes
ELEMENTS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "nav",
            "ul", "li", "a", "section", "table", "caption", "thead", "tbody", "tr", "th",
            "td", "pre", "figure", "img", "figcaption", "strong", "div", "details", "summary", "br", "span"}
ATTRIBUTES = {"lang", "charset", "http-equiv", "content", "name", "id", "href", "class",
              "alt", "src"}
VOID = {"meta", "img", "br", "hr", "link", "input"}


class Page(HTMLParser):
    """The document's elements, attributes and text, with its nesting checked."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements, self.attributes, self.texts, self.stack = [], [], [], []
        self.problems, self.comments = [], []
        self.images = []

    def handle_starttag(self, tag, attrs):
        self.elements.append(tag)
        self.attributes.extend((tag, k, v) for k, v in attrs)
        if tag == "img":
            self.images.append(dict(attrs))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.texts.append(data)

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_pi(self, data):
        self.problems.append(f"processing instruction {data!r}")

    def unknown_decl(self, data):
        self.problems.append(f"declaration {data!r}")


def parse(document):
    page = Page()
    page.feed(document)
    page.close()
    assert not page.problems, page.problems[:5]
    assert not page.stack, f"unclosed: {page.stack}"
    try:
        import html5lib
    except ImportError:
        pass
    else:
        html5lib.HTMLParser(strict=True).parse(document)
    return page


def check_self_contained(document, page):
    """Nothing loads: only the report's elements, data-URI images, in-page links."""
    assert set(page.elements) <= ELEMENTS, set(page.elements) - ELEMENTS
    assert {a for _, a, _ in page.attributes} <= ATTRIBUTES
    for tag, attr, value in page.attributes:
        if attr == "src":
            assert tag == "img" and value.startswith("data:image/svg+xml;base64,"), value[:60]
        if attr == "href":
            assert tag == "a" and value.startswith("#"), value
    assert not page.comments
    head = document[:document.index("</head>")]
    assert "Content-Security-Policy" in head and "default-src 'none'" in head
    style = document[document.index("<style>"):document.index("</style>")]
    assert "url(" not in style and "@import" not in style
    document.encode("utf-8")
    assert "\x00" not in document


def pictures(page):
    """Each image decoded: a valid SVG document."""
    out = []
    for img in page.images:
        svg = base64.b64decode(img["src"].split(",", 1)[1], validate=True)
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")
        assert img.get("alt")
        out.append(root)
    return out


def page_text(page):
    return "".join(page.texts)


def _shuffled(X, y):
    order = np.random.default_rng(0).permutation(X.shape[0])
    return X.iloc[order].reset_index(drop=True), y[order]


@pytest.fixture(scope="module")
def reports():
    """One report per task, with test rows (and one without)."""
    out = {}
    for case in ["regression", "binary", "multiclass", "poisson", "cox"]:
        data, make = CASES[case]
        X, y = _shuffled(*data())
        half = X.shape[0] * 2 // 3
        est = _fit(make(), X.iloc[:half], y[:half])
        out[case] = (est, report_html(est, X.iloc[:half], y[:half], X_test=X.iloc[half:],
                                      y_test=y[half:]))
    est = out["binary"][0]
    X, y = CASES["binary"][0]()
    out["binary-train"] = (est, report_html(est, X, y))
    return out


# the pictures: rules, path, [calibration, [risk card]], three explained rows
N_PICTURES = {"regression": 5, "binary": 7, "multiclass": 6, "poisson": 5, "cox": 5,
              "binary-train": 7}


@pytest.mark.parametrize("case", list(N_PICTURES))
def test_the_report_parses_loads_nothing_and_holds_every_rule(reports, case):
    est, document = reports[case]
    page = parse(document)
    check_self_contained(document, page)
    assert len(pictures(page)) == N_PICTURES[case]
    assert page.elements.count("figure") == N_PICTURES[case]
    body = page_text(page)
    for rule in est.rules_["rule"]:
        assert display_text(rule) in body
    sections = [v for t, a, v in page.attributes if t == "section" and a == "id"]
    expected = ["summary", "rules", "pictures", "comparison"]
    if case.startswith(("binary", "multiclass")):
        expected.append("calibration")
    if case.startswith("binary"):
        expected.append("risk-card")
    assert sections == expected + ["rows"]
    # the report says which rows it scored on
    which = "training rows (no test rows" if case == "binary-train" else "test rows given"
    assert which in body


def test_the_comparison_is_the_models_own_scores(reports):
    est, document = reports["regression"]
    X, y = _shuffled(*CASES["regression"][0]())
    half = X.shape[0] * 2 // 3
    body = page_text(parse(document))
    mse_fire = np.mean((est.predict(X.iloc[half:]) - y[half:]) ** 2)
    mse_full = np.mean((est.estimator_.predict(X.iloc[half:]) - y[half:]) ** 2)
    assert f"{mse_fire:.4g}" in body and f"{mse_full:.4g}" in body


def test_explained_rows_sum_to_their_predictions(reports):
    est, document = reports["regression"]
    X, y = _shuffled(*CASES["regression"][0]())
    half = X.shape[0] * 2 // 3
    body = page_text(parse(document))
    pred = est.predict(X.iloc[half:])
    lowest, highest = int(np.argmin(pred)), int(np.argmax(pred))
    for i in (lowest, highest):
        assert f"Row {i} (position in the test rows)" in body
        assert f"prediction = {pred[i]:.6g}" in body


def test_write_report_writes_the_same_page(tmp_path):
    data, make = CASES["regression"]
    X, y = data()
    est = _fit(make(), X, y)
    path = write_report(est, tmp_path / "report.html", X, y, rows=[0, 5], title="My model")
    document = path.read_text(encoding="utf-8")
    page = parse(document)
    assert "My model" in page_text(page)
    assert len(pictures(page)) == 2 + 2
    assert "Row 0 " in page_text(page) and "Row 5 " in page_text(page)
    with pytest.raises(ValueError, match="outside"):
        report_html(est, X, y, rows=[10_000])
    with pytest.raises(ValueError, match="together"):
        report_html(est, X, y, X_test=X)


# ---------------------------------------------------------------------------
# hostile strings
# ---------------------------------------------------------------------------
def test_every_hostile_string_is_one_text_node():
    for s in STRINGS:
        page = parse(f"<p>{text(s)}</p>")
        assert page.elements == ["p"]
        assert "".join(page.texts) == display_text(s)


def check_hostile(est, document, strings):
    page = parse(document)
    check_self_contained(document, page)
    pictures(page)
    body = page_text(page)
    # (est.rules_ is a DataFrame: pandas' Arrow strings refuse a lone surrogate)
    for rule in rules_table(est, as_frame=False):
        assert display_text(rule["rule"]) in body
    shown = [s for s in strings if display_text(s) in body]
    return shown


def test_hostile_feature_names(tmp_path):
    names = [s for s in dict.fromkeys(STRINGS) if s][:40]
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(500, len(names))), columns=names)
    y = X.iloc[:, :6].sum(axis=1).to_numpy() + 0.1 * rng.normal(size=500)
    est = quiet_fit(FIRERegressor(RandomForestRegressor(40, max_depth=3, random_state=0),
                                  n_lambdas=10, cv=3, max_rules=14, random_state=0,
                                  linear_terms=False), X, y)
    document = write_report(est, tmp_path / "r.html", X, y).read_text(encoding="utf-8")
    shown = check_hostile(est, document, names)
    # the fit reached the names: many are in the rules and the explained rows
    assert len(shown) >= 6, len(shown)


def test_hostile_categories():
    pools = [STRINGS[k * 60:(k + 1) * 60] for k in range(3)]
    X, y = categorical_frame(pools, n=1500)
    model = quiet_fit(HistGradientBoostingRegressor(max_iter=20, max_depth=4, random_state=0,
                                                    categorical_features="from_dtype"), X, y)
    est = quiet_fit(FIRERegressor(model, penalty="l1", n_lambdas=10, max_rules=20,
                                  random_state=0, linear_terms=False), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        document = report_html(est, X, y, rows=list(range(6)))
    shown = check_hostile(est, document, [s for p in pools for s in p])
    assert len(shown) >= 10, len(shown)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_hostile_class_labels(n_classes):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(600, 3)), columns=["a", "b", "c"])
    score = X["a"].to_numpy() + 0.5 * X["b"].to_numpy() ** 2
    codes = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    labels = np.array(CODE_LIKE[:n_classes - 1] + ["\ud800<b>x</b>"], dtype=object)
    y = labels[codes]
    est = quiet_fit(FIREClassifier(RandomForestClassifier(20, max_depth=3, random_state=0),
                                   max_rules=8, n_lambdas=10, cv=3, random_state=0,
                                   linear_terms=False), X, y)
    document = report_html(est, X, y)
    shown = check_hostile(est, document, list(labels))
    assert len(shown) == n_classes


# ---------------------------------------------------------------------------
# a browser
# ---------------------------------------------------------------------------
BROWSERS = ["chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"]


def test_a_headless_browser_renders_it_without_a_console_message(reports, tmp_path):
    browser = next((b for b in BROWSERS if shutil.which(b)), None)
    if browser is None:
        pytest.skip("no headless Chromium (apt-get install chromium-headless-shell)")
    est, document = reports["binary"]
    path = tmp_path / "report.html"
    path.write_text(document, encoding="utf-8")
    shot = tmp_path / "shot.png"
    args = [shutil.which(browser), "--headless", "--no-sandbox", "--disable-gpu",
            "--enable-logging=stderr", "--v=0", f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1200,4000", f"--screenshot={shot}", path.as_uri()]
    res = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    console = [line for line in res.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console
    assert res.returncode == 0, res.stderr[-2000:]
    assert shot.exists() and shot.stat().st_size > 10_000
    # and the check itself sees a console message: a blocked load
    bad = tmp_path / "bad.html"
    bad.write_text(document.replace("</body>", '<img src="https://example.invalid/x.png">'
                                                "</body>"), encoding="utf-8")
    args[-1] = bad.as_uri()
    res = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert any(":CONSOLE" in line for line in res.stderr.splitlines())


# ---------------------------------------------------------------------------
# firecy extract --report
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("test_size", ["0.25", "0"])
def test_cli_extract_writes_the_report(tmp_path, capsys, test_size):
    from sklearn.datasets import load_breast_cancer

    from firecy.cli import main

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    frame = X.iloc[:, :8].assign(diagnosis=np.where(y == 1, "benign", "malignant"))
    # mean area is in the rules; its name is markup
    frame = frame.rename(columns={"mean area": "<i>area</i> & \"mean\""})
    csv = tmp_path / "data.csv"
    frame.to_csv(csv, index=False)
    report = tmp_path / "report.html"
    status = main(["extract", str(csv), "--target", "diagnosis", "--output",
                   str(tmp_path / "rules.json"), "--report", str(report), "--test-size",
                   test_size, "--n-trees", "20", "--n-lambdas", "8", "--cv", "3",
                   "--n-jobs", "1", "--no-progress", "--no-linear-terms"])
    assert status == 0
    assert f"saved {report}" in capsys.readouterr().out
    document = report.read_text(encoding="utf-8")
    page = parse(document)
    check_self_contained(document, page)
    assert len(pictures(page)) == 7
    body = page_text(page)
    if test_size == "0":
        assert "training rows (no test rows were given" in body
    else:
        assert "L1 selection, same budget" in body
        assert "test rows held out by --test-size 0.25" in body
    assert "<i>area</i>" not in document
    assert "&lt;i&gt;area&lt;/i&gt; &amp; &quot;mean&quot;" in document
    bad = tmp_path / "missing" / "r.html"
    assert main(["extract", str(csv), "--target", "diagnosis", "--report", str(bad)]) == 1
    assert "--report: the directory" in capsys.readouterr().err
