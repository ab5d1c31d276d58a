"""firecy's public API and its documentation.

The public API is every class and function that a public module (a module
under ``firecy`` whose dotted name has no part starting with ``_``) lists in
its ``__all__`` (a module without ``__all__``: the classes and functions
defined in firecy that it binds to public names). An object reachable under
several names is taken once, under its shortest name (``FIRERegressor`` is
``firecy.FIRERegressor``, not ``firecy.estimators.FIRERegressor``).

Checked here: that ``docs/api.rst`` lists every public object (so that the
Sphinx build gives each a page), and that each has a numpydoc docstring with
its parameters and an Examples section. ``test_docs_doctests.py`` runs those
examples.
"""
import importlib
import inspect
import pkgutil
import re
import types
import warnings
from pathlib import Path

import pytest

import firecy

DOCS = Path(__file__).resolve().parents[1] / "docs"


def public_modules():
    """Dotted names of firecy's public modules, sorted."""
    names = ["firecy"]
    for info in pkgutil.walk_packages(firecy.__path__, "firecy."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def _is_api_object(obj):
    return (inspect.isclass(obj) or callable(obj)) and not isinstance(obj, types.ModuleType)


def public_api():
    """``[(name, object)]`` of every public class and function, sorted by name."""
    found = {}
    for modname in public_modules():
        module = importlib.import_module(modname)
        names = getattr(module, "__all__", None)
        if names is None:
            names = [n for n, v in vars(module).items()
                     if not n.startswith("_") and _is_api_object(v)
                     and str(getattr(v, "__module__", "")).startswith("firecy")]
        for attr in names:
            obj = getattr(module, attr)
            if not _is_api_object(obj):
                continue  # constants (documented in api.rst by hand)
            name = f"{modname}.{attr}"
            known = found.get(id(obj))
            if known is None or (len(name), name) < (len(known[0]), known[0]):
                found[id(obj)] = (name, obj)
    return sorted(found.values(), key=lambda item: item[0])


PUBLIC_API = public_api()


def _resolve(dotted):
    """The object at a dotted name: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def documented_in_api_rst():
    """Dotted names listed in the autosummary tables of docs/api.rst."""
    names, module, in_table = [], None, False
    for line in (DOCS / "api.rst").read_text().splitlines():
        directive = re.match(r"\.\. (\w+)::\s*(\S*)", line)
        if directive:
            if directive.group(1) == "currentmodule":
                module = directive.group(2)
            in_table = directive.group(1) == "autosummary"
            continue
        if in_table and line.strip() and not line.startswith((" ", "\t")):
            in_table = False  # the table ended at the first unindented line
        entry = line.strip()
        if in_table and entry and not entry.startswith(":"):
            entry = entry.lstrip("~")
            names.append(entry if entry.startswith("firecy.") else f"{module}.{entry}")
    return names


def test_public_api_is_found():
    names = [name for name, _ in PUBLIC_API]
    for expected in ("firecy.FIRERegressor", "firecy.solver.solve",
                     "firecy.penalties.MCP", "firecy.rules.rules_report",
                     "firecy.ensembles.rule_ensemble_from_model"):
        assert expected in names
    assert not [n for n in names if any(p.startswith("_") for p in n.split("."))]


@pytest.mark.skipif(not (DOCS / "api.rst").exists(), reason="no docs/ in this checkout")
def test_api_rst_lists_every_public_object():
    documented = documented_in_api_rst()
    documented_ids = {id(_resolve(name)) for name in documented}
    missing = [name for name, obj in PUBLIC_API if id(obj) not in documented_ids]
    assert not missing, f"public objects missing from the tables of docs/api.rst: {missing}"


# ---------------------------------------------------------------------------
# numpydoc docstrings
# ---------------------------------------------------------------------------
def _takes_parameters(obj):
    """Whether calling ``obj`` (a function, or a class: its constructor) takes arguments."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        # a compiled (Cython) class or function: Cython's embedsignature
        # puts "Name(arguments)" on the docstring's first line
        first = (obj.__doc__ or "").lstrip().split("\n", 1)[0]
        match = re.match(r"[\w.]+\((.*)\)", first)
        return bool(match and match.group(1).strip())
    return any(p.name != "self" for p in signature.parameters.values())


def _signature_names(obj):
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    out = []
    for p in signature.parameters.values():
        if p.name == "self":
            continue
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        out.append(prefix + p.name)
    return out


def docstring_problems(obj):
    """What the numpydoc docstring of ``obj`` lacks, as a list of strings."""
    from numpydoc.docscrape import NumpyDocString

    doc = inspect.getdoc(obj)
    if not doc:
        return ["no docstring"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parsed = NumpyDocString(doc)
    problems = [f"numpydoc: {w.message}" for w in caught]
    if not any(line.strip() for line in parsed["Summary"]):
        problems.append("no summary line")
    is_exception = inspect.isclass(obj) and issubclass(obj, BaseException)
    if _takes_parameters(obj) and not is_exception:
        sections = ["Parameters"] + (["Attributes"] if inspect.isclass(obj) else [])
        documented = [name.strip() for section in sections for p in parsed[section]
                      for name in p.name.split(",")]
        if not documented:
            problems.append("no Parameters section")
        else:
            expected = _signature_names(obj)
            undocumented = [n for n in expected or [] if n not in documented
                            and n.lstrip("*") not in documented]
            if undocumented:
                problems.append(f"parameters not documented: {', '.join(undocumented)}")
    if not any(">>>" in line for line in parsed["Examples"]):
        problems.append("no Examples section with a doctest")
    return problems


@pytest.mark.parametrize("name, obj", PUBLIC_API, ids=[name for name, _ in PUBLIC_API])
def test_public_object_has_numpydoc_docstring_with_examples(name, obj):
    pytest.importorskip("numpydoc")
    problems = docstring_problems(obj)
    assert not problems, f"{name}: {'; '.join(problems)}"


def test_docstring_check_flags_what_it_should():
    # the checker itself, on docstrings whose problems are known
    pytest.importorskip("numpydoc")

    def complete(a, b=1):
        """Add.

        Parameters
        ----------
        a, b : int

        Examples
        --------
        >>> complete(1)
        2
        """
        return a + b

    def no_examples(a):
        """Identity.

        Parameters
        ----------
        a : int
        """
        return a

    def half_documented(a, b):
        """Add.

        Parameters
        ----------
        a : int

        Examples
        --------
        >>> half_documented(1, 2)
        3
        """
        return a + b

    assert docstring_problems(complete) == []
    assert docstring_problems(no_examples) == ["no Examples section with a doctest"]
    assert docstring_problems(half_documented) == ["parameters not documented: b"]
    assert docstring_problems(lambda: None) == ["no docstring"]
