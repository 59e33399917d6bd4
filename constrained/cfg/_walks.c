/* Token walks through a lexer DFA, in C: the inner loops of every CFG mask.
 *
 * trie_walk: every text token read from one lexer state, as a depth-first walk of the
 * vocabulary's token trie. Nodes are numbered in preorder, so the walk reads the node arrays
 * front to back and jumps over the subtree of a dead node (``skip``); tokens are in byte order,
 * so a node's tokens are a span of ``token_ids`` and the tokens ending at the node come first.
 * Its cost is the number of live trie nodes, never the vocabulary size.
 *
 * pairs_walk: token remainders ("pairs": positions in the concatenated token bytes) read from
 * the lexer's empty lexeme, each until its token ends or its lexeme does.
 *
 * Both sort a token (or remainder) into: ok (the lexer is alive at the token's end), crossing
 * (a byte cannot extend the lexeme, which is a full match in state q: the next lexeme starts at
 * that pair), or dropped. Arrays come in through the buffer protocol (numpy arrays), outputs are
 * written into caller-allocated buffers and their lengths returned.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

static int get(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, int writable,
               const char *name) {
    if (PyObject_GetBuffer(obj, view, writable ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS
                                               : PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: expected items of %zd bytes, got %zd", name,
                     itemsize, view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *trie_walk(PyObject *self, PyObject *args) {
    (void)self;
    enum { N = 13 };
    PyObject *objs[N];
    long long start, max_depth;
    /* trans, acc, start, node_byte, depth, skip, lo, hi, own, token_ids, tok_start, max_depth,
       out_ok, out_pairs, out_states; trie nodes in preorder */
    if (!PyArg_ParseTuple(args, "OOLOOOOOOOOLOOO", &objs[0], &objs[1], &start, &objs[2],
                          &objs[3], &objs[4], &objs[5], &objs[6], &objs[7], &objs[8],
                          &objs[9], &max_depth, &objs[10], &objs[11], &objs[12]))
        return NULL;
    static const Py_ssize_t sizes[N] = {4, 1, 1, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4};
    static const char *names[N] = {"trans", "acc", "node_byte", "depth", "skip", "lo", "hi",
                                   "own", "token_ids", "tok_start", "out_ok", "out_pairs",
                                   "out_states"};
    Py_buffer v[N];
    int got = 0;
    for (; got < N; got++)
        if (get(objs[got], &v[got], sizes[got], got >= 10, names[got]) < 0) goto fail;

    const int32_t *trans = v[0].buf;
    const uint8_t *acc = v[1].buf, *node_byte = v[2].buf;
    const int16_t *depth = v[3].buf;
    const int32_t *skip = v[4].buf, *lo = v[5].buf, *hi = v[6].buf, *own = v[7].buf;
    const int32_t *token_ids = v[8].buf, *tok_start = v[9].buf;
    int32_t *out_ok = v[10].buf, *out_pairs = v[11].buf, *out_states = v[12].buf;
    Py_ssize_t n_nodes = v[2].len, n_tok = v[8].len / 4;
    Py_ssize_t n_states = v[0].len / (4 * 256);
    if (start < 0 || start >= n_states || max_depth < 0 || v[10].len / 4 < n_tok ||
        v[11].len / 4 < n_tok || v[12].len / 4 < n_tok) {
        PyErr_SetString(PyExc_ValueError, "trie_walk: bad start state, depth or output sizes");
        goto fail;
    }
    int32_t *st = malloc(sizeof(int32_t) * (size_t)(max_depth + 1));
    if (!st) { PyErr_NoMemory(); goto fail; }
    Py_ssize_t n_ok = 0, n_cross = 0;
    Py_BEGIN_ALLOW_THREADS
    st[0] = (int32_t)start;
    Py_ssize_t i = 0;
    while (i < n_nodes) {
        int d = depth[i];
        int32_t s = st[d - 1];
        int32_t ns = trans[(int64_t)s * 256 + node_byte[i]];
        if (ns >= 0) {
            st[d] = ns;
            for (int32_t k = lo[i], e = lo[i] + own[i]; k < e; k++)
                out_ok[n_ok++] = token_ids[k];
            i++;
        } else {
            if (acc[s])
                for (int32_t k = lo[i]; k < hi[i]; k++) {
                    out_pairs[n_cross] = tok_start[token_ids[k]] + d - 1;
                    out_states[n_cross++] = s;
                }
            i = skip[i];
        }
    }
    Py_END_ALLOW_THREADS
    free(st);
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return Py_BuildValue("nn", n_ok, n_cross);
fail:
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

static PyObject *pairs_walk(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[9];
    /* trans, acc, flat, end_of, tok_of, pairs, out_ok, out_next, out_states */
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4], &objs[5], &objs[6], &objs[7], &objs[8]))
        return NULL;
    static const Py_ssize_t sizes[9] = {4, 1, 1, 4, 4, 4, 4, 4, 4};
    static const char *names[9] = {"trans", "acc", "flat", "end_of", "tok_of", "pairs",
                                   "out_ok", "out_next", "out_states"};
    Py_buffer v[9];
    int got = 0;
    for (; got < 9; got++)
        if (get(objs[got], &v[got], sizes[got], got >= 6, names[got]) < 0) goto fail;
    const int32_t *trans = v[0].buf;
    const uint8_t *acc = v[1].buf, *flat = v[2].buf;
    const int32_t *end_of = v[3].buf, *tok_of = v[4].buf, *pairs = v[5].buf;
    int32_t *out_ok = v[6].buf, *out_next = v[7].buf, *out_states = v[8].buf;
    Py_ssize_t n = v[5].len / 4, n_flat = v[2].len;
    if (v[6].len / 4 < n || v[7].len / 4 < n || v[8].len / 4 < n) {
        PyErr_SetString(PyExc_ValueError, "pairs_walk: output buffers too small");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (pairs[i] < 0 || pairs[i] >= n_flat) {
            PyErr_SetString(PyExc_ValueError, "pairs_walk: pair out of range");
            goto fail;
        }
    Py_ssize_t n_ok = 0, n_cross = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t p = pairs[i], end = end_of[p], q = 0;
        for (; p < end; p++) {
            int32_t nq = trans[(int64_t)q * 256 + flat[p]];
            if (nq < 0) break;
            q = nq;
        }
        if (p == end) out_ok[n_ok++] = tok_of[pairs[i]];
        else if (acc[q]) { out_next[n_cross] = p; out_states[n_cross++] = q; }
    }
    Py_END_ALLOW_THREADS
    for (int i = 0; i < got; i++) PyBuffer_Release(&v[i]);
    return Py_BuildValue("nn", n_ok, n_cross);
fail:
    for (int i = 0; i < got; i++) PyBuffer_Release(&v[i]);
    return NULL;
}

static PyMethodDef methods[] = {
    {"trie_walk", trie_walk, METH_VARARGS,
     "trie_walk(trans, acc, start, node_byte, depth, skip, lo, hi, own, token_ids, tok_start, "
     "max_depth, out_ok, out_pairs, out_states) -> (n_ok, n_cross)"},
    {"pairs_walk", pairs_walk, METH_VARARGS,
     "pairs_walk(trans, acc, flat, end_of, tok_of, pairs, out_ok, out_next, out_states) "
     "-> (n_ok, n_cross)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walks",
                                    "Token walks through a lexer DFA (see _walks.c).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__walks(void) { return PyModule_Create(&module); }
