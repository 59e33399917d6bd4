/* The closure of an Earley column's kernel, in C (see earley.py).
 *
 * grammar(rhs_flat, rhs_start, lhs, nullable, n_terminals) -> capsule: the prepared grammar's
 * alternatives (int32: symbols of alternative a are rhs_flat[rhs_start[a]:rhs_start[a+1]]),
 * left-hand sides (int32) and nullable flags per symbol (uint8), copied once.
 *
 * closure(grammar, kernel, initial) -> (origins, items, by_next, predicted, started): closes
 * ``kernel`` (a list of (alternative, dot, origin Column)) under the nullable step and
 * completion, as Column does in Python. Items are (alternative, dot, k) tuples with k the
 * position of the origin in ``origins``; ``by_next`` maps each symbol after a dot to the tuple of
 * those items; ``predicted`` is the frozenset of nonterminals after a dot; ``started`` says
 * whether the start alternative was completed from ``initial`` (the initial Column). A
 * completion reads the origin Column's ``origins``, ``by_next`` and ``static.by_next``.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t *rhs, *start, *lhs;
    uint8_t *nullable;
    Py_ssize_t n_alts, n_syms, n_rhs;
    int32_t n_term;
} Grammar;

static PyObject *s_origins, *s_by_next, *s_static;

static void grammar_free(PyObject *capsule) {
    Grammar *g = PyCapsule_GetPointer(capsule, "constrained.earley.grammar");
    if (!g) return;
    free(g->rhs);
    free(g->start);
    free(g->lhs);
    free(g->nullable);
    free(g);
}

static int copy_buffer(PyObject *o, Py_ssize_t itemsize, void **out, Py_ssize_t *n) {
    Py_buffer v;
    if (PyObject_GetBuffer(o, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (v.itemsize != itemsize) {
        PyBuffer_Release(&v);
        PyErr_SetString(PyExc_TypeError, "grammar: unexpected item size");
        return -1;
    }
    *out = malloc((size_t)v.len + 1);
    if (!*out) {
        PyBuffer_Release(&v);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(*out, v.buf, (size_t)v.len);
    *n = v.len / itemsize;
    PyBuffer_Release(&v);
    return 0;
}

static PyObject *grammar(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_rhs, *o_start, *o_lhs, *o_null;
    int n_term;
    if (!PyArg_ParseTuple(args, "OOOOi", &o_rhs, &o_start, &o_lhs, &o_null, &n_term))
        return NULL;
    Grammar *g = calloc(1, sizeof(Grammar));
    if (!g) return PyErr_NoMemory();
    Py_ssize_t n_start;
    if (copy_buffer(o_rhs, 4, (void **)&g->rhs, &g->n_rhs) < 0 ||
        copy_buffer(o_start, 4, (void **)&g->start, &n_start) < 0 ||
        copy_buffer(o_lhs, 4, (void **)&g->lhs, &g->n_alts) < 0 ||
        copy_buffer(o_null, 1, (void **)&g->nullable, &g->n_syms) < 0)
        goto fail;
    g->n_term = n_term;
    int bad = n_start != g->n_alts + 1 || n_term < 0 || n_term > g->n_syms;
    for (Py_ssize_t a = 0; a < g->n_alts && !bad; a++)
        bad = g->start[a] < 0 || g->start[a] > g->start[a + 1] || g->lhs[a] < n_term ||
              g->lhs[a] >= g->n_syms;
    if (!bad) bad = g->start[g->n_alts] != g->n_rhs;
    for (Py_ssize_t i = 0; i < g->n_rhs && !bad; i++) bad = g->rhs[i] < 0 || g->rhs[i] >= g->n_syms;
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "grammar: inconsistent alternatives");
        goto fail;
    }
    PyObject *cap = PyCapsule_New(g, "constrained.earley.grammar", grammar_free);
    if (!cap) goto fail;
    return cap;
fail:
    free(g->rhs);
    free(g->start);
    free(g->lhs);
    free(g->nullable);
    free(g);
    return NULL;
}

typedef struct {
    int32_t a, d, k;
} Item;

typedef struct {
    Item *items;
    Py_ssize_t n, cap;
    int32_t *slots; /* item index or -1 */
    Py_ssize_t n_slots;
} ItemSet;

static uint64_t item_hash(int32_t a, int32_t d, int32_t k) {
    uint64_t h = (uint64_t)(uint32_t)a * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)(uint32_t)d * 0xBF58476D1CE4E5B9ULL + (h << 6) + (h >> 2);
    h ^= (uint64_t)(uint32_t)k * 0x94D049BB133111EBULL + (h << 6) + (h >> 2);
    return h ^ (h >> 29);
}

