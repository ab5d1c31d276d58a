"""The README's library example runs and prints what the README shows."""
import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"

pytestmark = pytest.mark.skipif(not README.exists(), reason="no README.md in this checkout")


def _python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _shown_output(block):
    """What the README says each print shows, as a list of blocks of lines:
    the comment lines after a line ending in ``# prints:`` (or the text after
    ``# prints:`` on the same line); a ``# ...`` line stands for one or more
    lines left out."""
    blocks, collecting = [], False
    for line in block.splitlines():
        code, _, shown = line.partition("# prints:")
        if _ and code.strip():
            blocks.append([shown.strip()] if shown.strip() else [])
            collecting = not shown.strip()
            continue
        if collecting and line.startswith("# "):
            blocks[-1].append(line[2:].rstrip())
        else:
            collecting = False
    return [b for b in blocks if b]


def _block_pattern(lines):
    """A regex matching the shown lines as consecutive printed lines, each
    ``...`` one or more lines."""
    parts = [r"(?:[^\n]*\n)+?" if ln == "..." else re.escape(ln) + r"\n" for ln in lines]
    return re.compile(r"(?m)^" + "".join(parts))


def _find_in_order(blocks, printed):
    """The blocks not found, in order, in the printed text (each block's lines
    consecutive, apart from the elisions)."""
    text, pos, missing = "".join(ln + "\n" for ln in printed), 0, []
    for block in blocks:
        m = _block_pattern(block).search(text, pos)
        if m is None:
            missing.append(block)
        else:
            pos = m.end()
    return missing


def test_readme_example_prints_what_it_shows(tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    blocks = _python_blocks(README.read_text())
    assert blocks, "the README has no Python example"
    monkeypatch.chdir(tmp_path)   # the example saves its pictures here
    for block in blocks:
        expected = _shown_output(block)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), {"__name__": "readme"})
        printed = [ln.rstrip() for ln in out.getvalue().splitlines()]
        missing = _find_in_order(expected, printed)
        assert not missing, f"the README shows output the example does not print: {missing}"
    assert (tmp_path / "rules.png").stat().st_size > 5000


def test_shown_output_parser():
    block = ("x = 1\nprint(x)  # prints:\n# a\n# ...\n# b\ny = 2\n"
             "print(y)  # prints: 2\n# not output\n")
    assert _shown_output(block) == [["a", "...", "b"], ["2"]]


def test_shown_blocks_match_whole_and_in_order():
    shown = [["head", "a", "...", "z"], ["2"]]
    assert _find_in_order(shown, ["head", "a", "b", "c", "z", "other", "2"]) == []
    # a line the README leaves out of a block without "..." is a mismatch
    assert _find_in_order(shown, ["head", "extra", "a", "b", "z", "2"]) == [shown[0]]
    # "..." stands for at least one line
    assert _find_in_order([["a", "...", "z"]], ["a", "z"]) == [["a", "...", "z"]]
    # blocks in the order shown
    assert _find_in_order(shown, ["2", "head", "a", "b", "z"]) == [shown[1]]
