/* The product automaton of a lexer's terminal DFAs, in C (see lexer.py).
 *
 * product(tables, offsets, sizes, init, accepting, n_classes, max_states) breadth-first explores the
 * tuples of component states reachable from ``init``, one byte class at a time. A tuple stays
 * alive while some component is alive (>= 0). States are numbered in the order they are first
 * reached (the initial tuple is state 0 and is never re-entered: reaching its tuple again makes
 * a new state, as the empty lexeme is special). Returns (n_states, ids, comps, acc) with ``ids``
 * the int32 successor of each state per class (-1: dead), ``comps`` the int32 component states
 * of each state and ``acc`` a uint8 flag per state and component (the component accepts), all
 * as bytes; n_states is -1 when more than ``max_states`` states are needed.
 *
 * tables: int32, the transition tables of the components restricted to the class
 * representatives, concatenated; component j's table starts at offsets[j] and has sizes[j]
 * rows of n_classes entries. accepting: uint8, the components' accepting flags concatenated
 * (component j's start at the sum of the sizes before j).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t *comps;     /* n * k */
    int32_t *ids;       /* n * r */
    Py_ssize_t n, cap;
    int32_t *slots;     /* hash slots: state id or -1 */
    Py_ssize_t n_slots;
    Py_ssize_t k;
} Product;

static uint64_t hash_tuple(const int32_t *t, Py_ssize_t k) {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (Py_ssize_t j = 0; j < k; j++) {
        h ^= (uint64_t)(uint32_t)t[j] + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ULL;
    }
    return h ^ (h >> 31);
}

static int rehash(Product *p, Py_ssize_t n_slots) {
    int32_t *slots = malloc(sizeof(int32_t) * n_slots);
    if (!slots) return -1;
    memset(slots, 0xff, sizeof(int32_t) * n_slots);
    for (Py_ssize_t s = 1; s < p->n; s++) {   /* state 0 is never looked up */
        uint64_t h = hash_tuple(p->comps + s * p->k, p->k) & (n_slots - 1);
        while (slots[h] >= 0) h = (h + 1) & (n_slots - 1);
        slots[h] = (int32_t)s;
    }
    free(p->slots);
    p->slots = slots;
    p->n_slots = n_slots;
    return 0;
}

/* id of tuple t, adding it when new; -1 on memory error, -2 past max_states */
static int64_t intern(Product *p, const int32_t *t, Py_ssize_t r, Py_ssize_t max_states) {
    uint64_t h = hash_tuple(t, p->k) & (p->n_slots - 1);
    while (p->slots[h] >= 0) {
        int32_t s = p->slots[h];
        if (memcmp(p->comps + (Py_ssize_t)s * p->k, t, sizeof(int32_t) * p->k) == 0) return s;
        h = (h + 1) & (p->n_slots - 1);
    }
    if (p->n >= max_states) return -2;
    if (p->n == p->cap) {
        Py_ssize_t cap = p->cap * 2;
        int32_t *comps = realloc(p->comps, sizeof(int32_t) * cap * p->k);
        if (!comps) return -1;
        p->comps = comps;
        int32_t *ids = realloc(p->ids, sizeof(int32_t) * cap * r);
        if (!ids) return -1;
        p->ids = ids;
        p->cap = cap;
    }
    Py_ssize_t s = p->n++;
    memcpy(p->comps + s * p->k, t, sizeof(int32_t) * p->k);
    p->slots[h] = (int32_t)s;
    if (p->n * 2 > p->n_slots && rehash(p, p->n_slots * 2) < 0) return -1;
    return s;
}

