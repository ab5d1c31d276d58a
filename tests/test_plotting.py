"""Pictures: rules as partial trees, and regularisation paths."""
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from firecy.ensembles import rule_ensemble_from_model  # noqa: E402
from firecy.plotting import LEAF_GID, NODE_GID, plot_path, plot_rules  # noqa: E402
from firecy.rules import count_antecedents, rules_table  # noqa: E402


@pytest.fixture(scope="module")
def ensemble():
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import RandomForestRegressor

    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    rf = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    return rule_ensemble_from_model(rf), X


def _texts(fig, gid):
    return [t for ax in fig.axes for t in ax.texts if t.get_gid() == gid]


def test_plot_rules_draws_shared_nodes_once(ensemble, tmp_path):
    ens, X = ensemble
    coef = np.zeros(ens.n_rules)
    coef[[0, 1, 2, 5]] = [1.0, -0.5, 0.2, 0.3]  # four leaves of tree 0
    coef[ens.block_ptr[3] + 2] = -1.0  # one leaf of tree 3
    coef[ens.block_ptr[7]] = 0.4  # one leaf of tree 7
    fig = plot_rules(ens, coef, X=X)
    nodes, leaves = _texts(fig, NODE_GID), _texts(fig, LEAF_GID)
    assert len(leaves) == 6
    assert len(nodes) == count_antecedents(ens, coef)
    assert len(nodes) < sum(len(ens.node_paths[j]) for j in np.flatnonzero(coef))
    # leaves are numbered as in the report and show the contribution
    tab = rules_table(ens, coef, as_frame=False)
    labels = sorted(t.get_text() for t in leaves)
    for rank, r in enumerate(tab, 1):
        assert any(lab.startswith(f"#{rank}\n{r['contribution']:+.3g}") for lab in labels)
    # a split node shows the feature name and its left test
    node_text = " ".join(t.get_text() for t in nodes)
    assert "<=" in node_text and any(name in node_text for name in X.columns)
    # yes/no edge labels: one per drawn edge
    edges = [t for t in fig.axes[0].texts if t.get_text() in ("yes", "no")]
    assert len(edges) == len(nodes) + len(leaves) - 3  # 3 trees, 3 roots
    out = tmp_path / "rules.png"
    fig.savefig(out)
    assert out.stat().st_size > 5000


def test_plot_rules_on_given_axes_and_empty(ensemble):
    from matplotlib.figure import Figure

    ens, _ = ensemble
    fig = Figure()
    ax = fig.add_subplot()
    coef = np.zeros(ens.n_rules)
    assert plot_rules(ens, coef, ax=ax) is fig
    assert not _texts(fig, NODE_GID) and not _texts(fig, LEAF_GID)
    coef[ens.block_ptr[2]:ens.block_ptr[3]] = 1.0  # a whole tree
    fig2 = plot_rules(ens, coef, max_width=4)
    n_leaves = ens.block_ptr[3] - ens.block_ptr[2]
    assert len(_texts(fig2, LEAF_GID)) == n_leaves
    assert len(_texts(fig2, NODE_GID)) == n_leaves - 1  # a full binary tree


def test_plot_path():
    path = {
        "lambdas": np.logspace(0, -2, 6),
        "n_rules": np.array([0, 2, 5, 9, 14, 20]),
        "objectives": np.linspace(5, 1, 6),
        "validation_error": np.array([10.0, 6.0, 4.0, 3.5, 3.6, np.inf]),
    }
    fig = plot_path(path, budget=14, label="FIRE", selected=3)
    ax = fig.axes[0]
    line = ax.lines[0]
    assert list(line.get_xdata()) == [0, 2, 5, 9, 14]  # inf left out
    # a bare path: what its counts count is not known
    assert ax.get_xlabel() == "number of terms"
    assert ax.get_ylabel() == "validation error"
    plot_path({"n_rules": [0, 3], "validation_error": [9.0, 7.0]}, ax=ax, budget=14,
              label="L1")
    assert len(ax.get_legend().get_texts()) == 2
    budget_lines = [ln for ln in ax.lines if getattr(ln, "_firecy_budget", False)]
    assert len(budget_lines) == 1
    # no validation error: the objective
    fig = plot_path({"n_rules": [0, 1], "objectives": [2.0, 1.0]})
    assert fig.axes[0].get_ylabel() == "objective"


def test_missing_matplotlib_message(monkeypatch, ensemble):
    ens, _ = ensemble
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_rules(ens, np.ones(ens.n_rules))


