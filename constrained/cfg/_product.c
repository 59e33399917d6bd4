/* A lexer's tables from its terminal DFAs, in C (see lexer.py).
 *
 * lexer_tables(tables, classes, accepting, init, max_states) takes per component (terminal DFA)
 * its int32[n, 256] transitions (-1 dead), its int32[256] byte classes and its uint8[n]
 * accepting flags, plus the int32 initial state of each. It refines the byte classes of all
 * components, then breadth-first explores the tuples of component states reachable from
 * ``init`` one byte class at a time. A tuple stays alive while some component is alive (>= 0).
 * A component may instead be given as one text (a ``bytes`` object in ``tables``, None in
 * ``classes`` and ``accepting``): the chain automaton of that text (state i has read its first
 * i bytes, the last state accepts), read off the text without building its tables.
 * States are numbered in the order they are first reached (the initial tuple is state 0 and is
 * never re-entered: reaching its tuple again makes a new state, as the empty lexeme is special).
 *
 * Returns (n, trans, byte_class, comps, acc_class, cross_class, classes, cycles, sim, text_chars,
 * text_cross, accepts): int32 bytes of the successor of each state per byte class (n rows of r; -1
 * dead), of each byte's class (256 entries, classes numbered by first byte), of each state's
 * component states (-1 dead), of each state's accepting class (states whose accepting components
 * are the same set share one, numbered by first state) and the same with -1 where no component
 * accepts; ``classes`` lists each class's component positions; ``cycles`` holds one byte per
 * state, 1 where a cycle of the product is reachable (read on the class-reduced table: O(states x
 * classes)). Then the walks' writable per-state memos, initialized (bytearrays: int8 -1 where a
 * cycle is reachable and 0 elsewhere, int16 -1, int32 -1) and each state's "some component
 * accepts" as a list of bools. n is -1 (and the rest None) when more than ``max_states`` are
 * needed.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../automata/_cycles.h"
#include "../automata/_hashed_classes.h"

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
        if (p->count[s] == 1) continue;        /* nor are states of one live pair */
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

/* Byte classes of the union: bytes every component puts in the same class of its own.
 * cls[b] is b's class (numbered by first byte), reps[c] the first byte of class c. */
typedef struct {
    const int32_t *const *classes;
    Py_ssize_t k;
} Components;

static int same_in_every_component(const void *ctx, int a, int b) {
    const Components *c = ctx;
    Py_ssize_t j = 0;
    while (j < c->k && c->classes[j][a] == c->classes[j][b]) j++;
    return j == c->k;
}

static int union_byte_classes(const int32_t *const *classes, Py_ssize_t k, int32_t *cls,
                              int32_t *reps) {
    uint64_t h[256];
    for (int b = 0; b < 256; b++) h[b] = 0x9E3779B97F4A7C15ULL;
    for (Py_ssize_t j = 0; j < k; j++)
        for (int b = 0; b < 256; b++) {
            h[b] ^= (uint64_t)(uint32_t)classes[j][b] + 0x9E3779B97F4A7C15ULL + (h[b] << 6) +
                    (h[b] >> 2);
            h[b] *= 0xBF58476D1CE4E5B9ULL;
        }
    Components ctx = {classes, k};
    return classes_from_hashes(h, same_in_every_component, &ctx, cls, reps);
}

/* The rows of the components' transitions restricted to the class representatives: row
 * (j, q) is filled in ``tables`` (r entries at offsets[j] + q * r) when first needed, since a
 * product usually reaches few states of its large components. */
typedef struct {
    int32_t *tables;
    const int64_t *offsets;
    const int32_t *const *full;     /* each component's int32[n, 256] transitions */
    const int32_t *reps;
    uint8_t *ready;                 /* per (component, state), at state_off[j] + q */
    const int64_t *state_off;
    const uint8_t *const *word;     /* each text component's text (NULL: a table) */
    const int32_t *word_len;
    const int32_t *cls;             /* each byte's class */
} Reduced;

static inline const int32_t *reduced_row(const Reduced *t, int32_t j, int32_t q, Py_ssize_t r) {
    int32_t *row = t->tables + t->offsets[j] + (int64_t)q * r;
    uint8_t *ready = t->ready + t->state_off[j] + q;
    if (!*ready) {
        const uint8_t *word = t->word[j];
        if (word) {
            /* each byte of a text is a class of its own: only its next byte's moves on */
            for (Py_ssize_t c = 0; c < r; c++) row[c] = -1;
            if (q < t->word_len[j]) row[t->cls[word[q]]] = q + 1;
        } else {
            const int32_t *src = t->full[j] + (int64_t)q * 256;
            for (Py_ssize_t c = 0; c < r; c++) row[c] = src[t->reps[c]];
        }
        *ready = 1;
    }
    return row;
}

