"""Type objects of a given C size, for the layout probes of firecy/_abi.py.

Cython checks the size of an imported type against the size a module was
compiled with; the probes are types whose size is a number (the layout
measure of a header), never instantiated. Python cannot make a type of an
arbitrary size, the C API can (``PyType_FromSpec``).
"""

from cpython.object cimport PyObject

cdef extern from *:
    """
    static PyObject *firecy_sized_type(const char *name, int basicsize, int itemsize) {
        /* no slots: an empty object type that cannot be instantiated (its
           size may be 2**30 bytes: it is a number, not a layout) */
        PyType_Slot slots[] = {{0, NULL}};
        PyType_Spec spec;
        spec.name = name;
        spec.basicsize = basicsize;
        spec.itemsize = itemsize;
    #ifdef Py_TPFLAGS_DISALLOW_INSTANTIATION
        spec.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION;
    #else
        spec.flags = Py_TPFLAGS_DEFAULT;
    #endif
        spec.slots = slots;
        return PyType_FromSpec(&spec);
    }
    """
    object firecy_sized_type(const char *name, int basicsize, int itemsize)

# the spec names: Python before 3.10 keeps a pointer to the name as the
# type's tp_name, so the bytes live as long as the module
_names = []


def sized_type(str name, Py_ssize_t basicsize, Py_ssize_t itemsize=0):
    """A new type named ``name`` whose instances would be ``basicsize`` bytes.

    Parameters
    ----------
    name : str
        The qualified name (``"package.module.Type"``).
    basicsize : int
        ``tp_basicsize``, at least ``object.__basicsize__`` and below 2**31.
    itemsize : int, default 0
        ``tp_itemsize``: Cython's size check accepts any compiled size from
        ``basicsize`` to ``basicsize + itemsize``.

    Returns
    -------
    type
        A type that cannot be instantiated.
    """
    cdef Py_ssize_t limit = 2 ** 31 - 1
    if not (<Py_ssize_t>sizeof(PyObject) <= basicsize <= limit and 0 <= itemsize <= limit):
        raise ValueError(f"no type of size {basicsize} + {itemsize} per item")
    encoded = name.encode()
    _names.append(encoded)
    return firecy_sized_type(encoded, <int>basicsize, <int>itemsize)
