"""The estimators' parameters: validation, and the grid of penalties to select from.

``gamma``, ``fusion`` and ``group_l0`` may be lists: every combination is a
grid point with its own penalty (a template with ``lam = 1``; the path sets
``lam``).  ``gamma`` and ``fusion`` are parameters of the built-in
penalties ("mcp", "l1"; ``gamma`` of "mcp" only) and are ignored for other
penalties, whose defaults (fusion 0.5) would otherwise be errors there.  The penalties come from the registry
(:func:`firecy.penalties.make_penalty`), the one place that builds them from
names; see ``docs/objective.rst`` for what each parameter means.
"""
import copy
import numbers

import numpy as np

from firecy._validation import check_int, check_real

__all__ = ["check_lambdas", "check_params", "penalty_grid"]

BUILTIN_PENALTIES = ("mcp", "l1")


#: the rule budget of ``max_rules="auto"``: the paper's "fewer than 15 rules"
DEFAULT_MAX_RULES = 14
#: and with ``stable=True`` where the pool is kept (linear terms beside it,
#: the squared or binary logistic loss): SIRUS's ten rules. A pool of 10
#: rules from 2,000 trees reaches SIRUS's stability on 12 of 12 benchmark
#: sets, one of 14 on 9 (benchmarks/stability/RESULTS.md, "Fourth run"); a
#: penalised pool (rules only, several classes) keeps 14 candidates: with 10
#: a three-class fit kept 0-2 rules
STABLE_MAX_RULES = 10


def rule_budget(est, kept_pool=False):
    """``est.max_rules`` as a number (None: no budget): ``"auto"`` is
    :data:`STABLE_MAX_RULES` for a stable fit that keeps its pool
    (``kept_pool``), else :data:`DEFAULT_MAX_RULES`."""
    if isinstance(est.max_rules, str) and est.max_rules == "auto":
        stable = getattr(est, "stable", False) and kept_pool
        return STABLE_MAX_RULES if stable else DEFAULT_MAX_RULES
    return est.max_rules


def check_params(est):
    """Validate the path and selection parameters of a FIRE estimator."""
    from firecy.estimators._rule_values import check_rule_values

    check_rule_values(getattr(est, "rule_values", "leaf"))
    check_real(est.lam, "lam", low=0.0, allow_none=True)
    lambdas = check_lambdas(getattr(est, "lambdas", None))
    if est.lam is not None and lambdas is not None and not np.any(lambdas >= est.lam):
        raise ValueError(
            f"with lam, lambdas are the warm path down to it: give at least one value "
            f">= lam={est.lam!r}, got {getattr(est, 'lambdas')!r}")
    if not (isinstance(est.max_rules, str) and est.max_rules == "auto"):
        if isinstance(est.max_rules, str):
            raise ValueError(f"max_rules must be 'auto', a positive int or None, "
                             f"got {est.max_rules!r}")
        check_int(est.max_rules, "max_rules", low=1, allow_none=True)
    check_int(est.n_lambdas, "n_lambdas", low=1)
    eps = check_real(est.eps, "eps", low=0.0, low_inclusive=False)
    if not eps < 1:
        raise ValueError(f"eps must be in (0, 1), got {est.eps!r}")
    if est.selection not in ("validation", "cv", "budget"):
        raise ValueError(
            f"selection must be 'validation', 'cv' or 'budget', got {est.selection!r}"
        )
    vf = check_real(est.validation_fraction, "validation_fraction", low=0.0,
                    low_inclusive=False)
    if not vf < 1:
        raise ValueError(
            f"validation_fraction must be in (0, 1), got {est.validation_fraction!r}"
        )
    if isinstance(est.cv, numbers.Integral) and not isinstance(est.cv, bool):
        check_int(est.cv, "cv", low=2)
    for name in ("refine_path", "one_se", "linear_terms", "stable"):
        value = getattr(est, name, False)
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {value!r}")
    if est.one_se and est.selection != "cv":
        raise ValueError(
            "one_se=True needs selection='cv' (a standard error over the folds)"
        )
    check_real(est.tol, "tol", low=0.0, low_inclusive=False)
    check_int(est.max_iter, "max_iter", low=1, allow_none=True)


