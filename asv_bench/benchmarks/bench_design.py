"""asv benchmarks: leaf ids -> leaf table / design (firecy.ensembles).

A smaller version of ``benchmarks/speed/design_build.py``: 20,000 rows x 100 trees
of depth 6, for each installed library.  Models are fitted once
(``setup_cache``); the library's own leaf-id call happens in ``setup`` and is
not timed.
"""
import gc
import tracemalloc

import numpy as np

from firecy.ensembles import rule_ensemble_from_model

N_ROWS, N_TREES, DEPTH, N_FEATURES = 20_000, 100, 6, 20
LIBRARIES = ["sklearn", "xgboost", "lightgbm"]


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_ROWS, N_FEATURES)).astype(np.float32)
    y = X[:, 0] + np.sin(3 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.5 * rng.normal(size=N_ROWS)
    return X, y


def _fit(library, X, y):
    if library == "sklearn":
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(
            n_estimators=N_TREES, max_depth=DEPTH, max_samples=2000, max_features=0.5,
            n_jobs=2, random_state=0,
        ).fit(X, y)
    if library == "xgboost":
        import xgboost as xgb

        return xgb.XGBRegressor(
            n_estimators=N_TREES, max_depth=DEPTH, tree_method="hist", max_bin=32,
            subsample=0.5, n_jobs=2, random_state=0,
        ).fit(X, y)
    import lightgbm as lgb

    return lgb.LGBMRegressor(
        n_estimators=N_TREES, max_depth=DEPTH, num_leaves=2 ** DEPTH, max_bin=32,
        subsample=0.5, subsample_freq=1, n_jobs=2, random_state=0, verbose=-1,
    ).fit(X, y)


class DesignBuild:
    params = LIBRARIES
    param_names = ["library"]
    timeout = 300

    def setup_cache(self):
        X, y = _data()
        cache = {}
        for library in LIBRARIES:
            try:
                model = _fit(library, X, y)
            except ImportError:
                continue
            cache[library] = rule_ensemble_from_model(model)
        return cache, X

    def setup(self, cache, library):
        ensembles, X = cache
        if library not in ensembles:
            raise NotImplementedError(f"{library} is not installed")
        self.ens = ensembles[library]
        self.ids = self.ens.apply(X)
        self.table = self.ens.leaf_table_from_ids(self.ids)

    def time_design_from_ids(self, cache, library):
        self.ens.design_from_ids(self.ids)

    def time_leaf_table_from_ids(self, cache, library):
        self.ens.leaf_table_from_ids(self.ids)

    def time_design_from_leaf_table(self, cache, library):
        self.ens.design_from_leaf_table(self.table)

    def peakmem_design_from_ids(self, cache, library):
        self.ens.design_from_ids(self.ids)

    def track_design_peak_ratio(self, cache, library):
        """Peak traced memory of the build over the design's own size."""
        gc.collect()
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            base, _ = tracemalloc.get_traced_memory()
            M = self.ens.design_from_ids(self.ids)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        return (peak - base) / (M.data.nbytes + M.indices.nbytes + M.indptr.nbytes)

    track_design_peak_ratio.unit = "ratio"


class RuleExtraction:
    """Model -> RuleEnsemble (parsing trees, ordering leaves, conditions)."""

    params = LIBRARIES
    param_names = ["library"]
    timeout = 300

    def setup_cache(self):
        X, y = _data()
        models = {}
        for library in LIBRARIES:
            try:
                models[library] = _fit(library, X, y)
            except ImportError:
                continue
        return models

    def setup(self, models, library):
        if library not in models:
            raise NotImplementedError(f"{library} is not installed")
        self.model = models[library]

    def time_rule_ensemble_from_model(self, models, library):
        rule_ensemble_from_model(self.model)
