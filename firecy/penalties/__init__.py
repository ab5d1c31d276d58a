"""Penalties: the contract the solver talks to, and the penalties firecy ships."""
from firecy.penalties._base import Penalty, PythonPenalty
from firecy.penalties._separable import L1, MCP
from firecy.penalties._registry import (
    as_penalty,
    available_penalties,
    make_penalty,
    register_penalty,
)

__all__ = [
    "Penalty",
    "PythonPenalty",
    "L1",
    "MCP",
    "as_penalty",
    "available_penalties",
    "make_penalty",
    "register_penalty",
]
