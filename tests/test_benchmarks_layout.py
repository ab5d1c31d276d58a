"""The layout of benchmarks/ (issue 37): one folder per question, each with one
RESULTS.md whose every table names the command that made it; every path to a
benchmark file that the docs, the README, the library's comments, asv and the
benchmarks themselves mention exists."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

pytestmark = pytest.mark.skipif(not BENCH.is_dir(), reason="no benchmarks/ in this tree")

# a path under benchmarks/, without glob or brace patterns; not asv_bench/benchmarks/,
# nor a file at a past commit (`git show e6c58d7:benchmarks/...`)
PATH = re.compile(r"(?<![\w/:])benchmarks/[\w./-]*[\w-]\.(?:py|md|csv)\b")
# a line that names the command of the table below it
COMMAND = re.compile(r"^(\*\*)?Commands?\b")


def _referencing_files():
    yield ROOT / "README.md"
    yield ROOT / "setup.py"
    for pattern in ("docs/*.rst", "firecy/**/*.py", "firecy/**/*.pyx", "firecy/**/*.pxd",
                    "asv_bench/**/*.py", "examples/**/*.md", "tests/*.py",
                    "benchmarks/**/*.py", "benchmarks/**/*.md"):
        yield from ROOT.glob(pattern)


def _results_files():
    return sorted(BENCH.glob("*/RESULTS.md"))


def _tables(text):
    """(line number, header line, the lines above it back to the previous table)."""
    lines = text.splitlines()
    start = 0
    for i, line in enumerate(lines):
        if line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
            yield i + 1, line, lines[start:i]
        if line.startswith("|"):
            start = i + 1


def test_every_mentioned_benchmark_path_exists():
    missing = []
    for f in _referencing_files():
        if f.name == pathlib.Path(__file__).name or not f.is_file():
            continue
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            for m in PATH.finditer(line):
                if not (ROOT / m.group(0)).exists():
                    missing.append(f"{f.relative_to(ROOT)}:{n}: {m.group(0)}")
    assert not missing, "paths to files that do not exist:\n" + "\n".join(missing)


def test_the_top_of_benchmarks_holds_folders_an_index_and_shared_modules():
    stray = [p.name for p in BENCH.iterdir()
             if p.is_file() and p.name not in ("README.md", ".gitignore")
             and not (p.name.startswith("_") and p.suffix == ".py")]
    assert not stray, f"files at the top of benchmarks/ (put them in a topic folder): {stray}"
    index = (BENCH / "README.md").read_text(encoding="utf-8")
    for results in _results_files():
        assert f"{results.parent.name}/RESULTS.md" in index, results


@pytest.mark.parametrize("results", _results_files(), ids=lambda p: p.parent.name)
def test_every_results_table_names_its_command(results):
    bad = []
    for n, header, above in _tables(results.read_text(encoding="utf-8")):
        if header.startswith("| script |") or header.startswith("| file |"):
            continue  # the folder's index of scripts, not a measurement
        if not any(COMMAND.match(line) for line in above):
            bad.append(f"line {n}: {header[:70]}")
    assert not bad, f"{results.relative_to(ROOT)}: tables without a Command line:\n" + "\n".join(bad)


def test_docs_list_every_topic():
    page = (ROOT / "docs" / "benchmarks.rst").read_text(encoding="utf-8")
    for results in _results_files():
        assert f"../benchmarks/{results.parent.name}/RESULTS.md" in page, results
