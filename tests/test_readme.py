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
    """The lines the README says a print shows: the comment lines after a line
    ending in ``# prints:``, or the text after ``# prints:`` on the same line;
    ``# ...`` stands for lines left out."""
    expected, collecting = [], False
    for line in block.splitlines():
        code, _, shown = line.partition("# prints:")
        if _ and code.strip():
            collecting = not shown.strip()
            if shown.strip():
                expected.append(shown.strip())
            continue
        if collecting and line.startswith("# "):
            if line[2:].strip() != "...":
                expected.append(line[2:].rstrip())
        else:
            collecting = False
    return expected


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
        missing = [ln for ln in expected if ln not in printed]
        assert not missing, f"the README shows lines the example does not print: {missing}"
    assert (tmp_path / "rules.png").stat().st_size > 5000


def test_shown_output_parser():
    block = ("x = 1\nprint(x)  # prints:\n# a\n# ...\n# b\ny = 2\n"
             "print(y)  # prints: 2\n# not output\n")
    assert _shown_output(block) == ["a", "b", "2"]
