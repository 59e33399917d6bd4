/* untrack(obj): Python's cyclic garbage collector stops tracking obj (see gc_untrack.py). Only
 * for objects that can be in no reference cycle: reference counting frees them alone. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *untrack(PyObject *self, PyObject *o) {
    (void)self;
    if (PyObject_IS_GC(o) && PyObject_GC_IsTracked(o)) PyObject_GC_UnTrack(o);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"untrack", untrack, METH_O, "untrack(obj): the garbage collector stops tracking obj"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_gc_untrack",
                                    "Untracking acyclic objects from the cyclic collector.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__gc_untrack(void) { return PyModule_Create(&module); }
