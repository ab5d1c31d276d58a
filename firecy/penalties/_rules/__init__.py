"""Penalties on per-rule data, written on firecy's public penalty header only.

They use nothing a third-party package could not: ``cimport
firecy.penalties.base`` for the contract, the public ``RuleEnsemble``
attributes for their data, ``check_blocks`` / ``bind_ensemble`` to be
checked against a design and bound to an ensemble.

* ``LengthWeightedL1`` (``"length_l1"``): rule j costs
  ``lam * base**length_j * |w_j|``;
* ``HierarchicalGroup`` (``"hierarchical"``): ``lam * sum_v base**depth(v)
  ||w_{leaves below v}||_2`` over every tree's internal nodes.
"""
from firecy.penalties._rules._hierarchical import HierarchicalGroup
from firecy.penalties._rules._length import LengthWeightedL1, rule_lengths

__all__ = ["HierarchicalGroup", "LengthWeightedL1", "rule_lengths"]
