/* Subset construction in C: a byte NFA (range edges and epsilon edges) to a DFA table.
 *
 * Bytes are first grouped into classes no edge tells apart, so each subset is expanded once per
 * class. A subset is the sorted set of NFA nodes that matter for its identity (nodes that read a
 * byte, and the final node) in the epsilon closure. DFA states are numbered in the order they
 * are found (breadth first from the start's closure), state 0 first.
 *
 * union_product does the same for the union of DFA tables without an NFA in between (a new
 * start reaching every table's initial state, every accepting state reaching one final node):
 * a state is the set of the tables' live states (one each at most) that read a byte, numbered
 * over all tables, plus a final mark where one of the live states accepts. Those are the
 * important nodes of the NFA's subsets, so both constructions find the same states (an
 * accepting state that reads nothing more is only the final mark in either) and count them
 * alike against the limit. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_hashed_classes.h"

typedef struct {
    int32_t *a;
    Py_ssize_t n, cap;
} vec;

static int push(vec *v, int32_t x) {
    if (v->n == v->cap) {
        Py_ssize_t cap = v->cap ? 2 * v->cap : 256;
        int32_t *a = realloc(v->a, sizeof(int32_t) * cap);
        if (!a) return -1;
        v->a = a;
        v->cap = cap;
    }
    v->a[v->n++] = x;
    return 0;
}

static int cmp_i32(const void *x, const void *y) {
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

static uint64_t hash_of(const int32_t *a, Py_ssize_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= (uint64_t)(uint32_t)a[i] + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ULL;
    }
    return h;
}

typedef struct {
    /* the NFA */
    Py_ssize_t n_nodes;
    const int32_t *eoff, *elo, *ehi, *edst, *poff, *pdst;
    int32_t final;
    /* closure scratch */
    uint32_t *stamp;
    uint32_t gen;
    vec stack, out;
    /* subsets: pool[soff[i] .. soff[i + 1]] is DFA state i */
    vec pool, soff;
    int32_t *table;      /* open addressing: DFA ids, -1 empty */
    uint64_t *hashes;    /* per DFA state */
    Py_ssize_t table_size, hashes_cap;
} builder;

/* The sorted important nodes of the epsilon closure of seeds, in b->out. */
static int closure(builder *b, const int32_t *seeds, Py_ssize_t n_seeds) {
    b->gen++;
    b->out.n = 0;
    b->stack.n = 0;
    for (Py_ssize_t i = 0; i < n_seeds; i++) {
        int32_t s = seeds[i];
        if (b->stamp[s] == b->gen) continue;
        b->stamp[s] = b->gen;
        if (push(&b->stack, s)) return -1;
    }
    while (b->stack.n) {
        int32_t x = b->stack.a[--b->stack.n];
        if (b->eoff[x + 1] > b->eoff[x] || x == b->final)
            if (push(&b->out, x)) return -1;
        for (int32_t j = b->poff[x]; j < b->poff[x + 1]; j++) {
            int32_t y = b->pdst[j];
            if (b->stamp[y] != b->gen) {
                b->stamp[y] = b->gen;
                if (push(&b->stack, y)) return -1;
            }
        }
    }
    qsort(b->out.a, b->out.n, sizeof(int32_t), cmp_i32);
    return 0;
}

static int grow_table(builder *b) {
    Py_ssize_t size = b->table_size ? 2 * b->table_size : 1024;
    int32_t *t = malloc(sizeof(int32_t) * size);
    if (!t) return -1;
    for (Py_ssize_t i = 0; i < size; i++) t[i] = -1;
    for (Py_ssize_t id = 0; id + 1 < b->soff.n; id++) {
        Py_ssize_t i = (Py_ssize_t)(b->hashes[id] & (uint64_t)(size - 1));
        while (t[i] >= 0) i = (i + 1) & (size - 1);
        t[i] = (int32_t)id;
    }
    free(b->table);
    b->table = t;
    b->table_size = size;
    return 0;
}

