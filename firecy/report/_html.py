"""The report's HTML: escaping, tables, embedded pictures and the page.

Every string from the data (feature names, categories, class labels, rule
texts) goes through :func:`text`: made printable by
:func:`firecy._escape.display_text` (control characters, bidirectional
marks and lone surrogates as visible escapes) and then HTML-escaped, quotes
included. Markup the report writes itself is an :class:`Html`; nothing else
reaches the page unescaped. The pictures are SVG files embedded as data URIs
in ``<img>`` elements: nothing in a picture can change the page, and an SVG
shown as an image runs no script. The page loads nothing: its style is
inline, and its Content-Security-Policy forbids every other source.
"""
import base64
import html
import io
import math
import numbers
import warnings

from firecy._escape import display_text, printable_texts

__all__ = ["Html", "text", "number", "cell", "table", "figure", "page", "section", "pre",
           "pair", "details"]


class Html(str):
    """Markup written by the report itself (already safe)."""


def text(value):
    """A data string as HTML text: printable, then escaped (quotes too)."""
    if isinstance(value, Html):
        return value
    return Html(html.escape(display_text(value), quote=True))


def number(value, digits=4):
    """A number as the report prints it (``digits`` significant digits)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    value = float(value)
    if math.isnan(value):
        return "-"
    return f"{value:.{digits}g}"


def cell(value, digits=4):
    """One table cell's content: markup as is, numbers formatted, the rest escaped."""
    if isinstance(value, Html):
        return value
    if value is None:
        return Html("-")
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        return Html(number(value, digits))
    return text(value)


def table(headers, rows, *, numeric=(), caption=None, digits=4):
    """A ``<table>``: ``headers`` (strings the report writes or data; None: a
    table of facts, with no header row), ``rows`` (sequences of cells); the
    columns in ``numeric`` are right-aligned."""
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{text(caption)}</caption>")
    right = ' class="num"'
    if headers is not None:
        out.append("<thead><tr>" + "".join(
            f"<th{right if k in numeric else ''}>{text(h)}</th>"
            for k, h in enumerate(headers)) + "</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        out.append("<tr>" + "".join(
            f"<td{right if k in numeric else ''}>{cell(v, digits)}</td>"
            for k, v in enumerate(row)) + "</tr>")
    out.append("</tbody></table>")
    return Html("\n".join(out))


def figure(fig, caption, *, narrow=False, shown_caption=True):
    """A matplotlib figure as an SVG data URI in an ``<img>``, with its caption
    (``narrow``: shown at most half the page wide; ``shown_caption=False``: the
    caption is the image's text alternative only, where a heading names it)."""
    import matplotlib

    printable_texts(fig)   # well-formed SVG whatever the strings (the report's own too)
    buf = io.BytesIO()
    with warnings.catch_warnings(), matplotlib.rc_context({"svg.fonttype": "path",
                                                           "svg.hashsalt": "firecy"}):
        # a label in a script the font lacks draws as boxes, not as a warning
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        warnings.filterwarnings("ignore", message=".*Matplotlib currently does not support")
        fig.savefig(buf, format="svg", metadata={"Date": None})
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    alt = text(caption)
    return Html(f'<figure><img class="picture{" narrow" if narrow else ""}" alt="{alt}" '
                f'src="data:image/svg+xml;base64,{data}">'
                + (f"<figcaption>{alt}</figcaption>" if shown_caption else "")
                + "</figure>")


def pre(value):
    """Preformatted text (a summary, a risk card), escaped line by line."""
    lines = str(value).split("\n")
    return Html("<pre>" + "\n".join(text(line) for line in lines) + "</pre>")


def pair(left, right):
    """Two parts side by side (one above the other on a narrow screen)."""
    return Html(f'<div class="pair"><div>{left}</div><div>{right}</div></div>')


def details(summary, body):
    """A part shown on request (``<details>``: no script needed)."""
    return Html(f"<details><summary>{text(summary)}</summary>\n{body}\n</details>")


def section(anchor, title, *parts):
    """A ``<section>`` with its heading and its parts (markup or escaped text)."""
    body = "\n".join(p if isinstance(p, Html) else f"<p>{text(p)}</p>" for p in parts if p)
    return Html(f'<section id="{anchor}">\n<h2>{text(title)}</h2>\n{body}\n</section>')


_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       margin: 0 auto; max-width: 72rem; padding: 1rem 2rem; color: #222; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; border-bottom: 1px solid #ccc;
     padding-bottom: .2rem; margin-top: 2rem; } h3 { font-size: 1.05rem; }
table { border-collapse: collapse; margin: .6rem 0; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left;
         vertical-align: top; }
th { background: #f3f3f3; } td.num, th.num { text-align: right;
     font-variant-numeric: tabular-nums; }
caption { text-align: left; font-style: italic; padding: .2rem 0; }
pre { background: #f7f7f7; padding: .6rem; overflow-x: auto; font-size: .85rem; }
figure { margin: 1rem 0; } img.picture { max-width: 100%; height: auto; }
img.picture.narrow { max-width: min(100%, 36rem); }
figcaption { font-size: .85rem; color: #555; }
nav ul { columns: 2; } .note { color: #555; font-size: .9rem; }
.pair { display: flex; flex-wrap: wrap; gap: 0 1.5rem; align-items: flex-start; }
.pair > * { flex: 1 1 26rem; min-width: 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr));
         gap: 0 1.5rem; }
.cards h3 { margin-bottom: .2rem; } .cards p { margin-top: 0; font-size: .9rem; }
details > summary { cursor: pointer; color: #444; margin: .4rem 0; }
"""

# nothing may load: no script at all, images only from the page itself
_POLICY = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
           "base-uri 'none'; form-action 'none'")


def page(title, sections, *, subtitle=None):
    """The whole document: one file, readable offline in any browser."""
    nav = "".join(f'<li><a href="#{anchor}">{text(name)}</a></li>'
                  for anchor, name, _ in sections)
    body = "\n".join(content for _, _, content in sections)
    sub = f'<p class="note">{text(subtitle)}</p>' if subtitle else ""
    return Html(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{text(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{text(title)}</h1>\n{sub}\n<nav><ul>{nav}</ul></nav>\n{body}\n"
        "</body>\n</html>\n")
