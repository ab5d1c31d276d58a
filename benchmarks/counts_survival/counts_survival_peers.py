"""Objectives against scikit-survival's ``CoxnetSurvivalAnalysis`` (Cox,
Breslow, L1) and glum's ``GeneralizedLinearRegressor`` (Poisson, L1, free
intercept) on the rule designs of ``counts_survival_speed.py``, at three
lambdas: each peer's coefficients are scored by firecy's objective, beside
firecy's own solution (``irls_solve``, tol 1e-10).

Needs scikit-survival and glum (not firecy dependencies; a venv with
``--system-site-packages`` keeps the shared NumPy and pandas):

    python benchmarks/counts_survival/counts_survival_peers.py
"""
import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from counts_survival_speed import design_data  # noqa: E402

from firecy.datafits._cox_loss import CoxLoss  # noqa: E402
from firecy.datafits._poisson_loss import PoissonLoss  # noqa: E402
from firecy.penalties import L1  # noqa: E402
from firecy.solver._irls import IRLSProblem, irls_solve  # noqa: E402

FRACTIONS = (0.3, 0.1, 0.03)


def run(kind):
    design, a, b = design_data(kind)
    M = design.tocsc().toarray()
    n = M.shape[0]
    loss = PoissonLoss(a, np.ones(n)) if kind == "poisson" else CoxLoss(a, b, np.ones(n))
    prob = IRLSProblem(design, loss, np.zeros(n))
    lambdas = prob.lambda_max(L1()) * np.array(FRACTIONS)
    if kind == "poisson":
        from glum import GeneralizedLinearRegressor

        peer_name = "glum GeneralizedLinearRegressor(family='poisson', l1_ratio=1)"
        peers = []
        for lam in lambdas:
            g = GeneralizedLinearRegressor(family="poisson", alpha=lam, l1_ratio=1.0,
                                           fit_intercept=True, gradient_tol=1e-10,
                                           max_iter=10000, scale_predictors=False).fit(M, a)
            peers.append((g.coef_, float(g.intercept_)))
    else:
        from sksurv.linear_model import CoxnetSurvivalAnalysis

        peer_name = "scikit-survival CoxnetSurvivalAnalysis(l1_ratio=1)"
        y = np.array(list(zip(a > 0, b)), dtype=[("event", bool), ("time", float)])
        cx = CoxnetSurvivalAnalysis(l1_ratio=1.0, alphas=lambdas, normalize=False, tol=1e-12,
                                    max_iter=1000000).fit(M, y)
        peers = [(cx.coef_[:, k], 0.0) for k in range(len(lambdas))]
    w, b0 = None, None
    for frac, lam, (c, ic) in zip(FRACTIONS, lambdas, peers):
        res = irls_solve(prob, L1(lam), coef_init=w, intercept_init=b0, tol=1e-10,
                         max_iter=1000)
        w, b0 = res.coef, res.intercept
        ref = loss.value(M @ c + ic) + lam * np.abs(c).sum()
        print(f"| {kind} | {peer_name} | {n} x {M.shape[1]} | {frac} | {res.objective:.12g} "
              f"| {ref:.12g} | {(res.objective - ref) / abs(ref):+.1e} "
              f"| {res.n_rules} | {int(np.count_nonzero(c))} |", flush=True)


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    warnings.simplefilter("ignore")
    print("| loss | peer | design | lambda / lambda_max | firecy objective | peer objective "
          "(firecy's formula) | relative gap (firecy - peer) | firecy rules | peer rules |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind in ("poisson", "cox"):
        run(kind)


if __name__ == "__main__":
    main()
