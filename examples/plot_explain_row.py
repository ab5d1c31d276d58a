"""
Why one row gets its prediction
===============================

A FIRE model is a sum: the intercept (with the ensemble's baseline), the
weights of the rules a row satisfies, and its linear terms. So a prediction
can be taken apart exactly, with no approximation:
:meth:`~firecy.FIRERegressor.explain` gives one line per row and term, and
the contributions add up to ``predict``.
:func:`~firecy.plotting.plot_explanation` draws one row as a waterfall, from
the intercept to the prediction.

The data are scikit-learn's diabetes measurements; the target is a measure of
disease progression one year after baseline.
"""

# %%
# A model
# -------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split

from firecy import FIRERegressor
from firecy.plotting import plot_explanation

X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
forest = RandomForestRegressor(n_estimators=100, max_depth=3, random_state=0).fit(X_tr, y_tr)
fire = FIRERegressor(forest, max_rules=10, n_lambdas=20, cv=3, random_state=0).fit(X_tr, y_tr)
print(fire.summary(X_tr))

# %%
# One patient, term by term
# -------------------------
# The first held-out patient: the intercept and baseline, then every term
# that moves her prediction (``fired_only=True`` leaves out the rules she does
# not satisfy, which add 0), largest first. A linear term's ``value`` is the
# patient's clipped value minus the term's centre (the training mean), so
# ``weight * value`` is what it adds.
row = X_te.iloc[[0]]
print(row.to_string())
terms = fire.explain(row, fired_only=True, precision=4)
print(terms[["kind", "text", "value", "weight", "contribution"]]
      .to_string(index=False, float_format="{:.4g}".format))
total = terms["contribution"].sum()
print(f"sum of the contributions {total:.2f}, predict {fire.predict(row)[0]:.2f}")
assert np.isclose(total, fire.predict(row)[0])

# %%
# The waterfall
# -------------
# Each bar starts where the previous one ended: red adds, blue subtracts; the
# last bar is the prediction. (``plot_explanation(fire, row)`` alone returns
# a figure of its own; the gallery shows pyplot's.)
plot_explanation(fire, row, precision=4, figure=plt.figure())
plt.show()
