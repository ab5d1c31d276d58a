"""The order of the example gallery: a story, not the alphabet.

sphinx-gallery imports this key by name (``within_subsection_order`` in
``conf.py``): a key defined in ``conf.py`` itself would not pickle, and Sphinx
warns about unpicklable configuration values (an error under ``-W``).
"""
from pathlib import Path

# from "what firecy does" to "how to extend it"; examples not listed follow,
# in file-name order
STORY = [
    "plot_rules_from_forest.py",
    "plot_rules_from_xgboost.py",
    "plot_rules_from_lightgbm.py",
    "plot_linear_terms.py",
    "plot_regularization_path.py",
    "plot_fusion_antecedents.py",
    "plot_group_l0_few_trees.py",
    "plot_stable_rules.py",
    "plot_explain_row.py",
    "plot_report.py",
    "plot_risk_card.py",
    "plot_risk_card_classifier.py",
    "plot_python_penalty.py",
]


class StoryOrder:
    """Sort key: position in :data:`STORY`, then file name."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        name = Path(filename).name
        return (STORY.index(name) if name in STORY else len(STORY), name)

    def __repr__(self):
        return f"{type(self).__name__}()"
