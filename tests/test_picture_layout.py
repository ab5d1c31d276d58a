"""Pictures a person can read: no text overlaps another, none leaves the figure.

Each picture (the rules, the path, one row's explanation) is drawn on several
data sets; every Text matplotlib draws (its box included) is recorded with
the extent it was drawn at, then compared pairwise (``Bbox.overlaps``) and
with the figure's box.
"""
import functools
from contextlib import contextmanager

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from firecy import (FIREClassifier, FIREPoissonRegressor, FIRERegressor,  # noqa: E402
                    FIRESurvivalRegressor)
from firecy.plotting import plot_explanation, plot_path, plot_rules  # noqa: E402

TOLERANCE = 0.5   # pixels: rounding of the extents


@contextmanager
def _recording():
    """Every visible, non-empty Text drawn meanwhile, with its drawn extent."""
    import matplotlib.text as mtext

    drawn, draw = [], mtext.Text.draw

    def recorded(self, renderer):
        draw(self, renderer)
        if self.get_visible() and self.get_text().strip():
            ext = self.get_window_extent(renderer)
            patch = self.get_bbox_patch()
            if patch is not None:
                ext = Bbox.union([ext, patch.get_window_extent(renderer)])
            drawn.append((self.get_text(), ext))

    mtext.Text.draw = recorded
    try:
        yield drawn
    finally:
        mtext.Text.draw = draw


def layout_problems(fig, dpis=(72, 100)):
    """The texts of ``fig`` that overlap another or leave the figure, drawn at
    each of ``dpis`` (text widths change with the dpi: Agg hints the glyphs;
    72 dpi is the widest measured, 100 the default)."""
    if type(fig.canvas).__name__ == "FigureCanvasBase":
        FigureCanvasAgg(fig)
    out, own_dpi = [], fig.dpi
    for dpi in dpis:
        fig.set_dpi(dpi)
        out += [f"at {dpi} dpi: {p}" for p in _problems_at(fig)]
    fig.set_dpi(own_dpi)
    return out


def _problems_at(fig):
    with _recording() as drawn:
        fig.canvas.draw()
    assert drawn, "nothing drawn"
    box, out = fig.bbox, []
    for text, ext in drawn:
        if (ext.x0 < box.x0 - TOLERANCE or ext.y0 < box.y0 - TOLERANCE
                or ext.x1 > box.x1 + TOLERANCE or ext.y1 > box.y1 + TOLERANCE):
            out.append(f"{text!r} leaves the figure")
    for i, (a, ea) in enumerate(drawn):
        for b, eb in drawn[i + 1:]:
            # shrunk by the tolerance: touching edges are not an overlap
            if ea.padded(-TOLERANCE).overlaps(eb.padded(-TOLERANCE)):
                out.append(f"{a!r} overlaps {b!r}")
    return out


def _forest(kind, seed=0):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    cls = RandomForestClassifier if kind == "classifier" else RandomForestRegressor
    return cls(n_estimators=60, max_depth=3, random_state=seed)


def _diabetes():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    return X, y


def _friedman_long_names():
    import pandas as pd
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=300, n_features=6, noise=0.5, random_state=0)
    names = [f"measurement_{i}_of_the_instrument_in_the_north_building_(mV)" for i in range(6)]
    names[3] = "price in $US of $x$ (a mathtext-looking name)"
    return pd.DataFrame(X, columns=names), y


