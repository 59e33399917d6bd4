/* The minimal DFA of a finite set of byte strings, built from their trie in one pass.
 *
 * minimal_trie(words, max_nodes): ``words`` sorted and distinct (bytes). Sorted input makes
 * the trie a preorder sequence of nodes (each word adds the nodes past its common prefix with
 * the previous word, children in ascending byte order). Nodes are then merged bottom-up by
 * signature (ends a word; children's bytes and merged states): two nodes followed by the same
 * texts get the same state, which for a finite language is minimization. Returns (source
 * state, byte, target state) of every transition as bytes of int32, whether each state ends a
 * word (bytes of uint8), and the root's state; None when the trie has more than max_nodes
 * nodes. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t *parent, *first, *next, *state;
    uint8_t *byte, *final;
} Trie;

static void trie_free(Trie *t) {
    free(t->parent); free(t->first); free(t->next); free(t->state);
    free(t->byte); free(t->final);
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

static PyObject *minimal_trie(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *words_obj;
    Py_ssize_t max_nodes;
    if (!PyArg_ParseTuple(args, "On", &words_obj, &max_nodes)) return NULL;
    PyObject *seq = PySequence_Fast(words_obj, "minimal_trie: words must be a sequence");
    if (!seq) return NULL;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(seq), total = 0, longest = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < k; i++) {
        if (!PyBytes_Check(items[i])) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "minimal_trie: words must be bytes");
            return NULL;
        }
        Py_ssize_t len = PyBytes_GET_SIZE(items[i]);
        total += len;
        if (len > longest) longest = len;
    }
    Py_ssize_t cap = total + 1;
    Trie t = {malloc(sizeof(int32_t) * cap), malloc(sizeof(int32_t) * cap),
              malloc(sizeof(int32_t) * cap), malloc(sizeof(int32_t) * cap), malloc(cap),
              calloc(cap, 1)};
    int32_t *path = malloc(sizeof(int32_t) * (longest + 1)), *last = malloc(sizeof(int32_t) * cap);
    int32_t *slots = NULL, *rep = NULL, *src = NULL, *byt = NULL, *dst = NULL;
    uint8_t *state_final = NULL;
    PyObject *result = NULL;
    if (!t.parent || !t.first || !t.next || !t.state || !t.byte || !t.final || !path || !last)
        goto oom;
    /* the trie, in preorder */
    Py_ssize_t n = 1;
    t.parent[0] = -1;
    t.first[0] = t.next[0] = last[0] = -1;
    path[0] = 0;
    const char *prev = NULL;
    Py_ssize_t prev_len = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        const char *w = PyBytes_AS_STRING(items[i]);
        Py_ssize_t len = PyBytes_GET_SIZE(items[i]), common = 0;
        while (prev && common < len && common < prev_len && w[common] == prev[common]) common++;
        if (prev && (common == len || (common < prev_len
                                        && (uint8_t)w[common] <= (uint8_t)prev[common]))) {
            PyErr_SetString(PyExc_ValueError, "minimal_trie: words must be sorted and distinct");
            goto done;
        }
        int32_t node = path[common];
        for (Py_ssize_t j = common; j < len; j++) {
            int32_t v = (int32_t)n++;
            t.parent[v] = node;
            t.byte[v] = (uint8_t)w[j];
            t.first[v] = t.next[v] = last[v] = -1;
            if (last[node] < 0)
                t.first[node] = v;
            else
                t.next[last[node]] = v;
            last[node] = v;
            path[j + 1] = node = v;
        }
        t.final[node] = 1;
        prev = w;
        prev_len = len;
    }
    if (n > max_nodes) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    /* states bottom-up: children come after their parents in preorder */
    Py_ssize_t n_slots = 16;
    while (n_slots < 2 * n) n_slots <<= 1;
    slots = malloc(sizeof(int32_t) * n_slots);
    rep = malloc(sizeof(int32_t) * n);      /* a node of each state */
    if (!slots || !rep) goto oom;
    for (Py_ssize_t i = 0; i < n_slots; i++) slots[i] = -1;
    int32_t n_states = 0;
    Py_ssize_t n_edges = 0;
    for (Py_ssize_t v = n - 1; v >= 0; v--) {
        uint64_t h = t.final[v];
        for (int32_t c = t.first[v]; c >= 0; c = t.next[c])
            h = mix(mix(h, t.byte[c]), (uint64_t)t.state[c]);
        Py_ssize_t s = (Py_ssize_t)(h >> 17) & (n_slots - 1);
        while (slots[s] >= 0 && !same_signature(&t, rep[slots[s]], (int32_t)v))
            s = (s + 1) & (n_slots - 1);
        if (slots[s] < 0) {
            slots[s] = n_states;
            rep[n_states++] = (int32_t)v;
            for (int32_t c = t.first[v]; c >= 0; c = t.next[c]) n_edges++;
        }
        t.state[v] = slots[s];
    }
    src = malloc(sizeof(int32_t) * (n_edges + 1));
    byt = malloc(sizeof(int32_t) * (n_edges + 1));
    dst = malloc(sizeof(int32_t) * (n_edges + 1));
    state_final = malloc(n_states + 1);
    if (!src || !byt || !dst || !state_final) goto oom;
    Py_ssize_t e = 0;
    for (int32_t q = 0; q < n_states; q++) {
        int32_t v = rep[q];
        state_final[q] = t.final[v];
        for (int32_t c = t.first[v]; c >= 0; c = t.next[c]) {
            src[e] = q;
            byt[e] = t.byte[c];
            dst[e++] = t.state[c];
        }
    }
    result = Py_BuildValue("(y#y#y#y#i)", (const char *)src, (Py_ssize_t)(4 * e),
                           (const char *)byt, (Py_ssize_t)(4 * e), (const char *)dst,
                           (Py_ssize_t)(4 * e), (const char *)state_final, (Py_ssize_t)n_states,
                           (int)t.state[0]);
    goto done;
oom:
    PyErr_NoMemory();
done:
    trie_free(&t);
    free(path); free(last); free(slots); free(rep); free(src); free(byt); free(dst);
    free(state_final);
    Py_DECREF(seq);
    return result;
}

static PyMethodDef methods[] = {
    {"minimal_trie", minimal_trie, METH_VARARGS,
     "minimal_trie(words: sorted distinct bytes, max_nodes) -> (source, byte, target: bytes of "
     "int32 per transition, final: bytes of uint8 per state, root state), or None past "
     "max_nodes trie nodes"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tries",
                                    "The minimal DFA of a finite set of byte strings (see "
                                    "_tries.c).", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__tries(void) { return PyModule_Create(&module); }
