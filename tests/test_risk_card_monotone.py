"""Risk cards under monotone constraints (issue 49).

* the rounding to integer points keeps every rule's sign (a point has the
  sign of the rule's contribution or is 0), so a card keeps the directions of
  the model it rounds;
* ``RiskCardClassifier(monotone=...)`` passes the constraints to its
  ``FIREClassifier``: the card's integer score is monotone along a grid of
  each constrained feature on every test row (brute force), where the
  unconstrained card on the same data is not.
"""
import numpy as np
import pytest

from firecy.risk._rounding import _loss, best_scale, local_moves, round_points


def _against_the_data(seed=0, n=500, k=6):
    """Rule memberships and contributions whose signs the labels contradict
    on half the rules: the loss alone would move those points across 0."""
    rng = np.random.default_rng(seed)
    A = (rng.random((n, k)) < 0.4).astype(float)
    truth = np.array([2.0, -1.5, 1.0, -2.0, 1.5, -1.0])
    y = (A @ truth - 0.3 + rng.logistic(size=n) > 0).astype(float)
    c = truth.copy()
    c[::2] = -0.2 * truth[::2]    # rules 0, 2, 4: small and the wrong way round
    return A, c, y


def test_local_moves_without_signs_cross_zero_on_this_data():
    """The case the signs guard against exists: free moves flip a sign."""
    A, c, y = _against_the_data()
    ys, s = 2 * y - 1, np.ones(y.size)
    start = np.round(3 * c / np.abs(c).max())
    beta, _ = best_scale(A @ start, ys, s)
    pts = local_moves(A, ys, s, start, 0.0, beta, max_points=3)[0]
    assert np.any(pts * c < 0)


def test_local_moves_keep_the_signs_given():
    A, c, y = _against_the_data()
    ys, s = 2 * y - 1, np.ones(y.size)
    start = np.round(3 * c / np.abs(c).max())
    beta, first = best_scale(A @ start, ys, s)
    pts, p0, beta, loss = local_moves(A, ys, s, start, 0.0, beta, max_points=3, signs=c)
    assert np.all(pts * c >= 0) and np.all(np.abs(pts) <= 3)
    assert loss <= first
    assert loss == pytest.approx(_loss(ys, beta * (A @ pts + p0), s, s.sum()), rel=1e-12)
    # a rule of sign 0 stays at 0; a start outside the signs is refused
    signs = np.sign(c)
    signs[1] = 0.0
    zero_start = start.copy()
    zero_start[1] = 0.0
    assert local_moves(A, ys, s, zero_start, 0.0, beta, 3, signs=signs)[0][1] == 0
    with pytest.raises(ValueError, match="signs"):
        local_moves(A, ys, s, start, 0.0, beta, 3, signs=-c)


@pytest.mark.parametrize("seed", range(4))
def test_no_rounding_candidate_flips_a_sign(seed):
    """Every candidate of round_points (the grid, the clipped grid, the
    polished ones) has each point of its rule's sign or 0."""
    A, c, y = _against_the_data(seed)
    cands = round_points(A, c, -0.3, y, np.ones(y.size), max_points=3)
    assert len(cands) > 10
    for _, pts, _, _ in cands:
        assert np.all(pts * c >= 0)


# -- RiskCardClassifier(monotone=...) -------------------------------------------
NAMES = ["x0", "x1", "x2", "x3"]
#: neither direction is true of the data (the risk peaks in the middle of x0
#: and dips in the middle of x1), so an unconstrained card is not monotone
MONO = {"x0": 1, "x1": -1}


def _bumps(n, seed):
    import pandas as pd
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (n, 4))
    logit = (3.0 * np.exp(-((X[:, 0] - 0.5) / 0.15) ** 2)
             - 3.0 * np.exp(-((X[:, 1] - 0.5) / 0.15) ** 2)
             + 1.5 * (X[:, 2] > 0.5) - 0.5)
    y = (rng.random(n) < expit(logit)).astype(int)
    return pd.DataFrame(X, columns=NAMES), y


@pytest.fixture(scope="module")
def bumps():
    X, y = _bumps(900, 0)
    return X[:600], y[:600], X[600:]


def _card(monotone, X, y):
    from firecy.risk import RiskCardClassifier

    return RiskCardClassifier(max_rules=8, n_estimators=100, monotone=monotone,
                              random_state=0).fit(X, y)


def _grid(clf, f, X):
    """The feature's range and every cut of the model's rules on it, with the
    float32 neighbours of each cut (the trees compare float32 inputs)."""
    cuts = [c.threshold for rule in clf.model_.ensemble_.rules for c in rule if c.feature == f]
    cuts = np.asarray(cuts, dtype=np.float32)
    near = np.concatenate([cuts, np.nextafter(cuts, np.float32(np.inf)),
                           np.nextafter(cuts, np.float32(-np.inf))]).astype(np.float64)
    lo, hi = float(X.iloc[:, f].min()), float(X.iloc[:, f].max())
    return np.unique(np.concatenate([np.linspace(lo - 0.1, hi + 0.1, 41), near]))


def _violations(clf, X, f, sign):
    """Rows whose score moves against ``sign`` somewhere along ``f``'s grid."""
    import pandas as pd

    grid = _grid(clf, f, X)
    rows = np.repeat(X.to_numpy(), grid.size, axis=0)
    rows[:, f] = np.tile(grid, len(X))
    score = clf.decision_function(pd.DataFrame(rows, columns=X.columns))
    steps = np.diff(score.reshape(len(X), grid.size), axis=1)
    return int(np.count_nonzero(np.any(sign * steps < 0, axis=1)))


def test_a_monotone_card_is_monotone_on_every_test_row(bumps):
    X, y, X_test = bumps
    clf = _card(MONO, X, y)
    assert clf.get_params()["monotone"] == MONO
    assert len(clf.card_.rules) >= 2     # a card, not an empty one
    for name, sign in MONO.items():
        assert _violations(clf, X_test, NAMES.index(name), sign) == 0, name
    # the same with the constraints as a list, one entry per feature
    listed = _card([1, -1, 0, 0], X, y)
    for name, sign in MONO.items():
        assert _violations(listed, X_test, NAMES.index(name), sign) == 0, name


def test_the_unconstrained_card_on_the_same_data_is_not(bumps):
    """So that the check above can fail."""
    X, y, X_test = bumps
    clf = _card(None, X, y)
    assert sum(_violations(clf, X_test, NAMES.index(name), sign)
               for name, sign in MONO.items()) > 0


def test_the_card_keeps_the_signs_of_the_model_it_rounds(bumps):
    from firecy.risk._model_terms import contributions, rule_membership

    X, y, _ = bumps
    for monotone in (None, MONO):
        clf = _card(monotone, X, y)
        _, cols, Xm = rule_membership(clf.model_, X)
        c, _ = contributions(clf.model_, Xm, cols)
        kept = c[np.searchsorted(cols, clf.card_.columns)]
        assert np.all(np.sign(clf.card_.points) == np.sign(kept))


def test_a_constraint_on_an_unknown_feature_is_a_clear_error(bumps):
    X, y, _ = bumps
    with pytest.raises(ValueError, match="unknown feature 'age'"):
        _card({"age": 1}, X, y)