/* id of the state whose one live pair is (j, q), adding it when new (found by ``single``,
 * per component state, not by hash: most states of a lexer have one live component); -1
 * memory error, -2 too many */
static int64_t intern_single(Product *p, int32_t *single, const int64_t *state_off, int32_t j,
                             int32_t q, Py_ssize_t r, Py_ssize_t max_states) {
    int32_t *slot = single + state_off[j] + q;
    if (*slot >= 0) return *slot;
    if (p->n >= max_states) return -2;
    int32_t pair[2] = {j, q};
    Py_ssize_t s = p->n;
    if (add_state(p, pair, 1, 0, r) < 0) return -1;     /* never hashed */
    *slot = (int32_t)s;
    return s;
}

/* The product of the components' transitions restricted to class representatives (r
 * classes); status 0 ok, -1 memory, -2 too many states. */
static int explore(Product *p, const Reduced *tables, const int32_t *init, Py_ssize_t k,
                   Py_ssize_t r, Py_ssize_t max_states, int32_t *single, int64_t expect) {
    /* room for ``expect`` states from the start (most products have about as many states
     * as their components together: growing the tables by doubling copied them several
     * times) */
    if (expect > max_states + 1) expect = max_states + 1;
    if (expect > 4096) expect = 4096;
    p->cap = expect > 64 ? (Py_ssize_t)expect : 64;
    p->pool_cap = p->cap + k;
    p->pool = malloc(sizeof(int32_t) * 2 * p->pool_cap);
    p->start = malloc(sizeof(int64_t) * p->cap);
    p->count = malloc(sizeof(int32_t) * p->cap);
    p->hash = malloc(sizeof(uint64_t) * p->cap);
    p->ids = malloc(sizeof(int32_t) * p->cap * r);
    int32_t *tmp = malloc(sizeof(int32_t) * 2 * (k ? k : 1));
    if (!p->pool || !p->start || !p->count || !p->hash || !p->ids || !tmp ||
        rehash(p, 256) < 0) {
        free(tmp);
        return -1;
    }
    Py_ssize_t m0 = 0;
    for (Py_ssize_t j = 0; j < k; j++)
        if (init[j] >= 0) {
            tmp[2 * m0] = (int32_t)j;
            tmp[2 * m0 + 1] = init[j];
            m0++;
        }
    if (add_state(p, tmp, m0, hash_pairs(tmp, m0), r) < 0) {
        free(tmp);
        return -1;
    }
    /* per byte class, the live pairs after it (component order), gathered pair by pair: a
     * text component moves on one class only, so a state costs its pairs plus its classes
     * rather than their product. Counted first, so the buckets take what they hold. */
    Py_ssize_t bucket_cap = 64 + 2 * r;
    int32_t *bucket = malloc(sizeof(int32_t) * 2 * (size_t)bucket_cap);
    int32_t *filled = malloc(sizeof(int32_t) * (size_t)r);
    int64_t *first = malloc(sizeof(int64_t) * (size_t)(r + 1));
    if (!bucket || !filled || !first) {
        free(tmp);
        free(bucket);
        free(filled);
        free(first);
        return -1;
    }
    int status = 0;
    for (Py_ssize_t s = 0; s < p->n && status == 0; s++) {
        if (p->count[s] == 1) {
            int32_t j = p->pool[2 * p->start[s]], q = p->pool[2 * p->start[s] + 1];
            if (tables->word[j]) {
                /* a text's chain: its next byte's class alone goes on */
                int64_t id = -1;
                int32_t c1 = -1;
                if (q < tables->word_len[j]) {
                    c1 = tables->cls[tables->word[j][q]];
                    id = intern_single(p, single, tables->state_off, j, q + 1, r, max_states);
                    if (id < 0) { status = (int)id; break; }
                }
                int32_t *out = p->ids + s * r;
                for (Py_ssize_t c = 0; c < r; c++) out[c] = -1;
                if (c1 >= 0) out[c1] = (int32_t)id;
                continue;
            }
            const int32_t *row = reduced_row(tables, j, q, r);
            for (Py_ssize_t c = 0; c < r; c++) {
                int64_t id = -1;
                if (row[c] >= 0) {
                    id = intern_single(p, single, tables->state_off, j, row[c], r, max_states);
                    if (id < 0) { status = (int)id; break; }
                }
                p->ids[s * r + c] = (int32_t)id;
            }
            continue;
        }
        Py_ssize_t n_live = p->count[s];
        for (Py_ssize_t c = 0; c < r; c++) filled[c] = 0;
        const int32_t *live = p->pool + 2 * p->start[s];
        for (Py_ssize_t i = 0; i < n_live; i++) {
            int32_t j = live[2 * i], q = live[2 * i + 1];
            if (tables->word[j]) {
                if (q < tables->word_len[j]) filled[tables->cls[tables->word[j][q]]]++;
                continue;
            }
            const int32_t *row = reduced_row(tables, j, q, r);
            for (Py_ssize_t c = 0; c < r; c++) filled[c] += row[c] >= 0;
        }
        first[0] = 0;
        for (Py_ssize_t c = 0; c < r; c++) {
            first[c + 1] = first[c] + filled[c];
            filled[c] = 0;
        }
        if (first[r] > bucket_cap) {
            bucket_cap = 2 * first[r];
            int32_t *grown = realloc(bucket, sizeof(int32_t) * 2 * (size_t)bucket_cap);
            if (!grown) { status = -1; break; }
            bucket = grown;
        }
        for (Py_ssize_t i = 0; i < n_live; i++) {
            int32_t j = live[2 * i], q = live[2 * i + 1];
            if (tables->word[j]) {
                if (q < tables->word_len[j]) {
                    int32_t c = tables->cls[tables->word[j][q]];
                    int32_t *b = bucket + 2 * (first[c] + filled[c]++);
                    b[0] = j;
                    b[1] = q + 1;
                }
                continue;
            }
            const int32_t *row = reduced_row(tables, j, q, r);
            for (Py_ssize_t c = 0; c < r; c++)
                if (row[c] >= 0) {
                    int32_t *b = bucket + 2 * (first[c] + filled[c]++);
                    b[0] = j;
                    b[1] = row[c];
                }
        }
        /* (interning below may move the pool: the pairs were read above) */
        for (Py_ssize_t c = 0; c < r; c++) {
            const int32_t *b = bucket + 2 * first[c];
            Py_ssize_t m = filled[c];
            int64_t id = -1;
            if (m == 1) {
                id = intern_single(p, single, tables->state_off, b[0], b[1], r, max_states);
                if (id < 0) { status = (int)id; break; }
            } else if (m) {
                id = intern(p, b, m, r, max_states);
                if (id < 0) { status = (int)id; break; }
            }
            p->ids[s * r + c] = (int32_t)id;
        }
    }
    free(tmp);
    free(bucket);
    free(filled);
    free(first);
    return status;
}

