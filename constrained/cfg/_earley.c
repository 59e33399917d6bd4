/* Earley columns in C (see earley.py): closing a kernel, and advancing a column over a lexeme.
 *
 * grammar(rhs_flat, rhs_start, lhs, nullable, n_terminals) -> capsule: the prepared grammar's
 * alternatives (int32: symbols of alternative a are rhs_flat[rhs_start[a]:rhs_start[a+1]]),
 * left-hand sides (int32) and nullable flags per symbol (uint8), copied once.
 *
 * Items are packed as native int32 triples (alternative, dot, k) in bytes, k being the position
 * of the item's origin Column in the column's ``origins`` (-1: the column itself). Bytes are not
 * tracked by the garbage collector: a long generation creates many columns, and every tracked
 * object is work for each collection.
 *
 * closure(grammar, kernel, initial, interned) closes ``kernel`` (a list of (alternative, dot,
 * origin Column)) under the nullable step and completion; advance(grammar, col, terminals,
 * interned, initial[, keep]) builds the kernel of ``col`` after one lexeme of any of
 * ``terminals`` (None when empty; with ``keep``, col's own items too) and closes it. Both first look the kernel up in ``interned`` (a dict by kernel
 * key, or None) and return the Column found there; otherwise they return (key, origins, items,
 * by_next, predicted, started, next_symbols): the key (sorted int64 (alternative, dot, origin
 * id) triples in bytes), the origins tuple, the packed items, a dict from each symbol after a dot
 * to its packed items, the predicted nonterminals and the symbols after a dot (sorted int32
 * bytes), and whether the start alternative was completed from ``initial``. A completion reads
 * the origin Column's ``origins``, ``by_next`` and ``static.by_next``.
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
    int32_t *alts, *alts_start;     /* the alternatives of symbol x: alts[alts_start[x]..[x+1]) */
} Grammar;

static PyObject *s_origins, *s_by_next, *s_static, *s_id, *s_dynamic, *s_packed;

static void grammar_free(PyObject *capsule) {
    Grammar *g = PyCapsule_GetPointer(capsule, "constrained.earley.grammar");
    if (!g) return;
    free(g->rhs);
    free(g->start);
    free(g->lhs);
    free(g->nullable);
    free(g->alts);
    free(g->alts_start);
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
    g->alts = malloc(sizeof(int32_t) * (size_t)(g->n_alts + 1));
    g->alts_start = calloc((size_t)g->n_syms + 2, sizeof(int32_t));
    if (!g->alts || !g->alts_start) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t a = 0; a < g->n_alts; a++) g->alts_start[g->lhs[a] + 2]++;
    for (Py_ssize_t x = 0; x < g->n_syms; x++) g->alts_start[x + 2] += g->alts_start[x + 1];
    for (Py_ssize_t a = 0; a < g->n_alts; a++) g->alts[g->alts_start[g->lhs[a] + 1]++] = (int32_t)a;
    PyObject *cap = PyCapsule_New(g, "constrained.earley.grammar", grammar_free);
    if (!cap) goto fail;
    return cap;
fail:
    free(g->rhs);
    free(g->start);
    free(g->lhs);
    free(g->nullable);
    free(g->alts);
    free(g->alts_start);
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

/* Objects that can be in no reference cycle need not be tracked by the garbage collector
 * (CPython itself untracks tuples and dicts of atoms lazily): columns are many and long-lived,
 * and full collections walk every tracked object. The containers untracked here are never
 * changed afterwards. */
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

/* appends (sym, item) to a growable array; -1 (MemoryError set) on failure */
static int next_push(Next **next, Py_ssize_t *n, Py_ssize_t *cap, int32_t sym, int32_t item) {
    if (*n == *cap) {
        Next *grown = realloc(*next, sizeof(Next) * (size_t)(*cap * 2));
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        *next = grown;
        *cap *= 2;
    }
    (*next)[(*n)++] = (Next){sym, item};
    return 0;
}

/* A dict from each symbol after a dot to its items packed (``next``: (symbol, item index)
 * pairs, sorted here), untracked; the distinct symbols go to syms[0..*n_syms) in order. */
