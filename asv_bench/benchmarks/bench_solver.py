"""asv benchmarks of the solver on a random-forest design.

Run from asv_bench/: ``asv run`` (or ``asv dev`` / ``asv continuous main HEAD``).
Times are of one solve / one path at a fixed tolerance; the objective each
reached is tracked too (``track_*``), since a fast solver that stops early is
not fast.
"""
import warnings

import numpy as np


def _forest_design(n_samples=2000, n_trees=100, max_depth=4):
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import RandomForestRegressor

    from firecy.ensembles import rule_ensemble_from_model
    from firecy.solver import BlockDesign

    X, y = make_friedman1(n_samples=n_samples, noise=1.0, random_state=0)
    rf = RandomForestRegressor(n_estimators=n_trees, max_depth=max_depth,
                               random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    return BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr), y


class SolveForest:
    params = (["l1", "mcp", "mcp_fusion", "group_l0"],)
    param_names = ["penalty"]
    timeout = 300

    def setup_cache(self):
        return _forest_design()

    def _penalty(self, name, lam):
        from firecy.penalties import MCP, GroupL0, L1, MCPFusion

        return {
            "l1": lambda: L1(lam),
            "mcp": lambda: MCP(lam, 1.1),
            "mcp_fusion": lambda: MCPFusion(lam, 1.1, 0.5),
            "group_l0": lambda: GroupL0(MCP(lam, 1.1), 1e-3),
        }[name]()

    def _solve(self, data, name):
        from firecy.solver import lambda_max, solve

        design, y = data
        lam = 0.05 * lambda_max(design, y, self._penalty(name, 1.0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return solve(design, y, self._penalty(name, lam), tol=1e-8)

    def time_solve(self, data, name):
        self._solve(data, name)

    def track_objective(self, data, name):
        return self._solve(data, name).objective

    def track_n_rules(self, data, name):
        return self._solve(data, name).n_rules


class PathForest:
    params = (["l1", "mcp_fusion"],)
    param_names = ["penalty"]
    timeout = 300

    def setup_cache(self):
        return _forest_design()

    def time_path_20(self, data, name):
        from firecy.penalties import L1, MCPFusion
        from firecy.solver import fire_path

        design, y = data
        pen = L1() if name == "l1" else MCPFusion(1.0, 1.1, 0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fire_path(design, y, pen, n_lambdas=20, eps=1e-2, tol=1e-6)


class BlockUpdates:
    """Per-call cost of the compiled penalty methods the engine dispatches to."""

    params = ([8, 64],)
    param_names = ["block_size"]

    def setup(self, n):
        from firecy.penalties import MCPFusion

        rng = np.random.default_rng(0)
        self.pen = MCPFusion(0.1, 1.5, 0.5)
        self.z = rng.standard_normal(n)
        self.a = rng.uniform(0.1, 1.0, n)

    def time_prox_mcp_fusion(self, n):
        self.pen.prox_of(self.z, self.a, self.a)
