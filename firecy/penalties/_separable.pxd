from firecy.penalties._base cimport Penalty


cdef class L1(Penalty):
    pass


cdef class MCP(Penalty):
    cdef public double gamma
