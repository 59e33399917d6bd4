/* The minimal DFA of a finite set of byte strings, built from their trie in one pass.
 *
 * minimal_trie(words, max_nodes): ``words`` sorted and distinct (bytes). Sorted input makes
 * the trie a preorder sequence of nodes (each word adds the nodes past its common prefix with
 * the previous word, children in ascending byte order). Nodes are then merged bottom-up by
 * signature (ends a word; children's bytes and merged states): two nodes followed by the same
 * texts get the same state, which for a finite language is minimization. Returns (source
 * state, byte, target state) of every transition as bytes of int32, whether each state ends a
 * word (bytes of uint8), and the root's state; None when the trie has more than max_nodes
 * nodes.
 *
 * key_except_table(words, fixed, fixed_accepting, template, final, base): the canonically numbered
 * table of "any JSON key but these names" (constrained.grammar.json_schema.keys): the state
 * before the opening quote, the merged trie of the names, whose rows are ``template`` (where
 * a character leaves the trie) with the trie's edges and, where no name ends, the closing
 * quote to state ``final``; and the ``fixed`` states those rows lead to. Every state is
 * distinct from every other, so numbering them breadth-first from the first (bytes
 * ascending) is all that minimization would do. ``base``: the int32[256] byte classes of the
 * rows that do not depend on the names (``fixed``, the row of the state before the quote and
 * ``template``). Returns (table bytes of int32[k, 256], accepting bytes of uint8[k], the
 * table's byte classes as int32 bytes, numbered by first byte as the automata's column classes
 * are, read off the trie's edges).
 *
 * key_except_parts(words): the three regexes keys.py builds "any key but these names" from
 * (printable ASCII names, sorted and distinct): the trie's paths then a printable character
 * that leaves it, any of its paths, and its paths ending at a node that is not a name (None
 * when none does and the root is a name). A chain of nodes with one child and no name ending
 * is written in one step. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_hashed_classes.h"

typedef struct {
    int32_t *parent, *first, *next, *state;
    uint8_t *byte, *final;
    int32_t *rep;           /* a node of each merged state */
    Py_ssize_t n_nodes;
    int32_t n_states;
} Trie;

static void trie_free(Trie *t) {
    free(t->parent); free(t->first); free(t->next); free(t->state);
    free(t->byte); free(t->final); free(t->rep);
}

static uint64_t mix(uint64_t h, uint64_t x) {
    h ^= x + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h * 0xFF51AFD7ED558CCDULL;
}

/* Whether nodes a and b have equal signatures (the states of their children are known). */
static int same_signature(const Trie *t, int32_t a, int32_t b) {
    if (t->final[a] != t->final[b]) return 0;
    int32_t x = t->first[a], y = t->first[b];
    while (x >= 0 && y >= 0) {
        if (t->byte[x] != t->byte[y] || t->state[x] != t->state[y]) return 0;
        x = t->next[x];
        y = t->next[y];
    }
    return x < 0 && y < 0;
}

/* The merged trie of the words of ``seq`` (a sequence of sorted distinct bytes) into *t:
 * 0, 1 past max_nodes nodes, -1 with an exception set (t is to be freed either way). */
