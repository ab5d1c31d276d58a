"""``plot_rules``: the kept rules drawn as the partial trees they came from."""
from __future__ import annotations

import numpy as np

from firecy._escape import display_text, display_value, printable_texts
from firecy.plotting._common import _require_matplotlib, _text_size, wrap_name
from firecy.plotting._rules_linear import LINEAR_GID, LinearSection, linear_panels  # noqa: F401
from firecy.rules import ALL_ROWS, format_conditions
from firecy.rules import (
    block_label,
    check_coef,
    column_class,
    feature_names_of,
    is_estimator,
    leaf_support,
    model_tree_of,
    n_outputs,
    tree_of,
    unpack,
)

__all__ = ["plot_rules"]

NODE_GID = "firecy-node"
LEAF_GID = "firecy-leaf"

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
    name = wrap_name(name, wrap) or name
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

    An estimator's kept linear terms (``linear_terms=True``) are drawn below
    the trees, each as its fitted line over its clip range in the data's
    units: x from the lower to the upper clip of the feature, y the term's
    contribution ``slope * (x - centre)``, on one vertical scale for all the
    terms that reaches the largest rule's contribution (dotted lines), so
    that a term's size reads against the rules'.

    Drawn on a figure of its own, the picture is sized from its measured
    text (at 72 to 150 dpi): no box overlaps another, a yes/no label sits in
    the free space between two boxes, and no text leaves the figure.

    Parameters
    ----------
    ensemble : RuleEnsemble or fitted FIRE estimator
    coef : array-like of shape (n_rules,), optional
        Rule weights (the estimator's ``coef_`` by default).
    feature_names : sequence of str, optional
    ax : matplotlib Axes, optional
        Draw here, with smaller fonts (down to 4 points) if the picture at
        ``fontsize`` does not fit in it; a new figure sized to the picture
        otherwise.
    X, sample_weight : optional
        Data on which to print each rule's support under its contribution.
    max_width : int, default=12
        Leaves per row of trees before the trees wrap onto a new row.
    wrap : int, default=18
        Wrap feature names longer than this many characters (at spaces or
        after "_ / - .").
    fontsize : float, default=8
    title : bool or str, default=True
        A title with the numbers of rules, trees and antecedents (or the
        given text).

    Returns
    -------
    matplotlib.figure.Figure
        Split-node texts carry the gid ``"firecy-node"``, leaf texts
        ``"firecy-leaf"``. A linear term is an inset axes (in the main
        axes' ``child_axes``, gid ``"firecy-linear-<t>"``, ``t`` its index
        in ``linear_terms_``) whose line has the gid ``"firecy-linear"``,
        titled (gid ``"firecy-linear"``) with its rank after the rules' in
        :func:`firecy.rules.rules_report` and its slope per unit, the
        feature's name under its x axis.

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
    args = (ensemble, coef, feature_names, X, sample_weight, max_width, wrap, title)
    if ax is None:
        fig = Figure(figsize=(4.0, 3.0))
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
        width, height = _draw(ax, fontsize, *args)
        # one data unit is one inch: the figure is sized to the measured text
        fig.set_size_inches(width, height)
        return printable_texts(fig)
    # a given axes: smaller fonts until the picture fits in it (the layout is
    # then stretched to the axes, which only widens the gaps)
    fig = ax.figure
    for attempt in range(5):
        width, height = _draw(ax, fontsize, *args)
        if fig.get_layout_engine() is not None:
            # where the layout puts the axes (what get_position says after a draw)
            fig.get_layout_engine().execute(fig)
        box = ax.get_position().size * fig.get_size_inches() * 0.97
        ratio = min(box[0] / width, box[1] / height)
        if ratio >= 1.0 or fontsize <= 4.0 or attempt == 4:
            return printable_texts(fig)
        for child in list(ax.child_axes):
            child.remove()
        ax.cla()
        # the layout scales with the font (a little less: the boxes' edges)
        fontsize = max(4.0, fontsize * max(0.97 * ratio, 0.5))


def _draw(ax, fontsize, ensemble, coef, feature_names, X, sample_weight, max_width, wrap,
          title):
    """The picture on ``ax`` in inches (x right, y down from 0); returns its size."""
    import matplotlib as mpl

    source = ensemble if is_estimator(ensemble) and coef is None else None
    ensemble, coef, _, est_names = unpack(ensemble, coef)
    if feature_names is None:
        feature_names = est_names
    names = feature_names_of(ensemble, feature_names)
    coef = check_coef(ensemble, coef)
    linear = linear_panels(source, names, len(ensemble.leaf_values)) \
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

    ax.set_axis_off()

    vmax = float(np.max(np.abs(contrib[kept]))) if kept.size else 0.0
    cmap = mpl.colormaps["RdBu_r"]
    drawn = _TreeTexts(ax, fontsize)
    for p in parts:
        for n in p.nodes:
            drawn.node(p.tree, n, _node_label(p.left_cond[n], names, wrap))
        for j in p.leaves:
            c = contrib[j]
            label = f"#{rank[j]}\n{c:+.3g}"
            if not p.paths[j]:
                label = f"{ALL_ROWS}\n" + label
            if support is not None:
                label += f"\n{100 * support[j]:.0f}% rows"
            fc = cmap(0.5 + 0.45 * c / vmax) if vmax > 0 else cmap(0.5)
            drawn.leaf(p.tree, j, label, fc, dark=vmax > 0 and abs(c) > 0.6 * vmax)
        for a, b, is_left in p.edges():
            drawn.edge(p.tree, a, b, "yes" if is_left else "no")
        drawn.tree_label(p.tree, _tree_name(ensemble, source, p))

    if title is True:
        title = _default_title(ensemble, coef, kept, linear)
    title_art = None
    if title:
        title_art = ax.set_title(str(title), fontsize=fontsize * 1.25, parse_math=False,
                                 pad=0, va="center", y=1.0)

    unit = fontsize / 8
    margin, row_gap = _MARGIN * unit, _ROW_GAP * unit
    grid = drawn.measure()
    rows = _pack(parts, max_width)
    rows_w = max([_row_width(r, grid) for r in rows] or [0.0])
    title_w, title_h = _text_size(title_art) if title_art is not None else (0, 0)
    section = LinearSection(ax, linear, kept.size, vmax, fontsize, wrap) \
        if linear else None
    content_w = max(rows_w, title_w, 2.0)
    if section is not None:
        content_w = section.fit_width(content_w)
    width = content_w + 2 * margin

    y = margin           # inches down from the top
    if title_art is not None:
        y += title_h + row_gap
    for r in rows:
        y = _place_row(ax, r, grid, margin, y) + row_gap
    if section is not None:
        y = section.place(margin, y, content_w) + row_gap
    if not kept.size and not linear:
        ax.text(width / 2, -(y + 0.2), "no rules kept", ha="center", va="center",
                fontsize=fontsize + 1)
        y += 0.4 * unit + row_gap
    height = y - row_gap + margin
    if title_art is not None:
        # inside the axes (a fraction of its height), not above it
        title_art.set_y(1.0 - (margin + title_h / 2) / height)
    ax.set_xlim(0.0, width)
    ax.set_ylim(-height, 0.0)
    return width, height


# in inches at fontsize 8 (they scale with the font)
_MARGIN = 0.1     # around the picture
_GAP = 0.12       # between neighbouring boxes
_ROW_GAP = 0.25   # between rows of trees and sections
_EDGE_PAD = 0.05  # above and below an edge's yes/no label


def _tree_name(ensemble, source, part):
    """"tree t", and the class its leaves score for a multi-class ensemble."""
    name = block_label(ensemble, part.tree)
    if n_outputs(ensemble) < 2:
        return name
    k = int(column_class(ensemble, [part.leaves[0]])[0])
    classes = getattr(source, "classes_", None)
    label = classes[k] if classes is not None and len(classes) == n_outputs(ensemble) else k
    return f"{name}\nclass {display_value(label.item() if hasattr(label, 'item') else label)}"


def _default_title(ensemble, coef, kept, linear):
    from firecy.rules import count_antecedents

    n_trees = len(set(model_tree_of(ensemble, kept).tolist()))
    return (f"{kept.size} rule{'' if kept.size == 1 else 's'} from {n_trees} "
            f"tree{'' if n_trees == 1 else 's'}, "
            f"{count_antecedents(ensemble, coef)} antecedents (orange)"
            + (f", {len(linear)} linear term{'' if len(linear) == 1 else 's'}"
               if linear else ""))


class _TreeTexts:
    """The texts of the partial trees, made first and placed once measured."""

    def __init__(self, ax, fontsize):
        self.ax, self.fontsize = ax, fontsize
        self.boxes = {}      # (tree, ("node", n) or ("leaf", j)) -> Text
        self.edges = {}      # tree -> [(parent key, child key, Text)]
        self.labels = {}     # tree -> Text

    def node(self, tree, n, text):
        # parse_math=False: a "$" in a feature name or a category prints as
        # itself, never as matplotlib's mathtext
        self.boxes[(tree, ("node", n))] = self.ax.text(
            0, 0, text, ha="center", va="center", fontsize=self.fontsize, zorder=3,
            bbox=dict(boxstyle="round,pad=0.35", fc=_NODE_COLOR, ec=_NODE_EDGE, lw=0.8),
            gid=NODE_GID, parse_math=False)

    def leaf(self, tree, j, text, fc, dark):
        self.boxes[(tree, ("leaf", j))] = self.ax.text(
            0, 0, text, ha="center", va="center", fontsize=self.fontsize,
            fontweight="bold", color="white" if dark else "black", zorder=3,
            bbox=dict(boxstyle="round,pad=0.35", fc=fc, ec="0.3", lw=0.8), gid=LEAF_GID)

    def edge(self, tree, a, b, text):
        t = self.ax.text(0, 0, text, fontsize=self.fontsize * 0.81, color="0.3",
                         style="italic", ha="center", va="center", zorder=2,
                         bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none"))
        self.edges.setdefault(tree, []).append((a, b, t))

    def tree_label(self, tree, text):
        self.labels[tree] = self.ax.text(0, 0, text, ha="center", va="center",
                                         fontsize=self.fontsize, color="0.25",
                                         parse_math=False)

    def measure(self):
        """The grid the trees are drawn on, in inches, from the texts' sizes."""
        size = {k: _text_size(t) for k, t in self.boxes.items()}
        box_w = max([w for w, _ in size.values()] or [0.5])
        box_h = max([h for _, h in size.values()] or [0.3])
        edge = [_text_size(t) for es in self.edges.values() for _, _, t in es]
        edge_w = max([w for w, _ in edge] or [0.0])
        edge_h = max([h for _, h in edge] or [0.0])
        label = {t: _text_size(a) for t, a in self.labels.items()}
        # two yes/no labels under one node sit half a column apart at least
        gap = _GAP * self.fontsize / 8
        col_w = max(box_w + gap, 2 * edge_w + 2 * gap)
        return dict(texts=self, size=size, col_w=col_w, box_h=box_h,
                    level_h=box_h + edge_h + 2 * _EDGE_PAD * self.fontsize / 8, label=label,
                    label_h=max([h for _, h in label.values()] or [0.0]),
                    tree_gap=max(0.4 * col_w, 0.3 * self.fontsize / 8), gap=gap)


def _tree_width(p, grid):
    return max(p.width() * grid["col_w"], grid["label"][p.tree][0] + grid["gap"])


def _row_width(row, grid):
    return sum(_tree_width(p, grid) for p in row) + grid["tree_gap"] * (len(row) - 1)


def _pack(parts, max_width):
    """Trees into rows of about equal width, at most ``max_width`` leaves each."""
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
    return rows


def _place_row(ax, row, grid, x0, top):
    """Place one row of trees with its top ``top`` inches down; returns its bottom."""
    texts, size, col_w = grid["texts"], grid["size"], grid["col_w"]
    root_y = top + grid["label_h"] + grid["gap"] + grid["box_h"] / 2
    x = x0
    for p in row:
        tree_w = _tree_width(p, grid)
        # the leaves' columns, centred under the tree's label
        pos = {k: (x + (tree_w - p.width() * col_w) / 2 + (cx + 0.5) * col_w,
                   root_y - cy * grid["level_h"])
               for k, (cx, cy) in p.layout(0.0).items()}
        for k, (cx, cy) in pos.items():
            texts.boxes[(p.tree, k)].set_position((cx, -cy))
        for a, b, t in texts.edges.get(p.tree, []):
            (xa, ya), (xb, yb) = pos[a], pos[b]
            ax.plot([xa, xb], [-ya, -yb], color="0.45", lw=0.9, zorder=1)
            # the label in the middle of the free space between the two boxes
            mid = ((ya + size[(p.tree, a)][1] / 2) + (yb - size[(p.tree, b)][1] / 2)) / 2
            f = (mid - ya) / (yb - ya) if yb != ya else 0.5
            t.set_position((xa + f * (xb - xa), -mid))
        texts.labels[p.tree].set_position((x + tree_w / 2, -(top + grid["label_h"] / 2)))
        x += tree_w + grid["tree_gap"]
    depth = max(p.height for p in row)
    return root_y + depth * grid["level_h"] + grid["box_h"] / 2
