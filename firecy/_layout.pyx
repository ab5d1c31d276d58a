"""Type objects of a given C size, for the layout probes of firecy/_abi.py,
and the padding of firecy's method tables.

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

    /* Point the type's method-table capsule (Cython's __pyx_vtable__) at a
       copy of the table followed by `pad` null slots, in memory that lives
       as long as the process (modules that cimport the type keep the
       pointer). A module compiled with a longer table copies that many
       slots at import, before its layout probes refuse it: from here it
       copies nulls instead of reading past the end of firecy's table. */
    static int firecy_pad_method_table(PyTypeObject *type, Py_ssize_t methods, Py_ssize_t pad) {
        PyObject *key = PyUnicode_FromString("__pyx_vtable__");
        PyObject *capsule, *padded_capsule;
        void *table, **padded;
        int rc = -1;
        if (key == NULL) return -1;
        capsule = PyDict_GetItemWithError(type->tp_dict, key);   /* borrowed */
        if (capsule == NULL) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s has no method table", type->tp_name);
            goto done;
        }
        table = PyCapsule_GetPointer(capsule, NULL);
        if (table == NULL) goto done;
        padded = (void **)PyMem_Calloc((size_t)(methods + pad), sizeof(void (*)(void)));
        if (padded == NULL) { PyErr_NoMemory(); goto done; }
        memcpy(padded, table, (size_t)methods * sizeof(void (*)(void)));
        padded_capsule = PyCapsule_New(padded, NULL, NULL);
        if (padded_capsule == NULL) { PyMem_Free(padded); goto done; }
        rc = PyDict_SetItem(type->tp_dict, key, padded_capsule);
        Py_DECREF(padded_capsule);
        PyType_Modified(type);
    done:
        Py_DECREF(key);
        return rc;
    }
    """
    object firecy_sized_type(const char *name, int basicsize, int itemsize)
    int firecy_pad_method_table(type tp, Py_ssize_t methods, Py_ssize_t pad) except -1

# the spec names: Python 3.10 keeps a pointer to the name as the
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


def pad_method_table(type base, Py_ssize_t methods, Py_ssize_t pad=64):
    """Give ``base``'s exported method table ``pad`` null slots after its end.

    Called once by each contract module, after its base class is made and
    before any other module imports it (see ``firecy_pad_method_table``).

    Parameters
    ----------
    base : type
        A Cython extension type with a method table (``__pyx_vtable__``).
    methods : int
        The number of its methods (the layout measure).
    pad : int, default 64
        How many slots a stale module may read beyond the end.
    """
    if methods <= 0 or pad < 0:
        raise ValueError(f"bad table size {methods} + {pad}")
    firecy_pad_method_table(base, methods, pad)
