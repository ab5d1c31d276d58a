"""Choosing a rule set on a path: held-out scores and the selection rules.

For one outer fold and one penalty configuration, :func:`bundle` computes

* ``full``: the refined path on all training rows, with every point's test
  error (MSE / Var(y_test)) and antecedent count: the candidates a selection
  can return (the final rule set is always refitted on all training rows);
* for each inner resampling scheme, ``split`` (one 80/20 split), ``cv``
  (K-fold) and ``rep`` (R random 80/20 splits), and each inner part:
  ``own``, the part's own refined path scored on the held-out rows (for
  alignment by rule count), and ``lam``, a warm path over the full path's
  lambdas within the budget (for alignment by lambda, as glmnet's cv and the
  current estimator do).

Selection rules (:func:`curve`, :func:`choose`):

* by lambda: the held-out error at each full-path lambda within the budget,
  averaged over the inner parts; the final rule set is the full path's
  solution at the chosen lambda;
* by count: each inner path offers, for a budget k, its solution with the
  most rules not above k (ties: the smallest lambda); errors per k averaged
  over the inner parts; the final rule set is the full path's solution for
  the chosen k by the same rule;
* one-standard-error rule: among candidates whose mean error is within one
  standard error of the best, the one with the fewest rules (standard error
  over the inner parts; with a single split, over the held-out rows);
* several configurations (gamma, fusion) compete on the pooled candidates.
"""
import copy
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import KFold, ShuffleSplit

from benchmarks.quality.folds import _fold, leaf_matrix, memory
from benchmarks.quality.paths import refined_path, warm_path
from firecy.solver import BlockDesign

__all__ = ["make_penalty", "bundle", "curve", "choose", "evaluate", "Options"]


@dataclass(frozen=True)
class Options:
    n_lambdas: int = 50
    eps: float = 1e-3
    max_rules: int = 14
    min_log_gap: float = 1e-3
    n_cv: int = 5
    n_rep: int = 5
    val_fraction: float = 0.2
    tol: float = 1e-6


def make_penalty(cfg):
    """("l1",), ("l1", fusion) or ("mcp", gamma, fusion) -> penalty template."""
    from firecy.penalties import L1, MCP, L1Fusion, MCPFusion

    if cfg[0] == "l1":
        fusion = cfg[1] if len(cfg) > 1 else 0.0
        return L1Fusion(1.0, fusion) if fusion else L1(1.0)
    _, gamma, fusion = cfg
    return MCPFusion(1.0, gamma, fusion) if fusion else MCP(1.0, gamma)


def _design(fold, rows):
    return BlockDesign.from_leaf_table(np.ascontiguousarray(fold.leaf_train[rows]),
                                       fold.leaf_values, fold.block_ptr)


def _scores(path, leaf_held, y_held, leaf_values):
    M = leaf_matrix(leaf_held, leaf_values)
    pred = np.asarray(M @ path.coefs.T) + path.intercepts[None, :]
    sq = (y_held[:, None] - pred) ** 2
    return sq.mean(axis=0), sq.std(axis=0)


def _inner_splits(n, seed, opts):
    idx = np.zeros((n, 1))
    return {
        "split": list(ShuffleSplit(1, test_size=opts.val_fraction,
                                   random_state=seed).split(idx)),
        "cv": list(KFold(opts.n_cv, shuffle=True, random_state=seed).split(idx)),
        "rep": list(ShuffleSplit(opts.n_rep, test_size=opts.val_fraction,
                                 random_state=seed + 1000).split(idx)),
    }