static PyObject *group_by_next(const Item *items, Next *next, Py_ssize_t n_next, int32_t *syms,
                               Py_ssize_t *n_syms) {
    qsort(next, (size_t)n_next, sizeof(Next), cmp_next);
    PyObject *by_next = PyDict_New();
    Item *group_buf = malloc(sizeof(Item) * (size_t)(n_next + 1));
    if (!by_next || !group_buf) {
        if (by_next) PyErr_NoMemory();
        Py_XDECREF(by_next);
        free(group_buf);
        return NULL;
    }
    *n_syms = 0;
    for (Py_ssize_t i = 0; i < n_next;) {
        Py_ssize_t j = i;
        while (j < n_next && next[j].sym == next[i].sym) j++;
        for (Py_ssize_t m = i; m < j; m++) group_buf[m - i] = items[next[m].item];
        PyObject *group = PyBytes_FromStringAndSize((const char *)group_buf,
                                                    (Py_ssize_t)(sizeof(Item) * (size_t)(j - i)));
        PyObject *sym = group ? PyLong_FromLong(next[i].sym) : NULL;
        int bad = !sym || PyDict_SetItem(by_next, sym, group) < 0;
        Py_XDECREF(sym);
        Py_XDECREF(group);
        if (bad) {
            Py_DECREF(by_next);
            free(group_buf);
            return NULL;
        }
        syms[(*n_syms)++] = next[i].sym;
        i = j;
    }
    free(group_buf);
    untrack(by_next);
    return by_next;
}

/* the items packed in ``v`` (bytes of int32 (alternative, dot, k) triples); -1 on error */
static int items_view(PyObject *v, const Item **items, Py_ssize_t *n) {
    if (!PyBytes_Check(v) || PyBytes_GET_SIZE(v) % (Py_ssize_t)sizeof(Item)) {
        PyErr_SetString(PyExc_TypeError, "by_next values must be bytes of int32 triples");
        return -1;
    }
    *items = (const Item *)PyBytes_AS_STRING(v);
    *n = PyBytes_GET_SIZE(v) / (Py_ssize_t)sizeof(Item);
    return 0;
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

/* A kernel being built and closed: the item set, the agenda of items still to close and the
 * origin Columns the items' k index. */
typedef struct {
    ItemSet set;
    Agenda agenda;
    PyObject *origins; /* list */
} Work;

static int work_init(Work *w) {
    memset(w, 0, sizeof(Work));
    w->set.cap = 16;
    w->set.n_slots = 64;
    w->agenda.cap = 16;
    w->set.items = malloc(sizeof(Item) * (size_t)w->set.cap);
    w->set.slots = malloc(sizeof(int32_t) * (size_t)w->set.n_slots);
    w->agenda.buf = malloc(sizeof(int32_t) * (size_t)w->agenda.cap);
    w->origins = PyList_New(0);
    if (!w->origins) return -1;
    if (!w->set.items || !w->set.slots || !w->agenda.buf) {
        PyErr_NoMemory();
        return -1;
    }
    memset(w->set.slots, 0xff, sizeof(int32_t) * (size_t)w->set.n_slots);
    return 0;
}

static void work_free(Work *w) {
    free(w->set.items);
    free(w->set.slots);
    free(w->agenda.buf);
    Py_XDECREF(w->origins);
}

/* adds kernel item (a, d, origin Column) after checking it against the grammar */
static int work_add(Grammar *g, Work *w, int32_t a, int64_t d, PyObject *origin) {
    if (a < 0 || a >= g->n_alts || d < 0 || d > g->start[a + 1] - g->start[a]) {
        PyErr_SetString(PyExc_ValueError, "closure: kernel item out of range");
        return -1;
    }
    Py_ssize_t k = origin_index(w->origins, origin);
    if (k < 0) return -1;
    return push(&w->set, &w->agenda, a, (int32_t)d, (int32_t)k);
}

/* The origins tuple of Column ``col`` (a new reference), or NULL with an error set. */
static PyObject *origins_of(PyObject *col) {
    PyObject *origins = PyObject_GetAttr(col, s_origins);
    if (origins && !PyTuple_Check(origins)) {
        Py_DECREF(origins);
        PyErr_SetString(PyExc_TypeError, "origins must be a tuple");
        return NULL;
    }
    return origins;
}

/* Adds the packed ``items`` of Column ``col`` to ``w`` as kernel items, dots moved by ``shift``
 * and origins resolved through ``origins``, col's (k = -1: col itself). -1 on error. */
static int add_items(Grammar *g, Work *w, PyObject *col, PyObject *origins, PyObject *items,
                     int shift) {
    const Item *its;
    Py_ssize_t n_its;
    if (items_view(items, &its, &n_its) < 0) return -1;
    for (Py_ssize_t j = 0; j < n_its; j++) {
        if (its[j].k >= PyTuple_GET_SIZE(origins)) {
            PyErr_SetString(PyExc_ValueError, "item origin out of range");
            return -1;
        }
        PyObject *origin = its[j].k < 0 ? col : PyTuple_GET_ITEM(origins, its[j].k);
        if (work_add(g, w, its[j].a, (int64_t)its[j].d + shift, origin) < 0) return -1;
    }
    return 0;
}

/* Adds to ``w`` every item of Column ``col`` whose next symbol is ``sym``, the dot moved past
 * it: the scan of a lexeme and the completion of a nonterminal are the same step. -1 on
 * error. */
static int scan(Grammar *g, Work *w, PyObject *col, PyObject *sym) {
    PyObject *dyn, *sta, *origins = NULL;
    int bad = expecting(col, sym, &dyn, &sta) < 0;
    if (!bad) bad = !(origins = origins_of(col));
    if (!bad && dyn) bad = add_items(g, w, col, origins, dyn, 1) < 0;
    if (!bad && sta) bad = add_items(g, w, col, origins, sta, 1) < 0;
    Py_XDECREF(dyn);
    Py_XDECREF(sta);
    Py_XDECREF(origins);
    return bad ? -1 : 0;
}

typedef struct {
    int64_t a, d, id;
} KeyItem;

static int cmp_key(const void *x, const void *y) {
    const KeyItem *p = x, *q = y;
    if (p->a != q->a) return (p->a > q->a) - (p->a < q->a);
    if (p->d != q->d) return (p->d > q->d) - (p->d < q->d);
    return (p->id > q->id) - (p->id < q->id);
}

/* The interning key of the kernel (the items added so far): the sorted (alternative, dot,
 * origin id) triples as native int64, in bytes. */
static PyObject *kernel_key(Work *w) {
    Py_ssize_t n_o = PyList_GET_SIZE(w->origins), n = w->set.n;
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)(n_o + 1));
    KeyItem *keys = malloc(sizeof(KeyItem) * (size_t)(n + 1));
    PyObject *out = NULL;
    if (!ids || !keys) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_o; i++) {
        PyObject *v = PyObject_GetAttr(PyList_GET_ITEM(w->origins, i), s_id);
        if (!v) goto done;
        ids[i] = PyLong_AsLongLong(v);
        Py_DECREF(v);
        if (ids[i] == -1 && PyErr_Occurred()) goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Item *it = &w->set.items[i];
        keys[i] = (KeyItem){it->a, it->d, ids[it->k]};
    }
    qsort(keys, (size_t)n, sizeof(KeyItem), cmp_key);
    out = PyBytes_FromStringAndSize((const char *)keys, (Py_ssize_t)(sizeof(KeyItem) * (size_t)n));
