/* Assembling a mask from cached walks, in C (see mask.py): the traversal of the walk nodes below
 * a lexeme's end, and the OR of the parts found.
 *
 * descend(node, col, words, ids, young, memo_get, advance, resolve, dead) -> visited: reads
 * the walk node ``node`` at parser column ``col`` and every node below it, depth first with an
 * explicit stack (chains of one-lexeme steps run deep). Each node's packed words (``words``
 * attribute, or None) or token ids (``ids``) are appended to the lists ``words`` / ``ids``.
 * For each child ``(terminals, set_id, edge, roots, resolved)`` of a node, the parser column
 * after the child's lexeme is read from the advance memo (``young``: a dict by
 * ``col.id << 32 | set_id``; ``memo_get(key)`` on a miss there; ``advance(col, terminals,
 * set_id)`` when both miss), ``dead`` or None meaning no column; the child node for that
 * column's candidate set is ``resolved[candidates]`` or ``resolve(resolved, edge, column,
 * roots)``; nodes whose ``empty`` is true are not visited. Returns the number of nodes visited.
 *
 * assemble_mask(out, words_list, ids_list, n_bits) -> bool: ORs every packed int32 mask of
 * ``words_list`` (each as long as ``out``) into ``out`` and sets the bit of every int32 token id
 * of the arrays in ``ids_list`` (ids must be below ``n_bits``, the vocabulary size); returns
 * whether any bit of ``out`` is set.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static PyObject *s_words, *s_ids, *s_children, *s_empty, *s_id, *s_candidates;

typedef struct {
    PyObject **node, **col; /* owned references */
    Py_ssize_t n, cap;
} Stack;

/* pushes (node, col), taking over both references; -1 on memory error (both released) */
static int stack_push(Stack *s, PyObject *node, PyObject *col) {
    if (s->n == s->cap) {
        Py_ssize_t cap = s->cap ? s->cap * 2 : 64;
        PyObject **n2 = realloc(s->node, sizeof(PyObject *) * (size_t)cap);
        if (n2) s->node = n2;
        PyObject **c2 = n2 ? realloc(s->col, sizeof(PyObject *) * (size_t)cap) : NULL;
        if (c2) s->col = c2;
        if (!n2 || !c2) {
            Py_DECREF(node);
            Py_DECREF(col);
            PyErr_NoMemory();
            return -1;
        }
        s->cap = cap;
    }
    s->node[s->n] = node;
    s->col[s->n] = col;
    s->n++;
    return 0;
}

/* the node's packed words, or its ids when it has any, appended to the lists */
static int collect_parts(PyObject *node, PyObject *words, PyObject *ids) {
    PyObject *w = PyObject_GetAttr(node, s_words);
    if (!w) return -1;
    int rc = 0;
    if (w != Py_None) rc = PyList_Append(words, w);
    else {
        PyObject *i = PyObject_GetAttr(node, s_ids);
        if (!i) rc = -1;
        else {
            Py_ssize_t n = PyObject_Length(i);
            rc = n < 0 ? -1 : n > 0 ? PyList_Append(ids, i) : 0;
            Py_DECREF(i);
        }
    }
    Py_DECREF(w);
    return rc;
}

/* the advance memo key ``col.id << 32 | set_id``, as Python computes it */
static PyObject *memo_key(PyObject *cid, PyObject *set_id) {
    unsigned long long c = PyLong_AsUnsignedLongLong(cid);
    unsigned long long s = c == (unsigned long long)-1 ? 0 : PyLong_AsUnsignedLongLong(set_id);
    if (!PyErr_Occurred() && c < (1ULL << 32) && s < (1ULL << 32))
        return PyLong_FromUnsignedLongLong(c << 32 | s);
    PyErr_Clear();      /* large or negative ids: Python's arithmetic (or its TypeError) */
    PyObject *k32 = PyLong_FromLong(32);
    PyObject *shifted = k32 ? PyNumber_Lshift(cid, k32) : NULL;
    Py_XDECREF(k32);
    PyObject *key = shifted ? PyNumber_Or(shifted, set_id) : NULL;
    Py_XDECREF(shifted);
    return key;
}

/* the column after ``col`` and a child's lexeme (new reference), Py_None for none, NULL on
 * error */
static PyObject *next_column(PyObject *child, PyObject *col, PyObject *cid, PyObject *young,
                             PyObject *memo_get, PyObject *advance, PyObject *dead) {
    PyObject *terms = PyTuple_GET_ITEM(child, 0), *set_id = PyTuple_GET_ITEM(child, 1);
    PyObject *key = memo_key(cid, set_id);
    if (!key) return NULL;
    PyObject *nxt = PyDict_GetItemWithError(young, key);
    if (nxt) Py_INCREF(nxt);
    else if (!PyErr_Occurred()) {
        nxt = PyObject_CallOneArg(memo_get, key);
        if (nxt == Py_None) {
            Py_DECREF(nxt);
            nxt = PyObject_CallFunctionObjArgs(advance, col, terms, set_id, NULL);
        }
    }
    Py_DECREF(key);
    if (nxt == dead) {
        Py_DECREF(nxt);
        Py_RETURN_NONE;
    }
    return nxt;
}

