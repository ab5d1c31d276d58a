"""Contract checks of penalties and datafits written in Python, and thread safety.

A Python penalty (datafit) is checked once when it is passed (methods and
their arguments), and every result is checked on every call: each violation
must be a clear error from ``fit`` naming the penalty and the method, every
time, without leaking memory. And no contract call writes to the penalty
object, so one object serves two solves in two threads at once.
"""
import gc
import threading
import tracemalloc
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import ConvergenceWarning

from firecy import FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import (
    L1, MCP, GroupL0, HierarchicalGroup, L1Fusion, LengthWeightedL1, PythonPenalty)
from firecy.solver import BlockDesign, fire_path, solve


@pytest.fixture(scope="module")
def forest():
    X, y = make_friedman1(n_samples=200, n_features=5, noise=0.5, random_state=1)
    rf = RandomForestRegressor(n_estimators=8, max_depth=3, random_state=1).fit(X, y)
    return X, y, rf


class PyL1:
    is_separable = True

    def __init__(self, lam=1.0):
        self.lam = lam

    def value(self, w, curvature):
        return self.lam * np.abs(w).sum()

    def prox(self, z, step, curvature):
        return np.sign(z) * np.maximum(np.abs(z) - self.lam / step, 0.0)

    def subdiff(self, w, curvature):
        s = np.sign(w) * self.lam
        return np.where(w == 0, -self.lam, s), np.where(w == 0, self.lam, s)

    def lambda_max(self, grad, curvature):
        return np.abs(grad).max()


class Raises(PyL1):
    def prox(self, z, step, curvature):
        raise RuntimeError("boom in prox")


class NaNProx(PyL1):
    def prox(self, z, step, curvature):
        return np.full_like(z, np.nan)


class InfValue(PyL1):
    def value(self, w, curvature):
        return np.inf if np.any(w) else 0.0


class EmptyInterval(PyL1):
    def subdiff(self, w, curvature):
        lo, hi = super().subdiff(w, curvature)
        return hi + 1.0, lo


class WrongShape(PyL1):
    def prox(self, z, step, curvature):
        return np.zeros(z.size + 1)


class NotANumber(PyL1):
    def value(self, w, curvature):
        return "a lot"


class NegativeLambdaMax(PyL1):
    def lambda_max(self, grad, curvature):
        return -1.0


class WritesLam(PyL1):
    # used to give a 0-rule model without a word: every later call saw lam 1e9
    def prox(self, z, step, curvature):
        self.lam = 1e9
        return super().prox(z, step, curvature)


class ComplexProx(PyL1):
    # NumPy would cast it to float by dropping the imaginary part
    def prox(self, z, step, curvature):
        return super().prox(z, step, curvature) + 1j


class ObjectProx(PyL1):
    def prox(self, z, step, curvature):
        return np.array(list(super().prox(z, step, curvature)), dtype=object)


class ComplexValue(PyL1):
    def value(self, w, curvature):
        return complex(super().value(w, curvature), 1.0)


class MissingMethod:
    lam = 1.0

    def value(self, w, curvature):
        return 0.0

    def prox(self, z, step, curvature):
        return z

    def lambda_max(self, grad, curvature):
        return 1.0


class WrongSignature(PyL1):
    def prox(self, z):
        return z


class NoLam(PyL1):
    def __init__(self):
        pass


