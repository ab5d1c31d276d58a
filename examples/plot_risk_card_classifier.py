"""
A risk card in one call
=======================

:class:`~firecy.risk.RiskCardClassifier` goes from ``(X, y)`` to a card of
small integer points in one ``fit``: it grows a forest of depth-2 extra
trees, lets FIRE keep at most ``max_rules`` of their rules of one or two
conditions, and rounds their log-odds to points. A person adds the points of
the rules a patient satisfies and reads the risk of the total off the card;
``predict_proba`` is exactly that risk. (The card of a FIRE model you have
fitted yourself, :func:`firecy.risk.risk_card`, is in the risk-card example.)

The data are the Wisconsin breast-cancer measurements shipped with
scikit-learn; the card gives the risk that a tumour is malignant.
"""

# %%
# The card
# --------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from firecy.plotting import plot_risk_card
from firecy.risk import RiskCardClassifier

X, benign = load_breast_cancer(return_X_y=True, as_frame=True)
y = np.where(benign == 1, "benign", "malignant")
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)

clf = RiskCardClassifier(max_rules=6, max_points=5, random_state=0).fit(X_tr, y_tr)
card = clf.card_
print(card)

# %%
# On held-out rows
# ----------------
# The card's ranking (AUC) on the 30 % of rows it did not see, and one
# patient read by hand: the points of the rules she satisfies, the total,
# and the risk the card gives that total.
event = y_te == "malignant"
print(f"held-out AUC {roc_auc_score(event, clf.predict_proba(X_te)[:, 1]):.3f} "
      f"({len(card.rules)} rules, points from {int(card.points.min())} "
      f"to {int(card.points.max())})")
row = X_te.iloc[[0]]
score = int(clf.decision_function(row)[0])
print(f"first held-out patient: score {score}, risk "
      f"{100 * clf.predict_proba(row)[0, 1]:.1f} % (truth: {y_te[0]})")

# %%
# The picture
# -----------
# Left, the points table and the score -> risk table; right, the card's
# reliability on the rows it was built on.
plot_risk_card(card, figure=plt.figure())
plt.show()
