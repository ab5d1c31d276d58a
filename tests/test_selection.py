"""Path refinement and the estimator's selection: what the refined path claims,
cross-validation (determinism, the one-standard-error rule), the defaults."""
import copy

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Lasso

from firecy import FIRERegressor
from firecy.penalties import L1, MCP, MCPFusion
from firecy.solver import BlockDesign, fire_path, solve
from firecy.solver._refine import MAX_INSERTED, MIN_LOG_GAP, candidate_points

from conftest import forest_design

MAX_RULES = 14


@pytest.fixture(scope="module")
def designs():
    """Two forest designs (different data and forest sizes)."""
    out = []
    for seed, n_trees in ((0, 20), (1, 50)):
        table, values, ptr, _, y, _ = forest_design(n_samples=300, n_trees=n_trees, seed=seed)
        out.append((BlockDesign.from_leaf_table(table, values, ptr), y))
    return out


def _remaining_jumps(path, max_rules):
    """Neighbours (i, i + 1) between which the count rises by more than one below the budget."""
    n = path.n_rules
    return [i for i in range(len(path) - 1) if n[i + 1] > n[i] + 1 and n[i] < max_rules]


def _count_at(design, y, penalty, lam, coef_init):
    pen = copy.deepcopy(penalty)
    pen.lam = lam
    return solve(design, y, pen, coef_init=coef_init)


# ------------------------------------------------------------ refinement ---

@pytest.mark.parametrize("penalty", [MCP(1.0, 1.1), MCPFusion(1.0, 1.1, 0.5)],
                         ids=["mcp", "mcp_fusion"])
@pytest.mark.parametrize("which", [0, 1])
def test_refined_path_visits_every_count_it_claims(designs, penalty, which):
    design, y = designs[which]
    plain = fire_path(design, y, penalty, max_rules=MAX_RULES)
    path = fire_path(design, y, penalty, max_rules=MAX_RULES, refine_path=True)
    assert np.all(np.diff(path.lambdas) < 0)
    assert path.inserted.sum() == len(path) - len(plain) < MAX_INSERTED
    # the grid points are the plain path's, untouched
    grid = ~path.inserted
    np.testing.assert_array_equal(path.lambdas[grid], plain.lambdas)
    np.testing.assert_array_equal(path.coefs[grid], plain.coefs)
    assert np.all(path.n_rules == np.count_nonzero(path.coefs, axis=1))
    # refinement found rule sets the grid had skipped
    top = min(int(path.n_rules.max()), MAX_RULES)
    plain_missing = set(range(1, top + 1)) - set(plain.n_rules.tolist())
    assert set(path.skipped_counts.tolist()) < plain_missing
    # the skipped counts are exactly the counts never visited ...
    visited = set(path.n_rules.tolist())
    assert sorted(set(range(1, top + 1)) - visited) == path.skipped_counts.tolist()
    # ... and each lies inside a jump narrower than the refinement's gap,
    # whose two ends are solutions the solver confirms (fixed points with
    # the claimed counts)
    jumps = _remaining_jumps(path, MAX_RULES)
    for k in path.skipped_counts:
        assert any(path.n_rules[i] < k < path.n_rules[i + 1] for i in jumps)
    for i in jumps:
        assert np.log(path.lambdas[i] / path.lambdas[i + 1]) <= MIN_LOG_GAP
        for j in (i, i + 1):
            res = _count_at(design, y, penalty, path.lambdas[j], path.coefs[j])
            assert res.n_rules == path.n_rules[j]
            np.testing.assert_allclose(res.objective, path.objectives[j], rtol=1e-8)


