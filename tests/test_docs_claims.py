"""What the README and the docs index say about the package, checked against
the package: the extras and what they install, the pages a reader is pointed
to (issue 37: ``[all]`` was described without dask, and the index's "Where
next" left pages out)."""
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEV_EXTRAS = {"test", "docs", "bench"}

pytestmark = pytest.mark.skipif(not (ROOT / "pyproject.toml").exists(),
                                reason="not a source checkout")


def _extras():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {k: set(v) for k, v in meta["optional-dependencies"].items()}


def _user_extras():
    return {k: v for k, v in _extras().items() if k not in DEV_EXTRAS}


def test_all_is_every_user_extra():
    extras = _user_extras()
    others = set().union(*(v for k, v in extras.items() if k != "all"))
    assert extras["all"] == others


def test_readme_extras_table_lists_pyprojects_extras():
    rows = re.findall(r'^\| `pip install "\.\[(\w+)\]"` \| ([^|]*)\|', (ROOT / "README.md")
                      .read_text(), flags=re.M)
    assert {name for name, _ in rows} == set(_user_extras())
    for name, installs in rows:
        if name == "all":
            assert "all of the above" in installs
            continue
        packages = {re.split(r"[<>=\[]", req)[0] for req in _user_extras()[name]}
        for pkg in packages:
            assert pkg in installs, (name, pkg, installs)


def test_docs_index_extras_table_lists_pyprojects_extras():
    text = (ROOT / "docs" / "index.rst").read_text()
    names = set(re.findall(r"^``(\w+)``\s{2,}", text, flags=re.M))
    assert set(_user_extras()) <= names
    assert names - set(_user_extras()) <= DEV_EXTRAS


def test_docs_index_points_to_every_page():
    text = (ROOT / "docs" / "index.rst").read_text()
    toc = text[text.index(".. toctree::"):]
    pages = [p for p in re.findall(r"^   (\S+)$", toc, flags=re.M) if not p.startswith(":")]
    where_next = text[text.index("Where next"):text.index(".. toctree::")]
    pointed = set(re.findall(r":doc:`([^`<]+)`", where_next))
    assert set(pages) - pointed == set(), "pages the index's Where next does not mention"
