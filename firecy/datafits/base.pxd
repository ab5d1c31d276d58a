# The public datafit contract of firecy: cimport from here.
#
#     from firecy.datafits.base cimport Column, Datafit, DatafitState
#
# and subclass ``Datafit`` in your own Cython module (build it with
# ``include_path=[firecy.get_include()]``). The declarations, documented, are
# in ``_abi1.pxd``, the module whose name carries the ABI version (see
# docs/writing_penalties.rst): a datafit built against this header only
# imports under a firecy with the same datafit ABI, and says what to rebuild
# otherwise.
from firecy.datafits._abi1 cimport (
    Column,
    Datafit,
    DATAFIT_ABI_VERSION,
    DATAFIT_MAX_ROWS,
    DATAFIT_MAX_TOTALS,
    DatafitState,
)