static int merged_trie(PyObject *seq, Py_ssize_t max_nodes, Trie *t) {
    Py_ssize_t k = PySequence_Fast_GET_SIZE(seq), total = 0, longest = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < k; i++) {
        if (!PyBytes_Check(items[i])) {
            PyErr_SetString(PyExc_TypeError, "words must be bytes");
            return -1;
        }
        Py_ssize_t len = PyBytes_GET_SIZE(items[i]);
        total += len;
        if (len > longest) longest = len;
    }
    Py_ssize_t cap = total + 1;
    t->parent = malloc(sizeof(int32_t) * cap);
    t->first = malloc(sizeof(int32_t) * cap);
    t->next = malloc(sizeof(int32_t) * cap);
    t->state = malloc(sizeof(int32_t) * cap);
    t->byte = malloc(cap);
    t->final = calloc(cap, 1);
    int32_t *path = malloc(sizeof(int32_t) * (longest + 1)), *last = malloc(sizeof(int32_t) * cap);
    int32_t *slots = NULL;
    int status = -1;
    if (!t->parent || !t->first || !t->next || !t->state || !t->byte || !t->final || !path
        || !last)
        goto oom;
    /* the trie, in preorder */
    Py_ssize_t n = 1;
    t->parent[0] = -1;
    t->first[0] = t->next[0] = last[0] = -1;
    path[0] = 0;
    const char *prev = NULL;
    Py_ssize_t prev_len = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        const char *w = PyBytes_AS_STRING(items[i]);
        Py_ssize_t len = PyBytes_GET_SIZE(items[i]), common = 0;
        while (prev && common < len && common < prev_len && w[common] == prev[common]) common++;
        if (prev && (common == len || (common < prev_len
                                        && (uint8_t)w[common] <= (uint8_t)prev[common]))) {
            PyErr_SetString(PyExc_ValueError, "words must be sorted and distinct");
            goto done;
        }
        int32_t node = path[common];
        for (Py_ssize_t j = common; j < len; j++) {
            int32_t v = (int32_t)n++;
            t->parent[v] = node;
            t->byte[v] = (uint8_t)w[j];
            t->first[v] = t->next[v] = last[v] = -1;
            if (last[node] < 0)
                t->first[node] = v;
            else
                t->next[last[node]] = v;
            last[node] = v;
            path[j + 1] = node = v;
        }
        t->final[node] = 1;
        prev = w;
        prev_len = len;
    }
    t->n_nodes = n;
    if (n > max_nodes) {
        status = 1;
        goto done;
    }
    /* states bottom-up: children come after their parents in preorder */
    Py_ssize_t n_slots = 16;
    while (n_slots < 2 * n) n_slots <<= 1;
    slots = malloc(sizeof(int32_t) * n_slots);
    t->rep = malloc(sizeof(int32_t) * n);
    if (!slots || !t->rep) goto oom;
    for (Py_ssize_t i = 0; i < n_slots; i++) slots[i] = -1;
    int32_t n_states = 0;
    for (Py_ssize_t v = n - 1; v >= 0; v--) {
        uint64_t h = t->final[v];
        for (int32_t c = t->first[v]; c >= 0; c = t->next[c])
            h = mix(mix(h, t->byte[c]), (uint64_t)t->state[c]);
        Py_ssize_t s = (Py_ssize_t)(h >> 17) & (n_slots - 1);
        while (slots[s] >= 0 && !same_signature(t, t->rep[slots[s]], (int32_t)v))
            s = (s + 1) & (n_slots - 1);
        if (slots[s] < 0) {
            slots[s] = n_states;
            t->rep[n_states++] = (int32_t)v;
        }
        t->state[v] = slots[s];
    }
    t->n_states = n_states;
    status = 0;
    goto done;
oom:
    PyErr_NoMemory();
done:
    free(path); free(last); free(slots);
    return status;
}

static PyObject *minimal_trie(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *words_obj;
    Py_ssize_t max_nodes;
    if (!PyArg_ParseTuple(args, "On", &words_obj, &max_nodes)) return NULL;
    PyObject *seq = PySequence_Fast(words_obj, "minimal_trie: words must be a sequence");
    if (!seq) return NULL;
    Trie t = {0};
    int32_t *src = NULL, *byt = NULL, *dst = NULL;
    uint8_t *state_final = NULL;
    PyObject *result = NULL;
    int status = merged_trie(seq, max_nodes, &t);
    if (status != 0) {
        if (status > 0) {
            result = Py_None;
            Py_INCREF(result);
        }
        goto done;
    }
    Py_ssize_t n_edges = 0;
    for (int32_t q = 0; q < t.n_states; q++)
        for (int32_t c = t.first[t.rep[q]]; c >= 0; c = t.next[c]) n_edges++;
    src = malloc(sizeof(int32_t) * (n_edges + 1));
    byt = malloc(sizeof(int32_t) * (n_edges + 1));
    dst = malloc(sizeof(int32_t) * (n_edges + 1));
    state_final = malloc(t.n_states + 1);
    if (!src || !byt || !dst || !state_final) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t e = 0;
    for (int32_t q = 0; q < t.n_states; q++) {
        int32_t v = t.rep[q];
        state_final[q] = t.final[v];
        for (int32_t c = t.first[v]; c >= 0; c = t.next[c]) {
            src[e] = q;
            byt[e] = t.byte[c];
            dst[e++] = t.state[c];
        }
    }
    result = Py_BuildValue("(y#y#y#y#i)", (const char *)src, (Py_ssize_t)(4 * e),
                           (const char *)byt, (Py_ssize_t)(4 * e), (const char *)dst,
                           (Py_ssize_t)(4 * e), (const char *)state_final,
                           (Py_ssize_t)t.n_states, (int)t.state[0]);
done:
    trie_free(&t);
    free(src); free(byt); free(dst); free(state_final);
    Py_DECREF(seq);
    return result;
}