static PyObject *descend(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *node, *col, *words, *ids, *young, *memo_get, *advance, *resolve, *dead;
    if (!PyArg_ParseTuple(args, "OOO!O!O!OOOO", &node, &col, &PyList_Type, &words, &PyList_Type,
                          &ids, &PyDict_Type, &young, &memo_get, &advance, &resolve, &dead))
        return NULL;
    Stack st = {NULL, NULL, 0, 0};
    Py_ssize_t visited = 0;
    int failed = 0;
    Py_INCREF(node);
    Py_INCREF(col);
    if (stack_push(&st, node, col) < 0) {
        free(st.node);
        return NULL;
    }
    while (st.n && !failed) {
        st.n--;
        node = st.node[st.n];
        col = st.col[st.n];
        visited++;
        PyObject *children = NULL, *cid_o = NULL;
        failed = collect_parts(node, words, ids) < 0;
        if (!failed) {
            children = PyObject_GetAttr(node, s_children);
            cid_o = children ? PyObject_GetAttr(col, s_id) : NULL;
            failed = !cid_o;
            if (children && !PyTuple_Check(children)) {
                PyErr_SetString(PyExc_TypeError, "descend: children must be a tuple");
                failed = 1;
            }
        }
        for (Py_ssize_t i = 0; !failed && i < PyTuple_GET_SIZE(children); i++) {
            PyObject *child = PyTuple_GET_ITEM(children, i);
            if (!PyTuple_Check(child) || PyTuple_GET_SIZE(child) != 5 ||
                !PyDict_Check(PyTuple_GET_ITEM(child, 4))) {
                PyErr_SetString(PyExc_TypeError,
                                "descend: children are (terminals, set id, edge, roots, resolved)");
                failed = 1;
                break;
            }
            PyObject *nxt = next_column(child, col, cid_o, young, memo_get, advance, dead);
            if (!nxt) {
                failed = 1;
                break;
            }
            if (nxt == Py_None) {
                Py_DECREF(nxt);
                continue;
            }
            PyObject *resolved = PyTuple_GET_ITEM(child, 4);
            PyObject *cands = PyObject_GetAttr(nxt, s_candidates);
            PyObject *sub = cands ? PyDict_GetItemWithError(resolved, cands) : NULL;
            if (sub) Py_INCREF(sub);
            else if (cands && !PyErr_Occurred())
                sub = PyObject_CallFunctionObjArgs(resolve, resolved, PyTuple_GET_ITEM(child, 2),
                                                   nxt, PyTuple_GET_ITEM(child, 3), NULL);
            Py_XDECREF(cands);
            PyObject *empty = sub ? PyObject_GetAttr(sub, s_empty) : NULL;
            int is_empty = empty ? PyObject_IsTrue(empty) : -1;
            Py_XDECREF(empty);
            if (is_empty < 0) {
                Py_XDECREF(sub);
                Py_DECREF(nxt);
                failed = 1;
            } else if (is_empty) {
                Py_DECREF(sub);
                Py_DECREF(nxt);
            } else
                failed = stack_push(&st, sub, nxt) < 0;
        }
        Py_XDECREF(children);
        Py_XDECREF(cid_o);
        Py_DECREF(node);
        Py_DECREF(col);
    }
    while (st.n) {
        st.n--;
        Py_DECREF(st.node[st.n]);
        Py_DECREF(st.col[st.n]);
    }
    free(st.node);
    free(st.col);
    return failed ? NULL : PyLong_FromSsize_t(visited);
}

/* whether ``v`` holds aligned 4-byte integers (numpy int32 or uint32) */
static int is_int32(const Py_buffer *v) {
    const char *f = v->format ? v->format : "B";
    char code = f[0] && f[1] && strchr("@=<>!", f[0]) ? f[1] : f[0];
    return v->itemsize == 4 && code && strchr("iIlL", code) && ((uintptr_t)v->buf & 3) == 0;
}

