"""Penalties: the contract the solver talks to, and the penalties firecy ships.

``base.pxd`` is the public Cython header of the contract (``Penalty``,
declared in ``_abi2``, the module named after its ABI version);
``_python`` wraps penalties written in Python (``PythonPenalty``);
``_separable`` holds L1 and MCP, on the scalar functions of
``_sparsity.pxd``; ``_fusion`` the fusion penalties; ``_group_l0`` group-L0
over trees; ``_blockwise`` one penalty on the rule blocks and another on
the linear terms' blocks; ``_unpenalised`` the zero penalty of blocks a
path always keeps; ``_signed`` sign constraints on any of them; ``tv`` the 1-D fused lasso solvers the fusion prox uses;
``_rules`` the penalties on per-rule data (rule lengths, each tree's node
hierarchy), written on the public header only, as a third party would;
``_registry`` penalties by name. What each penalty computes is stated in
docs/objective.rst, how to write one in docs/writing_penalties.rst.
"""
from firecy.penalties._abi2 import ABI_VERSION, Penalty
from firecy.penalties._python import PythonPenalty
from firecy.penalties._separable import L1, MCP
from firecy.penalties.tv import fused_lasso, fused_lasso_weighted
from firecy.penalties._fusion import Fusion, FusedPenalty, L1Fusion, MCPFusion
from firecy.penalties._group_l0 import GroupL0
from firecy.penalties._blockwise import BlockwisePenalty
from firecy.penalties._unpenalised import Unpenalised
from firecy.penalties._signed import SignConstrained
from firecy.penalties._rules import HierarchicalGroup, LengthWeightedL1
from firecy.penalties._registry import (
    as_penalty,
    available_penalties,
    bind_ensemble,
    make_penalty,
    register_penalty,
)

__all__ = [
    "Penalty",
    "PythonPenalty",
    "L1",
    "MCP",
    "Fusion",
    "FusedPenalty",
    "L1Fusion",
    "MCPFusion",
    "GroupL0",
    "BlockwisePenalty",
    "Unpenalised",
    "SignConstrained",
    "LengthWeightedL1",
    "HierarchicalGroup",
    "fused_lasso",
    "fused_lasso_weighted",
    "as_penalty",
    "available_penalties",
    "bind_ensemble",
    "make_penalty",
    "register_penalty",
    "ABI_VERSION",
]


def _builtin(sparsity):
    def factory(lam=1.0, gamma=3.0, fusion=0.0, group_l0=0.0):
        if sparsity == "l1":
            pen = L1Fusion(lam, fusion) if fusion else L1(lam)
        else:
            pen = MCPFusion(lam, gamma, fusion) if fusion else MCP(lam, gamma)
        return GroupL0(pen, group_l0) if group_l0 else pen
    factory.__name__ = f"make_{sparsity}"
    factory.__doc__ = (
        f"The {sparsity.upper()} penalty (sparsity strength ``lam``), with fusion "
        "(ratio ``fusion``) and group-L0 (``group_l0``) on top when those are nonzero.")
    return factory


register_penalty("l1", _builtin("l1"))
register_penalty("mcp", _builtin("mcp"))
register_penalty("length_l1", LengthWeightedL1)
register_penalty("hierarchical", HierarchicalGroup)
