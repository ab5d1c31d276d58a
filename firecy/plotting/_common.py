"""What every picture needs: matplotlib, imported only when a function is called."""


def _require_matplotlib():
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "firecy.plotting needs matplotlib, which is not installed: "
            "pip install matplotlib  (or: pip install 'firecy[plot]')"
        ) from None
    return Figure


def printable_texts(fig):
    """Every text of ``fig`` made printable (:func:`firecy._escape.picture_text`),
    tick labels included; returns ``fig``.

    A NUL, control character or lone surrogate in a feature name, a category
    or a label would otherwise reach the SVG (matplotlib writes each text
    into a comment, or a ``<text>`` element) and make it ill-formed XML,
    which a browser shows as a broken image; a lone surrogate also stops
    matplotlib's font layout.
    """
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter

    from firecy._escape import picture_text

    for axis in (a for ax in fig.axes for a in (ax.xaxis, ax.yaxis)):
        # tick labels are re-made from the formatter at every draw
        formatter = axis.get_major_formatter()
        if isinstance(formatter, FixedFormatter):
            formatter.seq = [picture_text(s) for s in formatter.seq]
    for artist in fig.findobj(Text):
        text = artist.get_text()
        if not text.replace("\n", "").isprintable():
            artist.set_text(picture_text(text))
    return fig
