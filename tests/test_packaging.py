"""How firecy installs and imports: the source tree's one-line error, the
installed package's contents, and the metadata's licence."""
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import firecy

REPO = Path(__file__).resolve().parent.parent
PACKAGE = Path(firecy.__file__).resolve().parent


def _editable_finder_active():
    """An editable install maps firecy's compiled modules from anywhere:
    then no directory can shadow them."""
    return any("editable" in type(f).__name__.lower() or "editable" in repr(f).lower()
               for f in sys.meta_path)


@pytest.mark.skipif(not (REPO / "setup.py").exists(), reason="needs the source tree")
def test_import_from_the_source_tree_says_what_to_do(tmp_path):
    # a copy of the source tree as a clone has it: Python and Cython sources,
    # no compiled module
    clone = tmp_path / "clone"
    shutil.copytree(REPO / "firecy", clone / "firecy",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "__pycache__"))
    shutil.copy(REPO / "setup.py", clone / "setup.py")
    probe = ("import sys\n"
             "try:\n"
             "    import firecy\n"
             "except ImportError as e:\n"
             "    print('ERROR', type(e).__name__, e)\n"
             "else:\n"
             "    print('IMPORTED', firecy.__file__)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=clone, capture_output=True,
                          text=True, timeout=120)
    out = done.stdout.strip()
    if out.startswith("IMPORTED") and _editable_finder_active():
        pytest.skip("an editable install maps the compiled modules into any tree")
    assert done.returncode == 0, done.stderr
    assert out.startswith("ERROR ImportError"), out
    assert "source tree" in out and str(clone) in out
    assert "run Python from another directory" in out
    assert "build_ext --inplace" in out
    assert len(out.splitlines()) == 1


def test_a_missing_module_outside_the_source_tree_keeps_its_error():
    # only a compiled module that the tree has the source of is the source
    # tree's fault
    assert firecy._source_tree_error("firecy.no_such_module") is None
    assert firecy._source_tree_error("numpy.something") is None
    assert firecy._source_tree_error(None) is None


def _installed_files():
    try:
        files = metadata.files("firecy")
    except metadata.PackageNotFoundError:
        return None
    if not files or any(str(f).endswith(".pth") and "editable" in str(f) for f in files):
        return None
    return [str(f) for f in files]


def test_installed_package_ships_headers_not_generated_c():
    files = _installed_files()
    if files is None:
        pytest.skip("firecy is not installed from a wheel (editable or in-place build)")
    assert not [f for f in files if f.endswith(".c")]
    assert any(f.endswith("firecy/penalties/base.pxd") for f in files)
    assert any(f.endswith("firecy/datafits/base.pxd") for f in files)


def test_metadata_licence_is_an_spdx_expression():
    try:
        meta = metadata.metadata("firecy")
    except metadata.PackageNotFoundError:
        pytest.skip("firecy's metadata is not installed")
    if meta.get("Metadata-Version", "0") < "2.4":
        pytest.skip("metadata written by an older setuptools (an old editable install)")
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert any(name.endswith("LICENSE") for name in meta.get_all("License-File") or [])
