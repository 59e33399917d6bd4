/* untrack_all(*objs): Python's cyclic garbage collector stops tracking each of objs (see
 * gc_untrack.py). Only for objects that can be in no reference cycle: reference counting frees
 * them alone. Called on hot paths (a new parser column, a lexer row), so one C call for all. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *untrack_all(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    (void)self;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = args[i];
        if (PyObject_IS_GC(o) && PyObject_GC_IsTracked(o)) PyObject_GC_UnTrack(o);
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"untrack_all", (PyCFunction)(void (*)(void))untrack_all, METH_FASTCALL,
     "untrack_all(*objs): the garbage collector stops tracking each of objs"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_gc_untrack",
                                    "Untracking acyclic objects from the cyclic collector.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__gc_untrack(void) { return PyModule_Create(&module); }