static int set_grow(ItemSet *s) {
    Py_ssize_t n_slots = s->n_slots * 2;
    int32_t *slots = malloc(sizeof(int32_t) * (size_t)n_slots);
    if (!slots) return -1;
    memset(slots, 0xff, sizeof(int32_t) * (size_t)n_slots);
    for (Py_ssize_t i = 0; i < s->n; i++) {
        Item *it = &s->items[i];
        uint64_t h = item_hash(it->a, it->d, it->k) & (uint64_t)(n_slots - 1);
        while (slots[h] >= 0) h = (h + 1) & (uint64_t)(n_slots - 1);
        slots[h] = (int32_t)i;
    }
    free(s->slots);
    s->slots = slots;
    s->n_slots = n_slots;
    return 0;
}

/* 1 added, 0 present, -1 memory */
static int set_add(ItemSet *s, int32_t a, int32_t d, int32_t k) {
    uint64_t h = item_hash(a, d, k) & (uint64_t)(s->n_slots - 1);
    while (s->slots[h] >= 0) {
        Item *it = &s->items[s->slots[h]];
        if (it->a == a && it->d == d && it->k == k) return 0;
        h = (h + 1) & (uint64_t)(s->n_slots - 1);
    }
    if (s->n == s->cap) {
        Py_ssize_t cap = s->cap * 2;
        Item *items = realloc(s->items, sizeof(Item) * (size_t)cap);
        if (!items) return -1;
        s->items = items;
        s->cap = cap;
    }
    s->items[s->n] = (Item){a, d, k};
    s->slots[h] = (int32_t)s->n;
    s->n++;
    if (s->n * 2 > s->n_slots && set_grow(s) < 0) return -1;
    return 1;
}

typedef struct {
    int32_t *buf;   /* indices of items still to close */
    Py_ssize_t n, cap;
} Agenda;

