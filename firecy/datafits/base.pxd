# The public datafit contract of firecy: cimport from here.
#
#     from firecy.datafits.base cimport Column, Datafit, DatafitState
#
# and subclass ``Datafit`` in your own Cython module (build it with
# ``include_path=[firecy.get_include()]``). The declarations, documented, are
# in ``_abi2.pxd``, the module whose name carries the ABI version (see
# docs/writing_penalties.rst): a datafit built against this header only
# imports under a firecy with the same datafit ABI, and says what to rebuild
# otherwise.
from firecy.datafits._abi2 cimport (
    Column,
    Datafit,
    DATAFIT_ABI_VERSION,
    DATAFIT_MAX_ROWS,
    DATAFIT_MAX_TOTALS,
    DatafitState,
)


# The layout probes (firecy/datafits/_abi2.pxd, firecy/_abi.py; the same as
# the penalty header's, see firecy/penalties/base.pxd). Not for use in code.
cdef extern from *:
    ctypedef class firecy._abi._DatafitLayoutUp [object FIRECY_DATAFIT_PROBE_UP, check_size warn]:
        pass
    ctypedef class firecy._abi._DatafitLayoutDown [object FIRECY_DATAFIT_PROBE_DOWN, check_size warn]:
        pass
    ctypedef class firecy._abi._DatafitLayout [object FIRECY_DATAFIT_PROBE_EXACT, check_size error]:
        pass
