"""A fit's private settings: what benchmarks and tests vary (issue 48).

Each setting defaults to the module constant of its name in capitals
(``n_trees``: :data:`firecy.estimators._stable.N_TREES`, ``linear_penalty``:
:data:`firecy.estimators._linear_terms.LINEAR_PENALTY`, ...), which stays the
documented default and is never assigned to.  An ablation sets some on one
estimator, ``est._fit_options = {"n_trees": 500}``, read by
:func:`fit_options` when the fit starts; the functions that use a setting take
it as an argument.  A private hook rather than an argument of ``fit``: the
benchmarks fit through scikit-learn's ``fit(X, y)``, and a setting on the
estimator leaves no module state behind (two fits in threads can differ).
"""
import dataclasses

from firecy.estimators import _linear_terms, _stable

__all__ = ["FitOptions", "fit_options"]

_POOL = ("pool_per_rule", "distinct_deciles", "discrete_limit", "canonical_side",
         "centre_kept", "frequency_power", "frequency_reference", "rule_penalty_factor")


@dataclasses.dataclass(frozen=True)
class FitOptions:
    """The settings; see each constant's comment in ``_stable`` and ``_linear_terms``."""

    n_trees: int = _stable.N_TREES
    pool_per_rule: int = _stable.POOL_PER_RULE
    n_subsamples: int = _stable.N_SUBSAMPLES
    keep_pool_losses: dict = dataclasses.field(
        default_factory=lambda: dict(_stable.KEEP_POOL_LOSSES))
    rule_penalty_factor: float = _stable.RULE_PENALTY_FACTOR
    distinct_deciles: bool = _stable.DISTINCT_DECILES
    discrete_limit: int = _stable.DISCRETE_LIMIT
    canonical_side: object = _stable.CANONICAL_SIDE
    centre_kept: bool = _stable.CENTRE_KEPT
    frequency_power: float = _stable.FREQUENCY_POWER
    frequency_reference: str = _stable.FREQUENCY_REFERENCE
    linear_penalty: str = _linear_terms.LINEAR_PENALTY

    def pool(self):
        """The keyword arguments of :func:`~firecy.estimators._stable.stable_pool`."""
        return {name: getattr(self, name) for name in _POOL}


def fit_options(est):
    """``est``'s :class:`FitOptions`: the defaults, updated by the dict
    ``est._fit_options`` if it has one (an unknown name is an error)."""
    given = getattr(est, "_fit_options", None) or {}
    known = {f.name for f in dataclasses.fields(FitOptions)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise ValueError(f"unknown fit option(s) {unknown}; the known ones are "
                         f"{sorted(known)}")
    return FitOptions(**given)