/* The DFA id of the subset in b->out (added when new; -2 when out of memory). */
static int32_t intern(builder *b) {
    Py_ssize_t n_ids = b->soff.n - 1;
    if (2 * (n_ids + 1) > b->table_size && grow_table(b)) return -2;
    uint64_t h = hash_of(b->out.a, b->out.n);
    Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)(b->table_size - 1));
    for (; b->table[i] >= 0; i = (i + 1) & (b->table_size - 1)) {
        int32_t id = b->table[i];
        Py_ssize_t lo = b->soff.a[id], len = b->soff.a[id + 1] - lo;
        if (b->hashes[id] == h && len == b->out.n
            && !memcmp(b->pool.a + lo, b->out.a, sizeof(int32_t) * len))
            return id;
    }
    if (n_ids == b->hashes_cap) {
        Py_ssize_t cap = b->hashes_cap ? 2 * b->hashes_cap : 256;
        uint64_t *hs = realloc(b->hashes, sizeof(uint64_t) * cap);
        if (!hs) return -2;
        b->hashes = hs;
        b->hashes_cap = cap;
    }
    for (Py_ssize_t k = 0; k < b->out.n; k++)
        if (push(&b->pool, b->out.a[k])) return -2;
    if (push(&b->soff, (int32_t)b->pool.n)) return -2;
    b->hashes[n_ids] = h;
    b->table[i] = (int32_t)n_ids;
    return (int32_t)n_ids;
}

/* (transitions bytes of int32[n, 256], accepting bytes[n]) of the states interned in ``b``,
 * from their rows per byte class; a state accepts where its subset holds ``final``. */
static PyObject *dfa_tables(const builder *b, const vec *rows, int n_classes,
                            const int *class_of, int32_t final) {
    Py_ssize_t n = b->soff.n - 1;
    PyObject *trans = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 256 * 4));
    PyObject *acc = PyBytes_FromStringAndSize(NULL, n);
    if (!trans || !acc) {
        Py_XDECREF(trans);
        Py_XDECREF(acc);
        return NULL;
    }
    int32_t *t = (int32_t *)PyBytes_AS_STRING(trans);
    char *a = PyBytes_AS_STRING(acc);
    for (Py_ssize_t s = 0; s < n; s++) {
        for (int x = 0; x < 256; x++) t[s * 256 + x] = rows->a[s * n_classes + class_of[x]];
        a[s] = 0;
        for (int32_t i = b->soff.a[s]; i < b->soff.a[s + 1]; i++)
            if (b->pool.a[i] == final) a[s] = 1;
    }
    return Py_BuildValue("(NN)", trans, acc);
}

#define N_BUF 6

