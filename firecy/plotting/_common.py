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


# Agg hints glyphs to the pixel grid, so a text's width in inches changes
# with the dpi (by up to 15% between 72 and 100 dpi): measured at each of
# these, the largest, a picture holds its text at the dpi it is saved at
_MEASURE_DPI = (72, 100, 150)
_RENDERERS = {}


def _text_size(artist):
    """Width and height in inches of a Text, its box (``bbox=``) included: the
    largest at the dpi values of ``_MEASURE_DPI``."""
    from matplotlib.backends.backend_agg import RendererAgg

    w_in = h_in = 0.0
    for dpi in _MEASURE_DPI:
        if dpi not in _RENDERERS:
            _RENDERERS[dpi] = RendererAgg(1, 1, dpi)
        r = _RENDERERS[dpi]
        ext = artist.get_window_extent(r, dpi=dpi)
        w, h = ext.width, ext.height
        patch = artist.get_bbox_patch()
        if patch is not None:
            # the box style's pad is a fraction of the font size, on each side
            pad = getattr(patch.get_boxstyle(), "pad", 0.0) * artist.get_fontsize()
            w += 2 * pad * dpi / 72
            h += 2 * pad * dpi / 72
        w_in, h_in = max(w_in, w / dpi), max(h_in, h / dpi)
    return w_in, h_in


def wrap_name(name, width):
    """``name`` in lines of about ``width`` characters, broken at spaces or
    after ``_ / - .`` (a long word is cut only where it has none)."""
    import re

    width = max(int(width), 1)
    lines, line = [], ""
    for piece in re.findall(r"[^\s_/\-.]*[_/\-.]+|[^\s_/\-.]+|\s+", name):
        if line and len(line) + len(piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
        while len(line) > width:          # no break inside: cut it
            lines.append(line[:width])
            line = line[width:]
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return "\n".join(lines)