/* Accepting classes: states whose accepting components are the same set share a class,
 * numbered by first state. Fills acc_class[n] and cross[n] (-1 where the set is empty) and
 * returns the list of classes as tuples of component positions (NULL on error). */
static PyObject *accepting_classes(const Product *p, const uint8_t *accepting,
                                   const int64_t *acc_off, Py_ssize_t k, int32_t *acc_class,
                                   int32_t *cross) {
    PyObject *members = PyList_New(0);
    int32_t *set = malloc(sizeof(int32_t) * (k ? k : 1));
    int32_t *pool = NULL, *first = NULL, *size = NULL;
    uint64_t *hashes = NULL;
    Py_ssize_t n_cls = 0, cap = 16, pool_n = 0, pool_cap = 64;
    pool = malloc(sizeof(int32_t) * pool_cap);
    first = malloc(sizeof(int32_t) * cap);
    size = malloc(sizeof(int32_t) * cap);
    hashes = malloc(sizeof(uint64_t) * cap);
    if (!members || !set || !pool || !first || !size || !hashes) goto oom;
    for (Py_ssize_t s = 0; s < p->n; s++) {
        const int32_t *live = p->pool + 2 * p->start[s];
        Py_ssize_t m = 0;
        for (Py_ssize_t i = 0; i < p->count[s]; i++) {
            int32_t j = live[2 * i], q = live[2 * i + 1];
            if (accepting[acc_off[j] + q]) set[m++] = j;
        }
        uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)m;
        for (Py_ssize_t i = 0; i < m; i++) {
            h ^= (uint64_t)(uint32_t)set[i] + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
            h *= 0xBF58476D1CE4E5B9ULL;
        }
        Py_ssize_t c = 0;
        for (; c < n_cls; c++)
            if (hashes[c] == h && size[c] == m &&
                memcmp(pool + first[c], set, sizeof(int32_t) * m) == 0)
                break;
        if (c == n_cls) {
            if (n_cls == cap) {
                cap *= 2;
                int32_t *f2 = realloc(first, sizeof(int32_t) * cap);
                if (!f2) goto oom;
                first = f2;
                int32_t *s2 = realloc(size, sizeof(int32_t) * cap);
                if (!s2) goto oom;
                size = s2;
                uint64_t *h2 = realloc(hashes, sizeof(uint64_t) * cap);
                if (!h2) goto oom;
                hashes = h2;
            }
            while (pool_n + m > pool_cap) {
                pool_cap *= 2;
                int32_t *p2 = realloc(pool, sizeof(int32_t) * pool_cap);
                if (!p2) goto oom;
                pool = p2;
            }
            memcpy(pool + pool_n, set, sizeof(int32_t) * m);
            first[n_cls] = (int32_t)pool_n;
            size[n_cls] = (int32_t)m;
            hashes[n_cls] = h;
            pool_n += m;
            PyObject *t = PyTuple_New(m);
            if (!t) goto fail;
            for (Py_ssize_t i = 0; i < m; i++) {
                PyObject *v = PyLong_FromLong(set[i]);
                if (!v) { Py_DECREF(t); goto fail; }
                PyTuple_SET_ITEM(t, i, v);
            }
            int bad = PyList_Append(members, t) < 0;
            Py_DECREF(t);
            if (bad) goto fail;
            n_cls++;
        }
        acc_class[s] = (int32_t)c;
        cross[s] = m ? (int32_t)c : -1;
    }
    free(set);
    free(pool);
    free(first);
    free(size);
    free(hashes);
    return members;
