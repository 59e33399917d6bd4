/* Byte classes of a DFA's transition table, in C: bytes whose columns are equal (every state
 * treats them alike) share a class, numbered by first byte. Columns are hashed, then compared
 * exactly with the first column of their hash. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject *column_classes(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_trans, *o_out;
    if (!PyArg_ParseTuple(args, "OO", &o_trans, &o_out)) return NULL;
    Py_buffer vt, vo;
    if (PyObject_GetBuffer(o_trans, &vt, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (PyObject_GetBuffer(o_out, &vo, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&vt);
        return NULL;
    }
    if (vt.itemsize != 4 || vt.len % (4 * 256) || vo.itemsize != 4 || vo.len != 4 * 256) {
        PyBuffer_Release(&vt);
        PyBuffer_Release(&vo);
        PyErr_SetString(PyExc_ValueError,
                        "column_classes: expected int32[n, 256] and int32[256] buffers");
        return NULL;
    }
    const int32_t *t = vt.buf;
    int32_t *cls = vo.buf;
    Py_ssize_t n = vt.len / (4 * 256);
    uint64_t h[256];
    int reps[256];
    for (int b = 0; b < 256; b++) h[b] = 0x9E3779B97F4A7C15ULL;
    for (Py_ssize_t s = 0; s < n; s++) {
        const int32_t *row = t + s * 256;
        for (int b = 0; b < 256; b++) {
            h[b] ^= (uint64_t)(uint32_t)row[b] + 0x9E3779B97F4A7C15ULL + (h[b] << 6) + (h[b] >> 2);
            h[b] *= 0xBF58476D1CE4E5B9ULL;
        }
    }
    int m = 0;
    int slots[512];           /* open addressing on the hash: class ids, -1 empty */
    for (int i = 0; i < 512; i++) slots[i] = -1;
    for (int b = 0; b < 256; b++) {
        int c = -1;
        unsigned i = (unsigned)(h[b] >> 23) & 511;
        for (; slots[i] >= 0; i = (i + 1) & 511) {
            int rb = reps[slots[i]];
            if (h[rb] != h[b]) continue;
            Py_ssize_t s = 0;
            while (s < n && t[s * 256 + rb] == t[s * 256 + b]) s++;
            if (s == n) {
                c = slots[i];
                break;
            }
        }
        if (c < 0) {
            c = m++;
            reps[c] = b;
            slots[i] = c;
        }
        cls[b] = c;
    }
    PyBuffer_Release(&vt);
    PyBuffer_Release(&vo);
    return PyLong_FromLong(m);
}

static PyMethodDef methods[] = {
    {"column_classes", column_classes, METH_VARARGS,
     "column_classes(transitions int32[n, 256], out int32[256]) -> number of classes"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_columns",
                                    "Byte classes of a DFA (see _columns.c).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__columns(void) { return PyModule_Create(&module); }