/* adds (a, d, k) to the set and, when new, to the agenda; -1 (MemoryError set) on failure */
static int push(ItemSet *s, Agenda *ag, int32_t a, int32_t d, int32_t k) {
    int added = set_add(s, a, d, k);
    if (added > 0 && ag->n == ag->cap) {
        int32_t *buf = realloc(ag->buf, sizeof(int32_t) * (size_t)(ag->cap * 2));
        if (!buf) added = -1;
        else {
            ag->buf = buf;
            ag->cap *= 2;
        }
    }
    if (added < 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (added) ag->buf[ag->n++] = (int32_t)(s->n - 1);
    return 0;
}

/* position of ``col`` in ``origins`` (a list), appending it when absent; -1 on error */
static Py_ssize_t origin_index(PyObject *origins, PyObject *col) {
    Py_ssize_t n = PyList_GET_SIZE(origins);
    for (Py_ssize_t i = 0; i < n; i++)
        if (PyList_GET_ITEM(origins, i) == col) return i;
    if (PyList_Append(origins, col) < 0) return -1;
    return n;
}

static int as_int32(PyObject *o, int32_t *out) {
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < INT32_MIN || v > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "closure: item field out of range");
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

/* Containers of ints only are untracked by the garbage collector (as CPython does lazily for
 * tuples and dicts): columns are many and long-lived, and full collections walk every tracked
 * object. A dict re-tracks itself if a tracked value is ever inserted. */
static void untrack(PyObject *o) {
    if (PyObject_GC_IsTracked(o)) PyObject_GC_UnTrack(o);
}

typedef struct {
    int32_t sym, item;
} Next;

static int cmp_next(const void *x, const void *y) {
    const Next *a = x, *b = y;
    if (a->sym != b->sym) return (a->sym > b->sym) - (a->sym < b->sym);
    return (a->item > b->item) - (a->item < b->item);
}

/* the items of ``col`` whose next symbol is ``sym``: dynamic ones, then static ones */
static int expecting(PyObject *col, PyObject *key, PyObject **dyn, PyObject **sta) {
    *dyn = *sta = NULL;
    PyObject *by_next = PyObject_GetAttr(col, s_by_next);
    if (!by_next) return -1;
    *dyn = PyDict_GetItemWithError(by_next, key);
    Py_XINCREF(*dyn);
    Py_DECREF(by_next);
    if (!*dyn && PyErr_Occurred()) return -1;
    PyObject *stat = PyObject_GetAttr(col, s_static);
    if (!stat) return -1;
    PyObject *sb = PyObject_GetAttr(stat, s_by_next);
    Py_DECREF(stat);
    if (!sb) return -1;
    *sta = PyDict_GetItemWithError(sb, key);
    Py_XINCREF(*sta);
    Py_DECREF(sb);
    if (!*sta && PyErr_Occurred()) return -1;
    return 0;
}

static PyObject *closure(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *cap, *kernel, *initial;
    if (!PyArg_ParseTuple(args, "OO!O", &cap, &PyList_Type, &kernel, &initial)) return NULL;
    Grammar *g = PyCapsule_GetPointer(cap, "constrained.earley.grammar");
    if (!g) return NULL;
    PyObject *origins = PyList_New(0);
    ItemSet set = {0};
    Agenda agenda = {NULL, 0, 16};
    Next *next = NULL;
    Py_ssize_t n_next = 0, next_cap = 16;
    PyObject *result = NULL, *items = NULL, *by_next = NULL, *predicted = NULL;
    set.cap = 16;
    set.n_slots = 64;
    set.items = malloc(sizeof(Item) * (size_t)set.cap);
    set.slots = malloc(sizeof(int32_t) * (size_t)set.n_slots);
    agenda.buf = malloc(sizeof(int32_t) * (size_t)agenda.cap);
    next = malloc(sizeof(Next) * (size_t)next_cap);
    predicted = PyFrozenSet_New(NULL);
    if (!origins || !predicted) goto done;
    if (!set.items || !set.slots || !agenda.buf || !next) {
        PyErr_NoMemory();
        goto done;
    }
    memset(set.slots, 0xff, sizeof(int32_t) * (size_t)set.n_slots);
    Py_ssize_t n_kernel = PyList_GET_SIZE(kernel);
    for (Py_ssize_t i = 0; i < n_kernel; i++) {
        PyObject *it = PyList_GET_ITEM(kernel, i);
        int32_t a, d;
        if (!PyTuple_Check(it) || PyTuple_GET_SIZE(it) != 3) {
            PyErr_SetString(PyExc_TypeError, "closure: kernel items are (alternative, dot, origin)");
            goto done;
        }
        if (as_int32(PyTuple_GET_ITEM(it, 0), &a) < 0 || as_int32(PyTuple_GET_ITEM(it, 1), &d) < 0)
            goto done;
        if (a < 0 || a >= g->n_alts || d < 0 || d > g->start[a + 1] - g->start[a]) {
            PyErr_SetString(PyExc_ValueError, "closure: kernel item out of range");
            goto done;
        }
        Py_ssize_t k = origin_index(origins, PyTuple_GET_ITEM(it, 2));
        if (k < 0) goto done;
        if (push(&set, &agenda, a, d, (int32_t)k) < 0) goto done;
    }
    while (agenda.n) {
        int32_t idx = agenda.buf[--agenda.n];
        Item it = set.items[idx];
        int32_t len = g->start[it.a + 1] - g->start[it.a];
        if (it.d < len) {
            int32_t sym = g->rhs[g->start[it.a] + it.d];
            if (n_next == next_cap) {
                next_cap *= 2;
                Next *n2 = realloc(next, sizeof(Next) * (size_t)next_cap);
                if (!n2) { PyErr_NoMemory(); goto done; }
                next = n2;
            }
            next[n_next++] = (Next){sym, idx};
            if (sym >= g->n_term) {
                PyObject *v = PyLong_FromLong(sym);
                if (!v || PySet_Add(predicted, v) < 0) { Py_XDECREF(v); goto done; }
                Py_DECREF(v);
                if (g->nullable[sym] && push(&set, &agenda, it.a, it.d + 1, it.k) < 0) goto done;
            }
        } else {
            PyObject *o = PyList_GET_ITEM(origins, it.k);
            Py_INCREF(o);
            PyObject *key = PyLong_FromLong(g->lhs[it.a]);
            PyObject *dyn = NULL, *sta = NULL, *o_origins = NULL;
            int bad = !key || expecting(o, key, &dyn, &sta) < 0;
            Py_XDECREF(key);
            if (!bad) {
                o_origins = PyObject_GetAttr(o, s_origins);
                bad = !o_origins || !PyTuple_Check(o_origins);
                if (o_origins && !PyTuple_Check(o_origins))
                    PyErr_SetString(PyExc_TypeError, "closure: origins must be a tuple");
            }
            PyObject *parts[2] = {dyn, sta};
            for (int p = 0; p < 2 && !bad; p++) {
                PyObject *tup = parts[p];
                if (!tup) continue;
                if (!PyTuple_Check(tup)) {
                    PyErr_SetString(PyExc_TypeError, "closure: by_next values must be tuples");
                    bad = 1;
                    break;
                }
                for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(tup) && !bad; j++) {
                    PyObject *e = PyTuple_GET_ITEM(tup, j);
                    int32_t a2, d2, k2;
                    if (as_int32(PyTuple_GET_ITEM(e, 0), &a2) < 0 ||
                        as_int32(PyTuple_GET_ITEM(e, 1), &d2) < 0 ||
                        as_int32(PyTuple_GET_ITEM(e, 2), &k2) < 0) {
                        bad = 1;
                        break;
                    }
                    PyObject *src = o;
                    if (k2 >= 0) {
                        if (k2 >= PyTuple_GET_SIZE(o_origins)) {
                            PyErr_SetString(PyExc_ValueError, "closure: origin out of range");
                            bad = 1;
                            break;
                        }
                        src = PyTuple_GET_ITEM(o_origins, k2);
                    }
                    Py_ssize_t k3 = origin_index(origins, src);
                    if (k3 < 0 || push(&set, &agenda, a2, d2 + 1, (int32_t)k3) < 0) {
                        bad = 1;
                        break;
                    }
                }
            }
            Py_XDECREF(dyn);
            Py_XDECREF(sta);
            Py_XDECREF(o_origins);
            Py_DECREF(o);
            if (bad) goto done;
        }
    }
    /* the items as tuples, grouped by next symbol */
    items = PyTuple_New(set.n);
    if (!items) goto done;
    int started = 0;
    Py_ssize_t k_initial = -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(origins); i++)
        if (PyList_GET_ITEM(origins, i) == initial) k_initial = i;
    for (Py_ssize_t i = 0; i < set.n; i++) {
        Item *it = &set.items[i];
        PyObject *t = Py_BuildValue("(iii)", it->a, it->d, it->k);
        if (!t) goto done;
        untrack(t);
        PyTuple_SET_ITEM(items, i, t);
        if (it->a == 0 && it->d == 1 && it->k == k_initial) started = 1;
    }
    qsort(next, (size_t)n_next, sizeof(Next), cmp_next);
    by_next = PyDict_New();
    if (!by_next) goto done;
    for (Py_ssize_t i = 0; i < n_next;) {
        Py_ssize_t j = i;
        while (j < n_next && next[j].sym == next[i].sym) j++;
        PyObject *group = PyTuple_New(j - i);
        if (!group) goto done;
        for (Py_ssize_t m = i; m < j; m++) {
            PyObject *t = PyTuple_GET_ITEM(items, next[m].item);
            Py_INCREF(t);
            PyTuple_SET_ITEM(group, m - i, t);
        }
        untrack(group);
        PyObject *key = PyLong_FromLong(next[i].sym);
        int bad = !key || PyDict_SetItem(by_next, key, group) < 0;
        Py_XDECREF(key);
        Py_DECREF(group);
        if (bad) goto done;
        i = j;
    }
    untrack(items);
    untrack(by_next);
    untrack(predicted);
    PyObject *orig_t = PyList_AsTuple(origins);
    if (!orig_t) goto done;
    result = Py_BuildValue("(NOOOO)", orig_t, items, by_next, predicted,
                           started ? Py_True : Py_False);
done:
    Py_XDECREF(origins);
    Py_XDECREF(items);
    Py_XDECREF(by_next);
    Py_XDECREF(predicted);
    free(set.items);
    free(set.slots);
    free(agenda.buf);
    free(next);
    return result;
}

static PyMethodDef methods[] = {
    {"grammar", grammar, METH_VARARGS,
     "grammar(rhs_flat, rhs_start, lhs, nullable, n_terminals) -> capsule"},
    {"closure", closure, METH_VARARGS,
     "closure(grammar, kernel, initial) -> (origins, items, by_next, predicted, started)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_earley",
                                    "Earley column closure (see _earley.c).", -1, methods, NULL,
                                    NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__earley(void) {
    s_origins = PyUnicode_InternFromString("origins");
    s_by_next = PyUnicode_InternFromString("by_next");
    s_static = PyUnicode_InternFromString("static");
    if (!s_origins || !s_by_next || !s_static) return NULL;
    return PyModule_Create(&module);
}