@pytest.mark.parametrize("which", [0, 1])
def test_refined_lasso_path_reaches_every_count(designs, which):
    # the lasso's count moves one rule at a time: refinement visits all of
    # them, and the counts at the two ends of every interval the grid had
    # jumped over agree with scikit-learn's Lasso (the same objective)
    design, y = designs[which]
    path = fire_path(design, y, L1(1.0), max_rules=MAX_RULES, refine_path=True, tol=1e-10)
    assert path.skipped_counts.size == 0
    assert set(range(1, MAX_RULES + 1)) <= set(path.n_rules.tolist())
    M = design.tocsc().toarray()
    for i in np.flatnonzero(path.inserted):
        for j in (i - 1, i, i + 1):
            lasso = Lasso(alpha=path.lambdas[j], tol=1e-12, max_iter=100000).fit(M, y)
            assert np.count_nonzero(np.abs(lasso.coef_) > 1e-9) == path.n_rules[j]


@pytest.mark.parametrize("penalty", [MCP(1.0, gamma=1.1), MCPFusion(1.0, 1.1, 0.5), L1(1.0)],
                         ids=["mcp", "mcp_fusion", "l1"])
@pytest.mark.parametrize("max_inserted", [MAX_INSERTED, 5])
def test_threaded_refinement_is_the_serial_one(designs, penalty, max_inserted, monkeypatch):
    # the jumps are bisected on clones of the problem in two threads (where
    # a clone solves bitwise as the problem does); the reference is the
    # serial refinement (one problem, jumps in order),
    # with a cap on the inserted points that stops it inside a jump too
    from firecy.solver._path import _check_grid, _warm_path
    from firecy.solver._problem import Problem, check_solver_params
    from firecy.solver._refine import refine_jumps

    clones = []
    clone = Problem.clone
    monkeypatch.setattr(Problem, "clone", lambda self: clones.append(1) or clone(self))
    design, y = designs[1]
    out, calls = [], []
    for n_jobs in (1, 2):
        problem = Problem(design, y, None, True)
        max_updates = check_solver_params(1e-8, None, design.n_blocks)
        lam_max = problem.lambda_max(penalty)
        grid = _check_grid(None, 50, 1e-3, lam_max, "lambda")
        plain = _warm_path(problem, penalty, "lam", grid, lam_max, MAX_RULES, 1e-8,
                           max_updates, None, "working_set")
        seen = []
        out.append(refine_jumps(problem, penalty, plain, MAX_RULES, 1e-8, max_updates,
                                n_jobs=n_jobs, max_inserted=max_inserted,
                                progress=lambda k, m, r: seen.append((k, m, r.n_rules))))
        calls.append(seen)
    assert len(_remaining_jumps(plain, MAX_RULES)) >= 2
    # L1 and MCP are solved by the active-set Newton solver, whose state a
    # clone lacks: serial (bitwise only that way); MCP + fusion: threaded
    assert clones == ([1] if isinstance(penalty, MCPFusion) else [])
    serial, threaded = out
    assert serial.inserted.sum() > 0 and (max_inserted > 5 or serial.inserted.sum() == 5)
    for name in ("lambdas", "coefs", "intercepts", "objectives", "n_rules", "n_iter",
                 "converged", "inserted", "warm_starts", "skipped_counts"):
        np.testing.assert_array_equal(getattr(threaded, name), getattr(serial, name),
                                      err_msg=name)
    assert calls[0] == calls[1]


@pytest.mark.parametrize("penalty", [MCP(1.0, 1.1), MCPFusion(1.0, 1.1, 0.5), L1(1.0)],
                         ids=["mcp", "mcp_fusion", "l1"])
@pytest.mark.parametrize("which", [0, 1])
def test_candidates_keep_every_count_of_the_refined_path(designs, penalty, which):
    design, y = designs[which]
    path = fire_path(design, y, penalty, max_rules=MAX_RULES, refine_path=True)
    keep = candidate_points(path.n_rules, path.inserted)
    # every rule count of the refined path keeps a candidate ...
    assert set(path.n_rules[keep].tolist()) == set(path.n_rules.tolist())
    # ... every grid point stays ...
    assert np.all(keep[~path.inserted])
    # ... and each dropped point has a later candidate of its count with no
    # other count between them (the end of its run: the same count, less shrunk)
    for i in np.flatnonzero(~keep):
        j = i + 1
        while not keep[j]:
            j += 1
        assert np.all(path.n_rules[i:j + 1] == path.n_rules[i])
        assert path.lambdas[j] < path.lambdas[i]