@memory.cache
def bundle(dataset, n_folds, k, trees, seed, cfg, opts, schemes=("split", "cv", "rep")):
    """All paths of one (outer fold, configuration); arrays only (cacheable)."""
    from firecy.rules import count_antecedents

    fold = _fold(dataset, n_folds, k, trees, seed)
    ens = fold.ensemble()
    template = make_penalty(cfg)
    n = fold.y_train.shape[0]
    common = dict(n_lambdas=opts.n_lambdas, eps=opts.eps, max_rules=opts.max_rules,
                  min_log_gap=opts.min_log_gap, tol=opts.tol)
    full = refined_path(_design(fold, np.arange(n)), fold.y_train, template, **common)
    test_mse, _ = _scores(full, fold.leaf_test, fold.y_test, fold.leaf_values)
    ante = np.array([count_antecedents(ens, w) if c <= opts.max_rules else -1
                     for w, c in zip(full.coefs, full.n_rules)])
    out = {"full": dict(lambdas=full.lambdas, n_rules=full.n_rules, base=full.base,
                        seconds=full.seconds, test=test_mse / fold.var_test,
                        antecedents=ante, stats=full.stats)}
    eligible = full.n_rules <= opts.max_rules
    lam_grid = full.lambdas[eligible]
    for scheme, splits in _inner_splits(n, fold.seed, opts).items():
        if scheme not in schemes:
            continue
        parts = []
        for tr, va in splits:
            design = _design(fold, tr)
            own = refined_path(design, fold.y_train[tr], template, **common)
            lam = warm_path(design, fold.y_train[tr], copy.deepcopy(template), lam_grid,
                            None, opts.tol)
            held = (fold.leaf_train[va], fold.y_train[va], fold.leaf_values)
            o_err, o_sd = _scores(own, *held)
            l_err, l_sd = _scores(lam, *held)
            parts.append(dict(
                n_held=len(va),
                own=dict(lambdas=own.lambdas, n_rules=own.n_rules, base=own.base,
                         seconds=own.seconds, err=o_err, sd=o_sd, stats=own.stats),
                lam=dict(index=np.flatnonzero(eligible), n_rules=lam.n_rules,
                         seconds=lam.seconds, err=l_err, sd=l_sd)))
        out[scheme] = parts
    return out


def _budget_index(n_rules, k):
    """Index of the point with the most rules not above k (ties: smallest lambda)."""
    ok = np.flatnonzero(n_rules <= k)
    best = n_rules[ok].max()
    return ok[n_rules[ok] == best][-1]


def curve(b, scheme, align, refined, max_rules):
    """Candidates of one configuration: list of (full index, mean, se, size, seconds)."""
    full = b["full"]
    fmask = np.ones(len(full["lambdas"]), bool) if refined else full["base"]
    parts = b[scheme]
    seconds = full["seconds"][fmask].sum()
    cands = []
    if align == "lambda":
        idx = parts[0]["lam"]["index"]
        keep = fmask[idx]
        E = np.array([p["lam"]["err"][keep] for p in parts])
        S = np.array([p["lam"]["sd"][keep] / np.sqrt(p["n_held"]) for p in parts])
        seconds += sum(p["lam"]["seconds"][keep].sum() for p in parts)
        mean = E.mean(axis=0)
        se = S[0] if len(parts) == 1 else E.std(axis=0, ddof=1) / np.sqrt(len(parts))
        for j, i in enumerate(idx[keep]):
            cands.append((int(i), mean[j], se[j], int(full["n_rules"][i])))
    else:
        E, S = [], []
        for p in parts:
            own = p["own"]
            m = np.ones(len(own["lambdas"]), bool) if refined else own["base"]
            seconds += own["seconds"][m].sum()
            nr, err, sd = own["n_rules"][m], own["err"][m], own["sd"][m]
            js = [_budget_index(nr, k) for k in range(1, max_rules + 1)]
            E.append(err[js])
            S.append(sd[js] / np.sqrt(p["n_held"]))
        E, S = np.array(E), np.array(S)
        mean = E.mean(axis=0)
        se = S[0] if len(parts) == 1 else E.std(axis=0, ddof=1) / np.sqrt(len(parts))
        nr_full = np.where(fmask, full["n_rules"], 10 ** 9)
        for k in range(1, max_rules + 1):
            i = _budget_index(nr_full, k)
            cands.append((int(i), mean[k - 1], se[k - 1], k))
    return cands, float(seconds)


def choose(cands_by_cfg, one_se=False):
    """(cfg, full index) of the chosen candidate among all configurations."""
    flat = [(cfg, i, m, s, size) for cfg, cands in cands_by_cfg.items()
            for (i, m, s, size) in cands]
    best = min(flat, key=lambda c: (c[2], c[4]))
    if not one_se:
        return best[0], best[1]
    bar = best[2] + best[3]
    ok = [c for c in flat if c[2] <= bar]
    pick = min(ok, key=lambda c: (c[4], c[2]))
    return pick[0], pick[1]


