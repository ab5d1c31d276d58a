"""Data strings (class labels, feature names, categories) in generated text.

Every exporter writes the strings of the user's data through this module,
one function per target language, so that no label or name can change the
program it is written into, nor forge lines of a report:

* Python: :func:`python_literal` (a value in code), :func:`python_docstring`
  (text inside a ``\"\"\"`` docstring);
* SQL: :func:`sql_string`, :func:`sql_identifier`, :func:`sql_comment`;
* plain text: :func:`display_text` (a name printed as is, escaped only where
  needed) and :func:`display_value` (a label printed as a quoted literal);
* pictures: :func:`picture_text` (a text drawn by matplotlib, whose SVG
  writes it into comments and which XML 1.0 forbids control characters in),
  :func:`printable_texts` (every text of a figure);
* JSON: :func:`json_text`.

Each result is valid UTF-8 text (a lone surrogate, legal in a Python ``str``,
is escaped or refused), so that it can be written to a file.
"""
from __future__ import annotations

import json
import math
import numbers

import numpy as np

__all__ = ["python_literal", "python_docstring", "sql_string", "sql_identifier",
           "sql_comment", "display_text", "display_value", "picture_text",
           "printable_texts", "json_text"]


def _plain(value):
    """``value`` as a str, int, float, bool or None (numpy scalars converted);
    anything else is a ValueError (its repr could be any code)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return str(value)  # a subclass (numpy.str_) would repr as its constructor
    raise ValueError(f"a label or name must be a str, int, float, bool or None to be "
                     f"written into code, got a {type(value).__name__}")


# ---------------------------------------------------------------------------
# Python
# ---------------------------------------------------------------------------
def python_literal(value):
    """``value`` as a Python literal expression that evaluates back to it.

    ``repr`` of a str escapes backslashes, the quote and every character that
    is not printable (control characters, line and paragraph separators,
    bidirectional marks, lone surrogates), so the literal is one line of
    UTF-8 text whatever the string.  Non-finite floats need no import.
    """
    value = _plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    return repr(value)


def python_docstring(text):
    """``text`` written inside a ``\"\"\"`` docstring, which then reads back as
    ``display_text(text)``: non-printable characters as escapes (one line),
    then backslashes and double quotes escaped (no ``\"\"\"`` can close the
    docstring, no escape is malformed)."""
    return display_text(text).replace("\\", "\\\\").replace('"', '\\"')


# ---------------------------------------------------------------------------
# SQL
# ---------------------------------------------------------------------------
def _sql_text(text, what):
    """``text`` checked for what a SQL statement cannot carry: NUL (the
    engines end a statement, or refuse it, there) and lone surrogates (not
    UTF-8)."""
    if "\x00" in text:
        raise ValueError(f"{what} {display_value(text)} contains a NUL character, which "
                         f"a SQL statement cannot hold")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} {display_value(text)} contains a lone surrogate, which "
                         f"is not UTF-8 text and cannot be written in SQL") from None
    return text


def sql_string(value):
    """``value`` (a str or a number) as a standard SQL literal.

    Strings double their single quotes; a backslash is an ordinary character
    (SQLite, DuckDB, PostgreSQL with its default
    ``standard_conforming_strings``).  Raises ValueError for a string SQL
    cannot hold (NUL, lone surrogates), a bool, a non-finite number or any
    other type.
    """
    value = _plain(value)
    if isinstance(value, str):
        return "'" + _sql_text(value, "the label").replace("'", "''") + "'"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"category {display_value(value)} cannot be written in SQL "
                         f"(strings and numbers only)")
    if isinstance(value, int):
        return repr(value)
    if not math.isfinite(value):
        raise ValueError("a non-finite number cannot be written in SQL")
    return repr(value)


def sql_identifier(name):
    """``name`` as a double-quoted SQL identifier (quotes doubled).

    Raises ValueError for an empty name or one SQL cannot hold (NUL, lone
    surrogates).
    """
    name = str(name)
    if not name:
        raise ValueError("an empty name cannot be a SQL identifier")
    return '"' + _sql_text(name, "the name").replace('"', '""') + '"'


def sql_comment(text):
    """``text`` as a ``/* ... */`` comment that no data string can end early.

    Non-printable characters are escaped (:func:`display_text`); ``/*`` and
    ``*/`` are broken with a space, both (PostgreSQL nests block comments, so
    an opening ``/*`` would swallow the rest of the statement).  Quotes become
    typographic ones (U+2019, U+201D): DuckDB (2.0) replaces Unicode spaces
    outside quotes before it parses, counting the quotes in comments too, so
    one ``'`` in a comment would make it rewrite the text inside the string
    literals after it (a label holding U+FEFF or U+3000 would no longer match).
    """
    text = display_text(text).replace("/*", "/ *").replace("*/", "* /")
    text = text.replace("'", "\u2019").replace('"', "\u201d")
    return f"/* {text} */"


# ---------------------------------------------------------------------------
# plain text
# ---------------------------------------------------------------------------
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(ch):
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def display_text(text):
    """A data string printed in a report or a comment, unquoted.

    Every non-printable character (``str.isprintable``: newlines, control
    characters, separators other than the space, bidirectional marks, lone
    surrogates) becomes a Python-style escape, so a name is one line that
    reads the same in any terminal and is valid UTF-8.  A printable name is
    printed unchanged.

    Examples
    --------
    >>> from firecy._escape import display_text
    >>> print(display_text("body mass"), display_text("a\\nb\\u202e"))
    body mass a\\nb\\u202e
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _NAMED_ESCAPES.get(ch) or _escape_char(ch)
                   for ch in text)


def display_value(value):
    """A label printed as a quoted literal: ``'red'``, ``3``.

    A str, number, bool or None prints as its Python literal (one line:
    :func:`python_literal`); another object as its repr, escaped by
    :func:`display_text`.
    """
    try:
        return python_literal(value)
    except ValueError:
        return display_text(repr(value))


def picture_text(text):
    """A text drawn in a picture: :func:`display_text` line by line.

    The line breaks are kept (a picture wraps its labels itself); every other
    non-printable character becomes an escape, so that no NUL, control
    character or lone surrogate reaches the SVG matplotlib writes (XML 1.0
    holds none of them, not even as a character reference, and a browser
    shows such an SVG as a broken image).

    Examples
    --------
    >>> from firecy._escape import picture_text
    >>> print(picture_text("dose\\x00\\nage\\x1b"))
    dose\\x00
    age\\x1b
    """
    return "\n".join(display_text(line) for line in str(text).split("\n"))


def printable_texts(fig):
    """Every text of the matplotlib figure ``fig`` made printable
    (:func:`picture_text`), tick labels included; returns ``fig``.

    A NUL, control character or lone surrogate in a feature name, a category
    or a label would otherwise reach the SVG (matplotlib writes each text
    into a comment, or a ``<text>`` element) and make it ill-formed XML,
    which a browser shows as a broken image; a lone surrogate also stops
    matplotlib's font layout.
    """
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter

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


# ---------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------
def json_text(doc, indent=2):
    """``doc`` as JSON text in ASCII: every other character, a lone surrogate
    included, as a ``\\u`` escape, which reads back as the same str."""
    return json.dumps(doc, indent=indent, ensure_ascii=True)