/* The row of combined state s of key_except_table into row[256]: fixed states first (f of
 * them), then the state before the opening quote, then the trie's states. */
static void key_except_row(const Trie *t, Py_ssize_t s, Py_ssize_t f, const int32_t *fixed,
                           const int32_t *template, int32_t final, int32_t *row) {
    if (s < f) {
        memcpy(row, fixed + s * 256, sizeof(int32_t) * 256);
    } else if (s == f) {
        for (int b = 0; b < 256; b++) row[b] = -1;
        row['"'] = (int32_t)(f + 1 + t->state[0]);
    } else {
        int32_t v = t->rep[s - f - 1];
        memcpy(row, template, sizeof(int32_t) * 256);
        for (int32_t c = t->first[v]; c >= 0; c = t->next[c])
            row[t->byte[c]] = (int32_t)(f + 1 + t->state[c]);
        if (!t->final[v]) row['"'] = final;
    }
}

typedef struct {
    const int32_t *table, *base, *edges;
    Py_ssize_t k;
} KeyColumns;

/* bytes of equal base class and edge count: alike when on no edge, else when their columns
 * are equal */
static int same_key_column(const void *ctx, int a, int b) {
    const KeyColumns *c = ctx;
    if (c->base[a] != c->base[b] || c->edges[a] != c->edges[b]) return 0;
    if (!c->edges[b]) return 1;
    Py_ssize_t row = 0;
    while (row < c->k && c->table[row * 256 + a] == c->table[row * 256 + b]) row++;
    return row == c->k;
}

/* The byte classes of a key_except_table table (bytes every state treats alike, numbered by
 * first byte, as column_classes numbers them) from ``base``, the classes of the rows that do not
 * depend on the names (the fixed states, the state before the quote, the trie's template row):
 * a trie row differs from the template only on its edges' bytes and on the quote, which the
 * state before the quote already sets apart. So bytes on no edge are alike exactly when their
 * base classes are; bytes on edges are grouped by a hash of their edges (row, target), and
 * joined only after their columns compare equal. ``order[i]`` is the combined state written as
 * row i of ``table`` (k rows, f fixed states). 0, or -1 with an exception set. */
static int key_except_classes(const Trie *t, const int32_t *order, Py_ssize_t k, Py_ssize_t f,
                              const int32_t *table, const int32_t *base, int32_t *cls) {
    uint64_t h[256];
    int32_t edges[256], reps[256];
    for (int b = 0; b < 256; b++) {
        if (base[b] < 0 || base[b] > 255) {
            PyErr_SetString(PyExc_ValueError, "key_except_table: base classes out of range");
            return -1;
        }
        h[b] = mix(0x9E3779B97F4A7C15ULL, (uint64_t)base[b]);
        edges[b] = 0;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        if (order[i] <= f) continue;        /* a fixed state or the one before the quote */
        int32_t node = t->rep[order[i] - f - 1];
        for (int32_t c = t->first[node]; c >= 0; c = t->next[c]) {
            uint8_t b = t->byte[c];
            h[b] = mix(mix(h[b], (uint64_t)i), (uint64_t)(uint32_t)table[i * 256 + b]);
            edges[b]++;
        }
    }
    for (int b = 0; b < 256; b++) h[b] = mix(h[b], (uint64_t)edges[b]);
    KeyColumns ctx = {table, base, edges, k};
    classes_from_hashes(h, same_key_column, &ctx, cls, reps);
    return 0;
}

