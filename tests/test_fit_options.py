"""The settings that benchmarks and tests vary are arguments, not module
globals assigned from outside (issue 48): ``est._fit_options`` and the
functions' keyword arguments."""
import ast
import dataclasses
import pathlib

import numpy as np
import pytest

from firecy.estimators._fit_options import FitOptions, fit_options

ROOT = pathlib.Path(__file__).resolve().parents[1]
# every setting FitOptions carries, under its module constant's name, and
# the retired switch of the multinomial solver
FORBIDDEN = {f.name.upper() for f in dataclasses.fields(FitOptions)} | {"USE_" + "ENGINE"}


def _patches(tree):
    """(line, name) of each assignment to, or setattr of, a forbidden
    attribute, and each string literal naming one (a dict of patches)."""
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Attribute) and sub.attr in FORBIDDEN:
                    yield node.lineno, sub.attr
        if isinstance(node, ast.Constant) and node.value in FORBIDDEN:
            yield node.lineno, node.value


def test_no_test_or_benchmark_assigns_a_fit_setting_global():
    found = []
    for folder in ("tests", "benchmarks", "asv_bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == pathlib.Path(__file__).resolve():
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            found += [f"{path.relative_to(ROOT)}:{line}: {name}"
                      for line, name in _patches(tree)]
    assert not found, "module globals patched (use est._fit_options):\n" + "\n".join(found)


def test_the_check_finds_the_old_patches():
    # the forms the tests and benchmarks used before issue 48
    old = ('monkeypatch.setattr(_stable, "N_TREES", 500)\n'
           "_stable.N_TREES, _stable.POOL_PER_RULE = 500, 3\n"
           "_linear_terms.LINEAR_PENALTY = 'l1'\n"
           "engine_path.USE_" "ENGINE = False\n"
           'patches = {"DISCRETE_LIMIT": 0}\n')
    assert sorted(_patches(ast.parse(old))) == [
        (1, "N_TREES"), (2, "N_TREES"), (2, "POOL_PER_RULE"), (3, "LINEAR_PENALTY"),
        (4, "USE_ENGINE"), (5, "DISCRETE_LIMIT")]


def test_fit_options_defaults_are_the_module_constants():
    from firecy.estimators import _linear_terms, _stable

    opts = fit_options(object())
    for f in dataclasses.fields(FitOptions):
        module = _linear_terms if f.name == "linear_penalty" else _stable
        assert getattr(opts, f.name) == getattr(module, f.name.upper()), f.name


def test_an_unknown_fit_option_is_named():
    class Est:
        _fit_options = {"n_tree": 5}

    with pytest.raises(ValueError, match=r"unknown fit option\(s\) \['n_tree'\]"):
        fit_options(Est())


def test_linear_penalty_argument():
    from firecy.estimators._linear_terms import with_linear_penalty
    from firecy.penalties import L1, MCP

    rules = MCP(1.0, 3.0)
    same = with_linear_penalty(rules, {"gamma": 3.0}, 4)
    l1 = with_linear_penalty(rules, {"gamma": 3.0}, 4, linear_penalty="l1")
    gamma = with_linear_penalty(rules, {"gamma": 3.0}, 4, linear_penalty="7")
    assert type(same.linear) is MCP and same.linear.gamma == 3.0
    assert type(l1.linear) is L1
    assert type(gamma.linear) is MCP and gamma.linear.gamma == 7.0