done:
    free(ids);
    free(keys);
    return out;
}

static int cmp_int32(const void *x, const void *y) {
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* sorted distinct values of buf[0:n] as native int32 bytes (sorts buf in place) */
static PyObject *sorted_set_bytes(int32_t *buf, Py_ssize_t n) {
    qsort(buf, (size_t)n, sizeof(int32_t), cmp_int32);
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!m || buf[m - 1] != buf[i]) buf[m++] = buf[i];
    return PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)(sizeof(int32_t) * (size_t)m));
}

/* Closes the kernel in ``w`` and returns (key, origins, items, by_next, predicted, started,
 * next_symbols); ``key`` was computed before the closure added items. */
static PyObject *close_kernel(Grammar *g, Work *w, PyObject *key, PyObject *initial) {
    Next *next = NULL;
    int32_t *pred = NULL, *syms = NULL;
    Py_ssize_t n_next = 0, next_cap = 16, n_pred = 0, pred_cap = 16;
    PyObject *result = NULL, *items = NULL, *by_next = NULL, *predicted = NULL, *nexts = NULL;
    PyObject *origins = w->origins;
    next = malloc(sizeof(Next) * (size_t)next_cap);
    pred = malloc(sizeof(int32_t) * (size_t)pred_cap);
    if (!next || !pred) {
        PyErr_NoMemory();
        goto done;
    }
    while (w->agenda.n) {
        int32_t idx = w->agenda.buf[--w->agenda.n];
        Item it = w->set.items[idx];
        int32_t len = g->start[it.a + 1] - g->start[it.a];
        if (it.d < len) {
            int32_t sym = g->rhs[g->start[it.a] + it.d];
            if (next_push(&next, &n_next, &next_cap, sym, idx) < 0) goto done;
            if (sym >= g->n_term) {
                if (n_pred == pred_cap) {
                    pred_cap *= 2;
                    int32_t *p2 = realloc(pred, sizeof(int32_t) * (size_t)pred_cap);
                    if (!p2) { PyErr_NoMemory(); goto done; }
                    pred = p2;
                }
                pred[n_pred++] = sym;
                if (g->nullable[sym] && push(&w->set, &w->agenda, it.a, it.d + 1, it.k) < 0)
                    goto done;
            }
        } else {
            PyObject *o = PyList_GET_ITEM(origins, it.k);
            Py_INCREF(o);       /* scanning may grow (and move) the origins list */
            PyObject *lhs = PyLong_FromLong(g->lhs[it.a]);
            int bad = !lhs || scan(g, w, o, lhs) < 0;
            Py_XDECREF(lhs);
            Py_DECREF(o);
            if (bad) goto done;
        }
    }
    /* the items packed, and grouped by next symbol */
    items = PyBytes_FromStringAndSize((const char *)w->set.items,
                                      (Py_ssize_t)(sizeof(Item) * (size_t)w->set.n));
    if (!items) goto done;
    int started = 0;
    Py_ssize_t k_initial = -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(origins); i++)
        if (PyList_GET_ITEM(origins, i) == initial) k_initial = i;
    for (Py_ssize_t i = 0; i < w->set.n; i++) {
        Item *it = &w->set.items[i];
        if (it->a == 0 && it->d == 1 && it->k == k_initial) started = 1;
    }
    syms = malloc(sizeof(int32_t) * (size_t)(n_next + 1));
    if (!syms) { PyErr_NoMemory(); goto done; }
    Py_ssize_t n_syms = 0;
    by_next = group_by_next(w->set.items, next, n_next, syms, &n_syms);
    if (!by_next) goto done;
    predicted = sorted_set_bytes(pred, n_pred);
    nexts = sorted_set_bytes(syms, n_syms);
    if (!predicted || !nexts) goto done;
    PyObject *orig_t = PyList_AsTuple(origins);
    if (!orig_t) goto done;
    untrack(orig_t);    /* Columns form no cycles (see earley.py) */
    result = Py_BuildValue("(ONOOOOO)", key, orig_t, items, by_next, predicted,
                           started ? Py_True : Py_False, nexts);
