"""
The report: one HTML file of a fitted model
===========================================

:func:`firecy.report.write_report` writes everything about a fitted FIRE
model into one HTML file that opens offline in any browser (its pictures
are embedded, it loads nothing): a summary, the rules table, the rules as
the partial trees they come from and the regularisation path, the
comparison with the full forest, for a binary classifier the calibration
and a risk card, and a few rows explained term by term.
``firecy extract DATA.csv --target COLUMN --report report.html`` writes the
same from the command line.

The gallery cannot show a web page: this example writes the report to a
temporary directory, prints where it is, its section titles and its
summary, and draws its first picture.
"""

# %%
# A classifier and its report
# ---------------------------
# The Wisconsin breast-cancer data shipped with scikit-learn; the report
# measures on held-out rows when it is given them.
import os
import re
import tempfile
from html import unescape

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

from firecy import FIREClassifier
from firecy.plotting import plot_rules
from firecy.report import write_report

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
forest = RandomForestClassifier(n_estimators=60, max_depth=3, random_state=0).fit(X_tr, y_tr)
fire = FIREClassifier(forest, max_rules=6, n_lambdas=20, cv=3, random_state=0).fit(X_tr, y_tr)

out_dir = tempfile.mkdtemp()
path = write_report(fire, os.path.join(out_dir, "report.html"), X_tr, y_tr,
                    X_test=X_te, y_test=y_te, title="Breast biopsies: FIRE's rules")
page = path.read_text(encoding="utf-8")
print(f"wrote {path} ({len(page) / 1e3:.0f} kB, {page.count('<img')} pictures)")

# %%
# What the page holds
# -------------------
# Its headings, in order (read back from the HTML):
for level, title in re.findall(r"<h([1-3])[^>]*>(.*?)</h\1>", page, flags=re.S):
    print("  " * (int(level) - 1) + unescape(re.sub(r"<[^>]+>", "", title)).strip())

# %%
# Its summary section is ``fire.summary()``, the text a reader starts from:
print(fire.summary(X_tr))

# %%
# Its first picture
# -----------------
# The report's pictures are firecy's own (:mod:`firecy.plotting`); the first
# is the rules as partial trees, drawn here with the same function. (The
# report draws into figures of its own; the gallery shows pyplot's.)
fig, ax = plt.subplots(figsize=(11, 5.5), layout="constrained")
plot_rules(fire, X=X_tr, ax=ax)
plt.show()