static PyObject *key_except_table(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *words_obj, *objs[4];
    int final;
    if (!PyArg_ParseTuple(args, "OOOOiO", &words_obj, &objs[0], &objs[1], &objs[2], &final,
                          &objs[3]))
        return NULL;
    Py_buffer v[4];
    int got = 0;
    for (; got < 4; got++)
        if (PyObject_GetBuffer(objs[got], &v[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) break;
    PyObject *seq = NULL, *result = NULL, *table = NULL;
    Trie t = {0};
    int32_t *ids = NULL, *order = NULL, *out = NULL;
    uint8_t *acc = NULL;
    if (got < 4) goto done;
    Py_ssize_t f = v[0].len / (4 * 256);
    if (v[0].itemsize != 4 || v[0].len != f * 4 * 256 || v[1].itemsize != 1 || v[1].len != f
        || v[2].itemsize != 4 || v[2].len != 4 * 256 || final < 0 || final >= f ||
        v[3].itemsize != 4 || v[3].len != 4 * 256) {
        PyErr_SetString(PyExc_ValueError, "key_except_table: expected int32[f, 256], "
                        "uint8[f], int32[256], 0 <= final < f and int32[256]");
        goto done;
    }
    const int32_t *fixed = v[0].buf, *template = v[2].buf;
    uint32_t bad = 0;       /* no branch: the loops vectorize */
    for (Py_ssize_t i = 0; i < f * 256; i++) bad |= (uint32_t)fixed[i] + 1u > (uint32_t)f;
    for (int b = 0; b < 256; b++) bad |= (uint32_t)template[b] + 1u > (uint32_t)f;
    if (bad) goto outside;
    seq = PySequence_Fast(words_obj, "key_except_table: words must be a sequence");
    if (!seq) goto done;
    if (merged_trie(seq, PY_SSIZE_T_MAX, &t) != 0) goto done;
    Py_ssize_t n = f + 1 + t.n_states;
    ids = malloc(sizeof(int32_t) * (n + 1));     /* ids[q + 1]: state q's number; ids[0] = -1 */
    order = malloc(sizeof(int32_t) * n);
    acc = malloc(n);
    /* the rows are written in place into the table returned (cut to the states reached) */
    table = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int32_t) * 256 * n);
    if (!table) goto done;
    out = (int32_t *)PyBytes_AS_STRING(table);
    if (!ids || !order || !acc) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t s = 0; s <= n; s++) ids[s] = -1;
    /* breadth first from the state before the quote, bytes ascending; rows kept as read */
    Py_ssize_t k = 0;
    ids[f + 1] = 0;
    order[k++] = (int32_t)f;
    for (Py_ssize_t i = 0; i < k; i++) {
        int32_t *row = out + i * 256;
        key_except_row(&t, order[i], f, fixed, template, final, row);
        int32_t prev = -1;      /* rows are mostly runs of one target */
        for (int b = 0; b < 256; b += 8) {
            int same = 1;
            for (int j = 0; j < 8; j++) same &= row[b + j] == prev;
            if (same) continue;
            for (int j = b; j < b + 8; j++) {
                int32_t q = row[j];
                if (q == prev) continue;
                prev = q;
                if (q >= 0 && ids[q + 1] < 0) {
                    ids[q + 1] = (int32_t)k;
                    order[k++] = q;
                }
            }
        }
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        int32_t s = order[i], *row = out + i * 256;
        acc[i] = s < f ? ((const uint8_t *)v[1].buf)[s] != 0 : 0;
        for (int b = 0; b < 256; b++) row[b] = ids[row[b] + 1];
    }
    if (_PyBytes_Resize(&table, (Py_ssize_t)(4 * 256 * k)) < 0) goto done;
    int32_t cls[256];
    if (key_except_classes(&t, order, k, f, (const int32_t *)PyBytes_AS_STRING(table),
                           v[3].buf, cls) < 0)
        goto done;
    result = Py_BuildValue("(Oy#y#)", table, (const char *)acc, (Py_ssize_t)k,
                           (const char *)cls, (Py_ssize_t)sizeof cls);
    goto done;