done:
    Py_XDECREF(items);
    Py_XDECREF(by_next);
    Py_XDECREF(predicted);
    Py_XDECREF(nexts);
    free(next);
    free(pred);
    free(syms);
    return result;
}

/* The interned Column of the kernel in ``w`` when ``interned`` (a dict or None) has it, else the
 * closed kernel (see close_kernel). */
static PyObject *intern_or_close(Grammar *g, Work *w, PyObject *interned, PyObject *initial) {
    PyObject *key = kernel_key(w);
    if (!key) return NULL;
    if (interned != Py_None) {
        if (!PyDict_Check(interned)) {
            Py_DECREF(key);
            PyErr_SetString(PyExc_TypeError, "closure: interned must be a dict or None");
            return NULL;
        }
        PyObject *hit = PyDict_GetItemWithError(interned, key);
        if (hit || PyErr_Occurred()) {
            Py_DECREF(key);
            Py_XINCREF(hit);
            return hit;
        }
    }
    PyObject *out = close_kernel(g, w, key, initial);
    Py_DECREF(key);
    return out;
}

static PyObject *closure(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *cap, *kernel, *initial, *interned;
    if (!PyArg_ParseTuple(args, "OO!OO", &cap, &PyList_Type, &kernel, &initial, &interned))
        return NULL;
    Grammar *g = PyCapsule_GetPointer(cap, "constrained.earley.grammar");
    if (!g) return NULL;
    Work w;
    PyObject *result = NULL;
    /* a snapshot: converting an item's fields may run Python code that changes the list */
    PyObject *items = PySequence_Tuple(kernel);
    if (work_init(&w) < 0 || !items) goto done;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++) {
        PyObject *it = PyTuple_GET_ITEM(items, i);
        int32_t a, d;
        if (!PyTuple_Check(it) || PyTuple_GET_SIZE(it) != 3) {
            PyErr_SetString(PyExc_TypeError, "closure: kernel items are (alternative, dot, origin)");
            goto done;
        }
        if (as_int32(PyTuple_GET_ITEM(it, 0), &a) < 0 || as_int32(PyTuple_GET_ITEM(it, 1), &d) < 0 ||
            work_add(g, &w, a, d, PyTuple_GET_ITEM(it, 2)) < 0)
            goto done;
    }
    result = intern_or_close(g, &w, interned, initial);