def check_lambdas(lambdas):
    """A user's lambda grid as a decreasing float array (None passes through)."""
    if lambdas is None:
        return None
    if isinstance(lambdas, (str, bytes)) or np.ndim(lambdas) != 1:
        raise ValueError(f"lambdas must be a 1-D sequence of numbers, got {lambdas!r}")
    try:
        grid = np.asarray(lambdas, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"lambdas must hold real numbers, got {lambdas!r}") from None
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid < 0):
        raise ValueError(
            f"lambdas must be a non-empty sequence of finite non-negative numbers, "
            f"got {lambdas!r}"
        )
    return np.sort(grid)[::-1].copy()


def _grid_values(value, name, **bounds):
    """A scalar or a list of grid values, each checked by ``check_real``."""
    if isinstance(value, (list, tuple, np.ndarray)):
        values = list(np.asarray(value, dtype=object).ravel())
    else:
        values = [value]
    if len(values) == 0:
        raise ValueError(f"{name} is an empty list")
    return [check_real(v, name, **bounds) for v in values]


def penalty_grid(est):
    """The list of ``(params, penalty template)`` the estimator selects among.

    ``params`` holds the grid point's ``gamma``, ``fusion`` and ``group_l0``
    (``gamma`` is None for penalties without it), or ``{"penalty": obj}``
    for a penalty object.
    """
    from firecy.penalties import as_penalty, available_penalties

    fusions = _grid_values(est.fusion, "fusion", low=0.0)
    group_l0s = _grid_values(est.group_l0, "group_l0", low=0.0)
    gammas = _grid_values(est.gamma, "gamma", low=1.0, low_inclusive=False)

    if isinstance(est.penalty, str):
        name = est.penalty.lower()
        if name not in BUILTIN_PENALTIES:
            if est.penalty not in available_penalties():
                others = [p for p in available_penalties() if p not in BUILTIN_PENALTIES]
                raise ValueError(
                    f"unknown penalty {est.penalty!r}: use 'mcp', 'l1'"
                    + (f", a registered name ({', '.join(others)})" if others else "")
                    + " or a penalty object"
                )
            name = est.penalty
            # like gamma, fusion is a parameter of the built-in penalties:
            # a registered penalty is built from its name alone
            fusions = [0.0]
        if name != "mcp":
            gammas = [None]
        grid = []
        for gamma in dict.fromkeys(gammas):
            for fusion in dict.fromkeys(fusions):
                for group_l0 in dict.fromkeys(group_l0s):
                    params = {"gamma": gamma, "fusion": fusion, "group_l0": group_l0}
                    grid.append((params, _make_template(name, gamma, fusion, group_l0)))
        return grid

    if est.penalty is None:
        raise TypeError("penalty must be a name ('mcp', 'l1') or a penalty object, got None")
    if any(v != 0 for v in group_l0s):
        raise ValueError(
            "with a penalty object, group_l0 must be 0: build it into the "
            "penalty object (gamma and fusion are ignored)"
        )
    try:
        pen = as_penalty(copy.deepcopy(est.penalty))
    except TypeError as exc:
        raise TypeError(f"penalty is neither a known name nor a penalty: {exc}") from None
    return [({"penalty": est.penalty}, pen)]


def _make_template(name, gamma, fusion, group_l0):
    """The registered penalty ``name`` at ``lam = 1``, group-L0 on top if asked."""
    from firecy.penalties import GroupL0, make_penalty

    if name in BUILTIN_PENALTIES:
        params = dict(lam=1.0, fusion=fusion, group_l0=group_l0)
        if gamma is not None:
            params["gamma"] = gamma
        return make_penalty(name, **params)
    pen = make_penalty(name, lam=1.0)
    return GroupL0(pen, group_l0) if group_l0 > 0 else pen
