"""``firecy extract --task poisson`` / ``--task survival``: the rules written,
the comparison scores against an independent computation, and the one-line
errors for bad input."""
import json

import numpy as np
import pandas as pd
import pytest

from firecy.cli import main
from firecy.datafits._poisson_loss import poisson_deviance
from firecy._metrics import concordance_index

SMALL = ["--n-trees", "30", "--n-lambdas", "15", "--n-jobs", "1", "--no-progress",
         "--cv", "3"]


@pytest.fixture
def counts_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    X = rng.normal(size=(n, 3))
    years = rng.uniform(0.5, 2.0, size=n)
    claims = rng.poisson(years * np.exp(0.8 * (X[:, 0] > 0)))
    path = tmp_path / "counts.csv"
    pd.DataFrame(dict(a=X[:, 0], b=X[:, 1], c=X[:, 2], years=years, claims=claims)).to_csv(
        path, index=False)
    return path


@pytest.fixture
def survival_csv(tmp_path):
    rng = np.random.default_rng(1)
    n = 200
    X = rng.normal(size=(n, 3))
    time = np.round(rng.exponential(np.exp(-2.0 * (X[:, 0] > 0))), 2) + 0.01
    event = rng.uniform(size=n) < 0.7
    path = tmp_path / "surv.csv"
    pd.DataFrame(dict(a=X[:, 0], b=X[:, 1], c=X[:, 2], t=time, died=event)).to_csv(
        path, index=False)
    return path


def _json(out):
    return json.loads(out.read_text(encoding="utf-8"))


def test_poisson_task_writes_rules_that_beat_the_null_rate(counts_csv, tmp_path, capsys):
    out = tmp_path / "rules.json"
    assert main(["extract", str(counts_csv), "--task", "poisson", "--target", "claims",
                 "--exposure", "years", "--output", str(out), *SMALL]) == 0
    text = capsys.readouterr().out
    assert "test deviance" in text and "test D2" in text
    doc = _json(out)
    assert doc["task"] == "poisson" and 1 <= doc["n_rules"] <= 14
    # the FIRE row's D2 (deviance explained against the exposure-weighted
    # null rate on the test rows) is positive: the rules find the signal
    fire = next(v for k, v in doc["comparison"].items() if k.startswith("FIRE"))
    assert fire["test_d2"] > 0
    assert fire["test_deviance"] > 0


def test_survival_task_scores_concordance(survival_csv, tmp_path, capsys):
    out = tmp_path / "rules.json"
    assert main(["extract", str(survival_csv), "--task", "survival", "--time", "t",
                 "--event", "died", "--model", "xgboost", "--output", str(out),
                 *SMALL]) == 0
    assert "test C-index" in capsys.readouterr().out
    doc = _json(out)
    fire = next(v for k, v in doc["comparison"].items() if k.startswith("FIRE"))
    assert 0.6 < fire["test_c_index"] <= 1.0


def test_survival_ties_reach_the_cox_loss(survival_csv, tmp_path, monkeypatch):
    import firecy.estimators._glm_paths as glm_paths

    seen = []

    class Spy(glm_paths.CoxLoss):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.append(self.ties)

    monkeypatch.setattr(glm_paths, "CoxLoss", Spy)
    assert main(["extract", str(survival_csv), "--task", "survival", "--time", "t",
                 "--event", "died", "--ties", "efron", "--output",
                 str(tmp_path / "r.json"), *SMALL]) == 0
    assert seen and set(seen) == {"efron"}
    seen.clear()
    assert main(["extract", str(survival_csv), "--task", "survival", "--time", "t",
                 "--event", "died", "--output", str(tmp_path / "r.json"), *SMALL]) == 0
    assert seen and set(seen) == {"breslow"}