oom:
    PyErr_NoMemory();
fail:
    Py_XDECREF(members);
    free(set);
    free(pool);
    free(first);
    free(size);
    free(hashes);
    return NULL;
}

#define MAX_COMPONENTS 100000

static PyObject *lexer_tables(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_tables, *o_classes, *o_acc, *o_init;
    Py_ssize_t max_states;
    if (!PyArg_ParseTuple(args, "O!O!O!On", &PyList_Type, &o_tables, &PyList_Type, &o_classes,
                          &PyList_Type, &o_acc, &o_init, &max_states))
        return NULL;
    Py_ssize_t k = PyList_GET_SIZE(o_tables);
    if (PyList_GET_SIZE(o_classes) != k || PyList_GET_SIZE(o_acc) != k || k > MAX_COMPONENTS ||
        max_states <= 0) {
        PyErr_SetString(PyExc_ValueError, "lexer_tables: inconsistent component lists");
        return NULL;
    }
    Py_buffer *bufs = calloc((size_t)(3 * k + 1), sizeof(Py_buffer));
    const int32_t **full = malloc(sizeof(int32_t *) * (size_t)(k + 1));
    /* the class arrays of the table components, then one for all the texts */
    const int32_t **classes = malloc(sizeof(int32_t *) * (size_t)(k + 1));
    const uint8_t **acc_src = malloc(sizeof(uint8_t *) * (size_t)(k + 1));
    const uint8_t **word = calloc((size_t)(k + 1), sizeof(uint8_t *));
    int32_t *word_len = calloc((size_t)(k + 1), sizeof(int32_t));
    int32_t *sizes = malloc(sizeof(int32_t) * (size_t)(k + 1));
    int64_t *offsets = malloc(sizeof(int64_t) * (size_t)(k + 1));
    int64_t *acc_off = malloc(sizeof(int64_t) * (size_t)(k + 1));
    uint8_t *accepting = NULL, *ready = NULL;
    int32_t *single = NULL;     /* per component state: the product state of it alone */
    int32_t *reduced = NULL, *comps = NULL, *acc_class = NULL, *cross = NULL;
    PyObject *b_trans = NULL, *b_comps = NULL, *b_cls = NULL;
    Product p = {0};
    PyObject *result = NULL;
    Py_ssize_t got = 0, n_classes = 0;
    Py_buffer bi = {0};
    int have_init = 0, any_word = 0;
    int32_t word_classes[256];
    if (!bufs || !full || !classes || !acc_src || !word || !word_len || !sizes || !offsets ||
        !acc_off) {
        PyErr_NoMemory();
        goto done;
    }
    if (PyObject_GetBuffer(o_init, &bi, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) goto done;
    have_init = 1;
    if (bi.itemsize != 4 || bi.len != 4 * k) {
        PyErr_SetString(PyExc_ValueError, "lexer_tables: init must hold one int32 per component");
        goto done;
    }
    const int32_t *init = bi.buf;
    for (int b = 0; b < 256; b++) word_classes[b] = -1;
    int64_t total_states = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *objs[3] = {PyList_GET_ITEM(o_tables, j), PyList_GET_ITEM(o_classes, j),
                             PyList_GET_ITEM(o_acc, j)};
        if (PyBytes_Check(objs[0]) && objs[1] == Py_None && objs[2] == Py_None) {
            Py_ssize_t len = PyBytes_GET_SIZE(objs[0]);
            if (len >= INT32_MAX || init[j] > len) {
                PyErr_SetString(PyExc_ValueError, "lexer_tables: inconsistent text component");
                goto done;
            }
            word[j] = (const uint8_t *)PyBytes_AS_STRING(objs[0]);
            word_len[j] = (int32_t)len;
            for (Py_ssize_t i = 0; i < len; i++) word_classes[word[j][i]] = word[j][i];
            any_word = 1;
            full[j] = NULL;
            acc_src[j] = NULL;
            sizes[j] = (int32_t)len + 1;
        } else {
            for (int t = 0; t < 3; t++) {
                if (PyObject_GetBuffer(objs[t], &bufs[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) <
                    0)
                    goto done;
                got++;
            }
            Py_buffer *bt = &bufs[got - 3], *bc = &bufs[got - 2], *ba = &bufs[got - 1];
            if (bt->itemsize != 4 || bt->len % (4 * 256) || bc->itemsize != 4 ||
                bc->len != 4 * 256 || ba->itemsize != 1 || ba->len != bt->len / (4 * 256) ||
                init[j] >= ba->len) {
                PyErr_SetString(PyExc_ValueError, "lexer_tables: inconsistent component tables");
                goto done;
            }
            full[j] = bt->buf;
            classes[n_classes++] = bc->buf;
            acc_src[j] = ba->buf;
            sizes[j] = (int32_t)ba->len;
        }
        acc_off[j] = total_states;
        total_states += sizes[j];
    }
    if (any_word) classes[n_classes++] = word_classes;
    int32_t cls[256], reps[256];
    Py_ssize_t r = union_byte_classes(classes, n_classes, cls, reps);
    reduced = malloc(sizeof(int32_t) * (size_t)(total_states * r + 1));
    accepting = malloc((size_t)total_states + 1);
    ready = calloc((size_t)total_states + 1, 1);
    if (!reduced || !accepting || !ready) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t off = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        offsets[j] = off;
        off += (int64_t)sizes[j] * r;
        if (word[j]) {
            memset(accepting + acc_off[j], 0, (size_t)sizes[j]);
            accepting[acc_off[j] + word_len[j]] = 1;
        } else {
            memcpy(accepting + acc_off[j], acc_src[j], (size_t)sizes[j]);
        }
    }
    Reduced rt = {reduced, offsets, full, reps, ready, acc_off, word, word_len, cls};
    single = malloc(sizeof(int32_t) * (size_t)(total_states + 1));
    if (!single) {
        PyErr_NoMemory();
        goto done;
    }
    memset(single, 0xff, sizeof(int32_t) * (size_t)(total_states + 1));
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = explore(&p, &rt, init, k, r, max_states, single, total_states + 1);
    Py_END_ALLOW_THREADS
    if (status == -2) {
        result = Py_BuildValue("nOOOOOOOOOOO", (Py_ssize_t)-1, Py_None, Py_None, Py_None,
                               Py_None, Py_None, Py_None, Py_None, Py_None, Py_None, Py_None,
                               Py_None);
        goto done;
    }
    if (status < 0) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n = p.n;
    /* the successors per byte class (the walks read them through ``cls``: a dense 256-column
     * table would be several times larger, and fresh memory is slow to touch) */
    b_trans = PyBytes_FromStringAndSize((const char *)p.ids, 4 * n * r);
    b_comps = PyBytes_FromStringAndSize(NULL, 4 * n * k);
    b_cls = PyBytes_FromStringAndSize((const char *)cls, 4 * 256);
    if (!b_trans || !b_comps || !b_cls) goto done;
    comps = (int32_t *)PyBytes_AS_STRING(b_comps);
    acc_class = malloc(sizeof(int32_t) * (size_t)n);
    cross = malloc(sizeof(int32_t) * (size_t)n);
    if (!acc_class || !cross) {
        PyErr_NoMemory();
        goto done;
    }
    memset(comps, 0xff, sizeof(int32_t) * (size_t)(n * k));
    for (Py_ssize_t s = 0; s < n; s++) {
        const int32_t *live = p.pool + 2 * p.start[s];
        for (Py_ssize_t i = 0; i < p.count[s]; i++) comps[s * k + live[2 * i]] = live[2 * i + 1];
    }
    PyObject *members = accepting_classes(&p, accepting, acc_off, k, acc_class, cross);
    if (!members) goto done;
    PyObject *b_class = PyBytes_FromStringAndSize((const char *)acc_class, 4 * n);
    PyObject *b_cross = PyBytes_FromStringAndSize((const char *)cross, 4 * n);
    PyObject *b_cycles = PyBytes_FromStringAndSize(NULL, n);
    /* the walks' per-state memos, writable: -1 (unknown) where a cycle is reachable, else 0
     * (finitely many texts lead on: such a state never reads every string text); and
     * character counts and their classes, all unknown */
    PyObject *b_sim = PyByteArray_FromStringAndSize(NULL, n);
    PyObject *b_chars = PyByteArray_FromStringAndSize(NULL, 2 * n);
    PyObject *b_text_cross = PyByteArray_FromStringAndSize(NULL, 4 * n);
    PyObject *acc_list = PyList_New(n);
    if (b_cycles && cycle_flags(p.ids, n, r, (uint8_t *)PyBytes_AS_STRING(b_cycles)) < 0) {
        Py_CLEAR(b_cycles);
        PyErr_NoMemory();
    }
    if (b_cycles && b_sim && b_chars && b_text_cross && acc_list) {
        const uint8_t *cyc = (const uint8_t *)PyBytes_AS_STRING(b_cycles);
        int8_t *sim = (int8_t *)PyByteArray_AS_STRING(b_sim);
        for (Py_ssize_t s = 0; s < n; s++) {
            sim[s] = cyc[s] ? -1 : 0;
            PyObject *flag = cross[s] >= 0 ? Py_True : Py_False;
            Py_INCREF(flag);
            PyList_SET_ITEM(acc_list, s, flag);
        }
        memset(PyByteArray_AS_STRING(b_chars), 0xff, (size_t)(2 * n));
        memset(PyByteArray_AS_STRING(b_text_cross), 0xff, (size_t)(4 * n));
    }
    if (b_trans && b_comps && b_class && b_cross && b_cycles && b_sim && b_chars &&
        b_text_cross && acc_list)
        result = Py_BuildValue("nOOOOOOOOOOO", n, b_trans, b_cls, b_comps, b_class, b_cross,
                               members, b_cycles, b_sim, b_chars, b_text_cross, acc_list);
    Py_XDECREF(b_class);
    Py_XDECREF(b_cross);
    Py_XDECREF(b_cycles);
    Py_XDECREF(b_sim);
    Py_XDECREF(b_chars);
    Py_XDECREF(b_text_cross);
    Py_XDECREF(acc_list);
    Py_DECREF(members);
done:
    Py_XDECREF(b_trans);
    Py_XDECREF(b_comps);
    Py_XDECREF(b_cls);
    for (Py_ssize_t i = 0; i < got; i++) PyBuffer_Release(&bufs[i]);
    if (have_init) PyBuffer_Release(&bi);
    free(bufs);
    free(full);
    free(classes);
    free(acc_src);
    free(word);
    free(word_len);
    free(sizes);
    free(offsets);
    free(acc_off);
    free(accepting);
    free(ready);
    free(single);
    free(reduced);
    free(acc_class);
    free(cross);
    free(p.pool);
    free(p.start);
    free(p.count);
    free(p.hash);
    free(p.ids);
    free(p.slots);
    return result;
}

static PyMethodDef methods[] = {
    {"lexer_tables", lexer_tables, METH_VARARGS,
     "lexer_tables(tables, classes, accepting, init, max_states) -> "
     "(n, trans, byte_class, comps, acc_class, cross_class, classes, cycles, sim, "
     "text_chars, text_cross, accepts)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_product",
                                    "Product automaton of terminal DFAs (see _product.c).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__product(void) { return PyModule_Create(&module); }
