"""What a fitted FIRE estimator offers besides predict: :class:`RuleFeaturesMixin`.

``transform`` (the kept rules as features, as RuleFit users expect, with
``get_feature_names_out`` and so scikit-learn's ``set_output``) and
``summary`` (the rule set as text; the ``repr`` stays scikit-learn's).
"""
import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

__all__ = ["RuleFeaturesMixin"]


def _linear_note(est):
    """What ``linear_terms=True`` offered and did not, in one line each."""
    if not getattr(est, "linear_terms", False) or getattr(est, "linear_terms_", None) is None:
        return ""
    from firecy._escape import display_text

    terms = est.linear_terms_
    out = f"linear terms offered: {len(terms)} numeric features\n"
    if terms.not_offered:
        out += ("not offered as linear terms: " + ", ".join(
            f"{display_text(name)} ({why})" for name, why in terms.not_offered) + "\n")
    return out


class RuleFeaturesMixin(TransformerMixin):
    """``transform`` and ``summary`` for a fitted FIRE estimator (internal).

    A transformer to scikit-learn (``fit_transform``, the transformer
    checks of ``check_estimator``), a predictor first.

    Reads ``coef_``, ``ensemble_``, ``n_rules_``, ``lambda_``,
    ``best_params_`` and the estimator's ``_validate_predict_data``.
    """

    def summary(self, X=None, **kwargs):
        """The fitted rule set as text: intercept, one line per rule, counts.

        The estimator's ``repr`` stays scikit-learn's (its parameters);
        ``print(est.summary())`` shows what it learned.

        Parameters
        ----------
        X : array-like or DataFrame, optional
            Data for each rule's support and the missing-value notes.
        **kwargs
            Passed to :func:`firecy.rules.rules_report` (``exact``,
            ``precision``, ``digits``, ``max_rules``, ``show_missing``).
            ``exact=True`` prints every threshold so that each rule's text
            selects its rows for any input; the default text is exact for
            inputs of at most 15 significant digits (see
            :func:`firecy.rules.format_conditions`).

        Returns
        -------
        str
        """
        check_is_fitted(self)
        from firecy.rules import rules_report

        head = (f"{type(self).__name__}: {self.model_.terms_text()}, "
                f"lambda = {self.lambda_:.4g}, {self.best_params_}\n")
        note = getattr(self, "_rule_depth_note", None)
        if note:
            head += note + "\n"
        constraints = self.model_.constraints_text()
        if constraints:
            head += constraints + "\n"
        head += _linear_note(self)
        return head + rules_report(self, X=X, **kwargs)

    def transform(self, X):
        """The selected rules as features: their design columns on ``X``.

        Column ``k`` is design column ``np.flatnonzero(coef_)[k]`` (the
        ``column`` of :attr:`rules_`): the rule's value (``ensemble_.leaf_values``:
        the tree's value, or 1 with ``rule_values_ == "unit"``) on the rows the
        rule selects, 0 elsewhere, so that the raw prediction is
        ``baseline + intercept_ + transform(X) @ coef_[coef_ != 0]``.
        ``transform(X) != 0`` is the 0/1 rule indicator when no kept leaf
        value is exactly 0 (use :meth:`RuleEnsemble.rule_mask` otherwise).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_rules_)
        """
        from firecy._dask import is_dask

        if is_dask(X):
            from firecy._dask._methods import dask_method

            return dask_method(self, "transform", X)
        Xm = self._validate_predict_data(X)
        ens = self.ensemble_
        kept = self._kept_columns()
        # route the rows through the kept rules' trees only
        tree = np.searchsorted(np.asarray(ens.block_ptr), kept, side="right") - 1
        blocks, at = np.unique(tree, return_inverse=True)
        table = np.asarray(ens.leaf_table(Xm, blocks=blocks))
        lands = table[:, at] == kept[None, :]
        return np.where(lands, np.asarray(ens.leaf_values, dtype=np.float64)[kept], 0.0)

    def _kept_columns(self):
        ens = self.ensemble_
        return np.flatnonzero(np.asarray(self.coef_).reshape(len(ens.leaf_values), -1)
                              .any(axis=1))

    def get_feature_names_out(self, input_features=None):
        """Names of the columns of :meth:`transform`: ``"rule_<column>"``.

        ``<column>`` is the rule's design column, the ``column`` of
        :attr:`rules_` (which holds the rule's text), so the names stay
        unique where two trees hold the same conditions.

        Parameters
        ----------
        input_features : array-like of str, optional
            Checked against ``feature_names_in_`` (scikit-learn's convention);
            the output names do not depend on them.

        Returns
        -------
        ndarray of str objects, shape (n_rules_,)

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeRegressor
        >>> from firecy import FIRERegressor
        >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
        >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
        >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
        >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, linear_terms=False).fit(X, y)
        >>> fire.get_feature_names_out()
        array(['rule_2', 'rule_3'], dtype=object)
        >>> fire.set_output(transform="pandas").transform(X[:2]).columns.tolist()
        ['rule_2', 'rule_3']
        """
        check_is_fitted(self)
        _check_feature_names_in(self, input_features, generate_names=False)
        return np.asarray([f"rule_{j}" for j in self._kept_columns()], dtype=object)