@pytest.fixture(scope="module")
def linear_fit():
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import RandomForestRegressor

    from firecy import FIRERegressor

    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    rf = RandomForestRegressor(n_estimators=60, max_depth=3, random_state=0)
    fire = FIRERegressor(rf, n_lambdas=12, cv=3, random_state=0).fit(X, y)
    assert fire.n_rules_ > 0 and np.count_nonzero(fire.linear_coef_) > 1
    return fire, X


def test_plot_rules_draws_each_linear_term_as_its_fitted_line(linear_fit):
    fire, X = linear_fit
    fig = plot_rules(fire, X=X)
    panels = fig.axes[0].child_axes
    terms, slopes = fire.linear_terms_, np.ravel(fire.linear_coef_)
    kept = np.flatnonzero(slopes)
    assert len(panels) == kept.size
    lines = {}
    for inset in panels:
        (line,) = [ln for ln in inset.get_lines() if ln.get_gid() == "firecy-linear"]
        lines[inset.get_gid()] = line
    # the picture's line of each term, read against the library's own
    # explanation of rows: at a row's (clipped) value the line's height is the
    # contribution explain() gives the term on that row
    table = fire.explain(X.iloc[:25])
    for t in kept:
        name = terms.names[t]
        line = lines[f"firecy-linear-{t}"]
        xs, ys = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert xs.tolist() == [terms.lower[t], terms.upper[t]]   # the clip range
        rows = table[table["term"] == f"linear_{terms.features[t]}"]
        x = np.clip(X[name].to_numpy()[:25], terms.lower[t], terms.upper[t])
        np.testing.assert_allclose(np.interp(x, xs, ys), rows["contribution"], rtol=1e-9,
                                   atol=1e-9)
    # one vertical scale, reaching the largest rule's contribution
    ylims = {inset.get_ylim() for inset in panels}
    assert len(ylims) == 1
    largest = float(np.max(np.abs(fire.coef_ * fire.ensemble_.leaf_values)))
    assert ylims.pop()[1] >= largest


def test_plot_path_says_what_it_counts(linear_fit):
    fire, _ = linear_fit
    path = fire.path_
    k = int(np.argmin(np.abs(path.lambdas - fire.lambda_)))
    # the path counts rules and linear terms: at the selected point, both
    assert path.n_rules[k] == fire.n_rules_ + np.count_nonzero(fire.linear_coef_)
    assert plot_path(fire).axes[0].get_xlabel() == "number of terms (rules and linear terms)"
    assert plot_path(path, linear_terms=False).axes[0].get_xlabel() == "number of rules"
    fig = plot_path(fire, label="FIRE")
    plot_path({"n_rules": [0, 3], "validation_error": [9.0, 7.0]}, ax=fig.axes[0])
    assert fig.axes[0].get_xlabel() == "number of terms (rules and linear terms)"


def test_plot_explanation_shows_the_rows_values(linear_fit):
    import re

    from firecy.plotting import plot_explanation

    fire, X = linear_fit
    row = X.iloc[3]
    fig = plot_explanation(fire, row, wrap=200)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()][1:-1]
    table = fire.explain(X.iloc[[3]])
    shown = table[~table["kind"].isin(["intercept", "baseline"])
                  & (table["contribution"] != 0)]
    assert len(labels) == len(shown) and "linear" in set(shown["kind"])
    centre = dict(zip(fire.linear_terms_.names, fire.linear_terms_.center))
    for label, (_, r) in zip(labels, shown.iterrows()):
        text, values = label.split("\n")
        assert text == r["text"]
        # "(row: bmi = 32.1; s5 = 4.8903)", each value the row's own (6 digits)
        found = dict(re.findall(r"([\w]+) = ([-0-9.e+]+)", values))
        assert set(found) == set(r["features"]), label
        for name, v in found.items():
            assert float(v) == pytest.approx(float(row[name]), rel=5e-6), label
        if r["kind"] == "linear":
            (name,) = r["features"]
            assert f"centre {centre[name]:.6g}" in values
            # slope * (clip(x) - centre): computable by hand from the picture
            t = fire.linear_terms_.names.index(name)
            value = float(re.search(r"= ([-0-9.e+]+), centre", values).group(1))
            value = np.clip(value, fire.linear_terms_.lower[t], fire.linear_terms_.upper[t])
            assert np.isclose(r["weight"] * (value - centre[name]), r["contribution"],
                              rtol=1e-3)