outside:
    PyErr_SetString(PyExc_ValueError, "key_except_table: a transition leads outside the "
                    "fixed states");
done:
    trie_free(&t);
    free(ids); free(order); free(acc);
    Py_XDECREF(table);
    Py_XDECREF(seq);
    while (got--) PyBuffer_Release(&v[got]);
    return result;
}

/* --- key_except_parts: the regexes of "any key but these names" (keys.py) --- */

typedef struct {
    char *s;
    Py_ssize_t n, cap;
} Buf;

static int buf_add(Buf *b, const char *x, Py_ssize_t n) {
    if (b->n + n + 1 > b->cap) {
        Py_ssize_t cap = (b->n + n + 1) * 2 + 64;
        char *s = realloc(b->s, (size_t)cap);
        if (!s) {
            PyErr_NoMemory();
            return -1;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, x, (size_t)n);
    b->n += n;
    return 0;
}

static int buf_str(Buf *b, const char *x) { return buf_add(b, x, (Py_ssize_t)strlen(x)); }

static int buf_buf(Buf *b, const Buf *x) { return buf_add(b, x->s, x->n); }

/* a character as a regex literal (keys._lit) */
static int buf_lit(Buf *b, uint8_t c) {
    char out[2] = {'\\', (char)c};
    return strchr(".^$*+?()[]{}|\\-", c) && c ? buf_add(b, out, 2) : buf_add(b, out + 1, 1);
}

/* a character inside a class (chars._cls_char, printable ASCII) */
static int buf_cls(Buf *b, int c) {
    char out[2] = {'\\', (char)c};
    return strchr("\\]^-[", c) ? buf_add(b, out, 2) : buf_add(b, out + 1, 1);
}

/* the class of printable ASCII but ``taken``, '"' and '\\' (keys._printable_except, written
 * as chars.char_class writes it) */
static int printable_except(Buf *b, const uint8_t *taken, Py_ssize_t n_taken) {
    uint8_t in[128] = {0};
    for (int c = 0x20; c < 0x7F; c++) in[c] = 1;
    in['"'] = in['\\'] = 0;
    for (Py_ssize_t i = 0; i < n_taken; i++)
        if (taken[i] < 128) in[taken[i]] = 0;
    int lo[128], hi[128], n = 0;
    for (int c = 0x20; c < 0x7F; c++) {
        if (!in[c]) continue;
        if (n && hi[n - 1] == c - 1) {
            hi[n - 1] = c;
        } else {
            lo[n] = hi[n] = c;
            n++;
        }
    }
    if (n == 1 && lo[0] == hi[0]) {
        char out[2] = {'\\', (char)lo[0]};
        return strchr(".$*+?()|{}/", lo[0]) ? buf_add(b, out, 2) : buf_cls(b, lo[0]);
    }
    if (buf_str(b, "[") < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (buf_cls(b, lo[i]) < 0) return -1;
        if (lo[i] == hi[i]) continue;
        if (hi[i] > lo[i] + 1 && buf_str(b, "-") < 0) return -1;
        if (buf_cls(b, hi[i]) < 0) return -1;
    }
    return buf_str(b, "]");
}

/* The three regexes of the trie of words[lo:hi) below their common prefix of ``depth`` bytes
 * (keys._trie_parts): d, the paths then a printable character leaving the trie; p, any path
 * (possibly empty); e, the paths ending at a node that is no name (*e_none: none, and this
 * node is a name). */
#define MAX_TRIE_LEVELS 4000      /* nested branching nodes (one C frame each) */

static int trie_parts(const uint8_t *const *w, const Py_ssize_t *len, Py_ssize_t lo,
                      Py_ssize_t hi, Py_ssize_t depth, Buf *d, Buf *p, Buf *e, int *e_none,
                      int level) {
    Buf chain = {0}, cd = {0}, cp = {0}, ce = {0}, pd = {0}, pp = {0}, pe = {0};
    int rc = -1;
    if (level > MAX_TRIE_LEVELS) {
        PyErr_SetString(PyExc_RecursionError, "key_except_parts: names nest too deeply");
        return -1;
    }
    /* a chain of nodes with one child and no name ending */
    while (lo < hi && len[lo] > depth && w[lo][depth] == w[hi - 1][depth]) {
        if (buf_add(&chain, (const char *)&w[lo][depth], 1) < 0) goto out;
        depth++;
    }
    int ends_here = lo < hi && len[lo] == depth;
    Py_ssize_t first = lo + ends_here;
    uint8_t children[256] = {0};
    Py_ssize_t n_children = 0;
    for (Py_ssize_t i = first; i < hi; i++)
        if (!n_children || children[n_children - 1] != w[i][depth])
            children[n_children++] = w[i][depth];
    /* diverge: (?:[other]|c d_c|...), paths: (?:c p_c|...)?, ends: (?:c e_c|...) */
    if (n_children && buf_str(&cd, "(?:") < 0) goto out;
    if (printable_except(&cd, children, n_children) < 0) goto out;
    int n_ends = 0;
    Py_ssize_t i = first;
    for (Py_ssize_t k = 0; k < n_children; k++) {
        Py_ssize_t j = i;
        while (j < hi && w[j][depth] == children[k]) j++;
        pd.n = pp.n = pe.n = 0;
        int none = 0;
        if (trie_parts(w, len, i, j, depth + 1, &pd, &pp, &pe, &none, level + 1) < 0)
            goto out;
        if (buf_str(&cd, "|") < 0 || buf_lit(&cd, children[k]) < 0 || buf_buf(&cd, &pd) < 0)
            goto out;
        if (buf_str(&cp, k ? "|" : "(?:") < 0 || buf_lit(&cp, children[k]) < 0 ||
            buf_buf(&cp, &pp) < 0) goto out;
        if (!none) {
            if (buf_str(&ce, n_ends ? "|" : "(?:") < 0 || buf_lit(&ce, children[k]) < 0 ||
                buf_buf(&ce, &pe) < 0) goto out;
            n_ends++;
        }
        i = j;
    }
    if (n_children && buf_str(&cd, ")") < 0) goto out;
    if (n_children && buf_str(&cp, ")?") < 0) goto out;
    int none = 0;
    if (n_ends && buf_str(&ce, ends_here ? ")" : ")?") < 0) goto out;
    if (!n_ends && ends_here) none = 1;
    /* each chain node: diverge (?:[other]|c<below>), paths (?:c<below>)?, ends (?:c<below>)? */
    Py_ssize_t k = chain.n;
    for (Py_ssize_t c = 0; c < k; c++) {
        uint8_t ch = (uint8_t)chain.s[c];
        if (buf_str(d, "(?:") < 0 || printable_except(d, &ch, 1) < 0 || buf_str(d, "|") < 0 ||
            buf_lit(d, ch) < 0) goto out;
        if (buf_str(p, "(?:") < 0 || buf_lit(p, ch) < 0) goto out;
    }
    if (buf_buf(d, &cd) < 0 || buf_buf(p, &cp) < 0) goto out;
    for (Py_ssize_t c = 0; c < k; c++)
        if (buf_str(d, ")") < 0 || buf_str(p, ")?") < 0) goto out;
    /* the innermost chain node has no ending below when e is none; the others have it */
    Py_ssize_t ke = none && k ? k - 1 : k;
    for (Py_ssize_t c = 0; c < ke; c++)
        if (buf_str(e, "(?:") < 0 || buf_lit(e, (uint8_t)chain.s[c]) < 0) goto out;
    if (buf_buf(e, &ce) < 0) goto out;
    for (Py_ssize_t c = 0; c < ke; c++)
        if (buf_str(e, ")?") < 0) goto out;
    *e_none = none && !k;
    rc = 0;
out:
    free(chain.s); free(cd.s); free(cp.s); free(ce.s); free(pd.s); free(pp.s); free(pe.s);
    return rc;
}

static PyObject *key_except_parts(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *words_obj;
    if (!PyArg_ParseTuple(args, "O", &words_obj)) return NULL;
    PyObject *seq = PySequence_Fast(words_obj, "key_except_parts: words must be a sequence");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const uint8_t **w = malloc(sizeof(uint8_t *) * (size_t)(n + 1));
    Py_ssize_t *len = malloc(sizeof(Py_ssize_t) * (size_t)(n + 1));
    Buf d = {0}, p = {0}, e = {0};
    PyObject *result = NULL;
    if (!w || !len) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyBytes_Check(o)) {
            PyErr_SetString(PyExc_TypeError, "key_except_parts: words must be bytes");
            goto done;
        }
        w[i] = (const uint8_t *)PyBytes_AS_STRING(o);
        len[i] = PyBytes_GET_SIZE(o);
        for (Py_ssize_t j = 0; j < len[i]; j++)
            if (w[i][j] < 0x20 || w[i][j] >= 0x7F || w[i][j] == '"' || w[i][j] == '\\') {
                PyErr_SetString(PyExc_ValueError, "key_except_parts: printable ASCII names "
                                "without quotes or backslashes only");
                goto done;
            }
        if (i && (len[i - 1] > len[i] ? memcmp(w[i - 1], w[i], (size_t)len[i]) >= 0
                  : memcmp(w[i - 1], w[i], (size_t)len[i - 1]) > 0 ||
                    (len[i - 1] == len[i] && memcmp(w[i - 1], w[i], (size_t)len[i]) == 0))) {
            PyErr_SetString(PyExc_ValueError, "key_except_parts: words must be sorted and "
                            "distinct");
            goto done;
        }
    }
    int none = 0;
    if (trie_parts(w, len, 0, n, 0, &d, &p, &e, &none, 0) < 0) goto done;
    PyObject *od = PyUnicode_DecodeASCII(d.s ? d.s : "", d.n, NULL);
    PyObject *op = PyUnicode_DecodeASCII(p.s ? p.s : "", p.n, NULL);
    PyObject *oe = none ? Py_NewRef(Py_None) : PyUnicode_DecodeASCII(e.s ? e.s : "", e.n, NULL);
    if (od && op && oe) result = PyTuple_Pack(3, od, op, oe);
    Py_XDECREF(od);
    Py_XDECREF(op);
    Py_XDECREF(oe);