def test_candidates_by_hand():
    # counts along a refined path; inserted marked 1
    n_rules = [1, 3, 3, 3, 5, 5, 5, 6, 8, 8, 7, 9]
    inserted = [0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0]
    keep = candidate_points(n_rules, inserted)
    np.testing.assert_array_equal(keep, [1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1])
    assert np.all(candidate_points(n_rules, None))
    assert np.all(candidate_points(n_rules, np.zeros(len(n_rules), dtype=bool)))
    # an inserted last point ends its run
    assert candidate_points([2, 2], [0, 1]).tolist() == [True, True]
    with pytest.raises(ValueError, match="inserted has shape"):
        candidate_points(n_rules, inserted[:-1])


def test_refinement_without_budget_and_without_jumps(designs):
    design, y = designs[0]
    # no budget: every jump is refined, within the cap on inserted points
    path = fire_path(design, y, MCP(1.0, 1.1), n_lambdas=20, refine_path=True)
    assert 0 < path.inserted.sum() <= MAX_INSERTED
    n = path.n_rules
    for i in range(len(path) - 1):
        if n[i + 1] > n[i] + 1:
            assert (np.log(path.lambdas[i] / path.lambdas[i + 1]) <= MIN_LOG_GAP
                    or path.inserted.sum() == MAX_INSERTED)
    # a path without refinement says nothing about skipped counts
    plain = fire_path(design, y, MCP(1.0, 1.1), n_lambdas=20)
    assert plain.inserted is None and plain.skipped_counts is None


# ------------------------------------------------------------- selection ---

@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(n_samples=200, n_features=6, noise=1.0, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def forest(data):
    X, y = data
    return RandomForestRegressor(n_estimators=60, max_depth=3, random_state=0).fit(X, y)


def test_cv_selection_is_deterministic(data, forest):
    X, y = data
    # n_jobs=None: as many threads as tasks and cores; 1: the calling thread;
    # a grid of two points, so that the full-data paths run in threads too
    fits = [FIRERegressor(forest, random_state=7, n_jobs=n_jobs, gamma=[1.1, 3.0],
                          linear_terms=False).fit(X, y)
            for n_jobs in (1, 1, None, 2)]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.coef_, fits[0].coef_)
        assert other.intercept_ == fits[0].intercept_
        assert other.lambda_ == fits[0].lambda_
        assert other.best_params_ == fits[0].best_params_
        for a, b in zip(other.paths_, fits[0].paths_):
            np.testing.assert_array_equal(a.lambdas, b.lambdas)
            np.testing.assert_array_equal(a.coefs, b.coefs)
            np.testing.assert_array_equal(a.validation_error, b.validation_error)
    # another seed draws other folds
    other = FIRERegressor(forest, random_state=8, linear_terms=False).fit(X, y)
    assert not np.array_equal(other.path_.validation_error, fits[0].path_.validation_error)


# ------------------------------------------------------------- n_jobs ---

_SPY = """
import json, os, sys
import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
if len(sys.argv) > 1:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import joblib
from firecy import FIRERegressor
from firecy.estimators import _selection

seen = []
class Spy(_selection.Parallel):
    def __init__(self, n_jobs=None, **kw):
        seen.append(n_jobs)
        super().__init__(n_jobs=n_jobs, **kw)

_selection.Parallel = Spy
X, y = make_friedman1(n_samples=120, n_features=5, random_state=0)
forest = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
FIRERegressor(forest, gamma=[1.1, 3.0], cv=3, random_state=0).fit(X, y)
print(json.dumps(dict(seen=seen, cores=len(os.sched_getaffinity(0)))))
"""


