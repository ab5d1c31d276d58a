"""benchmarks/any_model/any_model.py (issue 22): the optional scikit-learn boosters
``gb`` and ``hgb`` are library defaults, fitted only when named, and the
default model list (so every older command) is unchanged."""
import importlib.util
import pathlib

import numpy as np
import pytest
from sklearn import ensemble

_PATH = (pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "any_model"
         / "any_model.py")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("any_model_bench", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_default_model_list_is_unchanged(bench):
    for task in ("regression", "classification"):
        assert list(bench.models(task, 0, noise_floor=True)) == [
            "rf3x500", "rf3x500b", "rf", "xgb", "lgbm"]
        assert list(bench.models(task, 0, noise_floor=True, optional=("hgb", "gb"))) == [
            "rf3x500", "rf3x500b", "rf", "xgb", "lgbm", "gb", "hgb"]


@pytest.mark.parametrize("task, gb, hgb", [
    ("regression", ensemble.GradientBoostingRegressor,
     ensemble.HistGradientBoostingRegressor),
    ("classification", ensemble.GradientBoostingClassifier,
     ensemble.HistGradientBoostingClassifier)])
def test_gb_and_hgb_are_library_defaults_but_the_seed(bench, task, gb, hgb):
    out = bench.models(task, 7, optional=("gb", "hgb"))
    for name, cls in (("gb", gb), ("hgb", hgb)):
        assert type(out[name]) is cls
        # scikit-learn's own defaults, random_state the only one set
        assert out[name].get_params() == {**cls().get_params(), "random_state": 7}


def test_unknown_model_is_refused(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--models", "rf3x500,gbm", "--seed-list", "0"])
    assert "unknown gbm" in capsys.readouterr().err


def test_hgb_threads_are_held_to_n_jobs(bench):
    from threadpoolctl import threadpool_info

    with bench._threads("hgb", 1):
        openmp = [p for p in threadpool_info() if p["user_api"] == "openmp"]
        assert openmp and all(p["num_threads"] == 1 for p in openmp)


def test_gb_is_skipped_on_missing_values_and_hgb_records_its_rule_values(bench, monkeypatch):
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:200].copy(), y.to_numpy()[:200]
    X.iloc[3, 0] = np.nan   # GradientBoosting refuses it, HistGradientBoosting routes it
    monkeypatch.setattr(bench, "load", lambda name: (X, y))
    assert bench.run_one("diabetes", 0, only={"gb"}) == []
    auto, = bench.run_one("diabetes", 0, only={"hgb"})
    leaf, = bench.run_one("diabetes", 0, only={"hgb"}, rule_values="leaf")
    assert auto["model"] == "hgb" and auto["rule_depth"] == "auto"
    # a booster: the default ("auto") solves on indicators
    assert (auto["rule_values"], auto["rule_values_used"]) == ("default", "unit")
    assert (leaf["rule_values"], leaf["rule_values_used"]) == ("leaf", "leaf")
    # the same model in both runs
    assert auto["model_error"] == leaf["model_error"]


class _Stop(Exception):
    pass


@pytest.mark.parametrize("argv, expected", [
    ([], "auto"),                                  # the default: every older command
    (["--rule-depth", "2,3,4"], (2, 3, 4)),
    (["--rule-depth", "3"], 3),
    (["--rule-depth", "None"], None)])
def test_rule_depth_option_reaches_run_one(bench, monkeypatch, argv, expected):
    seen = {}

    def stub(*args, **kwargs):
        seen.update(kwargs)
        raise _Stop

    monkeypatch.setattr(bench, "run_one", stub)
    with pytest.raises(_Stop):
        bench.main(["--seed-list", "0", "--datasets", "diabetes", *argv])
    assert seen["rule_depth"] == expected


@pytest.mark.parametrize("bad", ["2,x", "0", "2,-1", "deep"])
def test_bad_rule_depth_is_refused(bench, capsys, bad):
    with pytest.raises(SystemExit):
        bench.main(["--seed-list", "0", "--rule-depth", bad])
    assert "--rule-depth" in capsys.readouterr().err


def test_rule_depth_reaches_fire_on_the_models_but_not_the_reference(bench, monkeypatch):
    """A tiny run with a spy on FIRERegressor: the default models get the
    option's rule_depth, the reference every leaf (None), the rows record
    both, and without the option the default models get "auto"."""
    import firecy
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:200], y.to_numpy()[:200]
    monkeypatch.setattr(bench, "load", lambda name: (X, y))
    # small stand-ins for the reference forest and a booster (the option's path
    # does not depend on the models' sizes)
    monkeypatch.setattr(bench, "models", lambda task, seed, n_jobs, noise_floor, optional: {
        "rf3x500": ensemble.RandomForestRegressor(n_estimators=10, max_depth=3,
                                                  random_state=seed),
        "hgb": ensemble.HistGradientBoostingRegressor(max_iter=10, random_state=seed)})
    calls = []
    real = firecy.FIRERegressor

    def spy(model, **kwargs):
        calls.append((type(model).__name__, kwargs["rule_depth"]))
        return real(model, **kwargs)

    monkeypatch.setattr(firecy, "FIRERegressor", spy)
    ref, hgb = bench.run_one("diabetes", 0, rule_depth=(2, 3))
    assert calls == [("RandomForestRegressor", None), ("HistGradientBoostingRegressor", (2, 3))]
    assert (ref["model"], ref["rule_depth"]) == ("rf3x500", "None")
    assert (hgb["model"], hgb["rule_depth"]) == ("hgb", "(2, 3)")
    calls.clear()
    _, hgb_default = bench.run_one("diabetes", 0)
    assert calls == [("RandomForestRegressor", None), ("HistGradientBoostingRegressor", "auto")]
    assert hgb_default["rule_depth"] == "auto"
    # the same model under both depths: only FIRE's depth differs
    assert hgb_default["model_error"] == hgb["model_error"]