static PyObject *subset_construction(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[N_BUF], *check;
    int start, final, max_states;
    if (!PyArg_ParseTuple(args, "OOOOOOiiiO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &objs[5], &start, &final, &max_states, &check))
        return NULL;
    Py_buffer views[N_BUF];
    int got = 0;
    for (; got < 6; got++)
        if (PyObject_GetBuffer(objs[got], &views[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            break;
    PyObject *result = NULL;
    builder b;
    memset(&b, 0, sizeof b);
    int32_t *counts = NULL, *grouped = NULL, *row = NULL;
    vec rows = {0}, mv = {0};     /* mv: (class, target) pairs of one subset */
    if (got < 6) goto out;
    for (int i = 0; i < 6; i++)
        if (views[i].itemsize != 4) {
            PyErr_SetString(PyExc_ValueError, "subset_construction: expected int32 buffers");
            goto out;
        }
    b.n_nodes = views[0].len / 4 - 1;
    b.eoff = views[0].buf;
    b.elo = views[1].buf;
    b.ehi = views[2].buf;
    b.edst = views[3].buf;
    b.poff = views[4].buf;
    b.pdst = views[5].buf;
    b.final = final;
    if (b.n_nodes < 1 || views[4].len != views[0].len || start < 0 || start >= b.n_nodes
        || final < 0 || final >= b.n_nodes) {
        PyErr_SetString(PyExc_ValueError, "subset_construction: malformed NFA");
        goto out;
    }
    Py_ssize_t n_edges = views[1].len / 4, n_eps = views[5].len / 4;
    int ok = views[2].len == views[1].len && views[3].len == views[1].len
             && b.eoff[0] == 0 && b.eoff[b.n_nodes] == n_edges && b.poff[0] == 0
             && b.poff[b.n_nodes] == n_eps;
    for (Py_ssize_t x = 0; ok && x < b.n_nodes; x++)
        ok = b.eoff[x] <= b.eoff[x + 1] && b.poff[x] <= b.poff[x + 1];
    for (Py_ssize_t e = 0; ok && e < n_edges; e++)
        ok = 0 <= b.elo[e] && b.elo[e] <= b.ehi[e] && b.ehi[e] <= 255 && 0 <= b.edst[e]
             && b.edst[e] < b.n_nodes;
    for (Py_ssize_t e = 0; ok && e < n_eps; e++) ok = 0 <= b.pdst[e] && b.pdst[e] < b.n_nodes;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "subset_construction: malformed NFA");
        goto out;
    }
    /* byte classes: a class starts at every edge's low byte and after its high byte */
    int cut[257] = {0}, class_of[256], n_classes = 0;
    cut[0] = 1;
    for (Py_ssize_t e = 0; e < n_edges; e++) {
        cut[b.elo[e]] = 1;
        cut[b.ehi[e] + 1] = 1;
    }
    for (int x = 0; x < 256; x++) {
        if (cut[x] && x) n_classes++;
        class_of[x] = n_classes;
    }
    n_classes++;
    b.stamp = calloc(b.n_nodes, sizeof(uint32_t));
    counts = calloc(n_classes + 1, sizeof(int32_t));
    row = malloc(sizeof(int32_t) * n_classes);
    if (!b.stamp || !counts || !row || push(&b.soff, 0)) {
        PyErr_NoMemory();
        goto out;
    }
    int32_t seed = start;
    if (closure(&b, &seed, 1) || intern(&b) < 0) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t id = 0; id + 1 < b.soff.n; id++) {
        if ((id & 255) == 255 && check != Py_None) {
            PyObject *r = PyObject_CallNoArgs(check);
            if (!r) {
                goto out;
            }
            Py_DECREF(r);
        }
        mv.n = 0;
        for (int32_t i = b.soff.a[id]; i < b.soff.a[id + 1]; i++) {
            int32_t x = b.pool.a[i];
            for (int32_t e = b.eoff[x]; e < b.eoff[x + 1]; e++)
                for (int k = class_of[b.elo[e]]; k <= class_of[b.ehi[e]]; k++)
                    if (push(&mv, k) || push(&mv, b.edst[e])) {
                                PyErr_NoMemory();
                        goto out;
                    }
        }
        /* group targets by class (counting sort) */
        Py_ssize_t n_pairs = mv.n / 2;
        memset(counts, 0, sizeof(int32_t) * (n_classes + 1));
        for (Py_ssize_t i = 0; i < n_pairs; i++) counts[mv.a[2 * i] + 1]++;
        for (int k = 0; k < n_classes; k++) counts[k + 1] += counts[k];
        free(grouped);
        grouped = malloc(sizeof(int32_t) * (n_pairs ? n_pairs : 1));
        if (!grouped) {
            PyErr_NoMemory();
            goto out;
        }
        for (Py_ssize_t i = 0; i < n_pairs; i++) grouped[counts[mv.a[2 * i]]++] = mv.a[2 * i + 1];
        /* counts[k] is now the end of class k's targets; its start is counts[k - 1] */
        for (int k = 0; k < n_classes; k++) {
            int32_t lo = k ? counts[k - 1] : 0, hi = counts[k];
            row[k] = -1;
            if (hi == lo) continue;
            if (closure(&b, grouped + lo, hi - lo)) {
                PyErr_NoMemory();
                goto out;
            }
            int32_t t = intern(&b);
            if (t == -2) {
                PyErr_NoMemory();
                goto out;
            }
            if (t >= max_states) {
                result = Py_None;
                Py_INCREF(result);
                goto out;
            }
            row[k] = t;
        }
        for (int k = 0; k < n_classes; k++)
            if (push(&rows, row[k])) {
                PyErr_NoMemory();
                goto out;
            }
    }
    result = dfa_tables(&b, &rows, n_classes, class_of, final);
out:
    for (int i = 0; i < got; i++) PyBuffer_Release(&views[i]);
    free(b.stamp);
    free(b.stack.a);
    free(b.out.a);
    free(b.pool.a);
    free(b.soff.a);
    free(b.table);
    free(b.hashes);
    free(counts);
    free(grouped);
    free(row);
    free(rows.a);
    free(mv.a);
    return result;
}


typedef struct {
    const int32_t **cls;
    Py_ssize_t k;
} union_classes;

static int classes_alike(const void *ctx, int rep, int b) {
    const union_classes *u = ctx;
    for (Py_ssize_t j = 0; j < u->k; j++)
        if (u->cls[j][rep] != u->cls[j][b]) return 0;
    return 1;
}

static PyObject *union_product(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_tables, *o_classes, *o_acc, *o_init, *check;
    int max_states;
    if (!PyArg_ParseTuple(args, "O!O!O!OiO", &PyList_Type, &o_tables, &PyList_Type, &o_classes,
                          &PyList_Type, &o_acc, &o_init, &max_states, &check))
        return NULL;
    Py_ssize_t k = PyList_GET_SIZE(o_tables);
    if (PyList_GET_SIZE(o_classes) != k || PyList_GET_SIZE(o_acc) != k || k < 1 ||
        max_states < 1) {
        PyErr_SetString(PyExc_ValueError, "union_product: inconsistent table lists");
        return NULL;
    }
    Py_buffer *views = calloc((size_t)(3 * k + 1), sizeof(Py_buffer));
    const int32_t **trans = malloc(sizeof(int32_t *) * (size_t)k);
    const int32_t **cls = malloc(sizeof(int32_t *) * (size_t)k);
    const uint8_t **acc = malloc(sizeof(uint8_t *) * (size_t)k);
    int64_t *offset = malloc(sizeof(int64_t) * (size_t)(k + 1));
    int32_t *part_of = NULL;
    uint8_t *kind = NULL;
    PyObject *result = NULL;
    builder b;
    memset(&b, 0, sizeof b);
    vec rows = {0};
    int got = 0;
    if (!views || !trans || !cls || !acc || !offset) {
        PyErr_NoMemory();
        goto out;
    }
    if (PyObject_GetBuffer(o_init, &views[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) goto out;
    got++;
    if (views[0].itemsize != 4 || views[0].len != 4 * k) {
        PyErr_SetString(PyExc_ValueError, "union_product: init must hold one int32 per table");
        goto out;
    }
    const int32_t *init = views[0].buf;
    offset[0] = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *objs[3] = {PyList_GET_ITEM(o_tables, j), PyList_GET_ITEM(o_classes, j),
                             PyList_GET_ITEM(o_acc, j)};
        for (int t = 0; t < 3; t++) {
            if (PyObject_GetBuffer(objs[t], &views[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
                goto out;
            got++;
        }
        Py_buffer *vt = &views[got - 3], *vc = &views[got - 2], *va = &views[got - 1];
        Py_ssize_t n = va->len;
        if (vt->itemsize != 4 || vt->len != 4 * 256 * n || vc->itemsize != 4 ||
            vc->len != 4 * 256 || va->itemsize != 1 || init[j] < -1 || init[j] >= n ||
            offset[j] + n > INT32_MAX - 1) {
            PyErr_SetString(PyExc_ValueError, "union_product: inconsistent table");
            goto out;
        }
        trans[j] = vt->buf;
        cls[j] = vc->buf;
        acc[j] = va->buf;
        for (Py_ssize_t x = 0; x < 256 * n; x++)
            if (trans[j][x] < -1 || trans[j][x] >= n) {
                PyErr_SetString(PyExc_ValueError, "union_product: a transition leads outside "
                                                  "its table");
                goto out;
            }
        offset[j + 1] = offset[j] + n;
    }
    int32_t total = (int32_t)offset[k];      /* (also the final mark) */
    part_of = malloc(sizeof(int32_t) * (size_t)(total + 1));
    /* per state: 2 when it reads some byte, else 1 when it accepts, else 0 */
    kind = malloc((size_t)(total + 1));
    if (!part_of || !kind) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t j = 0; j < k; j++)
        for (int64_t g = offset[j]; g < offset[j + 1]; g++) {
            const int32_t *row = trans[j] + (g - offset[j]) * 256;
            int reads = 0;
            for (int x = 0; x < 256 && !reads; x++) reads = row[x] >= 0;
            part_of[g] = (int32_t)j;
            kind[g] = reads ? 2 : acc[j][g - offset[j]] ? 1 : 0;
        }
    /* byte classes: bytes every table treats alike */
    uint64_t h[256];
    for (int x = 0; x < 256; x++) {
        uint64_t v = 0x9E3779B97F4A7C15ULL;
        for (Py_ssize_t j = 0; j < k; j++) {
            v ^= (uint64_t)(uint32_t)cls[j][x] + 0x9E3779B97F4A7C15ULL + (v << 6) + (v >> 2);
            v *= 0xBF58476D1CE4E5B9ULL;
        }
        h[x] = v ^ (v >> 31);
    }
    int32_t class_of[256], reps[256];
    union_classes ctx = {cls, k};
    int n_classes = classes_from_hashes(h, classes_alike, &ctx, class_of, reps);
    if (push(&b.soff, 0)) {
        PyErr_NoMemory();
        goto out;
    }
    b.out.n = 0;
    int final = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        if (init[j] < 0) continue;
        int32_t g = (int32_t)(offset[j] + init[j]);
        final |= acc[j][init[j]] != 0;
        if (kind[g] == 2 && push(&b.out, g)) {
            PyErr_NoMemory();
            goto out;
        }
    }
    if ((final && push(&b.out, total)) || intern(&b) < 0) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t id = 0; id + 1 < b.soff.n; id++) {
        if ((id & 255) == 255 && check != Py_None) {
            PyObject *r = PyObject_CallNoArgs(check);
            if (!r) goto out;
            Py_DECREF(r);
        }
        for (int c = 0; c < n_classes; c++) {
            int byte = reps[c];
            b.out.n = 0;
            final = 0;
            /* (read fresh: interning may move the pool) */
            for (int32_t i = b.soff.a[id]; i < b.soff.a[id + 1]; i++) {
                int32_t g = b.pool.a[i];
                if (g == total) continue;
                int32_t j = part_of[g];
                int32_t t = trans[j][(int64_t)(g - offset[j]) * 256 + byte];
                if (t < 0) continue;
                int32_t next = (int32_t)(offset[j] + t);
                final |= acc[j][t] != 0;
                if (kind[next] == 2 && push(&b.out, next)) {
                    PyErr_NoMemory();
                    goto out;
                }
            }
            if (final && push(&b.out, total)) {
                PyErr_NoMemory();
                goto out;
            }
            int32_t t = -1;
            if (b.out.n) {
                t = intern(&b);
                if (t == -2) {
                    PyErr_NoMemory();
                    goto out;
                }
                if (t >= max_states) {
                    result = Py_None;
                    Py_INCREF(result);
                    goto out;
                }
            }
            if (push(&rows, t)) {
                PyErr_NoMemory();
                goto out;
            }
        }
    }
    result = dfa_tables(&b, &rows, n_classes, class_of, total);
out:
    for (int i = 0; i < got; i++) PyBuffer_Release(&views[i]);
    free(views);
    free(trans);
    free(cls);
    free(acc);
    free(offset);
    free(part_of);
    free(kind);
    free(b.stamp);
    free(b.stack.a);
    free(b.out.a);
    free(b.pool.a);
    free(b.soff.a);
    free(b.table);
    free(b.hashes);
    free(rows.a);
    return result;
}

static PyMethodDef methods[] = {
    {"subset_construction", subset_construction, METH_VARARGS,
     "subset_construction(edge_offsets, edge_lo, edge_hi, edge_dst, eps_offsets, eps_dst, start, "
     "final, max_states, check) -> (transitions bytes of int32[n, 256], accepting bytes[n]), or "
     "None past max_states DFA states; check() is called every 256 states (None: never)"},
    {"union_product", union_product, METH_VARARGS,
     "union_product(tables, byte_classes, accepting, initials, max_states, check) -> "
     "(transitions bytes of int32[n, 256], accepting bytes[n]) of the union of DFA tables "
     "(int32[n_j, 256] each, -1 dead; int32[256] classes of bytes each treats alike; uint8[n_j] "
     "accepting; int32 initial state per table, -1 for none), or None past max_states states; "
     "check() is called every 256 states (None: never)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_subsets",
                                    "Subset construction of a byte NFA (see _subsets.c).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__subsets(void) { return PyModule_Create(&module); }
