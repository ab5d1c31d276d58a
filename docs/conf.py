"""Sphinx configuration of the firecy documentation.

Build with ``sphinx-build -b html docs <output dir>`` from the repository
root. The API pages import the compiled package: build it first (``pip
install .``, or ``python setup.py build_ext --inplace`` for the source tree,
which this file puts first on ``sys.path``). The example gallery needs
sphinx-gallery (and matplotlib); without it the gallery is left out and the
rest of the documentation builds.
"""
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

project = "firecy"
author = "the firecy developers"
copyright = "the firecy developers"
try:
    import firecy

    release = version = firecy.__version__
except ImportError:  # not built: autodoc will report what it cannot import
    release = version = "unknown"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]

try:
    import sphinx_gallery  # noqa: F401
except ImportError:
    HAVE_GALLERY = False
else:
    HAVE_GALLERY = True
    extensions.append("sphinx_gallery.gen_gallery")
    sphinx_gallery_conf = {
        "examples_dirs": str(ROOT / "examples"),
        "gallery_dirs": "auto_examples",
        "filename_pattern": "plot_",
        # the compiled plug-in example is built with a C compiler, not run here
        "ignore_pattern": r"__init__\.py|plugin_penalty",
        "within_subsection_order": "FileNameSortKey",
        "download_all_examples": False,
        "write_computation_times": False,
        "reset_modules": ("matplotlib",),
    }

# numpydoc-style docstrings, read by napoleon
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_preprocess_types = True

autodoc_default_options = {"member-order": "bysource"}
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autosummary_generate = False

templates_path = []
exclude_patterns = ["_build"]
root_doc = "index"
html_theme = "alabaster"
html_theme_options = {"description": "Rule extraction from tree ensembles (FIRE)"}
pygments_style = "sphinx"
default_role = "literal"


def _drop_gallery_from_toctree(app, docname, source):
    """Without sphinx-gallery, remove the gallery entry from the index toctree."""
    if docname == "index":
        source[0] = "\n".join(
            line for line in source[0].splitlines() if "auto_examples/index" not in line
        )


def setup(app):
    if not HAVE_GALLERY:
        app.connect("source-read", _drop_gallery_from_toctree)
