"""Outer cross-validation folds, each with its forest and rule design.

A fold holds the forest fitted on the fold's training rows
(``RandomForestRegressor(n_estimators=trees, max_depth=3)``, the paper's
setting) and the leaf tables of the training and test rows: every method of
the benchmark selects rules from this same design. Folds are cached on disk
(joblib.Memory under ``benchmarks/.cache``), so reruns skip the forest fits.
"""
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from joblib import Memory
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import KFold

from benchmarks.quality.data import load

CACHE = Path(__file__).resolve().parents[1] / ".cache"
memory = Memory(CACHE, verbose=0)

__all__ = ["Fold", "folds", "leaf_matrix"]


@dataclass
class Fold:
    dataset: str
    index: int
    seed: int
    X_train: object      # DataFrame
    y_train: np.ndarray
    X_test: object
    y_test: np.ndarray
    forest: RandomForestRegressor
    forest_time: float
    leaf_train: np.ndarray   # (n_train, T) int32 column indices into leaf_values
    leaf_test: np.ndarray
    leaf_values: np.ndarray
    block_ptr: np.ndarray

    @property
    def var_test(self):
        return float(np.var(self.y_test))

    def ensemble(self):
        from firecy.ensembles import rule_ensemble_from_model

        return rule_ensemble_from_model(self.forest)


def leaf_matrix(leaf_table, leaf_values):
    """The design M (CSR) of the rows of a leaf table."""
    import scipy.sparse as sp

    n, T = leaf_table.shape
    cols = np.ascontiguousarray(leaf_table, dtype=np.int64).ravel()
    return sp.csr_matrix((leaf_values[cols], cols, np.arange(n + 1) * T),
                         shape=(n, leaf_values.shape[0]))


@memory.cache
def _fold(dataset, n_folds, k, trees, seed):
    from firecy.ensembles import rule_ensemble_from_model

    X, y, _ = load(dataset)
    train, test = list(KFold(n_folds, shuffle=True, random_state=seed).split(X))[k]
    Xtr, Xte = X.iloc[train].reset_index(drop=True), X.iloc[test].reset_index(drop=True)
    t0 = time.perf_counter()
    forest = RandomForestRegressor(n_estimators=trees, max_depth=3, random_state=seed + k,
                                   n_jobs=1).fit(Xtr, y[train])
    forest_time = time.perf_counter() - t0
    ens = rule_ensemble_from_model(forest)
    return Fold(
        dataset=dataset, index=k, seed=seed + k,
        X_train=Xtr, y_train=y[train], X_test=Xte, y_test=y[test],
        forest=forest, forest_time=forest_time,
        leaf_train=np.ascontiguousarray(ens.leaf_table(Xtr), dtype=np.int32),
        leaf_test=np.ascontiguousarray(ens.leaf_table(Xte), dtype=np.int32),
        leaf_values=np.ascontiguousarray(ens.leaf_values, dtype=np.float64),
        block_ptr=np.asarray(ens.block_ptr, dtype=np.int64),
    )


def folds(dataset, n_folds=5, trees=500, seed=0):
    """The ``n_folds`` outer folds of a dataset (shuffled KFold seeded ``seed``)."""
    return [_fold(dataset, n_folds, k, trees, seed) for k in range(n_folds)]
