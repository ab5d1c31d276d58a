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
