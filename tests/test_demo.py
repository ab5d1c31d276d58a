"""``firecy demo``'s measurement: repeated cross-validation, the budget curve,
the verdict FIRE against L1 and the budget picture."""
import re

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import RepeatedKFold, cross_val_score

from firecy import FIRERegressor
from firecy.cli import build_parser, main
from firecy.cli._demo import comparison_text, curve_text, verdict_text
from firecy.cli._demo_cv import N_FOLDS, budget_choice, cross_validate, path_predictions

SMALL = ["--n-trees", "20", "--n-lambdas", "10", "--cv", "3", "--n-jobs", "1",
         "--no-progress"]


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, scaled=False)
    return X, y


@pytest.mark.parametrize("linear_terms", [True, False])
def test_path_predictions_are_predict_at_the_selected_point(diabetes, linear_terms):
    X, y = diabetes
    rf = RandomForestRegressor(20, max_depth=3, random_state=0).fit(X[:300], y[:300])
    fire = FIRERegressor(rf, n_lambdas=10, cv=3, random_state=0, n_jobs=1,
                         linear_terms=linear_terms).fit(X[:300], y[:300])
    assert (fire.linear_coef_ != 0).any() == linear_terms
    preds = path_predictions(fire, X[300:])
    k = budget_choice(fire.path_, fire.max_rules_)
    assert fire.path_.lambdas[k] == fire.lambda_
    np.testing.assert_allclose(preds[k], fire.predict(X[300:]), rtol=1e-12, atol=1e-9)
    # every point: the intercept alone where the path keeps no term
    empty = np.flatnonzero(fire.path_.n_rules == 0)
    base = np.asarray(fire.ensemble_.predict_raw(X[300:], np.zeros(len(fire.coef_))))
    np.testing.assert_allclose(preds[empty[0]], base + fire.path_.intercepts[empty[0]])


def test_budget_choice_is_what_a_smaller_max_rules_selects(diabetes):
    X, y = diabetes
    rf = RandomForestRegressor(20, max_depth=3, random_state=0).fit(X, y)
    kw = dict(n_lambdas=10, cv=3, random_state=0, n_jobs=1, refine_path=False,
              linear_terms=False)
    fire = FIRERegressor(rf, **kw).fit(X, y)
    for budget in (3, 6):
        k = budget_choice(fire.path_, budget)
        small = FIRERegressor(rf, max_rules=budget, **kw).fit(X, y)
        # the same grid and folds: the smaller budget's fit picks the same point
        assert small.lambda_ == pytest.approx(fire.path_.lambdas[k], rel=1e-12)
        assert fire.path_.n_rules[k] <= budget
    assert fire.path_.n_rules[budget_choice(fire.path_, 0)] == 0  # the empty model


def test_cross_validation_scores_are_sklearns(diabetes):
    """Each fit's test R^2 of the forest and of FIRE is scikit-learn's
    cross_val_score on the same folds; the curve at the full budget is FIRE's
    own selection."""
    X, y = diabetes
    args = build_parser().parse_args(["demo", *SMALL, "--no-linear-terms", "--seed", "3"])
    cv = cross_validate(X, y, args, 14, n_repeats=1)
    folds = RepeatedKFold(n_splits=N_FOLDS, n_repeats=1, random_state=3)
    rf = RandomForestRegressor(20, max_depth=3, random_state=3, n_jobs=1)
    np.testing.assert_allclose(cv["scores"]["forest"][:, 1],
                               cross_val_score(rf, X, y, cv=folds, scoring="r2"), rtol=1e-12)
    fire = FIRERegressor(rf, n_lambdas=10, cv=3, random_state=3, n_jobs=1,
                         linear_terms=False)
    np.testing.assert_allclose(cv["scores"]["fire"][:, 1],
                               cross_val_score(fire, X, y, cv=folds, scoring="r2"),
                               rtol=1e-10)
    l1 = FIRERegressor(rf, penalty="l1", fusion=0.0, n_lambdas=10, cv=3, random_state=3,
                       n_jobs=1, linear_terms=False)
    np.testing.assert_allclose(cv["scores"]["l1"][:, 0],
                               -cross_val_score(l1, X, y, cv=folds,
                                                scoring="neg_mean_squared_error"),
                               rtol=1e-10)
    assert cv["curve"]["fire"].shape == (N_FOLDS, 14, 3)
    np.testing.assert_allclose(cv["curve"]["fire"][:, -1, 0], cv["scores"]["fire"][:, 0])
    np.testing.assert_array_equal(cv["curve"]["l1"][:, -1, 2], cv["scores"]["l1"][:, 3])
    assert np.all(cv["curve"]["fire"][:, :, 1] <= np.arange(1, 15))


def _cv(fire_r2, l1_r2, fire_curve, l1_curve, forest=3000.0):
    """A cross_validate result with the given R^2 per fit and mean curves."""
    n = len(fire_r2)
    scores = {"fire": np.column_stack([np.full(n, 3000.0), fire_r2, np.full(n, 9.0),
                                       np.full(n, 12.0)]),
              "l1": np.column_stack([np.full(n, 3100.0), l1_r2, np.full(n, 14.0),
                                     np.full(n, 30.0)]),
              "forest": np.column_stack([np.full(n, forest), np.full(n, 0.4),
                                         np.full(n, 4000.0), np.full(n, np.nan)])}

    def curve(mse):
        mse = np.asarray(mse, dtype=float)
        b = np.arange(1, mse.size + 1, dtype=float)
        return np.repeat(np.stack([mse, b, 2 * b], axis=1)[None], n, axis=0)

    return dict(scores=scores, curve={"fire": curve(fire_curve), "l1": curve(l1_curve)},
                budgets=np.arange(1, len(fire_curve) + 1), n_test=np.full(n, 88),
                n_repeats=2)