@functools.lru_cache(maxsize=None)
def _fit(name):
    from sklearn import datasets

    small = dict(n_lambdas=12, cv=3, random_state=0)
    if name == "diabetes, linear terms":
        X, y = _diabetes()
        return FIRERegressor(_forest("regressor"), **small).fit(X, y), X
    if name == "diabetes, rules only":
        X, y = _diabetes()
        return FIRERegressor(_forest("regressor"), linear_terms=False, **small).fit(X, y), X
    if name == "breast cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True, as_frame=True)
        return FIREClassifier(_forest("classifier"), **small).fit(X, y), X
    if name == "wine, three classes":
        X, y = datasets.load_wine(return_X_y=True, as_frame=True)
        # with linear terms this fit keeps no rule: rules only, three classes of trees
        return FIREClassifier(_forest("classifier"), linear_terms=False,
                              **small).fit(X, y), X
    if name == "linnerud":      # 20 rows: the budget, not cross-validation
        X, Y = datasets.load_linnerud(return_X_y=True, as_frame=True)
        return FIRERegressor(_forest("regressor"), max_rules=6, selection="budget",
                             n_lambdas=12, random_state=0).fit(X, Y.iloc[:, 0]), X
    if name == "friedman1, long names":
        X, y = _friedman_long_names()
        return FIRERegressor(_forest("regressor"), **small).fit(X, y), X
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    if name == "poisson":
        y = rng.poisson(np.exp(0.8 * (X[:, 0] > 0) + 0.3 * X[:, 1]))
        return FIREPoissonRegressor(_forest("regressor"), **small).fit(X, y), X
    assert name == "survival"
    time = rng.exponential(np.exp(-1.0 * (X[:, 0] > 0) - 0.4 * X[:, 2]))
    y = np.array(list(zip(rng.uniform(size=300) < 0.8, time)),
                 dtype=[("event", bool), ("time", float)])
    return FIRESurvivalRegressor(_forest("regressor"), **small).fit(X, y), X


FITS = ["diabetes, linear terms", "diabetes, rules only", "breast cancer",
        "wine, three classes", "linnerud", "friedman1, long names", "poisson", "survival"]


@pytest.fixture(scope="module", params=FITS)
def fitted(request):
    return request.param, *_fit(request.param)


def _check(fig):
    problems = layout_problems(fig)
    assert not problems, "\n".join(problems[:12])


def test_rules_picture_is_readable(fitted):
    name, fire, X = fitted
    _check(plot_rules(fire, X=X))


def test_path_picture_is_readable(fitted):
    name, fire, X = fitted
    _check(plot_path(fire, budget=getattr(fire, "max_rules_", None), label="FIRE"))


def test_explanation_picture_is_readable(fitted):
    name, fire, X = fitted
    row = X.iloc[0] if hasattr(X, "iloc") else X[0]
    _check(plot_explanation(fire, row))


@pytest.mark.parametrize("size", [(13, 6), (7, 4)])
@pytest.mark.parametrize("name", ["diabetes, linear terms", "wine, three classes"])
def test_rules_picture_fits_a_given_axes(name, size):
    """On a user's axes (the gallery's 13 x 6 inches, or a small one) the fonts
    shrink until the picture fits."""
    from matplotlib.figure import Figure

    from firecy.plotting import LEAF_GID, NODE_GID
    from firecy.rules import count_antecedents

    fire, X = _fit(name)
    fig = Figure(figsize=size, layout="constrained")
    assert plot_rules(fire, X=X, ax=fig.add_subplot()) is fig
    ax = fig.axes[0]
    # everything drawn once, nothing lost on the way to the smaller fonts
    gids = [t.get_gid() for t in ax.texts]
    assert gids.count(LEAF_GID) == fire.n_rules_ > 0
    assert gids.count(NODE_GID) == count_antecedents(fire.ensemble_, fire.coef_)
    assert len(ax.child_axes) == np.count_nonzero(fire.linear_coef_)
    _check(fig)


def test_the_checker_sees_an_overlap_and_a_clipped_text():
    """The check can fail: two texts at one place, one past the right edge."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.text(0.5, 0.5, "one label", ha="center")
    ax.text(0.5, 0.5, "another", ha="center")
    ax.text(0.95, 0.1, "far beyond the right edge of the figure")
    found = layout_problems(fig, dpis=(100,))
    assert "at 100 dpi: 'one label' overlaps 'another'" in found
    assert "at 100 dpi: 'far beyond the right edge of the figure' leaves the figure" in found
    assert len(found) == 2


def test_a_stable_paths_picture_is_readable():
    """The stability axis beside the error (a stable fit's path), two paths on one axes."""
    path = {"n_rules": np.array([0, 2, 4, 7, 10, 14]),
            "validation_error": np.array([9.0, 6.0, 4.5, 4.0, 3.9, 3.95]),
            "stability": np.array([1.0, 0.9, 0.8, 0.7, 0.6, 0.55]), "selected": 4}
    fig = plot_path(path, budget=14, label="FIRE, stable", linear_terms=True)
    plot_path({"n_rules": [0, 3, 9], "validation_error": [9.5, 7.0, 5.0]}, ax=fig.axes[0],
              label="L1 selection")
    _check(fig)
