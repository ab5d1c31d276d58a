"""Run the examples of the documentation as doctests, against the installed firecy.

Two sources: the docstrings of every public object (``test_docs_api.public_api``:
the object's own docstring and those of the public methods and properties its
class defines), and the ``>>>`` examples of the pages in ``docs/``.

Why not ``pytest --doctest-modules --pyargs firecy``: pytest collects doctests
from ``.py`` files only, so the compiled (Cython) modules, where the penalties
and the solver engine live, would be skipped; and it takes from each module
only the objects whose ``__module__`` is that module, so an object is found
where it is defined, under a private name, not where the public API exports
it. Here the docstrings are read from the imported objects themselves
(``__doc__``, which Cython keeps), whatever compiled them, under their public
names.

As in numpydoc's convention, examples may assume ``import numpy as np``; every
object's examples run in a fresh namespace, with ``ELLIPSIS`` and
``NORMALIZE_WHITESPACE``.
"""
import doctest
import inspect

import numpy as np
import pytest
from test_docs_api import DOCS, PUBLIC_API

OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _member_docstrings(cls):
    """``(name, docstring)`` of the public methods and properties firecy defines
    in ``cls`` or in the classes it inherits from firecy (its mixins: ``summary``,
    ``explain``, ``stability``, the ensemble's routing), once each."""
    out, seen = [], set()
    members = [(name, member) for klass in cls.__mro__
               if str(getattr(klass, "__module__", "")).startswith("firecy")
               for name, member in vars(klass).items()]
    for name, member in members:
        if name.startswith("_") or name in seen:
            continue
        seen.add(name)
        if isinstance(member, (classmethod, staticmethod)):
            member = member.__func__
        if not (isinstance(member, property) or inspect.isroutine(member)):
            continue
        code = member.fget if isinstance(member, property) else member
        # not what scikit-learn adds to an estimator (set_fit_request, ...)
        if str(getattr(code, "__module__", "")).startswith("firecy"):
            out.append((name, member.__doc__))
    return out


def docstrings_of(name, obj):
    """``(qualified name, docstring)`` of ``obj`` and, for a class, of its members."""
    out = [(name, obj.__doc__)]
    if inspect.isclass(obj):
        out += [(f"{name}.{member}", doc) for member, doc in _member_docstrings(obj)]
    return [(n, d) for n, d in out if d]


def run_doctests(named_docstrings, filename):
    """Run every ``>>>`` example; return the failure report ('' when all pass)."""
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    report = []
    n_examples = 0
    for name, text in named_docstrings:
        test = parser.get_doctest(text, {"np": np, "__name__": "__main__"}, name, filename, 0)
        n_examples += len(test.examples)
        if test.examples:
            runner.run(test, out=report.append, clear_globs=True)
    return n_examples, "".join(report)


@pytest.fixture(autouse=True)
def _quiet_plots():
    # examples that draw: no window, no figures kept between tests
    try:
        import matplotlib
    except ImportError:
        yield
        return
    matplotlib.use("Agg")
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.parametrize("name, obj", PUBLIC_API, ids=[name for name, _ in PUBLIC_API])
def test_docstring_examples_run(name, obj):
    module = inspect.getmodule(obj)
    n_examples, failures = run_doctests(docstrings_of(name, obj),
                                        getattr(module, "__file__", None))
    if n_examples == 0:
        pytest.skip(f"{name} has no examples yet (see test_docs_api.py)")
    assert not failures, failures


DOC_PAGES = sorted(DOCS.glob("*.rst")) if DOCS.is_dir() else []


@pytest.mark.parametrize("page", DOC_PAGES, ids=[p.name for p in DOC_PAGES])
def test_doc_page_examples_run(page):
    n_examples, failures = run_doctests([(page.name, page.read_text())], str(page))
    if n_examples == 0:
        pytest.skip(f"{page.name} has no >>> examples")
    assert not failures, failures


def test_runner_reports_a_failing_example():
    # the machinery itself: a wrong expected output is reported, a right one is not
    good = ">>> print(np.arange(3).sum())\n3\n"
    bad = ">>> print(np.arange(3).sum())\n4\n"
    assert run_doctests([("good", good)], None) == (1, "")
    n_examples, report = run_doctests([("bad", bad)], None)
    assert n_examples == 1 and "Expected:\n    4\nGot:\n    3" in report


def test_compiled_objects_docstrings_are_collected():
    # Penalty is a Cython class: its docstring and those of its compiled
    # methods must reach the runner (pytest --doctest-modules misses them)
    from firecy.penalties import Penalty

    collected = dict(docstrings_of("firecy.penalties.Penalty", Penalty))
    assert "firecy.penalties.Penalty" in collected
    assert "firecy.penalties.Penalty.value_of" in collected
    assert collected["firecy.penalties.Penalty.value_of"] == Penalty.value_of.__doc__