static PyObject *product(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_tables, *o_offsets, *o_sizes, *o_init, *o_acc;
    Py_ssize_t r, max_states;
    if (!PyArg_ParseTuple(args, "OOOOOnn", &o_tables, &o_offsets, &o_sizes, &o_init, &o_acc,
                          &r, &max_states))
        return NULL;
    Py_buffer ba;
    if (PyObject_GetBuffer(o_acc, &ba, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    Py_buffer bt, bo, bs, bi;
    if (PyObject_GetBuffer(o_tables, &bt, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&ba);
        return NULL;
    }
    if (PyObject_GetBuffer(o_offsets, &bo, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&ba);
        PyBuffer_Release(&bt);
        return NULL;
    }
    if (PyObject_GetBuffer(o_sizes, &bs, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&ba);
        PyBuffer_Release(&bt);
        PyBuffer_Release(&bo);
        return NULL;
    }
    if (PyObject_GetBuffer(o_init, &bi, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&ba);
        PyBuffer_Release(&bt);
        PyBuffer_Release(&bo);
        PyBuffer_Release(&bs);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t k = bi.len / 4;
    const int32_t *tables = bt.buf, *init = bi.buf, *sizes = bs.buf;
    const int64_t *offsets = bo.buf;
    Product p = {0};
    int32_t *tmp = NULL, *live = NULL;
    int64_t *acc_off = NULL;
    uint8_t *acc_out = NULL;
    const uint8_t *accepting = ba.buf;
    int status = 0;   /* 0 ok, -1 memory, -2 too many states, -3 bad input */
    if (bt.itemsize != 4 || bo.itemsize != 8 || bs.itemsize != 4 || bi.itemsize != 4 ||
        bo.len / 8 != k || bs.len / 4 != k || r <= 0 || max_states <= 0) {
        status = -3;
        goto done;
    }
    acc_off = malloc(sizeof(int64_t) * (k ? k : 1));
    if (!acc_off) {
        status = -1;
        goto done;
    }
    int64_t total = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        if (offsets[j] < 0 || sizes[j] < 0 || offsets[j] + (int64_t)sizes[j] * r > bt.len / 4 ||
            init[j] >= sizes[j]) {
            status = -3;
            goto done;
        }
        acc_off[j] = total;
        total += sizes[j];
    }
    if (total != ba.len) {
        status = -3;
        goto done;
    }
    p.k = k;
    p.cap = 64;
    p.comps = malloc(sizeof(int32_t) * p.cap * (k ? k : 1));
    p.ids = malloc(sizeof(int32_t) * p.cap * r);
    tmp = malloc(sizeof(int32_t) * (k ? k : 1));
    live = malloc(sizeof(int32_t) * (k ? k : 1));
    if (!p.comps || !p.ids || !tmp || !live || rehash(&p, 256) < 0) {
        status = -1;
        goto done;
    }
    memcpy(p.comps, init, sizeof(int32_t) * k);
    p.n = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t s = 0; s < p.n && status == 0; s++) {
        Py_ssize_t n_live = 0;
        for (Py_ssize_t j = 0; j < k; j++)
            if (p.comps[s * k + j] >= 0) live[n_live++] = (int32_t)j;
        for (Py_ssize_t c = 0; c < r; c++) {
            memset(tmp, 0xff, sizeof(int32_t) * k);
            int alive = 0;
            for (Py_ssize_t i = 0; i < n_live; i++) {
                int32_t j = live[i];
                int32_t nq = tables[offsets[j] + (int64_t)p.comps[s * k + j] * r + c];
                tmp[j] = nq;
                alive |= nq >= 0;
            }
            int64_t id = -1;
            if (alive) {
                id = intern(&p, tmp, r, max_states);
                if (id < 0) { status = (int)id; break; }
            }
            p.ids[s * r + c] = (int32_t)id;
        }
    }
    Py_END_ALLOW_THREADS
done:
    if (status == 0) {
        acc_out = malloc((size_t)(p.n * k) + 1);
        if (!acc_out) {
            status = -1;
        } else {
            for (Py_ssize_t s = 0; s < p.n; s++)
                for (Py_ssize_t j = 0; j < k; j++) {
                    int32_t q = p.comps[s * k + j];
                    acc_out[s * k + j] = q >= 0 ? (accepting[acc_off[j] + q] != 0) : 0;
                }
        }
    }
    if (status == 0) {
        PyObject *ids = PyBytes_FromStringAndSize((const char *)p.ids, sizeof(int32_t) * p.n * r);
        PyObject *comps = PyBytes_FromStringAndSize((const char *)p.comps,
                                                    sizeof(int32_t) * p.n * k);
        PyObject *acc = PyBytes_FromStringAndSize((const char *)acc_out, p.n * k);
        if (ids && comps && acc) result = Py_BuildValue("nOOO", p.n, ids, comps, acc);
        Py_XDECREF(ids);
        Py_XDECREF(comps);
        Py_XDECREF(acc);
    } else if (status == -2) {
        result = Py_BuildValue("nyyy", (Py_ssize_t)-1, "", "", "");
    } else if (status == -1) {
        PyErr_NoMemory();
    } else {
        PyErr_SetString(PyExc_ValueError, "product: inconsistent tables, offsets or sizes");
    }
    free(p.comps);
    free(p.ids);
    free(p.slots);
    free(tmp);
    free(live);
    free(acc_off);
    free(acc_out);
    PyBuffer_Release(&ba);
    PyBuffer_Release(&bt);
    PyBuffer_Release(&bo);
    PyBuffer_Release(&bs);
    PyBuffer_Release(&bi);
    return result;
}

static PyMethodDef methods[] = {
    {"product", product, METH_VARARGS,
     "product(tables, offsets, sizes, init, accepting, n_classes, max_states) -> "
     "(n, ids, comps, acc)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_product",
                                    "Product automaton of terminal DFAs (see _product.c).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__product(void) { return PyModule_Create(&module); }