def test_glm_scores_match_independent_computation():
    from firecy.cli._glm_task import glm_scores

    class Fixed:
        def __init__(self, raw):
            self.raw = raw

        def predict(self, X, exposure=None):
            return np.exp(self.raw) * (1.0 if exposure is None else exposure)

    rng = np.random.default_rng(2)
    n = 50
    raw = rng.normal(size=n)
    e = rng.uniform(0.5, 2.0, size=n)
    y = rng.poisson(e * np.exp(raw)).astype(float)
    got = glm_scores(Fixed(raw), None, np.column_stack([y, e]), "poisson")
    mu = e * np.exp(raw)
    dev = np.mean(2 * (np.where(y > 0, y * np.log(np.where(y > 0, y, 1) / mu), 0) - y + mu))
    mu0 = e * y.sum() / e.sum()
    dev0 = np.mean(2 * (np.where(y > 0, y * np.log(np.where(y > 0, y, 1) / mu0), 0) - y + mu0))
    assert got["test_deviance"] == pytest.approx(dev, rel=1e-12)
    assert got["test_d2"] == pytest.approx(1 - dev / dev0, rel=1e-12)
    assert got["test_deviance"] == pytest.approx(poisson_deviance(y, mu), rel=1e-12)


@pytest.mark.parametrize("args, message", [
    (["--task", "poisson", "--target", "claims", "--exposure", "years"], "zero exposure"),
    (["--task", "poisson", "--target", "claims", "--exposure", "nope"], "no numeric"),
])
def test_bad_count_input_is_one_line(counts_csv, tmp_path, capsys, args, message):
    df = pd.read_csv(counts_csv)
    df.loc[3, "years"] = 0.0
    bad = tmp_path / "bad.csv"
    df.to_csv(bad, index=False)
    assert main(["extract", str(bad), *args, "--output", str(tmp_path / "r.json"),
                 *SMALL]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize("args, message", [
    (["--task", "survival", "--time", "t", "--event", "died"], "has no event"),
    (["--task", "survival", "--time", "a", "--event", "died"], "must be positive"),
    (["--task", "survival", "--time", "t", "--event", "b"], "0/1"),
])
def test_bad_survival_input_is_one_line(survival_csv, tmp_path, capsys, args, message):
    df = pd.read_csv(survival_csv)
    if "has no event" in message:
        df["died"] = False
    bad = tmp_path / "bad.csv"
    df.to_csv(bad, index=False)
    assert main(["extract", str(bad), *args, "--output", str(tmp_path / "r.json"),
                 *SMALL]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


def test_concordance_of_the_model_row_is_the_models(survival_csv):
    # the comparison's "full model" row scores the fitted model's own
    # predictions (XGBoost's hazard ratio): the same C-index as its margin
    import xgboost as xgb

    df = pd.read_csv(survival_csv)
    X = df[["a", "b", "c"]].to_numpy()
    signed = np.where(df.died, df.t, -df.t)
    model = xgb.XGBRegressor(objective="survival:cox", n_estimators=20, max_depth=2,
                             n_jobs=1).fit(X, signed)
    from firecy.cli._glm_task import glm_scores

    y = np.array(list(zip(df.died, df.t)), dtype=[("event", bool), ("time", float)])
    got = glm_scores(None, X, y, "survival", model=model)["test_c_index"]
    want = concordance_index(df.died.to_numpy(), df.t.to_numpy(),
                             model.predict(X, output_margin=True))
    assert got == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("args, message", [
    (["--task", "poisson"], "required: --target"),
    (["--target", "claims", "--exposure", "years"], "--exposure is for --task poisson"),
    (["--task", "poisson", "--target", "claims", "--time", "a"], "--task survival"),
    (["--task", "survival", "--time", "t"], "--time COLUMN and --event COLUMN"),
    (["--task", "survival", "--target", "t", "--time", "t", "--event", "died"],
     "not --target"),
    (["--task", "poisson", "--target", "claims", "--ties", "efron"],
     "--ties is for --task survival"),
])
def test_options_that_do_not_fit_the_task_are_usage_errors(counts_csv, capsys, args,
                                                           message):
    with pytest.raises(SystemExit) as info:
        main(["extract", str(counts_csv), *args, *SMALL])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