BAD = [
    (Raises, RuntimeError, r"boom in prox"),
    (NaNProx, ValueError, r"penalty NaNProx: prox returned NaN or infinity"),
    (InfValue, ValueError, r"penalty InfValue: value returned inf, expected a finite number"),
    (EmptyInterval, ValueError, r"penalty EmptyInterval: subdiff returned an empty interval"),
    (WrongShape, ValueError, r"penalty WrongShape: prox returned shape \(\d+,\), expected"),
    (NotANumber, ValueError, r"penalty NotANumber: value returned str, expected a number"),
    (NegativeLambdaMax, ValueError, r"penalty NegativeLambdaMax: lambda_max returned -1.0 < 0"),
    (WritesLam, ValueError, r"penalty WritesLam: prox changed the penalty's lam from "
                            r"[0-9.e-]+ to 1000000000.0 during the solve"),
    (ComplexProx, ValueError, r"penalty ComplexProx: prox returned ndarray of dtype "
                              r"complex128, expected a float array"),
    (ObjectProx, ValueError, r"penalty ObjectProx: prox returned ndarray of dtype object"),
    (ComplexValue, ValueError, r"penalty ComplexValue: value returned a complex number "
                               r"\(.*\), expected a real number"),
    (MissingMethod, TypeError, r"MissingMethod cannot be used as a penalty: it has no "
                               r"method\(s\) subdiff"),
    (WrongSignature, TypeError, r"penalty WrongSignature: prox must accept the arguments "
                                r"\(z, step, curvature\), got prox\(z\)"),
    (NoLam, TypeError, r"NoLam must have a numeric attribute 'lam'"),
]


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.parametrize("cls,exc,pattern", BAD, ids=[b[0].__name__ for b in BAD])
def test_bad_python_penalty_is_a_clear_error_from_fit_every_time(forest, cls, exc, pattern):
    X, y, rf = forest

    def attempt():
        est = FIRERegressor(rf, penalty=cls(), n_lambdas=5, random_state=0)
        with pytest.raises(exc, match=pattern) as info:
            est.fit(X, y)
        if cls is Raises:   # the user's own exception, with where it was raised
            assert any("Raises.prox, called by firecy's solver" in n
                       for n in info.value.__notes__)
        del est, info

    for _ in range(3):      # warm-up: imports, caches, the ensemble's lookup tables
        attempt()
    gc.collect()
    rss = _rss_bytes()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for _ in range(20):
        attempt()
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert grown < 256 * 1024, f"{grown} bytes still allocated after 20 failed fits"
    assert _rss_bytes() - rss < 32 * 2 ** 20


def test_infinite_lambda_max_is_allowed_and_explained(forest):
    """lambda_max = inf is the contract's answer when no lam makes 0
    stationary (fusion alone): allowed, and a path without a grid says why."""
    X, y, rf = forest

    class Unpenalised(PyL1):
        def lambda_max(self, grad, curvature):
            return np.inf

    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    with pytest.raises(ValueError, match="lambda_max is infinite for this penalty"):
        fire_path(design, y, Unpenalised(1.0))
    path = fire_path(design, y, Unpenalised(1.0), lambdas=[0.5, 0.1])
    assert np.all(path.converged)


# -- datafits written in Python ---------------------------------------------------

class PySquared:
    def loss(self, y, eta):
        return 0.5 * (y - eta) ** 2

    def gradient(self, y, eta):
        return eta - y

    def curvature_bound(self, y):
        return 1.0


class NaNGradient(PySquared):
    def gradient(self, y, eta):
        return np.full_like(y, np.nan)


class RaisingLoss(PySquared):
    def loss(self, y, eta):
        raise ArithmeticError("boom in loss")


class TwoArgCurvature(PySquared):
    def curvature_bound(self, y, eta):
        return 1.0


class ComplexGradient(PySquared):
    def gradient(self, y, eta):
        return (eta - y) + 0j


class ObjectLoss(PySquared):
    def loss(self, y, eta):
        return np.array(list(super().loss(y, eta)), dtype=object)


class TooSmallBound(PySquared):
    # the squared loss's curvature is 1: steps 10x too long overshoot and
    # diverge (this used to surface as "loss returned NaN or infinity")
    def curvature_bound(self, y):
        return 0.1


class NoGradient:
    def loss(self, y, eta):
        return 0 * y

    def curvature_bound(self, y):
        return 1.0