def test_verdict_says_whether_fire_is_ahead_and_where():
    # differences 0.02 +- tiny: ahead; the curve reaches L1's last MSE (3100) at 3
    cv = _cv([0.52, 0.50, 0.51, 0.53], [0.50, 0.48, 0.49, 0.51],
             [3500, 3200, 3090, 3050], [4000, 3500, 3300, 3100])
    text = verdict_text(cv, 4)
    assert text.startswith("FIRE is ahead of L1 at the budget of 4 terms: test R2 0.515 "
                           "against 0.495, a difference of +0.020")
    assert "FIRE better on 4 of 4 fits" in text
    assert "with a budget of 3 terms" in text
    assert "9.0 terms against L1's 14.0, and 12.0 antecedents" in text
    # a mean difference of 0.005 with a standard error of 0.0126: within noise
    diff = np.array([0.03, -0.02, 0.03, -0.02])
    cv = _cv(0.5 + diff, np.full(4, 0.5), [3500, 3400, 3300, 3200],
             [4000, 3500, 3300, 3100])
    text = verdict_text(cv, 4)
    se = diff.std(ddof=1) / 2
    assert text.startswith("FIRE is not ahead of L1 at the budget of 4 terms")
    assert f"standard error {se:.3f}" in text and "within noise" in text
    assert "FIRE better on 2 of 4 fits" in text
    assert "at no budget up to 4 terms is FIRE's mean test MSE at or below L1's" in text
    cv = _cv([0.40, 0.41, 0.42, 0.40], [0.50, 0.50, 0.51, 0.50],
             [3100, 3100, 3100, 3100], [3100, 3100, 3100, 3100])
    text = verdict_text(cv, 4)
    assert text.startswith("FIRE is behind L1 at the budget of 4 terms")
    assert "with a budget of 1 term;" not in text and "with a budget of 1 term." in text


def test_comparison_and_curve_tables_are_the_means():
    cv = _cv([0.5, 0.6, 0.7, 0.8], [0.5] * 4, [3500, 3200, 3090, 3050],
             [4000, 3500, 3300, 3100])
    text = comparison_text(cv, "FIRE MCP", 4)
    row = next(ln for ln in text.splitlines() if ln.startswith("FIRE MCP"))
    sd = np.std([0.5, 0.6, 0.7, 0.8], ddof=1)
    assert row.split()[-3:] == ["0.650", "±", f"{sd:.3f}"]
    assert row.split()[2:4] == ["9.0", "12.0"]
    forest = next(ln for ln in text.splitlines() if ln.startswith("full random forest"))
    assert forest.split()[3:5] == ["4000", "-"]
    assert "5-fold cross-validation repeated 2 times (4 fits" in text
    rows = curve_text(cv).splitlines()
    assert rows[-1] == "(full random forest: test MSE 3000)"
    assert [ln.split()[:2] for ln in rows[2:-1]] == [["1", "3500"], ["2", "3200"],
                                                    ["3", "3090"], ["4", "3050"]]


def test_budget_picture_draws_the_mean_curves():
    pytest.importorskip("matplotlib")
    from firecy.cli._demo_plot import budget_figure

    cv = _cv([0.5] * 4, [0.5] * 4, [3500, 3200, 3090, 3050], [4000, 3500, 3300, 3100],
             forest=3150.0)
    cv["curve"]["fire"][0, :, 0] += 40.0   # the mean moves by 10
    fig = budget_figure(cv, "FIRE MCP")
    err_ax, ante_ax = fig.axes
    lines = {ln.get_label(): ln for ln in err_ax.get_lines()}
    np.testing.assert_allclose(lines["FIRE MCP"].get_ydata(), [3510, 3210, 3100, 3060])
    np.testing.assert_allclose(lines["L1 selection"].get_ydata(), [4000, 3500, 3300, 3100])
    np.testing.assert_allclose(lines["full random forest"].get_ydata(), [3150, 3150])
    ante = {ln.get_label(): ln for ln in ante_ax.get_lines()}
    np.testing.assert_allclose(ante["FIRE MCP"].get_ydata(), [2, 4, 6, 8])


def test_demo_refuses_test_size(tmp_path, capsys):
    assert main(["demo", "--test-size", "0.3", "--output-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "--test-size is for firecy extract" in err and "cross-validation" in err


def test_demo_prints_the_cross_validated_table(tmp_path, capsys):
    """In-process: the printed FIRE row is the mean over the fits of
    scikit-learn's cross_val_score on the same folds."""
    X, y = load_diabetes(return_X_y=True, scaled=False)
    assert main(["demo", "--output-dir", str(tmp_path), "--repeats", "1",
                 "--no-linear-terms", *SMALL]) == 0
    out = capsys.readouterr().out
    rf = RandomForestRegressor(20, max_depth=3, random_state=0, n_jobs=1)
    fire = FIRERegressor(rf, n_lambdas=10, cv=3, random_state=0, n_jobs=1, linear_terms=False)
    r2 = cross_val_score(fire, X, y, cv=RepeatedKFold(n_splits=5, n_repeats=1,
                                                      random_state=0), scoring="r2")
    row = next(ln for ln in out.splitlines() if ln.startswith("FIRE MCP"))
    assert re.search(rf"{r2.mean():.3f} ± {r2.std(ddof=1):.3f}$", row), row
    assert re.search(r"^FIRE is (ahead of|not ahead of|behind) L1 at the budget of 14 terms",
                     out, re.M)
    assert "fitted on all 442 rows" in out
    assert (tmp_path / "budget.png").stat().st_size > 5000