done:
    Py_XDECREF(items);
    work_free(&w);
    return result;
}

/* Adds every item of Column ``col`` to ``w`` as a kernel item: its own items and those it
 * predicted (col.static._packed). -1 on error. */
static int keep_items(Grammar *g, Work *w, PyObject *col) {
    PyObject *dyn = PyObject_GetAttr(col, s_dynamic), *origins = NULL, *stat = NULL,
             *packed = NULL;
    int bad = !dyn || !(origins = origins_of(col));
    if (!bad) {
        stat = PyObject_GetAttr(col, s_static);
        packed = stat ? PyObject_GetAttr(stat, s_packed) : NULL;
        bad = !packed;
    }
    if (!bad) bad = add_items(g, w, col, origins, dyn, 0) < 0;
    if (!bad) bad = add_items(g, w, col, origins, packed, 0) < 0;
    Py_XDECREF(dyn);
    Py_XDECREF(origins);
    Py_XDECREF(stat);
    Py_XDECREF(packed);
    return bad ? -1 : 0;
}

/* advance(grammar, col, terminals, interned, initial[, keep]): the kernel of ``col`` after one
 * lexeme of any of ``terminals`` (items of col expecting one, dot moved past it); None when
 * empty, else as intern_or_close. With ``keep`` true (a lexeme ignored terminals also match),
 * a kernel that is not empty also holds every item of ``col`` (the lexeme may be skipped). */
static PyObject *advance(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *cap, *col, *terminals, *interned, *initial;
    int keep = 0;
    if (!PyArg_ParseTuple(args, "OOOOO|p", &cap, &col, &terminals, &interned, &initial, &keep))
        return NULL;
    Grammar *g = PyCapsule_GetPointer(cap, "constrained.earley.grammar");
    if (!g) return NULL;
    Work w;
    PyObject *result = NULL, *iter = NULL, *t = NULL;
    if (work_init(&w) < 0) goto done;
    iter = PyObject_GetIter(terminals);
    if (!iter) goto done;
    while ((t = PyIter_Next(iter))) {
        int bad = scan(g, &w, col, t) < 0;
        Py_CLEAR(t);
        if (bad) goto done;
    }
    if (PyErr_Occurred()) goto done;
    if (!w.set.n) {
        result = Py_None;
        Py_INCREF(result);
    } else if (!keep || keep_items(g, &w, col) == 0)
        result = intern_or_close(g, &w, interned, initial);
done:
    Py_XDECREF(t);
    Py_XDECREF(iter);
    work_free(&w);
    return result;
}

/* predictions(grammar, roots) -> (items, by_next, expected, complete): the closure of
 * predicting the nonterminals ``roots`` (int32 bytes) in a column being built: their
 * alternatives at dot 0, closed under prediction and the nullable step (origin -1 throughout;
 * completions are not followed: they read earlier columns). ``items`` packs them all, ``by_next``
 * groups them by the symbol after the dot (as ``closure`` does), ``expected`` lists the
 * terminals after a dot (sorted int32 bytes) and ``complete`` says whether the start
 * alternative's item (0, 1) is among them. */