static PyObject *assemble_mask(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_out, *words_list, *ids_list;
    Py_ssize_t n_bits;
    if (!PyArg_ParseTuple(args, "OO!O!n", &o_out, &PyList_Type, &words_list, &PyList_Type,
                          &ids_list, &n_bits))
        return NULL;
    Py_buffer vo;
    if (PyObject_GetBuffer(o_out, &vo, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0)
        return NULL;
    PyObject *result = NULL;
    if (!is_int32(&vo)) {
        PyErr_SetString(PyExc_TypeError, "assemble_mask: out must hold aligned int32 words");
        goto done;
    }
    uint32_t *out = vo.buf;
    Py_ssize_t n = vo.len / 4;
    if (n_bits < 0 || n_bits > n * 32) {
        PyErr_SetString(PyExc_ValueError, "assemble_mask: n_bits does not fit out");
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(words_list); i++) {
        Py_buffer v;
        if (PyObject_GetBuffer(PyList_GET_ITEM(words_list, i), &v,
                               PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto done;
        int bad = !is_int32(&v) || v.len != vo.len;
        if (!bad) {
            const uint32_t *w = v.buf;
            for (Py_ssize_t j = 0; j < n; j++) out[j] |= w[j];
        }
        PyBuffer_Release(&v);
        if (bad) {
            PyErr_SetString(PyExc_ValueError,
                            "assemble_mask: packed masks must be aligned int32 words like out");
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ids_list); i++) {
        Py_buffer v;
        if (PyObject_GetBuffer(PyList_GET_ITEM(ids_list, i), &v,
                               PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto done;
        int bad = !is_int32(&v);
        const int32_t *tok = v.buf;
        for (Py_ssize_t j = 0; j < v.len / 4 && !bad; j++) {
            int32_t t = tok[j];
            if (t < 0 || (Py_ssize_t)t >= n_bits) bad = 1;
            else out[t >> 5] |= 1u << (t & 31);
        }
        PyBuffer_Release(&v);
        if (bad) {
            PyErr_SetString(PyExc_ValueError, "assemble_mask: token ids must be aligned int32 "
                                              "values below n_bits");
            goto done;
        }
    }
    int any = 0;
    for (Py_ssize_t j = 0; j < n && !any; j++) any = out[j] != 0;
    result = PyBool_FromLong(any);
done:
    PyBuffer_Release(&vo);
    return result;
}

/* allowed_ids(words, ids_list): the ids (from aligned int32 arrays) whose bit is set in the
   packed mask ``words``, in order, repeats kept; ids outside the mask are skipped */
static PyObject *allowed_ids(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_words, *ids_list;
    if (!PyArg_ParseTuple(args, "OO!", &o_words, &PyList_Type, &ids_list))
        return NULL;
    Py_buffer vw;
    if (PyObject_GetBuffer(o_words, &vw, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    PyObject *result = NULL;
    if (!is_int32(&vw)) {
        PyErr_SetString(PyExc_TypeError, "allowed_ids: words must hold aligned int32 words");
        goto done;
    }
    const uint32_t *w = vw.buf;
    Py_ssize_t n_bits = (vw.len / 4) * 32;
    result = PyList_New(0);
    if (!result)
        goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ids_list); i++) {
        Py_buffer v;
        if (PyObject_GetBuffer(PyList_GET_ITEM(ids_list, i), &v,
                               PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
            Py_CLEAR(result);
            goto done;
        }
        int bad = !is_int32(&v);
        const int32_t *tok = v.buf;
        for (Py_ssize_t j = 0; j < v.len / 4 && !bad; j++) {
            int32_t t = tok[j];
            if (t < 0 || (Py_ssize_t)t >= n_bits || !((w[t >> 5] >> (t & 31)) & 1u))
                continue;
            PyObject *o = PyLong_FromLong(t);
            if (!o || PyList_Append(result, o) < 0) {
                Py_XDECREF(o);
                bad = 2;
                break;
            }
            Py_DECREF(o);
        }
        PyBuffer_Release(&v);
        if (bad) {
            if (bad == 1)
                PyErr_SetString(PyExc_TypeError, "allowed_ids: ids must be aligned int32 arrays");
            Py_CLEAR(result);
            goto done;
        }
    }
done:
    PyBuffer_Release(&vw);
    return result;
}

static PyMethodDef methods[] = {
    {"allowed_ids", allowed_ids, METH_VARARGS,
     "allowed_ids(words, ids_list) -> list: the ids of the int32 arrays whose bit is set in the "
     "packed mask words"},
    {"descend", descend, METH_VARARGS,
     "descend(node, col, words, ids, young, memo_get, advance, resolve, dead) -> nodes visited"},
    {"assemble_mask", assemble_mask, METH_VARARGS,
     "assemble_mask(out, words_list, ids_list, n_bits) -> bool: ORs packed masks and sets token "
     "id bits (ids below n_bits) in out; whether any bit is set"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_assemble",
                                    "Mask assembly from cached walks (see _assemble.c).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__assemble(void) {
    s_words = PyUnicode_InternFromString("words");
    s_ids = PyUnicode_InternFromString("ids");
    s_children = PyUnicode_InternFromString("children");
    s_empty = PyUnicode_InternFromString("empty");
    s_id = PyUnicode_InternFromString("id");
    s_candidates = PyUnicode_InternFromString("candidates");
    if (!s_words || !s_ids || !s_children || !s_empty || !s_id || !s_candidates) return NULL;
    return PyModule_Create(&module);
}
