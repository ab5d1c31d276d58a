"""``plot_rules``: the kept rules drawn as the partial trees they came from."""
from __future__ import annotations

import textwrap

import numpy as np

from firecy._escape import display_text, printable_texts
from firecy.plotting._common import _require_matplotlib
from firecy.rules import ALL_ROWS, format_conditions
from firecy.rules._inputs import (
    block_label,
    check_coef,
    feature_names_of,
    is_estimator,
    leaf_support,
    model_tree_of,
    tree_of,
    unpack,
)
from firecy.rules._linear import linear_rows

__all__ = ["plot_rules"]

NODE_GID = "firecy-node"
LEAF_GID = "firecy-leaf"
LINEAR_GID = "firecy-linear"

_NODE_COLOR = "#fdd9a0"  # antecedents (split nodes), as in the paper's figure
_NODE_EDGE = "#c07a12"


class _PartialTree:
    """The kept leaves of one tree and the split nodes on their paths."""

    def __init__(self, ensemble, t, kept_cols):
        lo, hi = int(ensemble.block_ptr[t]), int(ensemble.block_ptr[t + 1])
        self.tree = t
        # first (leftmost) leaf under every internal node of the whole tree,
        # and the condition that sends a row to that node's left child
        first_leaf, left_cond, depth = {}, {}, {}
        for j in range(lo, hi):
            path = [int(n) for n in ensemble.node_paths[j]]
            conds = ensemble.rules[j]
            for k, n in enumerate(path):
                if n not in first_leaf:
                    first_leaf[n] = j
                    left_cond[n] = conds[k] if k < len(conds) else None
                    depth[n] = k
        self.leaves = sorted(int(j) for j in kept_cols)
        self.paths = {j: [int(n) for n in ensemble.node_paths[j]] for j in self.leaves}
        nodes = sorted({n for j in self.leaves for n in self.paths[j]},
                       key=lambda n: (depth[n], first_leaf[n]))
        self.nodes = nodes
        self.first_leaf = first_leaf
        self.left_cond = left_cond
        self.depth = depth
        self.height = max((len(p) for p in self.paths.values()), default=0)

    def width(self):
        return len(self.leaves)

    def layout(self, x0):
        """x, y of every leaf (key ("leaf", j)) and node (key ("node", n))."""
        pos = {}
        for i, j in enumerate(self.leaves):
            pos[("leaf", j)] = (x0 + i, -float(len(self.paths[j])))
        for n in self.nodes:
            xs = [pos[("leaf", j)][0] for j in self.leaves if n in self.paths[j]]
            pos[("node", n)] = ((min(xs) + max(xs)) / 2.0, -float(self.depth[n]))
        return pos

    def edges(self):
        """(parent key, child key, is_left) for every drawn edge."""
        out = set()
        for j in self.leaves:
            path = self.paths[j]
            keys = [("node", n) for n in path] + [("leaf", j)]
            for a, b in zip(keys[:-1], keys[1:]):
                parent = a[1]
                child_first = j if b[0] == "leaf" else self.first_leaf[b[1]]
                out.add((a, b, child_first == self.first_leaf[parent]))
        return sorted(out, key=str)


def _node_label(cond, names, wrap):
    if cond is None:
        return "?"
    text = format_conditions([cond], names, simplify=False)
    # the name as format_conditions prints it (escaped), never raw
    name = display_text(names[cond.feature]) if names is not None else f"x{cond.feature}"
    rest = text[len(name):].strip() if text.startswith(name) else text
    name = "\n".join(textwrap.wrap(name, wrap)) or name
    return f"{name}\n{rest}"


