"""Rules and node paths of a :class:`~firecy.ensembles.RuleEnsemble`, built on access.

A deep forest has millions of leaves; building a list of conditions and a
node path for each at extraction costs tens of seconds and gigabytes, while a
user reads a few dozen kept rules.  These sequences keep only the leaf of each
rule (an array) and walk the tree's parent array when a rule is read.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["RuleList", "NodePathList"]


class _PerRule(Sequence):
    """A read-only sequence with one entry per rule (design column)."""

    def __init__(self, ensemble):
        self._ensemble = ensemble

    def __len__(self):
        return int(self._ensemble.n_rules)

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self._item(i) for i in range(*j.indices(len(self)))]
        if isinstance(j, (bool, np.bool_)) or not isinstance(j, (int, np.integer)):
            raise TypeError(f"rule indices must be integers or slices, not {type(j).__name__}")
        return self._item(j)

    def __repr__(self):
        return f"<{type(self).__name__} of {len(self)} rules>"

    def __eq__(self, other):
        # entry by entry, like two lists (each access builds the entry)
        if not isinstance(other, (_PerRule, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(
            self._same(a, b) for a, b in zip(self, other))

    __hash__ = None

    @staticmethod
    def _same(a, b):
        return a == b


class RuleList(_PerRule):
    """``rules[j]``: the conditions of rule ``j``, root first (a new list each
    time; the :class:`~firecy.ensembles.Condition` objects are shared)."""

    def _item(self, j):
        t, leaf = self._ensemble._leaf(j)
        return self._ensemble._blocks[t].tree.conditions(leaf)


class NodePathList(_PerRule):
    """``node_paths[j]``: global ids of the internal nodes on rule ``j``'s path."""

    @staticmethod
    def _same(a, b):
        return np.array_equal(a, b)

    def _item(self, j):
        ens = self._ensemble
        t, leaf = ens._leaf(j)
        nodes, _ = ens._blocks[t].tree.path(leaf)
        return np.asarray(nodes, dtype=np.int64) + ens.node_offset[t]
