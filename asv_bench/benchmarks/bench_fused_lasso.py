"""asv benchmarks of the 1-D fused lasso solvers.

``time_*`` time the public Python wrappers (validation and allocation
included); ``track_*`` report the C-level cost measured inside one nogil
loop (see benchmarks/speed/fused_lasso_speed.py), which is what firecy's block
updates pay. Short signals are timed over many different rows: repeating
one lets the branch predictor memorise it and flatters the figure.
"""
import numpy as np


def _signal(n, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.geometric(1 / 20, size=n // 5 + 2)
    levels = rng.normal(scale=3.0, size=lengths.size)
    z = np.repeat(levels, lengths)[:n] + rng.normal(size=n)
    return z, rng.uniform(0.5, 2.0, size=n)


# name: (C solver, weighted, lam1, gamma)
_SOLVERS = {
    "condat": ("condat", False, 0.0, None),
    "dp": ("dp", True, 0.0, None),
    "dp_l1": ("dp", True, 0.3, None),
    "dp_mcp": ("dp_mcp", True, 0.3, 3.0),
}


class FusedLasso1D:
    params = ([64, 100_000], list(_SOLVERS), [0.1, 1.0])
    param_names = ["n", "solver", "lam"]
    timeout = 120

    def setup(self, n, solver, lam):
        from firecy.penalties import _fused_lasso  # lazily: asv imports first

        self.fl = _fused_lasso
        self.z, weights = _signal(n)
        rows = [_signal(n, seed) for seed in range(1, max(2, 100_000 // n))]
        self.z_rows = np.array([r[0] for r in rows])
        self.c_solver, weighted, self.lam1, self.gamma = _SOLVERS[solver]
        self.weights = weights if weighted else None
        self.w_rows = np.array([r[1] for r in rows]) if weighted else None
        self.lam = lam
        self.repeat = max(1, 1_000_000 // n)

    def time_wrapper(self, n, solver, lam):
        if self.c_solver == "condat":
            self.fl.fused_lasso(self.z, lam)
        else:
            self.fl.fused_lasso_weighted(self.z, lam, self.weights, self.lam1,
                                         self.gamma)

    def track_ns_per_element(self, n, solver, lam):
        seconds = min(
            self.fl._time_solver(self.c_solver, self.z_rows, lam, self.w_rows,
                                 self.lam1, self.gamma, repeat=self.repeat)
            for _ in range(3))
        return seconds / self.repeat / n * 1e9

    track_ns_per_element.unit = "ns/element"