done:
    free(w);
    free(len);
    free(d.s);
    free(p.s);
    free(e.s);
    Py_DECREF(seq);
    return result;
}

static PyMethodDef methods[] = {
    {"minimal_trie", minimal_trie, METH_VARARGS,
     "minimal_trie(words: sorted distinct bytes, max_nodes) -> (source, byte, target: bytes of "
     "int32 per transition, final: bytes of uint8 per state, root state), or None past "
     "max_nodes trie nodes"},
    {"key_except_table", key_except_table, METH_VARARGS,
     "key_except_table(words: sorted distinct bytes, fixed int32[f, 256], fixed_accepting "
     "uint8[f], template int32[256], final, base int32[256]) -> (table bytes of int32[k, 256], "
     "accepting bytes of uint8[k], byte classes int32[256]), numbered canonically (see "
     "_tries.c)"},
    {"key_except_parts", key_except_parts, METH_VARARGS,
     "key_except_parts(words: sorted distinct bytes of printable ASCII) -> (diverge, paths, "
     "ends or None): the regexes of the names' trie keys.py assembles (see _tries.c)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tries",
                                    "Minimal DFAs of finite sets of byte strings, and of keys "
                                    "other than such a set (see _tries.c).", -1, methods, NULL,
                                    NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__tries(void) { return PyModule_Create(&module); }
