"""The one registry type behind firecy.penalties and firecy.datafits."""
import pytest

import firecy.datafits._registry as datafit_registry
import firecy.penalties._registry as penalty_registry
from firecy.datafits import Quadratic, as_datafit, available_datafits
from firecy.penalties import L1, available_penalties, make_penalty


class EntryPoint:
    def __init__(self, name, target):
        self.name, self.value, self._target = name, f"pkg:{name}", target

    def load(self):
        if isinstance(self._target, Exception):
            raise self._target
        return self._target


CASES = {
    "penalty": (penalty_registry.PENALTIES, available_penalties,
                lambda name: make_penalty(name, lam=0.1), L1),
    "datafit": (datafit_registry.DATAFITS, available_datafits, as_datafit, Quadratic),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_broken_entry_point_fails_only_when_asked_for(monkeypatch, kind):
    registry, available, build, good = CASES[kind]
    broken = ImportError("No module named 'pkg'")
    monkeypatch.setattr(registry, "_listed", False)
    monkeypatch.setattr(registry, "_pending", {})
    monkeypatch.setattr(registry, "_factories", dict(registry._factories))
    monkeypatch.setattr(registry, "_entry_points",
                        lambda: [EntryPoint(f"broken_{kind}", broken),
                                 EntryPoint(f"good_{kind}", good)])
    # listing names imports nothing: the broken plug-in is listed, not loaded
    names = available()
    assert f"broken_{kind}" in names and f"good_{kind}" in names
    assert isinstance(build(f"good_{kind}"), good)
    with pytest.raises(ImportError, match=f"the {kind} 'broken_{kind}' .*pkg:broken_{kind}"):
        build(f"broken_{kind}")
    with pytest.raises(ValueError, match=f"unknown {kind} 'nope'; available: .*good_{kind}"):
        build("nope")


@pytest.mark.parametrize("kind", sorted(CASES))
def test_entry_point_with_a_bad_factory_is_a_type_error(monkeypatch, kind):
    registry, _, build, _ = CASES[kind]
    monkeypatch.setattr(registry, "_listed", False)
    monkeypatch.setattr(registry, "_pending", {})
    monkeypatch.setattr(registry, "_entry_points", lambda: [EntryPoint("notcallable", 3.0)])
    with pytest.raises(TypeError, match="'notcallable' must be callable"):
        build("notcallable")


def test_builtins_never_list_entry_points(monkeypatch):
    def fail():
        raise AssertionError("entry points listed for a built-in name")

    for registry in (penalty_registry.PENALTIES, datafit_registry.DATAFITS):
        monkeypatch.setattr(registry, "_listed", False)
        monkeypatch.setattr(registry, "_entry_points", fail)
    assert isinstance(make_penalty("l1", lam=0.1), L1)
    assert isinstance(as_datafit("quadratic"), Quadratic)
