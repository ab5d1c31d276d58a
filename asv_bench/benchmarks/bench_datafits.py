"""asv benchmarks of the solver with the logistic datafit (and a Python datafit).

Run from asv_bench/: ``asv run`` (or ``asv dev``). Times are of one solve /
one path at a fixed tolerance; the objective reached and the rules kept are
tracked too (``track_*``): a solver that is faster because it stops early
must show up.
"""
import warnings

import numpy as np


def _classifier_design(n_samples=2000, n_trees=100, max_depth=4):
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from firecy.ensembles import rule_ensemble_from_model
    from firecy.solver import BlockDesign

    X, y = make_classification(n_samples=n_samples, n_features=20, n_informative=8,
                               flip_y=0.05, random_state=0)
    rf = RandomForestClassifier(n_estimators=n_trees, max_depth=max_depth,
                                random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    return design, y.astype(np.float64)


class PyLogistic:
    """The logistic loss written in Python (PythonDatafit's overhead)."""

    def loss(self, y, eta):
        return np.logaddexp(0.0, eta) - y * eta

    def gradient(self, y, eta):
        return 0.5 * (1 + np.tanh(0.5 * eta)) - y

    def hessian(self, y, eta):
        p = 0.5 * (1 + np.tanh(0.5 * eta))
        return p * (1 - p)

    def curvature_bound(self, y):
        return 0.25


class LogisticForest:
    params = (["l1", "mcp", "l1_python_datafit"], [0.1, 0.01])
    param_names = ["case", "lambda_fraction"]
    timeout = 300

    def setup_cache(self):
        return _classifier_design()

    def _solve(self, data, case, fraction):
        from firecy.penalties import MCP, L1
        from firecy.solver import lambda_max, solve

        design, y = data
        lam = fraction * lambda_max(design, y, L1(), datafit="logistic")
        pen = MCP(lam, 2.0) if case == "mcp" else L1(lam)
        datafit = PyLogistic() if case == "l1_python_datafit" else "logistic"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return solve(design, y, pen, datafit=datafit, tol=1e-8)

    def time_solve(self, data, case, fraction):
        self._solve(data, case, fraction)

    def track_objective(self, data, case, fraction):
        return self._solve(data, case, fraction).objective

    def track_n_rules(self, data, case, fraction):
        return self._solve(data, case, fraction).n_rules


class LogisticPath:
    timeout = 300

    def setup_cache(self):
        return _classifier_design()

    def time_path_20(self, data):
        from firecy.penalties import L1
        from firecy.solver import fire_path

        design, y = data
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fire_path(design, y, L1(), datafit="logistic", n_lambdas=20, eps=1e-2, tol=1e-6)
