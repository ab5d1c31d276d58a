"""A fitted FIRE model in one HTML file: :func:`write_report`.

The report holds the summary of the fit, the rules table (weights, support,
importance, conditions), the pictures of the rules and of the
regularisation path, the comparison with the full tree model, for a
classifier its calibration (and, for two classes, its risk card), and a few
rows explained term by term. It is one self-contained file: the pictures
are SVG embedded as data URIs, the style is inline, nothing is loaded from
the network and there is no script, so it opens offline in any browser.
Every string from the data is escaped (``docs/explanations.rst``). Needs
matplotlib (``pip install "firecy[plot]"``).
"""
from pathlib import Path

__all__ = ["write_report", "report_html"]


def report_html(estimator, X=None, y=None, *, X_test=None, y_test=None, exposure=None,
                exposure_test=None, rows=None, n_rows=3, title=None, feature_names=None,
                comparison=None, comparison_note=None, row_names=None):
    """The report of a fitted FIRE estimator as an HTML document (a str).

    Parameters
    ----------
    estimator : fitted FIRE estimator
        :class:`~firecy.FIRERegressor`, :class:`~firecy.FIREClassifier`,
        :class:`~firecy.FIREPoissonRegressor` or
        :class:`~firecy.FIRESurvivalRegressor`; or a fitted
        :class:`~firecy.risk.RiskCardClassifier`: the report of its rule model
        (``model_``) with its own card (``card_``) as the risk card.
    X, y : optional
        The training rows: the rules' support in the summary and the
        picture, a binary classifier's risk card, and, without test rows,
        the scores, the calibration and the explained rows.
    X_test, y_test : optional
        Held-out rows: when given, the comparison with the full model, the
        calibration and the explained rows are measured on them (the report
        says which rows it measured on).
    exposure, exposure_test : array-like, optional
        A :class:`~firecy.FIREPoissonRegressor`'s exposures of those rows.
    rows : sequence of int, optional
        Positions of the rows to explain (in the test rows if given, else in
        ``X``); default: ``n_rows`` rows spread over the range of
        predictions (the lowest, the highest, evenly between).
    n_rows : int, default=3
    title : str, optional
        The page's title.
    feature_names : sequence of str, optional
        The names the rules use (default: the estimator's
        ``feature_names_in_``, else ``x0, x1, ...``).
    comparison : list of dict, optional
        A comparison table already computed (``firecy extract`` passes its
        own, with L1 selection): each dict has a ``name`` and any other
        columns, shown as they are; by default the report compares the rule
        model with the full model.
    comparison_note : str, optional
        The sentence under a given ``comparison`` (which rows it was measured on).
    row_names : sequence of str, optional
        A name for each row the explained rows are drawn from (the test rows
        if given, else ``X``), e.g. ``"CSV line 12"`` (``firecy extract``
        passes the file's line numbers); default: the row's position.

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from firecy import FIRERegressor
    >>> from firecy.report import report_html
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> forest = RandomForestRegressor(n_estimators=30, max_depth=3, random_state=0)
    >>> fire = FIRERegressor(forest, max_rules=5, cv=3, random_state=0).fit(X[:300], y[:300])
    >>> page = report_html(fire, X[:300], y[:300], X_test=X[300:], y_test=y[300:])
    >>> page.startswith("<!DOCTYPE html>"), page.count("<img"), 'src="http' in page
    (True, 5, False)
    """
    from firecy.report._evaluate import evaluation
    from firecy.report._html import page
    from firecy.report._sections import sections_for
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    card = None
    if type(estimator).__name__ == "RiskCardClassifier":
        # the report of its rule model, with the classifier's own card (its
        # readable conditions; not rounded again)
        card, estimator = estimator.card_, estimator.model_
    if comparison_note is not None and comparison is None:
        raise ValueError("comparison_note describes a given comparison: pass comparison too")
    from firecy.rules import feature_names_for

    names = feature_names_for(estimator, feature_names)
    ev = evaluation(X, y, X_test, y_test, exposure, exposure_test)
    sections = sections_for(estimator, X, y, ev, rows=rows, n_rows=int(n_rows),
                            comparison=comparison, comparison_note=comparison_note,
                            names=names, row_names=row_names, card=card)
    if title is None:
        title = (f"{type(estimator).__name__}: {estimator.model_.terms_text()}" if card is None
                 else f"RiskCardClassifier: {len(card.rules)} rules on the card")
    from firecy._version import __version__

    return str(page(title, sections, subtitle=f"A report by firecy {__version__}: "
                                              "one file, nothing loaded from the network."))


def write_report(estimator, path, X=None, y=None, **kwargs):
    """Write the report of a fitted FIRE estimator to one HTML file.

    Parameters
    ----------
    estimator : fitted FIRE estimator
    path : str or path-like
        The file to write (UTF-8).
    X, y : optional
        The training rows (see :func:`report_html`).
    **kwargs
        The other parameters of :func:`report_html` (``X_test``,
        ``y_test``, ``rows``, ``title``, ...).

    Returns
    -------
    pathlib.Path
        The file written.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from firecy import FIREClassifier
    >>> from firecy.report import write_report
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> forest = RandomForestClassifier(n_estimators=30, max_depth=2, random_state=0)
    >>> fire = FIREClassifier(forest, max_rules=4, cv=3, random_state=0).fit(X, y)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_report(fire, os.path.join(tmp, "report.html"), X, y)
    ...     html = path.read_text(encoding="utf-8")
    >>> "Risk card" in html, "Calibration" in html
    (True, True)
    """
    text = report_html(estimator, X, y, **kwargs)
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return path
