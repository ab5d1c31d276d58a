"""The linear terms of ``plot_rules``: each drawn as its fitted line over its
clip range, in the data's units, on one vertical scale shared with the rules'
contributions (so that a term's size reads against theirs)."""
from __future__ import annotations

import textwrap

import numpy as np

from firecy._escape import display_text, display_value
from firecy.plotting._common import _text_size, wrap_name
from firecy.rules import linear_rows, linear_slopes

__all__ = ["LinearSection", "linear_panels", "LINEAR_GID"]

LINEAR_GID = "firecy-linear"
_ADDS, _SUBTRACTS = "#c0392b", "#2e6fb0"
# at fontsize 8 (they scale with the font)
_PANEL_W, _PANEL_H = 1.5, 0.85    # inches: the smallest plot of one term
_GAP = 0.12                       # inches between panels
_TICK_LEN, _TICK_PAD = 2.0, 1.5   # points


def _number(v):
    return f"{v:.4g}"


def linear_panels(est, names, n_columns):
    """The kept linear terms of ``est``, in :func:`~firecy.rules.rules_report`'s
    order: dicts with the feature's name, the slope, the clip range, the
    centre and (multi-class) the class."""
    found = linear_slopes(est)
    if found is None:
        return []
    terms, slopes = found
    n_out = slopes.shape[1]
    labels = None
    classes = getattr(est, "classes_", None)
    if n_out > 1 and classes is not None and len(classes) == n_out:
        labels = [c.item() if hasattr(c, "item") else c for c in np.asarray(classes)]
    out = []
    for k, row in linear_rows(est, names, n_columns, labels=labels, multi=n_out > 1):
        t = (int(row["column"]) - n_columns) // n_out
        out.append({"term": t, "name": names[int(terms.features[t])],
                    "slope": float(row["weight"]),
                    "lower": float(terms.lower[t]), "upper": float(terms.upper[t]),
                    "center": float(terms.center[t]), "class": row.get("class"),
                    "multi": n_out > 1})
    return out