def _spy_subprocess(env, *args):
    import json
    import os
    import subprocess
    import sys

    import firecy

    env = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    # run from the directory that holds the firecy under test: `python -c`
    # puts its working directory first on sys.path, and from the repository
    # root that is the source tree, not the installed package
    here = os.path.dirname(os.path.dirname(os.path.abspath(firecy.__file__)))
    out = subprocess.run([sys.executable, "-c", _SPY, *args], capture_output=True, text=True,
                         env=env, timeout=120, cwd=here)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _spy_parallel(monkeypatch):
    from firecy.estimators import _selection

    seen = []

    class Spy(_selection.Parallel):
        def __init__(self, n_jobs=None, **kw):
            seen.append(n_jobs)
            super().__init__(n_jobs=n_jobs, **kw)

    monkeypatch.setattr(_selection, "Parallel", Spy)
    return seen


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_getaffinity"),
                    reason="needs the CPU affinity mask (Linux)")
def test_n_jobs_none_uses_the_available_cores_and_honours_omp_num_threads():
    env = {"OMP_NUM_THREADS": None, "LOKY_MAX_CPU_COUNT": None}  # unset
    # two full-data paths (two gammas), then 3 folds x 2 gammas
    free = _spy_subprocess(env)
    assert free["seen"] == [min(2, free["cores"]), min(6, free["cores"])]
    assert _spy_subprocess({**env, "OMP_NUM_THREADS": "1"})["seen"] == [1, 1]
    # one CPU in the affinity mask (taskset): one worker
    assert _spy_subprocess(env, "pin")["seen"] == [1, 1]


def test_n_jobs_none_follows_joblib_config_and_nesting(data, forest, monkeypatch):
    from joblib import Parallel, delayed, parallel_config

    from firecy.estimators._selection import effective_n_jobs

    X, y = data
    seen = _spy_parallel(monkeypatch)
    with parallel_config(n_jobs=1):
        FIRERegressor(forest, cv=2, random_state=0, linear_terms=False).fit(X, y)
    assert seen == [1, 1]
    # inside a joblib worker (nested): one, the outer level holds the cores
    assert Parallel(n_jobs=2, prefer="threads")(
        delayed(effective_n_jobs)(None, 5) for _ in range(2)) == [1, 1]
    # an explicit n_jobs is joblib's, untouched
    assert effective_n_jobs(3, 1) == 3 and effective_n_jobs(-1, 5) == -1
    with parallel_config(backend="sequential"):  # not joblib's pool: its own default
        assert effective_n_jobs(None, 5) is None


def test_selection_uses_the_refined_path_and_a_mask(data, forest):
    X, y = data
    est = FIRERegressor(forest, random_state=0, linear_terms=False).fit(X, y)
    p = est.path_
    assert p.inserted.any()   # this forest's path jumps, and was refined
    # the candidates: within the budget, less the inserted points followed
    # by a point of the same count (inside a run of equal counts)
    repeated = np.append(p.n_rules[1:] == p.n_rules[:-1], False)
    np.testing.assert_array_equal(p.eligible,
                                  (p.n_rules <= est.max_rules_) & ~(p.inserted & repeated))
    assert np.all(np.isfinite(p.validation_error[p.eligible]))
    assert np.all(np.isinf(p.validation_error[~p.eligible]))
    k = int(np.flatnonzero(p.lambdas == est.lambda_)[0])
    assert p.validation_error[k] == np.min(p.validation_error)
    np.testing.assert_array_equal(est.coef_, p.coefs[k])
    # the final model is the full-data path's solution at the selected lambda
    ens = est.ensemble_
    table = np.ascontiguousarray(ens.leaf_table(X), dtype=np.int32)
    design = BlockDesign.from_leaf_table(table, ens.leaf_values, ens.block_ptr)
    full = fire_path(design, y, est.penalty_, max_rules=est.max_rules_, refine_path=True)
    np.testing.assert_array_equal(full.lambdas, p.lambdas)
    np.testing.assert_array_equal(full.coefs[k], est.coef_)


