/* cycle_flags(t, n, width, out): out[s] = 1 when a cycle of the table t (n rows of ``width``
 * successors, -1 = no edge) is reachable from state s, else 0. The states that reach none are
 * peeled off from the end (Kahn's algorithm on distinct successors: a state whose successors
 * are all peeled is peeled); the rest reach a cycle. O(n * width), width <= 256. Returns -1
 * when out of memory. Shared by the automata tables (_dfa_tables.c, 256 bytes per row) and
 * the lexer products (cfg/_product.c, one column per byte class). */
#ifndef CONSTRAINED_CYCLES_H
#define CONSTRAINED_CYCLES_H

#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The distinct successors of row s (``width`` entries, -1 = no edge) into out[0..count);
 * ``stamp`` marks the targets already taken for this row. */
static inline Py_ssize_t distinct_successors(const int32_t *row, Py_ssize_t width, int32_t s,
                                             int32_t *stamp, int32_t *out) {
    Py_ssize_t m = 0;
    for (Py_ssize_t c = 0; c < width; c++) {
        int32_t q = row[c];
        if (q >= 0 && stamp[q] != s) {
            stamp[q] = s;
            out[m++] = q;
        }
    }
    return m;
}

static int cycle_flags(const int32_t *t, Py_ssize_t n, Py_ssize_t width, uint8_t *out) {
    if (width > 256) return -1;
    /* one read of the table: each row's distinct successors in ``edges`` (rows in order, the
     * row's out-degree in deg), then predecessors by target (CSR over ``pred``) */
    int32_t *stamp = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int32_t *deg = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int32_t *off = calloc((size_t)n + 2, sizeof(int32_t));
    int32_t *queue = malloc(sizeof(int32_t) * (size_t)(n + 1));
    Py_ssize_t cap = 4 * n + 256;
    int32_t *edges = malloc(sizeof(int32_t) * (size_t)cap);
    int32_t *pred = NULL;
    int status = -1;
    if (!stamp || !deg || !off || !queue || !edges) goto done;
    Py_ssize_t n_edges = 0;
    for (Py_ssize_t q = 0; q < n; q++) stamp[q] = -1;
    for (Py_ssize_t s = 0; s < n; s++) {
        if (n_edges + width > cap) {
            cap = 2 * cap + width;
            int32_t *grown = realloc(edges, sizeof(int32_t) * (size_t)cap);
            if (!grown) goto done;
            edges = grown;
        }
        Py_ssize_t m = distinct_successors(t + s * width, width, (int32_t)s, stamp,
                                           edges + n_edges);
        deg[s] = (int32_t)m;
        for (Py_ssize_t i = 0; i < m; i++) off[edges[n_edges + i] + 1]++;
        n_edges += m;
    }
    for (Py_ssize_t q = 0; q < n; q++) off[q + 1] += off[q];
    pred = malloc(sizeof(int32_t) * (size_t)(n_edges + 1));
    if (!pred) goto done;
    memcpy(queue, off, sizeof(int32_t) * (size_t)n);   /* fill cursors, then the queue */
    for (Py_ssize_t s = 0, e = 0; s < n; s++)
        for (int32_t i = 0; i < deg[s]; i++, e++) pred[queue[edges[e]]++] = (int32_t)s;
    Py_ssize_t head = 0, tail = 0;
    for (Py_ssize_t s = 0; s < n; s++) {
        out[s] = 1;
        if (!deg[s]) queue[tail++] = (int32_t)s;
    }
    while (head < tail) {
        int32_t q = queue[head++];
        out[q] = 0;
        for (int32_t j = off[q]; j < off[q + 1]; j++)
            if (--deg[pred[j]] == 0) queue[tail++] = pred[j];
    }
    status = 0;
done:
    free(stamp); free(deg); free(off); free(queue); free(edges); free(pred);
    return status;
}

#endif