class LinearSection:
    """The panels of the linear terms below the trees: made first, measured,
    then placed (``fit_width``, then ``place``)."""

    def __init__(self, ax, panels, n_rules, rule_max, fontsize, wrap):
        self.ax, self.panels = ax, panels
        self.n_rules, self.rule_max, self.fontsize, self.wrap = n_rules, rule_max, fontsize, wrap
        self.unit = u = fontsize / 8
        self.gap, self.panel_h = _GAP * u, _PANEL_H * u
        reach = max(abs(p["slope"]) * max(p["upper"] - p["center"], p["center"] - p["lower"])
                    for p in panels)
        self.ymax = 1.15 * max(reach, rule_max) or 1.0
        # ticks at the largest rule's contribution (the dotted lines) when
        # their labels stay apart from 0's, else at a round 80% of the scale
        tick = float(f"{rule_max:.3g}") if rule_max >= 0.35 * self.ymax \
            else float(f"{0.8 * self.ymax:.2g}")
        self.yticks = [-tick, 0.0, tick]
        small = fontsize * 0.875
        self.titles, self.xlabels, self.xticks = [], [], []
        for i, p in enumerate(panels):
            head = f"#{n_rules + i + 1}: {'+' if p['slope'] >= 0 else '-'}" \
                   f"{_number(abs(p['slope']))} per unit"
            if p["multi"]:
                head += f"\nclass {display_value(p['class'])}"
            self.titles.append(ax.text(0, 0, head, ha="center", va="bottom",
                                       fontsize=fontsize * 0.94, gid=LINEAR_GID,
                                       parse_math=False))
            name = wrap_name(display_text(str(p["name"])), max(wrap, 24)) or " "
            self.xlabels.append(ax.text(0, 0, name, ha="center", va="top",
                                        fontsize=fontsize * 0.94, parse_math=False))
            self.xticks.append([_number(p["lower"]), _number(p["upper"])])
        self.ylabel = ax.text(0, 0, "contribution", rotation=90, ha="center", va="center",
                              fontsize=small)
        probe = [ax.text(0, 0, f"{v:.3g}", fontsize=small) for v in self.yticks]
        probe += [ax.text(0, 0, s, fontsize=small) for pair in self.xticks for s in pair]
        sizes = [_text_size(t) for t in probe]
        for t in probe:
            t.remove()
        tick_room = (_TICK_LEN + _TICK_PAD) * u / 72
        self.ytick_w = max(w for w, _ in sizes[:3]) + tick_room
        self.xtick_h = max(h for _, h in sizes) + tick_room
        pair_w = max(sizes[3 + 2 * i][0] + sizes[4 + 2 * i][0] for i in range(len(panels)))
        self.title_h = max(_text_size(t)[1] for t in self.titles)
        self.xlabel_h = max(_text_size(t)[1] for t in self.xlabels)
        self.panel_w = max([_PANEL_W * u, pair_w + self.gap]
                           + [_text_size(t)[0] for t in self.titles + self.xlabels])
        self.lead_w = _text_size(self.ylabel)[0] + self.ytick_w + 0.04 * u
        self.caption = ax.text(0, 0, "", ha="left", va="top", fontsize=fontsize * 0.94,
                               color="0.25", parse_math=False)
        self.n_cols = 1

    def fit_width(self, width):
        """The number of panels a row, for a picture ``width`` inches wide at
        least; returns the width the section needs."""
        cell = self.panel_w + self.gap
        # at least four a row (the picture widens), more when the trees are wider
        self.n_cols = int(min(len(self.panels), max(4, (width - self.lead_w + self.gap) // cell)))
        return max(width, self.lead_w + self.n_cols * cell - self.gap)

    def _caption_text(self, width):
        first, last = self.n_rules + 1, self.n_rules + len(self.panels)
        span = f"#{first}" if first == last else f"#{first}-#{last}"
        text = (f"Linear terms ({span}): each is drawn as what it adds, slope * (x - centre), "
                f"over its clip range of x; one vertical scale for all")
        if self.rule_max > 0:
            text += (f", dotted at \u00b1{self.rule_max:.3g}, the largest rule's "
                     f"contribution")
        text += "."
        # wrap to the section's width, at the caption's own mean character width
        self.caption.set_text(text)
        w, _ = _text_size(self.caption)
        chars = max(20, int(len(text) * width / max(w, 1e-9)))
        while True:
            self.caption.set_text(textwrap.fill(text, chars))
            if chars <= 20 or _text_size(self.caption)[0] <= width:
                return self.caption.get_text()
            chars -= 2

    def place(self, x0, top, width):
        """Draw the panels with the section's top ``top`` inches down; returns
        its bottom."""
        ax = self.ax
        self.caption.set_text(self._caption_text(width))
        self.caption.set_position((x0, -top))
        u, ph = self.unit, self.panel_h
        y = top + _text_size(self.caption)[1] + self.gap
        cell_h = self.title_h + 0.04 * u + ph + self.xtick_h + 0.02 * u + self.xlabel_h
        for i, p in enumerate(self.panels):
            col, line = i % self.n_cols, i // self.n_cols
            left = x0 + self.lead_w + col * (self.panel_w + self.gap)
            y_top = y + line * (cell_h + self.gap) + self.title_h + 0.04 * u
            inset = ax.inset_axes((left, -(y_top + ph), self.panel_w, ph),
                                  transform=ax.transData)
            self._draw_panel(inset, p, i, first_col=col == 0)
            self.titles[i].set_position((left + self.panel_w / 2, -(y_top - 0.02 * u)))
            self.xlabels[i].set_position(
                (left + self.panel_w / 2, -(y_top + ph + self.xtick_h + 0.02 * u)))
            if i == 0:
                self.ylabel.set_position((x0 + (self.lead_w - self.ytick_w) / 2,
                                          -(y_top + ph / 2)))
        n_lines = (len(self.panels) - 1) // self.n_cols + 1
        return y + n_lines * cell_h + (n_lines - 1) * self.gap

    def _draw_panel(self, inset, p, i, first_col):
        # by the term's index in linear_terms_ (a name is data: not in an SVG id)
        inset.set_gid(f"{LINEAR_GID}-{p['term']}")
        x = np.array([p["lower"], p["upper"]])
        inset.plot(x, p["slope"] * (x - p["center"]), lw=2.2,
                   color=_ADDS if p["slope"] > 0 else _SUBTRACTS, gid=LINEAR_GID)
        inset.axhline(0.0, color="0.6", lw=0.6)
        if self.rule_max > 0:
            for v in (-self.rule_max, self.rule_max):
                inset.axhline(v, color="0.45", lw=0.7, ls=":")
        inset.set_ylim(-self.ymax, self.ymax)
        span = p["upper"] - p["lower"]
        inset.set_xlim(p["lower"] - 0.04 * span - (span == 0), p["upper"] + 0.04 * span
                       + (span == 0))
        small = self.fontsize * 0.875
        inset.tick_params(length=_TICK_LEN * self.unit, pad=_TICK_PAD * self.unit,
                          labelsize=small, width=0.8 * self.unit)
        inset.set_yticks(self.yticks)
        inset.set_yticklabels([f"{v:.3g}" for v in self.yticks] if first_col else [])
        lo, hi = self.xticks[i]
        if span > 0:
            inset.set_xticks(x)
            labels = inset.set_xticklabels([lo, hi])
            # the end labels inside the panel's width: never into a neighbour
            labels[0].set_ha("left")
            labels[1].set_ha("right")
        else:
            inset.set_xticks(x[:1])
            inset.set_xticklabels([lo])
        for side in ("top", "right"):
            inset.spines[side].set_visible(False)