def test_validation_errors_are_the_folds_mean(data, forest):
    # the CV error of a point is the mean over the folds of the loss of a
    # path fitted on the fold's training rows, at the full path's lambdas
    from sklearn.model_selection import KFold

    X, y = data
    est = FIRERegressor(forest, cv=3, random_state=0, linear_terms=False).fit(X, y)
    p = est.path_
    lams = p.lambdas[p.eligible]
    ens = est.ensemble_
    table = np.ascontiguousarray(ens.leaf_table(X), dtype=np.int32)
    errs = []
    for train, test in KFold(3, shuffle=True, random_state=0).split(X):
        design = BlockDesign.from_leaf_table(table[train], ens.leaf_values, ens.block_ptr)
        fold = fire_path(design, y[train], est.penalty_, lambdas=lams)
        pred = np.column_stack([ens.predict_raw(X[test], w) + b
                                for w, b in zip(fold.coefs, fold.intercepts)])
        errs.append(np.mean((y[test][:, None] - pred) ** 2, axis=0))
    np.testing.assert_allclose(p.validation_error[p.eligible], np.mean(errs, axis=0),
                               rtol=1e-10)


def test_one_standard_error_rule(data, forest):
    X, y = data
    best = FIRERegressor(forest, cv=4, random_state=0, linear_terms=False).fit(X, y)
    sparse = FIRERegressor(forest, cv=4, one_se=True, random_state=0, linear_terms=False).fit(X, y)
    p = sparse.path_
    np.testing.assert_array_equal(p.validation_error, best.path_.validation_error)
    k_best = int(np.argmin(p.validation_error))
    # standard error of the mean over 4 folds: std (ddof 0) / sqrt(3)
    bar = p.validation_error[k_best] + p.validation_error_std[k_best] / np.sqrt(3)
    within = p.eligible & (p.validation_error <= bar)
    assert sparse.n_rules_ == p.n_rules[within].min()
    assert sparse.n_rules_ <= best.n_rules_
    assert sparse.validation_error_ <= bar
    with pytest.raises(ValueError, match="one_se=True needs selection='cv'"):
        FIRERegressor(forest, one_se=True, selection="validation", linear_terms=False).fit(X, y)
    with pytest.raises(TypeError, match="one_se must be True or False"):
        FIRERegressor(forest, one_se="yes", linear_terms=False).fit(X, y)
    with pytest.raises(TypeError, match="refine_path must be True or False"):
        FIRERegressor(forest, refine_path=None, linear_terms=False).fit(X, y)


# -------------------------------------------------------------- defaults ---

def test_defaults_give_fewer_than_15_rules():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    est = FIRERegressor(random_state=0, linear_terms=False).fit(X, y)
    assert 1 <= est.n_rules_ < 15
    assert np.count_nonzero(est.coef_) == est.n_rules_
    assert est.best_params_ == {"gamma": 1.1, "fusion": 0.5, "group_l0": 0.0}


def test_defaults_identical_in_estimator_and_cli():
    from firecy.cli._parser import build_parser

    params = FIRERegressor(linear_terms=False).get_params()
    assert (params["penalty"], params["gamma"], params["fusion"], params["max_rules"],
            params["selection"], params["cv"], params["refine_path"], params["one_se"]) == (
        "mcp", 1.1, 0.5, "auto", "cv", 5, True, False)
    for command in (["demo"], ["extract", "data.csv", "--target", "y"]):
        args = build_parser().parse_args(command)
        assert args.penalty == params["penalty"] and args.gamma == params["gamma"]
        assert args.fusion == params["fusion"] and args.max_rules == params["max_rules"]
        assert args.n_lambdas == params["n_lambdas"]
        assert args.selection == params["selection"] and args.cv == params["cv"]
        assert args.one_se == params["one_se"]
        assert (not args.no_refine_path) == params["refine_path"]


def test_cli_one_se_needs_cv(tmp_path, capsys):
    from firecy.cli import main

    code = main(["demo", "--output-dir", str(tmp_path), "--one-se", "--selection",
                 "validation", "--no-progress", "--n-trees", "10"])
    assert code != 0
    assert "--one-se needs --selection cv" in capsys.readouterr().err