def evaluate(bundles, scheme, align, refined, one_se, max_rules):
    """Select over the configurations in ``bundles`` (cfg -> bundle).

    Returns dict(test, n_rules, antecedents, seconds, cfg).
    """
    cands, seconds = {}, 0.0
    for cfg, b in bundles.items():
        cands[cfg], s = curve(b, scheme, align, refined, max_rules)
        seconds += s
    cfg, i = choose(cands, one_se)
    full = bundles[cfg]["full"]
    return dict(test=float(full["test"][i]), n_rules=int(full["n_rules"][i]),
                antecedents=int(full["antecedents"][i]), seconds=seconds, cfg=cfg)


def oracle(b, refined, max_rules):
    """The best test error among the full path's points within the budget."""
    full = b["full"]
    m = (full["n_rules"] <= max_rules) & (full["n_rules"] > 0)
    if not refined:
        m &= full["base"]
    return float(full["test"][m].min())


def relax(path, leaf_table, y, leaf_values):
    """Replace every point's weights by least squares on its own rules (with
    an intercept): the "relaxed" path, free of the penalty's shrinkage."""
    M = leaf_matrix(leaf_table, leaf_values).tocsc()
    for i, w in enumerate(path.coefs):
        support = np.flatnonzero(w)
        if support.size == 0:
            continue
        X = np.column_stack([np.ones(M.shape[0]), M[:, support].toarray()])
        beta = np.linalg.lstsq(X, y, rcond=None)[0]
        path.coefs[i] = 0.0
        path.coefs[i, support] = beta[1:]
        path.intercepts[i] = beta[0]
    return path


def fit_selected(fold, cfgs, scheme="cv", align="count", refined=True, one_se=False,
                 opts=Options(), relaxed=False):
    """The whole selection procedure on one fold's training rows, timed (wall
    clock) and uncached: the reference implementation of a selection default.

    Returns dict(test, n_rules, antecedents, seconds, cfg, coef, intercept).
    """
    import time

    from firecy.rules import count_antecedents

    t0 = time.perf_counter()
    n = fold.y_train.shape[0]
    common = dict(n_lambdas=opts.n_lambdas, eps=opts.eps, max_rules=opts.max_rules,
                  min_log_gap=opts.min_log_gap if refined else np.inf, tol=opts.tol)
    splits = _inner_splits(n, fold.seed, opts)[scheme]
    cands, fulls = {}, {}
    for cfg in cfgs:
        template = make_penalty(cfg)
        full = refined_path(_design(fold, np.arange(n)), fold.y_train, template, **common)
        if relaxed:
            relax(full, fold.leaf_train, fold.y_train, fold.leaf_values)
        eligible = full.n_rules <= opts.max_rules
        parts = []
        for tr, va in splits:
            design = _design(fold, tr)
            held = (fold.leaf_train[va], fold.y_train[va], fold.leaf_values)
            if align == "count":
                own = refined_path(design, fold.y_train[tr], template, **common)
                if relaxed:
                    relax(own, fold.leaf_train[tr], fold.y_train[tr], fold.leaf_values)
                err, sd = _scores(own, *held)
                parts.append(dict(n_held=len(va), own=dict(
                    lambdas=own.lambdas, n_rules=own.n_rules, base=own.base,
                    seconds=own.seconds, err=err, sd=sd)))
            else:
                lam = warm_path(design, fold.y_train[tr], copy.deepcopy(template),
                                full.lambdas[eligible], None, opts.tol)
                if relaxed:
                    relax(lam, fold.leaf_train[tr], fold.y_train[tr], fold.leaf_values)
                err, sd = _scores(lam, *held)
                parts.append(dict(n_held=len(va), lam=dict(
                    index=np.flatnonzero(eligible), n_rules=lam.n_rules,
                    seconds=lam.seconds, err=err, sd=sd)))
        b = {"full": dict(lambdas=full.lambdas, n_rules=full.n_rules, base=full.base,
                          seconds=full.seconds), scheme: parts}
        cands[cfg], _ = curve(b, scheme, align, True, opts.max_rules)
        fulls[cfg] = full
    cfg, i = choose(cands, one_se)
    coef, intercept = fulls[cfg].coefs[i], float(fulls[cfg].intercepts[i])
    seconds = time.perf_counter() - t0
    pred = leaf_matrix(fold.leaf_test, fold.leaf_values) @ coef + intercept
    test = float(np.mean((fold.y_test - pred) ** 2) / fold.var_test)
    return dict(test=test, n_rules=int(np.count_nonzero(coef)),
                antecedents=count_antecedents(fold.ensemble(), coef), seconds=seconds,
                cfg=cfg, coef=coef, intercept=intercept)
