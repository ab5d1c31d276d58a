# The public penalty contract of firecy: cimport from here.
#
#     from firecy.penalties.base cimport (
#         Block, Penalty, PENALTY_ABI_VERSION, PENALTY_SEPARABLE,
#         PENALTY_SCORE_IS_DECREASE)
#
# and subclass ``Penalty`` in your own Cython module (build it with
# ``include_path=[firecy.get_include()]``). The declarations, documented, are
# in ``_abi2.pxd``, the module whose name carries the ABI version (see its
# first comment and docs/writing_penalties.rst): a plug-in built against this
# header only imports under a firecy with the same penalty ABI, and says
# what to rebuild otherwise.
from firecy.penalties._abi2 cimport (
    Block,
    Penalty,
    PENALTY_ABI_VERSION,
    PENALTY_SCORE_IS_DECREASE,
    PENALTY_SEPARABLE,
)


# The layout probes (firecy/penalties/_abi2.pxd, firecy/_abi.py). Every
# module that cimports this header imports these three types from
# firecy._abi when it is imported, and Cython compares each type's size with
# the size this module was compiled with, which is the layout of the header
# as compiled here: a mismatch in the first two is reported by firecy as an
# ImportError that says what to rebuild, the third refuses the module even if
# the report could not run. Not for use in code.
cdef extern from *:
    ctypedef class firecy._abi._PenaltyLayoutUp [object FIRECY_PENALTY_PROBE_UP, check_size warn]:
        pass
    ctypedef class firecy._abi._PenaltyLayoutDown [object FIRECY_PENALTY_PROBE_DOWN, check_size warn]:
        pass
    ctypedef class firecy._abi._PenaltyLayout [object FIRECY_PENALTY_PROBE_EXACT, check_size error]:
        pass
