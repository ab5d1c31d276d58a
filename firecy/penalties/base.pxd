# The public penalty contract of firecy: cimport from here.
#
#     from firecy.penalties.base cimport (
#         Block, Penalty, PENALTY_ABI_VERSION, PENALTY_SEPARABLE,
#         PENALTY_SCORE_IS_DECREASE)
#
# and subclass ``Penalty`` in your own Cython module (build it with
# ``include_path=[firecy.get_include()]``). The declarations, documented, are
# in ``_abi1.pxd``, the module whose name carries the ABI version (see its
# first comment and docs/writing_penalties.rst): a plug-in built against this
# header only imports under a firecy with the same penalty ABI, and says
# what to rebuild otherwise.
from firecy.penalties._abi1 cimport (
    Block,
    Penalty,
    PENALTY_ABI_VERSION,
    PENALTY_SCORE_IS_DECREASE,
    PENALTY_SEPARABLE,
)