static PyObject *predictions(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *capsule, *o_roots;
    if (!PyArg_ParseTuple(args, "OO", &capsule, &o_roots)) return NULL;
    Grammar *g = PyCapsule_GetPointer(capsule, "constrained.earley.grammar");
    if (!g) return NULL;
    Py_buffer roots;
    if (PyObject_GetBuffer(o_roots, &roots, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    PyObject *result = NULL, *items = NULL, *by_next = NULL, *expected = NULL;
    Next *next = NULL;
    int32_t *syms = NULL;
    uint8_t *predicted = NULL;
    Py_ssize_t n_next = 0, next_cap = 16;
    Work w;
    if (work_init(&w) < 0) goto done;
    if (!(roots.itemsize == 4 || (roots.itemsize == 1 && roots.len % 4 == 0))) {
        PyErr_SetString(PyExc_TypeError, "predictions: roots must be int32 (or their bytes)");
        goto done;
    }
    next = malloc(sizeof(Next) * (size_t)next_cap);
    predicted = calloc((size_t)g->n_syms + 1, 1);
    if (!next || !predicted) { PyErr_NoMemory(); goto done; }
    const int32_t *root = roots.buf;
    for (Py_ssize_t i = 0; i < roots.len / 4; i++) {
        int32_t x = root[i];
        if (x < 0 || x >= g->n_syms) {
            PyErr_SetString(PyExc_ValueError, "predictions: root symbol out of range");
            goto done;
        }
        if (predicted[x]) continue;
        predicted[x] = 1;
        for (int32_t j = g->alts_start[x]; j < g->alts_start[x + 1]; j++)
            if (push(&w.set, &w.agenda, g->alts[j], 0, -1) < 0) goto done;
    }
    while (w.agenda.n) {
        int32_t idx = w.agenda.buf[--w.agenda.n];
        Item it = w.set.items[idx];
        if (it.d >= g->start[it.a + 1] - g->start[it.a]) continue;
        int32_t sym = g->rhs[g->start[it.a] + it.d];
        if (next_push(&next, &n_next, &next_cap, sym, idx) < 0) goto done;
        if (sym < g->n_term) continue;
        if (!predicted[sym]) {
            predicted[sym] = 1;
            for (int32_t j = g->alts_start[sym]; j < g->alts_start[sym + 1]; j++)
                if (push(&w.set, &w.agenda, g->alts[j], 0, -1) < 0) goto done;
        }
        if (g->nullable[sym] && push(&w.set, &w.agenda, it.a, it.d + 1, -1) < 0) goto done;
    }
    int complete = 0;
    for (Py_ssize_t i = 0; i < w.set.n; i++)
        if (w.set.items[i].a == 0 && w.set.items[i].d == 1) complete = 1;
    items = PyBytes_FromStringAndSize((const char *)w.set.items,
                                      (Py_ssize_t)(sizeof(Item) * (size_t)w.set.n));
    syms = malloc(sizeof(int32_t) * (size_t)(n_next + 1));
    if (!items) goto done;
    if (!syms) { PyErr_NoMemory(); goto done; }
    Py_ssize_t n_syms = 0, n_terms = 0;
    by_next = group_by_next(w.set.items, next, n_next, syms, &n_syms);
    if (!by_next) goto done;
    while (n_terms < n_syms && syms[n_terms] < g->n_term) n_terms++;     /* syms are sorted */
    expected = PyBytes_FromStringAndSize((const char *)syms,
                                         (Py_ssize_t)(sizeof(int32_t) * (size_t)n_terms));
    if (!expected) goto done;
    result = Py_BuildValue("(OOOO)", items, by_next, expected, complete ? Py_True : Py_False);
done:
    Py_XDECREF(items);
    Py_XDECREF(by_next);
    Py_XDECREF(expected);
    free(next);
    free(syms);
    free(predicted);
    work_free(&w);
    PyBuffer_Release(&roots);
    return result;
}

static PyMethodDef methods[] = {
    {"grammar", grammar, METH_VARARGS,
     "grammar(rhs_flat, rhs_start, lhs, nullable, n_terminals) -> capsule"},
    {"closure", closure, METH_VARARGS,
     "closure(grammar, kernel, initial, interned) -> Column | (key, origins, items, by_next, "
     "predicted, started, next_symbols)"},
    {"predictions", predictions, METH_VARARGS,
     "predictions(grammar, roots) -> (items, by_next, expected, complete)"},
    {"advance", advance, METH_VARARGS,
     "advance(grammar, col, terminals, interned, initial[, keep]) -> None | Column | closed "
     "kernel"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_earley",
                                    "Earley column closure (see _earley.c).", -1, methods, NULL,
                                    NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__earley(void) {
    s_origins = PyUnicode_InternFromString("origins");
    s_by_next = PyUnicode_InternFromString("by_next");
    s_static = PyUnicode_InternFromString("static");
    s_id = PyUnicode_InternFromString("id");
    s_dynamic = PyUnicode_InternFromString("dynamic");
    s_packed = PyUnicode_InternFromString("_packed");
    if (!s_origins || !s_by_next || !s_static || !s_id || !s_dynamic || !s_packed) return NULL;
    return PyModule_Create(&module);
}