@pytest.mark.parametrize("obj,exc,pattern", [
    (NaNGradient(), ValueError, r"datafit NaNGradient: gradient returned NaN or infinity"),
    (RaisingLoss(), ArithmeticError, r"boom in loss"),
    (ComplexGradient(), ValueError, r"datafit ComplexGradient: gradient returned ndarray of "
                                    r"dtype complex128, expected a float array"),
    (ObjectLoss(), ValueError, r"datafit ObjectLoss: loss returned ndarray of dtype object"),
    (TwoArgCurvature(), TypeError, r"datafit TwoArgCurvature: curvature_bound must accept "
                                   r"the arguments \(y\)"),
    (NoGradient(), TypeError, r"NoGradient cannot be used as a datafit: it has no method\(s\) "
                              r"gradient"),
], ids=lambda v: type(v).__name__ if not isinstance(v, str) and not isinstance(v, type) else "")
def test_bad_python_datafit_is_a_clear_error(forest, obj, exc, pattern):
    X, y, rf = forest
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    for _ in range(20):
        with pytest.raises(exc, match=pattern):
            solve(design, y, L1(0.01), datafit=obj)
    # a good one gives the built-in squared loss's solution
    a = solve(design, y, L1(0.01), tol=1e-10)
    b = solve(design, y, L1(0.01), datafit=PySquared(), tol=1e-10)
    np.testing.assert_allclose(b.coef, a.coef, atol=1e-7)


@pytest.mark.parametrize("strategy", ["working_set", "greedy"])
def test_too_small_curvature_bound_is_named(forest, strategy):
    X, y, rf = forest
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    with pytest.raises(ValueError, match=r"datafit TooSmallBound: its curvature bound is below "
                                         r"the loss's actual curvature: a sweep of block "
                                         r"updates.* raised F") as info:
        solve(design, y, L1(0.01), datafit=TooSmallBound(), strategy=strategy)
    assert "NaN" not in str(info.value)
    # a bound that holds, even loosely, is fine
    class LooseBound(PySquared):
        def curvature_bound(self, y):
            return 3.0

    with warnings.catch_warnings():
        # greedy steps a third as long converge slowly: no error is the point
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve(design, y, L1(0.01), datafit=LooseBound(), strategy=strategy, tol=1e-8)
    ref = solve(design, y, L1(0.01), strategy=strategy, tol=1e-8)
    assert res.objective == pytest.approx(ref.objective, rel=1e-6 if res.converged else 0.05)


# -- thread safety ---------------------------------------------------------------

def _penalties(ens):
    return [
        GroupL0(MCP(0.02, 3.0), 0.05),
        PythonPenalty(PyL1(0.02)),
        L1Fusion(0.01, 0.5),
        LengthWeightedL1.from_ensemble(ens, 0.01, base=1.5),
        HierarchicalGroup.from_ensemble(ens, 0.05, base=1.5),
    ]


@pytest.mark.parametrize("k", range(5), ids=["GroupL0", "Python", "L1Fusion", "LengthL1",
                                              "Hierarchical"])
def test_one_penalty_object_serves_two_solves_in_two_threads(forest, k):
    X, y, rf = forest
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    pen = _penalties(ens)[k]
    # two problems (different targets and weights) through the same object
    targets = [y, np.sin(X[:, 0]) * 10]
    weights = [None, np.linspace(0.5, 2.0, len(y))]
    alone = [solve(design, t, pen, sample_weight=s, tol=1e-7) for t, s in zip(targets, weights)]
    lam_before = pen.lam
    for _ in range(3):
        out = [None, None]
        start = threading.Barrier(2)

        def run(i):
            start.wait()
            out[i] = solve(design, targets[i], pen, sample_weight=weights[i], tol=1e-7)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for i in range(2):
            np.testing.assert_array_equal(out[i].coef, alone[i].coef)
            assert out[i].objective == alone[i].objective
    assert pen.lam == lam_before
