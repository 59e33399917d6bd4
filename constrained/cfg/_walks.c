/* Token walks through a lexer DFA over the vocabulary's token trie, in C: the inner loop of
 * every CFG mask.
 *
 * The trie's nodes are numbered in preorder, so a node's subtree is the range
 * [node, skip[node]) and a walk reads the node arrays front to back, jumping over the subtree
 * of a dead node. Tokens are in byte order: a node's tokens are a span of ``token_ids``
 * starting at lo[node], and the own[node] tokens ending exactly at the node come first.
 *
 * walk(trans, acc, start, roots, ...) reads, from lexer state ``start``, either every text
 * token (roots empty: the whole trie) or the subtrees of ``roots`` (each root's byte read first:
 * the token remainders that start at the root's depth). Each trie node reached is
 *   - alive: the lexer continues; the tokens ending there are ok (the lexeme may go on later);
 *   - crossing in state q: its byte cannot extend the lexeme, which is a full match in q (acc);
 *     the next lexeme starts at that byte, for every token below the node;
 *   - dead otherwise: its tokens are not viable.
 * Its cost is the number of nodes reached, never the vocabulary size. Arrays come in through
 * the buffer protocol (numpy); outputs go to caller-allocated buffers, whose used lengths are
 * returned.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

enum { N_BUF = 12 };

static PyObject *walk(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[N_BUF];
    long long start, max_depth;
    /* trans, acc, start, node_byte, depth, skip, lo, own, token_ids, max_depth, roots,
       out_ok, out_nodes, out_states */
    if (!PyArg_ParseTuple(args, "OOLOOOOOOLOOOO", &objs[0], &objs[1], &start, &objs[2],
                          &objs[3], &objs[4], &objs[5], &objs[6], &objs[7], &max_depth,
                          &objs[8], &objs[9], &objs[10], &objs[11]))
        return NULL;
    static const Py_ssize_t sizes[N_BUF] = {4, 1, 1, 2, 4, 4, 4, 4, 4, 4, 4, 4};
    static const char *names[N_BUF] = {"trans", "acc", "node_byte", "depth", "skip", "lo",
                                       "own", "token_ids", "roots", "out_ok", "out_nodes",
                                       "out_states"};
    Py_buffer v[N_BUF];
    int got = 0;
    for (; got < N_BUF; got++) {
        int flags = got >= 9 ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS : PyBUF_C_CONTIGUOUS;
        if (PyObject_GetBuffer(objs[got], &v[got], flags | PyBUF_FORMAT) < 0) goto fail;
        if (v[got].itemsize != sizes[got]) {
            PyErr_Format(PyExc_TypeError, "walk: %s has items of %zd bytes, expected %zd",
                         names[got], v[got].itemsize, sizes[got]);
            got++;
            goto fail;
        }
    }
    const int32_t *trans = v[0].buf;
    const uint8_t *acc = v[1].buf, *node_byte = v[2].buf;
    const int16_t *depth = v[3].buf;
    const int32_t *skip = v[4].buf, *lo = v[5].buf, *own = v[6].buf, *token_ids = v[7].buf;
    const int32_t *roots = v[8].buf;
    int32_t *out_ok = v[9].buf, *out_nodes = v[10].buf, *out_states = v[11].buf;
    Py_ssize_t n_nodes = v[2].len, n_tok = v[7].len / 4, n_roots = v[8].len / 4;
    Py_ssize_t n_states = v[0].len / (4 * 256);
    if (start < 0 || start >= n_states || max_depth < 1 || v[9].len / 4 < n_tok ||
        v[10].len / 4 < n_nodes || v[11].len / 4 < n_nodes) {
        PyErr_SetString(PyExc_ValueError, "walk: bad start state, depth or output sizes");
        goto fail;
    }
    for (Py_ssize_t r = 0; r < n_roots; r++)
        if (roots[r] < 0 || roots[r] >= n_nodes) {
            PyErr_SetString(PyExc_ValueError, "walk: root out of range");
            goto fail;
        }
    int32_t *st = malloc(sizeof(int32_t) * (size_t)(max_depth + 1));
    if (!st) { PyErr_NoMemory(); goto fail; }
    Py_ssize_t n_ok = 0, n_cross = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < (n_roots ? n_roots : 1); r++) {
        Py_ssize_t i = n_roots ? roots[r] : 0;
        Py_ssize_t end = n_roots ? skip[i] : n_nodes;
        if (i >= end) continue;
        st[depth[i] - 1] = (int32_t)start;
        while (i < end) {
            int d = depth[i];
            int32_t s = st[d - 1];
            int32_t ns = trans[(int64_t)s * 256 + node_byte[i]];
            if (ns >= 0) {
                st[d] = ns;
                for (int32_t k = lo[i], e = lo[i] + own[i]; k < e; k++)
                    out_ok[n_ok++] = token_ids[k];
                i++;
            } else {
                if (acc[s]) {
                    out_nodes[n_cross] = (int32_t)i;
                    out_states[n_cross++] = s;
                }
                i = skip[i];
            }
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

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(trans, acc, start, node_byte, depth, skip, lo, own, token_ids, max_depth, roots, "
     "out_ok, out_nodes, out_states) -> (n_ok, n_cross)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walks",
                                    "Token walks through a lexer DFA (see _walks.c).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__walks(void) { return PyModule_Create(&module); }
