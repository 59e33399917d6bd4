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

/* States are stored sparsely: the (component, state) pairs of their live components, in
 * component order, in one pool; hashing and comparing cost the live count, not k. */
typedef struct {
    int32_t *pool;      /* 2 ints per live pair */
    Py_ssize_t pool_n, pool_cap;
    int64_t *start;     /* first pair of each state in the pool */
    int32_t *count;     /* live pairs of each state */
    uint64_t *hash;
    int32_t *ids;       /* n * r successor ids */
    Py_ssize_t n, cap;
    int32_t *slots;     /* hash slots: state id or -1 */
    Py_ssize_t n_slots;
} Product;

static uint64_t hash_pairs(const int32_t *t, Py_ssize_t m) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)m;
    for (Py_ssize_t j = 0; j < 2 * m; j++) {
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
        uint64_t h = p->hash[s] & (n_slots - 1);
        while (slots[h] >= 0) h = (h + 1) & (n_slots - 1);
        slots[h] = (int32_t)s;
    }
    free(p->slots);
    p->slots = slots;
    p->n_slots = n_slots;
    return 0;
}

static int add_state(Product *p, const int32_t *t, Py_ssize_t m, uint64_t h, Py_ssize_t r) {
    if (p->n == p->cap) {
        Py_ssize_t cap = p->cap * 2;
        int64_t *start = realloc(p->start, sizeof(int64_t) * cap);
        if (!start) return -1;
        p->start = start;
        int32_t *count = realloc(p->count, sizeof(int32_t) * cap);
        if (!count) return -1;
        p->count = count;
        uint64_t *hash = realloc(p->hash, sizeof(uint64_t) * cap);
        if (!hash) return -1;
        p->hash = hash;
        int32_t *ids = realloc(p->ids, sizeof(int32_t) * cap * r);
        if (!ids) return -1;
        p->ids = ids;
        p->cap = cap;
    }
    while (p->pool_n + m > p->pool_cap) {
        int32_t *pool = realloc(p->pool, sizeof(int32_t) * 2 * p->pool_cap * 2);
        if (!pool) return -1;
        p->pool = pool;
        p->pool_cap *= 2;
    }
    memcpy(p->pool + 2 * p->pool_n, t, sizeof(int32_t) * 2 * m);
    p->start[p->n] = p->pool_n;
    p->count[p->n] = (int32_t)m;
    p->hash[p->n] = h;
    p->pool_n += m;
    p->n++;
    return 0;
}

/* id of the state with live pairs t[0..m), adding it when new; -1 memory error, -2 too many */
static int64_t intern(Product *p, const int32_t *t, Py_ssize_t m, Py_ssize_t r,
                      Py_ssize_t max_states) {
    uint64_t full = hash_pairs(t, m), h = full & (p->n_slots - 1);
    while (p->slots[h] >= 0) {
        int32_t s = p->slots[h];
        if (p->hash[s] == full && p->count[s] == m &&
            memcmp(p->pool + 2 * p->start[s], t, sizeof(int32_t) * 2 * m) == 0)
            return s;
        h = (h + 1) & (p->n_slots - 1);
    }
    if (p->n >= max_states) return -2;
    Py_ssize_t s = p->n;
    if (add_state(p, t, m, full, r) < 0) return -1;
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
    int32_t *tmp = NULL;
    int64_t *acc_off = NULL;
    uint8_t *acc_out = NULL;
    int32_t *comps_out = NULL;
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
    p.cap = 64;
    p.pool_cap = 64 + k;
    p.pool = malloc(sizeof(int32_t) * 2 * p.pool_cap);
    p.start = malloc(sizeof(int64_t) * p.cap);
    p.count = malloc(sizeof(int32_t) * p.cap);
    p.hash = malloc(sizeof(uint64_t) * p.cap);
    p.ids = malloc(sizeof(int32_t) * p.cap * r);
    tmp = malloc(sizeof(int32_t) * 2 * (k ? k : 1));
    if (!p.pool || !p.start || !p.count || !p.hash || !p.ids || !tmp || rehash(&p, 256) < 0) {
        status = -1;
        goto done;
    }
    Py_ssize_t m0 = 0;
    for (Py_ssize_t j = 0; j < k; j++)
        if (init[j] >= 0) {
            tmp[2 * m0] = (int32_t)j;
            tmp[2 * m0 + 1] = init[j];
            m0++;
        }
    if (add_state(&p, tmp, m0, hash_pairs(tmp, m0), r) < 0) {
        status = -1;
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t s = 0; s < p.n && status == 0; s++) {
        for (Py_ssize_t c = 0; c < r; c++) {
            /* the pool may move while interning: re-read the state's pairs every class */
            const int32_t *live = p.pool + 2 * p.start[s];
            Py_ssize_t n_live = p.count[s], m = 0;
            for (Py_ssize_t i = 0; i < n_live; i++) {
                int32_t j = live[2 * i], q = live[2 * i + 1];
                int32_t nq = tables[offsets[j] + (int64_t)q * r + c];
                if (nq >= 0) {
                    tmp[2 * m] = j;
                    tmp[2 * m + 1] = nq;
                    m++;
                }
            }
            int64_t id = -1;
            if (m) {
                id = intern(&p, tmp, m, r, max_states);
                if (id < 0) { status = (int)id; break; }
            }
            p.ids[s * r + c] = (int32_t)id;
        }
    }
    Py_END_ALLOW_THREADS
    if (status == 0) {
        acc_out = calloc((size_t)(p.n * k) + 1, 1);
        comps_out = malloc(sizeof(int32_t) * ((size_t)(p.n * k) + 1));
        if (!acc_out || !comps_out) {
            status = -1;
        } else {
            memset(comps_out, 0xff, sizeof(int32_t) * (size_t)(p.n * k));
            for (Py_ssize_t s = 0; s < p.n; s++) {
                const int32_t *live = p.pool + 2 * p.start[s];
                for (Py_ssize_t i = 0; i < p.count[s]; i++) {
                    int32_t j = live[2 * i], q = live[2 * i + 1];
                    comps_out[s * k + j] = q;
                    acc_out[s * k + j] = accepting[acc_off[j] + q] != 0;
                }
            }
        }
    }
done:
    if (status == 0) {
        PyObject *ids = PyBytes_FromStringAndSize((const char *)p.ids, sizeof(int32_t) * p.n * r);
        PyObject *comps = PyBytes_FromStringAndSize((const char *)comps_out,
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
    free(p.pool);
    free(p.start);
    free(p.count);
    free(p.hash);
    free(p.ids);
    free(p.slots);
    free(tmp);
    free(comps_out);
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
