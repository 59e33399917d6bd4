/* cycle_flags(t, n, width, out): out[s] = 1 when a cycle of the table t (n rows of ``width``
 * successors, -1 = no edge) is reachable from state s, else 0. The states that reach none are
 * peeled off from the end (Kahn's algorithm on distinct successors: a state whose successors
 * are all peeled is peeled); the rest reach a cycle. O(n * width). Returns -1 when out of
 * memory. Shared by the automata tables (_dfa_tables.c, 256 bytes per row) and the lexer
 * products (cfg/_product.c, one column per byte class). */
#ifndef CONSTRAINED_CYCLES_H
#define CONSTRAINED_CYCLES_H

#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cycle_flags(const int32_t *t, Py_ssize_t n, Py_ssize_t width, uint8_t *out) {
    /* distinct edges per row (a stamp per target), then predecessors by target (CSR) */
    int32_t *stamp = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int32_t *deg = calloc((size_t)n + 1, sizeof(int32_t));
    int32_t *off = calloc((size_t)n + 2, sizeof(int32_t));
    int32_t *queue = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int32_t *pred = NULL;
    int status = -1;
    if (!stamp || !deg || !off || !queue) goto done;
    Py_ssize_t n_edges = 0;
    for (Py_ssize_t q = 0; q < n; q++) stamp[q] = -1;
    for (Py_ssize_t s = 0; s < n; s++) {
        const int32_t *row = t + s * width;
        for (Py_ssize_t c = 0; c < width; c++) {
            int32_t q = row[c];
            if (q >= 0 && stamp[q] != s) {
                stamp[q] = (int32_t)s;
                deg[s]++;
                off[q + 1]++;
                n_edges++;
            }
        }
    }
    for (Py_ssize_t q = 0; q < n; q++) off[q + 1] += off[q];
    pred = malloc(sizeof(int32_t) * (size_t)(n_edges + 1));
    if (!pred) goto done;
    for (Py_ssize_t q = 0; q < n; q++) stamp[q] = -1;
    memcpy(queue, off, sizeof(int32_t) * (size_t)n);   /* fill cursors, before the queue */
    for (Py_ssize_t s = 0; s < n; s++) {
        const int32_t *row = t + s * width;
        for (Py_ssize_t c = 0; c < width; c++) {
            int32_t q = row[c];
            if (q >= 0 && stamp[q] != s) {
                stamp[q] = (int32_t)s;
                pred[queue[q]++] = (int32_t)s;
            }
        }
    }
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
    free(stamp); free(deg); free(off); free(queue); free(pred);
    return status;
}

#endif