def plot_rules(ensemble, coef=None, feature_names=None, ax=None, *, X=None,
               sample_weight=None, max_width=12, wrap=18, fontsize=8, title=True):
    """Draw the kept rules as the partial trees they come from.

    For every tree with a kept leaf, the split nodes on the kept leaves' paths
    (the antecedents, drawn once even when several rules share them) and the
    kept leaves, each labelled with its rank in :func:`firecy.rules.rules_report`
    and its contribution ``weight * leaf_value``.  A split node shows the
    test that sends rows to its left ("yes") branch; leaves are coloured by
    the sign and size of their contribution (red adds, blue subtracts).  This
    is the picture of Figure 10 of the FIRE paper.

    Parameters
    ----------
    ensemble : RuleEnsemble or fitted FIRE estimator
    coef : array-like of shape (n_rules,), optional
        Rule weights (the estimator's ``coef_`` by default).
    feature_names : sequence of str, optional
    ax : matplotlib Axes, optional
        Draw here; a new figure sized to the trees otherwise.
    X, sample_weight : optional
        Data on which to print each rule's support under its contribution.
    max_width : int, default=12
        Leaves per row of trees before the trees wrap onto a new row.
    wrap : int, default=18
        Wrap feature names longer than this many characters.
    fontsize : float, default=8
    title : bool or str, default=True
        A title with the numbers of rules, trees and antecedents (or the
        given text).

    Returns
    -------
    matplotlib.figure.Figure
        Split-node texts carry the gid ``"firecy-node"``, leaf texts
        ``"firecy-leaf"``. An estimator's kept linear terms
        (``linear_terms=True``) are drawn below the trees as lines, rising
        or falling with the slope's sign, labelled (gid ``"firecy-linear"``)
        with their rank after the rules' in
        :func:`firecy.rules.rules_report`, slope per unit and clip range.

    Examples
    --------
    A FIRE model that keeps two leaves of a depth-2 tree: two split nodes
    (the root and its right child) and two leaves are drawn.

    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> from firecy.plotting import plot_rules
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
    >>> fig = plot_rules(fire, feature_names=["age", "dose"])
    >>> def texts(gid):
    ...     return sorted(t.get_text() for t in fig.findobj(
    ...         lambda artist: hasattr(artist, "get_gid") and artist.get_gid() == gid))
    >>> texts("firecy-node")
    ['age\\n<= 2.0', 'dose\\n<= 15.0']
    >>> texts("firecy-leaf")     # rank in rules_report, and contribution
    ['#1\\n+5.5', '#2\\n+3.5']
    """
    Figure = _require_matplotlib()
    import matplotlib as mpl

    source = ensemble if is_estimator(ensemble) and coef is None else None
    ensemble, coef, _, est_names = unpack(ensemble, coef)
    if feature_names is None:
        feature_names = est_names
    names = feature_names_of(ensemble, feature_names)
    coef = check_coef(ensemble, coef)
    linear = [r for _, r in linear_rows(source, names, len(ensemble.leaf_values))] \
        if source is not None else []
    kept = np.flatnonzero(coef)
    contrib = coef * np.asarray(ensemble.leaf_values, dtype=np.float64)
    order = sorted(kept.tolist(), key=lambda j: (-abs(contrib[j]), j))
    rank = {j: i + 1 for i, j in enumerate(order)}
    support = leaf_support(ensemble, X, sample_weight, columns=kept) if X is not None else None

    trees = {}
    for j, t in zip(kept.tolist(), tree_of(ensemble, kept).tolist()):
        trees.setdefault(t, []).append(j)
    parts = [_PartialTree(ensemble, t, cols) for t, cols in sorted(trees.items())]

    # pack trees into rows of about equal width, at most max_width leaves each
    total = sum(p.width() for p in parts) + 0.5 * max(len(parts) - 1, 0)
    n_rows = max(1, int(np.ceil(total / max(max_width, 1))))
    target = total / n_rows
    rows, cur, cur_w = [], [], 0.0
    for p in parts:
        if cur and (cur_w + p.width() > max_width or cur_w + p.width() / 2 > target):
            rows.append(cur)
            cur, cur_w = [], 0.0
        cur.append(p)
        cur_w += p.width() + 0.5
    if cur:
        rows.append(cur)
    row_w = max([sum(p.width() for p in r) + 0.5 * (len(r) - 1) for r in rows] or [1])
    row_h = [max(p.height for p in r) + 1.6 for r in rows] or [1.0]

    if ax is None:
        fig = Figure(figsize=(max(4.0, 1.45 * row_w + 0.6), max(2.0, sum(row_h) + 0.1)),
                     layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    ax.set_axis_off()

    vmax = float(np.max(np.abs(contrib[kept]))) if kept.size else 1.0
    cmap = mpl.colormaps["RdBu_r"]
    bbox_node = dict(boxstyle="round,pad=0.35", fc=_NODE_COLOR, ec=_NODE_EDGE, lw=0.8)
    y_off = 0.0
    for r, h in zip(rows, row_h):
        x0 = 0.0
        for p in r:
            pos = p.layout(x0)
            pos = {k: (x, y + y_off) for k, (x, y) in pos.items()}
            for a, b, is_left in p.edges():
                (xa, ya), (xb, yb) = pos[a], pos[b]
                ax.plot([xa, xb], [ya, yb], color="0.45", lw=0.9, zorder=1)
                ax.text((xa + xb) / 2, (ya + yb) / 2, "yes" if is_left else "no",
                        fontsize=fontsize - 1.5, color="0.3", style="italic",
                        ha="center", va="center", zorder=2,
                        bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none"))
            for n in p.nodes:
                x, y = pos[("node", n)]
                # parse_math=False: a "$" in a feature name or a category
                # prints as itself, never as matplotlib's mathtext
                ax.text(x, y, _node_label(p.left_cond[n], names, wrap), ha="center",
                        va="center", fontsize=fontsize, bbox=bbox_node, zorder=3,
                        gid=NODE_GID, parse_math=False)
            for j in p.leaves:
                x, y = pos[("leaf", j)]
                c = contrib[j]
                fc = cmap(0.5 + 0.45 * c / vmax) if vmax > 0 else cmap(0.5)
                label = f"#{rank[j]}\n{c:+.3g}"
                if not p.paths[j]:
                    label = f"{ALL_ROWS}\n" + label
                if support is not None:
                    label += f"\n{100 * support[j]:.0f}% rows"
                dark = abs(c) > 0.6 * vmax
                ax.text(x, y, label, ha="center", va="center", fontsize=fontsize,
                        fontweight="bold", color="white" if dark else "black",
                        bbox=dict(boxstyle="round,pad=0.35", fc=fc, ec="0.3", lw=0.8),
                        zorder=3, gid=LEAF_GID)
            root_x = (pos[("leaf", p.leaves[0])][0] + pos[("leaf", p.leaves[-1])][0]) / 2
            ax.text(root_x, y_off + 0.55, block_label(ensemble, p.tree), ha="center",
                    va="bottom", fontsize=fontsize, color="0.25")
            x0 += p.width() + 0.5
        y_off -= h
    if linear:
        y_off = _draw_linear(ax, linear, kept.size, y_off, fontsize, wrap)
        row_w = max(row_w, 2.2 * min(len(linear), 6) - 0.6)
    ax.set_xlim(-0.6, row_w - 0.4)
    ax.set_ylim(min(y_off + 1.0, -1.0), 1.0)
    if title:
        if title is True:
            from firecy.rules import count_antecedents

            n_trees = len(set(model_tree_of(ensemble, kept).tolist()))
            title = (f"{kept.size} rule{'' if kept.size == 1 else 's'} from {n_trees} "
                     f"tree{'' if n_trees == 1 else 's'}, "
                     f"{count_antecedents(ensemble, coef)} antecedents (orange)"
                     + (f", {len(linear)} linear term{'' if len(linear) == 1 else 's'}"
                        if linear else ""))
        ax.set_title(title, fontsize=fontsize + 2, parse_math=False)
    if not kept.size and not linear:
        ax.text(0.5, 0.5, "no rules kept", ha="center", va="center",
                transform=ax.transAxes)
    return printable_texts(fig)


def _draw_linear(ax, rows, n_rules, y_off, fontsize, wrap):
    """The kept linear terms below the trees: a line each, six to a row;
    returns the new bottom."""
    for i, r in enumerate(rows):
        col, line = i % 6, i // 6
        x, y = 2.2 * col, y_off - 0.4 - 2.1 * line
        rise = 0.3 if r["weight"] > 0 else -0.3
        ax.plot([x - 0.6, x + 0.6], [y - rise, y + rise], lw=2.5, zorder=3,
                color="#c0392b" if r["weight"] > 0 else "#2e6fb0")
        name = textwrap.fill(str(r["rule"]).split(" per unit of ", 1)[-1], wrap)
        ax.text(x, y - 0.5, f"#{n_rules + i + 1} {r['rule'].split(' per unit', 1)[0]} "
                f"per unit\nof {name}", ha="center", va="top", fontsize=fontsize - 0.5,
                gid=LINEAR_GID, parse_math=False)
    return y_off - 2.1 * ((len(rows) - 1) // 6 + 1)
