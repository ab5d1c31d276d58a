"""asv benchmarks at the paper's scale, at several densities, and on the logistic loss.

* ``Table1``: the FIRE paper's Table 1 sizes (Liu & Mazumder, KDD 2023): about
  1300, 4300 and 11000 rows with 250 trees of depth 3, 5 and 7 (data
  generated: friedman1). The L1 path and the MCP + fusion path, their time,
  peak memory, and what they reached (rules kept at the path's end, the
  objective at its last point), since a change that is faster because it
  stops early must show up. The largest cell takes minutes; it runs only with
  ``FIRECY_ASV_LARGE=1`` in the environment (CI's quick run leaves it out).
* ``SolveDensity``: one L1 solve keeping about 5% / 20% of the rules, with
  and without an intercept (the active-set solver's regime, see
  docs/solver.rst).
* ``SolveLogistic``: logistic + L1 / MCP on a random-forest classifier.

Run from asv_bench/: ``asv run --python=same --quick`` (CI), ``asv run``.
"""
import os
import warnings

import numpy as np

TABLE1 = [(1300, 3), (4300, 5)] + ([(11000, 7)] if os.environ.get("FIRECY_ASV_LARGE") else [])


def _regression_forest(n_samples, n_trees, max_depth, standardise=False):
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import RandomForestRegressor

    from firecy.ensembles import rule_ensemble_from_model
    from firecy.solver import BlockDesign

    X, y = make_friedman1(n_samples=n_samples, noise=1.0, random_state=0)
    rf = RandomForestRegressor(n_estimators=n_trees, max_depth=max_depth, random_state=0,
                               n_jobs=-1).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    if standardise:
        y = (y - y.mean()) / y.std()
    return design, y


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


class Table1:
    params = ([f"{n}x{d}" for n, d in TABLE1], ["l1", "mcp_fusion"])
    param_names = ["rows_x_depth", "penalty"]
    timeout = 1200

    def setup_cache(self):
        # the designs, and what each path reaches (computed once here: the
        # track_ benchmarks read it instead of running the path again)
        data = {}
        for n, d in TABLE1:
            design, y = _regression_forest(n, 250, d)
            reached = {name: _path(design, y, name) for name in ("l1", "mcp_fusion")}
            data[f"{n}x{d}"] = (design, y, {name: (int(p.n_rules[-1]), float(p.objectives[-1]))
                                            for name, p in reached.items()})
        return data

    def time_path(self, data, cell, name):
        _path(*data[cell][:2], name)

    def peakmem_path(self, data, cell, name):
        _path(*data[cell][:2], name)

    def track_rules_at_end(self, data, cell, name):
        return data[cell][2][name][0]

    def track_objective_at_end(self, data, cell, name):
        return data[cell][2][name][1]


def _path(design, y, name):
    from firecy.penalties import L1, MCPFusion
    from firecy.solver import fire_path

    pen = L1() if name == "l1" else MCPFusion(1.0, 1.1, 0.5)
    # the paper's grid: 20 points down to 1e-2 lambda_max
    return _quiet(fire_path, design, y, pen, n_lambdas=20, eps=1e-2, tol=1e-6)


class SolveDensity:
    """L1 at about 5% / 20% of the rules (the 8000-rule benchmark's regime,
    smaller: 2000 rows, 100 trees of depth 5)."""

    params = ([0.05, 0.2], [True, False])
    param_names = ["kept", "fit_intercept"]
    timeout = 600

    def setup_cache(self):
        from firecy.penalties import L1
        from firecy.solver import fire_path

        design, y = _regression_forest(2000, 100, 5, standardise=True)
        lams = {}
        for fi in (True, False):
            path = _quiet(fire_path, design, y, L1(), n_lambdas=60, eps=1e-3, tol=1e-5,
                          fit_intercept=fi, max_rules=int(0.25 * design.n_columns))
            for kept in (0.05, 0.2):
                k = int(np.argmin(np.abs(path.n_rules - kept * design.n_columns)))
                lams[kept, fi] = float(path.lambdas[k])
        return design, y, lams

    def _solve(self, data, kept, fit_intercept):
        from firecy.penalties import L1
        from firecy.solver import solve

        design, y, lams = data
        return _quiet(solve, design, y, L1(lams[kept, fit_intercept]), tol=1e-8,
                      fit_intercept=fit_intercept)

    def time_solve(self, data, kept, fit_intercept):
        self._solve(data, kept, fit_intercept)

    def track_objective(self, data, kept, fit_intercept):
        return self._solve(data, kept, fit_intercept).objective

    def track_rules_kept(self, data, kept, fit_intercept):
        return self._solve(data, kept, fit_intercept).n_rules


class SolveLogistic:
    params = (["l1", "mcp"],)
    param_names = ["penalty"]
    timeout = 600

    def setup_cache(self):
        from sklearn.datasets import make_classification
        from sklearn.ensemble import RandomForestClassifier

        from firecy.ensembles import rule_ensemble_from_model
        from firecy.solver import BlockDesign

        X, y = make_classification(n_samples=2000, n_features=20, n_informative=8,
                                   flip_y=0.05, random_state=0)
        rf = RandomForestClassifier(n_estimators=100, max_depth=4, random_state=0,
                                    n_jobs=-1).fit(X, y)
        ens = rule_ensemble_from_model(rf)
        design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
        return design, y.astype(np.float64)

    def _solve(self, data, name):
        from firecy.penalties import L1, MCP
        from firecy.solver import lambda_max, solve

        design, y = data
        make = (lambda lam: L1(lam)) if name == "l1" else (lambda lam: MCP(lam, 3.0))
        lam = 0.05 * lambda_max(design, y, make(1.0), datafit="logistic")
        return _quiet(solve, design, y, make(lam), datafit="logistic", tol=1e-8)

    def time_solve(self, data, name):
        self._solve(data, name)

    def peakmem_solve(self, data, name):
        self._solve(data, name)

    def track_objective(self, data, name):
        return self._solve(data, name).objective

    def track_rules_kept(self, data, name):
        return self._solve(data, name).n_rules
