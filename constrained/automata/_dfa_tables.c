/* C kernels over a DFA's transition table (int32[n, 256], -1 = dead).
 *
 * column_classes: bytes whose columns are equal (every state treats them alike) share a class,
 * numbered by first byte. Columns are hashed, and the classes the hashes give are checked row by
 * row (a collision falls back to comparing columns). class_columns also returns the table read
 * by class (one column per class).
 *
 * minimize_table: Hopcroft's partition refinement over those byte classes (a dead sink state
 * completes the table), then the classes reachable from the initial state numbered in
 * breadth-first order, bytes in ascending order: the canonical numbering, so equal languages
 * give equal tables; their rows are written renumbered into the caller's table. O(m n log n)
 * for n states and m byte classes. number_table is that numbering alone, for tables whose
 * states are pairwise inequivalent by construction.
 *
 * pair_product: the reachable pairs of two tables' states (a language difference or
 * intersection is then a choice of accepting pairs).
 *
 * cycle_reach: the states from which a cycle is reachable (infinitely many texts lead on). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_cycles.h"

/* Byte classes of t (n rows) by a hash of each column: with ``exact`` set, a column joins a
 * class only after a comparison with the class's first column (strided reads: slow on tall
 * tables); without, equal hashes are trusted here and checked afterwards. */
static int classes_by_hash(const int32_t *t, Py_ssize_t n, const uint32_t *h, int exact,
                           int32_t *cls, int *reps) {
    int m = 0;
    int slots[512];           /* open addressing on the hash: class ids, -1 empty */
    for (int i = 0; i < 512; i++) slots[i] = -1;
    for (int b = 0; b < 256; b++) {
        int c = -1;
        unsigned i = (unsigned)h[b] & 511;
        for (; slots[i] >= 0; i = (i + 1) & 511) {
            int rb = reps[slots[i]];
            if (h[rb] != h[b]) continue;
            Py_ssize_t s = 0;
            if (exact)
                while (s < n && t[s * 256 + rb] == t[s * 256 + b]) s++;
            if (!exact || s == n) {
                c = slots[i];
                break;
            }
        }
        if (c < 0) {
            c = m++;
            reps[c] = b;
            slots[i] = c;
        }
        cls[b] = c;
    }
    return m;
}

/* Byte classes of t (n rows): cls[b] for every byte, reps[c] the first byte of class c;
 * returns the number of classes. Classes are first taken from column hashes, then every row
 * is checked against its classes' first bytes (row by row: contiguous reads); a hash
 * collision between different columns sends it to the exact comparison. */
static int classes_of(const int32_t *t, Py_ssize_t n, int32_t *cls, int *reps) {
    /* 32-bit lanes and no data-dependent branch: the loops over bytes vectorize */
    uint32_t h[256];
    for (int b = 0; b < 256; b++) h[b] = 0x811C9DC5u;
    for (Py_ssize_t s = 0; s < n; s++) {
        const int32_t *row = t + s * 256;
        for (int b = 0; b < 256; b++) h[b] = (h[b] ^ (uint32_t)row[b]) * 0x01000193u;
    }
    for (int b = 0; b < 256; b++) h[b] ^= h[b] >> 15;
    int m = classes_by_hash(t, n, h, 0, cls, reps);
    int32_t first[256];
    for (int b = 0; b < 256; b++) first[b] = reps[cls[b]];
    int differ = 0;
    for (Py_ssize_t s = 0; s < n && !differ; s++) {
        const int32_t *row = t + s * 256;
        for (int b = 0; b < 256; b++) differ |= row[b] != row[first[b]];
    }
    return differ ? classes_by_hash(t, n, h, 1, cls, reps) : m;
}

/* Whether a transition of t (n rows) is neither -1 nor a row of t; sets ValueError naming the
 * caller when it is. Branch-free: the loop vectorizes. */
static int leads_outside(const int32_t *t, Py_ssize_t n, const char *name) {
    int outside = 0;
    for (Py_ssize_t i = 0; i < n * 256; i++) outside |= (uint32_t)t[i] + 1u > (uint32_t)n;
    if (outside) PyErr_Format(PyExc_ValueError, "%s: a transition leads outside the table", name);
    return outside;
}

/* The buffers of a call's n arrays, read contiguously: the first n_read read, the rest
 * written; 0, or -1 with an exception set (nothing held). */
static int get_buffers(PyObject *const *objs, Py_buffer *views, int n, int n_read) {
    for (int i = 0; i < n; i++) {
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (i < n_read ? 0 : PyBUF_WRITABLE);
        if (PyObject_GetBuffer(objs[i], &views[i], flags) < 0) {
            while (i--) PyBuffer_Release(&views[i]);
            return -1;
        }
    }
    return 0;
}

/* The two buffers of a call (table, output): a table read, an output written; 0, or -1 with
 * an exception set (nothing held). */
static int table_and_out(PyObject *args, Py_buffer *vt, Py_buffer *vo) {
    PyObject *objs[2];
    if (!PyArg_ParseTuple(args, "OO", &objs[0], &objs[1])) return -1;
    Py_buffer views[2];
    if (get_buffers(objs, views, 2, 1) < 0) return -1;
    *vt = views[0];
    *vo = views[1];
    return 0;
}

/* The byte classes of a table written to a caller's int32[256]; with ``columns``, the table
 * read by class comes back too (bytes of int32[n, m]: row s holds state s's target on the
 * first byte of each class; with the classes, the whole table in a short text to hash), else
 * the number of classes. */
static PyObject *classes_call(PyObject *args, const char *name, int columns) {
    Py_buffer vt, vo;
    if (table_and_out(args, &vt, &vo) < 0) return NULL;
    PyObject *result = NULL;
    if (vt.itemsize != 4 || vt.len % (4 * 256) || vo.itemsize != 4 || vo.len != 4 * 256) {
        PyErr_Format(PyExc_ValueError, "%s: expected int32[n, 256] and int32[256] buffers",
                     name);
        goto out;
    }
    Py_ssize_t n = vt.len / (4 * 256);
    const int32_t *t = vt.buf;
    int reps[256];
    int m = classes_of(t, n, vo.buf, reps);
    if (!columns) {
        result = PyLong_FromLong(m);
        goto out;
    }
    result = PyBytes_FromStringAndSize(NULL, 4 * n * m);
    if (!result) goto out;
    int32_t *dst = (int32_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t st = 0; st < n; st++)
        for (int c = 0; c < m; c++) dst[st * m + c] = t[st * 256 + reps[c]];
out:
    PyBuffer_Release(&vt);
    PyBuffer_Release(&vo);
    return result;
}

static PyObject *column_classes(PyObject *self, PyObject *args) {
    (void)self;
    return classes_call(args, "column_classes", 0);
}

static PyObject *class_columns(PyObject *self, PyObject *args) {
    (void)self;
    return classes_call(args, "class_columns", 1);
}

/* cycle_reach(t, out): out[s] = 1 when a cycle of t (n rows, -1 = no edge) is reachable from
 * state s, else 0 (``cycle_flags`` in _cycles.h). O(n * 256). */
static PyObject *cycle_reach(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer vt, vo;
    if (table_and_out(args, &vt, &vo) < 0) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = vt.len / (4 * 256);
    if (vt.itemsize != 4 || vt.len % (4 * 256) || vo.itemsize != 1 || vo.len != n) {
        PyErr_SetString(PyExc_ValueError,
                        "cycle_reach: expected int32[n, 256] and uint8[n] buffers");
        goto out;
    }
    if (leads_outside(vt.buf, n, "cycle_reach")) goto out;
    if (cycle_flags(vt.buf, n, 256, vo.buf) < 0) {
        PyErr_NoMemory();
        goto out;
    }
    result = Py_None;
    Py_INCREF(result);
out:
    PyBuffer_Release(&vt);
    PyBuffer_Release(&vo);
    return result;
}

/* future_rows(t, acc, q[, ends]): the part of t (n rows, -1 = no edge) reachable from state q,
 * its states numbered breadth-first from q (bytes ascending) as bytes of int32: per state, its
 * accepting flag, then its row as runs (end byte, exclusive; target's number or -1) up to 256.
 * Two states (of any tables) from which the same texts lead to acceptance give the same text
 * when their tables are minimal; different texts always mean different futures. ``ends``
 * (int32, increasing, last 256) cuts the bytes into runs on which every row is constant (the
 * runs of the table's byte classes): a row is then read a run at a time, not a byte. */
static PyObject *future_rows(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[3] = {NULL, NULL, NULL};
    long long q0;
    if (!PyArg_ParseTuple(args, "OOL|O", &objs[0], &objs[1], &q0, &objs[2])) return NULL;
    int nv = objs[2] ? 3 : 2;
    Py_buffer v[3];
    if (get_buffers(objs, v, nv, nv) < 0) return NULL;
    Py_buffer vt = v[0], va = v[1];
    PyObject *result = NULL;
    Py_ssize_t n = vt.len / (4 * 256);
    int32_t *ids = NULL, *order = NULL, *out = NULL;
    /* ends of the byte runs every row is constant on (all 256 bytes when not given) */
    int32_t all_ends[256];
    const int32_t *ends = all_ends;
    Py_ssize_t n_runs = 256;
    for (int b = 0; b < 256; b++) all_ends[b] = b + 1;
    int bad_runs = 0;
    if (nv == 3) {
        ends = v[2].buf;
        n_runs = v[2].len / 4;
        bad_runs = v[2].itemsize != 4 || n_runs < 1 || n_runs > 256 || ends[n_runs - 1] != 256;
        for (Py_ssize_t r = 0; r < n_runs && !bad_runs; r++)
            bad_runs = ends[r] <= (r ? ends[r - 1] : 0);
    }
    if (vt.itemsize != 4 || vt.len % (4 * 256) || va.itemsize != 1 || va.len != n || q0 < 0 ||
        q0 >= n || bad_runs) {
        PyErr_SetString(PyExc_ValueError,
                        "future_rows: expected int32[n, 256], bool[n], 0 <= q < n and "
                        "increasing int32 run ends up to 256");
        goto done;
    }
    const int32_t *t = vt.buf;
    const uint8_t *acc = va.buf;
    ids = malloc(sizeof(int32_t) * n);
    order = malloc(sizeof(int32_t) * n);
    Py_ssize_t cap = 1024, len = 0;
    out = malloc(sizeof(int32_t) * cap);
    if (!ids || !order || !out) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t s = 0; s < n; s++) ids[s] = -1;
    Py_ssize_t k = 0;
    ids[q0] = 0;
    order[k++] = (int32_t)q0;
    for (Py_ssize_t i = 0; i < k; i++) {
        const int32_t *row = t + (Py_ssize_t)order[i] * 256;
        if (len + 1 + 2 * 256 > cap) {
            cap = 2 * cap + 1 + 2 * 256;
            int32_t *grown = realloc(out, sizeof(int32_t) * cap);
            if (!grown) {
                PyErr_NoMemory();
                goto done;
            }
            out = grown;
        }
        out[len++] = acc[order[i]] != 0;
        for (Py_ssize_t r = 0; r < n_runs; r++) {
            int b = r ? ends[r - 1] : 0;     /* the run's bytes all lead to row[b] */
            int32_t x = row[b];
            if (x < -1 || x >= n) {
                PyErr_SetString(PyExc_ValueError,
                                "future_rows: a transition leads outside the table");
                goto done;
            }
            if (x >= 0 && ids[x] < 0) {
                ids[x] = (int32_t)k;
                order[k++] = x;
            }
            if (r == n_runs - 1 || row[ends[r]] != x) {     /* a run of one target ends */
                out[len++] = ends[r];
                out[len++] = x < 0 ? -1 : ids[x];
            }
        }
    }
    result = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)(4 * len));
done:
    free(ids);
    free(order);
    free(out);
    for (int i = 0; i < nv; i++) PyBuffer_Release(&v[i]);
    return result;
}

/* Hopcroft's refinement on t (n states, -1 = dead) completed by a sink state n, over the m byte
 * classes whose first bytes are rb. On return blk[s] is the block of state s (s <= n).
 * Returns the number of blocks, or -1 when out of memory. */
static Py_ssize_t refine(const int32_t *t, const uint8_t *acc, Py_ssize_t n, int m,
                         const int *rb, int32_t *blk) {
    Py_ssize_t N = n + 1, total = N * m;
    int32_t *elems = malloc(sizeof(int32_t) * N), *pos = malloc(sizeof(int32_t) * N);
    int32_t *bstart = malloc(sizeof(int32_t) * N), *bend = malloc(sizeof(int32_t) * N);
    int32_t *bmark = calloc(N, sizeof(int32_t)), *touched = malloc(sizeof(int32_t) * N);
    int32_t *off = calloc(total + 1, sizeof(int32_t)), *src = malloc(sizeof(int32_t) * total);
    int32_t *work = malloc(sizeof(int32_t) * 2 * total), *tmp = malloc(sizeof(int32_t) * N);
    uint8_t *in_w = calloc(total, 1);
    Py_ssize_t nb = -1;
    if (!elems || !pos || !bstart || !bend || !bmark || !touched || !off || !src || !work || !tmp
        || !in_w)
        goto done;
    /* predecessors by (class, target): off[c * N + q] .. off[c * N + q + 1] in src */
    for (Py_ssize_t p = 0; p < N; p++)
        for (int c = 0; c < m; c++) {
            int32_t q = p < n ? t[p * 256 + rb[c]] : -1;
            off[c * N + (q < 0 ? n : q) + 1]++;
        }
    for (Py_ssize_t i = 0; i < total; i++) off[i + 1] += off[i];
    {
        int32_t *fill = malloc(sizeof(int32_t) * total);
        if (!fill) goto done;
        memcpy(fill, off, sizeof(int32_t) * total);
        for (Py_ssize_t p = 0; p < N; p++)
            for (int c = 0; c < m; c++) {
                int32_t q = p < n ? t[p * 256 + rb[c]] : -1;
                src[fill[c * N + (q < 0 ? n : q)]++] = (int32_t)p;
            }
        free(fill);
    }
    /* initial partition: accepting states first, then the others (the sink among them) */
    Py_ssize_t n_acc = 0;
    for (Py_ssize_t s = 0; s < n; s++) n_acc += acc[s] != 0;
    Py_ssize_t ia = 0, ir = n_acc;
    for (Py_ssize_t s = 0; s < N; s++) {
        Py_ssize_t i = (s < n && acc[s]) ? ia++ : ir++;
        elems[i] = (int32_t)s;
        pos[s] = (int32_t)i;
    }
    nb = 0;
    if (n_acc) {
        bstart[nb] = 0;
        bend[nb++] = (int32_t)n_acc;
    }
    bstart[nb] = (int32_t)n_acc;
    bend[nb++] = (int32_t)N;
    for (Py_ssize_t b = 0; b < nb; b++)
        for (Py_ssize_t i = bstart[b]; i < bend[b]; i++) blk[elems[i]] = (int32_t)b;
    Py_ssize_t nw = 0;
    if (nb == 2) {
        int32_t small = (bend[0] - bstart[0] <= bend[1] - bstart[1]) ? 0 : 1;
        for (int c = 0; c < m; c++) {
            work[nw++] = small * m + c;
            in_w[small * m + c] = 1;
        }
    }
    while (nw) {
        int32_t item = work[--nw];
        in_w[item] = 0;
        int32_t a = item / m, c = item % m;
        Py_ssize_t na = bend[a] - bstart[a];
        memcpy(tmp, elems + bstart[a], sizeof(int32_t) * na);
        Py_ssize_t nt = 0;
        for (Py_ssize_t i = 0; i < na; i++) {
            int32_t q = tmp[i];
            for (int32_t j = off[c * N + q]; j < off[c * N + q + 1]; j++) {
                int32_t p = src[j], b = blk[p];
                int32_t first = bstart[b] + bmark[b];
                if (pos[p] < first) continue;          /* marked already */
                int32_t other = elems[first];
                elems[first] = p;
                elems[pos[p]] = other;
                pos[other] = pos[p];
                pos[p] = first;
                if (bmark[b]++ == 0) touched[nt++] = b;
            }
        }
        for (Py_ssize_t i = 0; i < nt; i++) {
            int32_t b = touched[i], marked = bmark[b];
            bmark[b] = 0;
            if (marked == bend[b] - bstart[b]) continue;
            int32_t z = (int32_t)nb++;             /* the marked part becomes block z */
            bstart[z] = bstart[b];
            bend[z] = bstart[b] + marked;
            bstart[b] = bend[z];
            for (int32_t j = bstart[z]; j < bend[z]; j++) blk[elems[j]] = z;
            int32_t small = (bend[z] - bstart[z] <= bend[b] - bstart[b]) ? z : b;
            for (int d = 0; d < m; d++) {
                int32_t add = in_w[b * m + d] ? z : small;
                if (!in_w[add * m + d]) {
                    in_w[add * m + d] = 1;
                    work[nw++] = add * m + d;
                }
            }
        }
    }
done:
    free(elems); free(pos); free(bstart); free(bend); free(bmark); free(touched);
    free(off); free(src); free(work); free(tmp); free(in_w);
    return nb;
}

/* Numbers the blocks reachable from the initial state's (blk[s] is state s's block, blk[n]
 * the sink's, nb blocks), breadth-first, bytes ascending (the m classes with first bytes rb):
 * ids[s] gets state s's number (-1: dead), reps[i] a state of number i, out[i] that state's row
 * renumbered. Returns the count k, or -1 when out of memory. */
static Py_ssize_t number_blocks(const int32_t *t, Py_ssize_t n, int m, const int *rb,
                                const int32_t *blk, Py_ssize_t nb, int initial, int32_t *ids,
                                int32_t *reps, int32_t *o) {
    int32_t *number = malloc(sizeof(int32_t) * nb), *order = malloc(sizeof(int32_t) * nb);
    int32_t *rep = malloc(sizeof(int32_t) * nb);
    if (!number || !order || !rep) {
        free(number); free(order); free(rep);
        return -1;
    }
    for (Py_ssize_t b = 0; b < nb; b++) number[b] = -1;
    for (Py_ssize_t s = n - 1; s >= 0; s--) rep[blk[s]] = (int32_t)s;
    int32_t sink = blk[n];
    Py_ssize_t k = 0;
    if (blk[initial] != sink) {
        order[k] = blk[initial];
        number[blk[initial]] = (int32_t)k++;
        for (Py_ssize_t i = 0; i < k; i++) {
            const int32_t *row = t + (Py_ssize_t)rep[order[i]] * 256;
            int32_t prev = -1;      /* rows are mostly runs of one target */
            for (int c = 0; c < m; c++) {
                if (m == 256 && (c & 7) == 0) {
                    /* every byte its own class: eight bytes of the run at once */
                    int same = 1;
                    for (int j = 0; j < 8; j++) same &= row[c + j] == prev;
                    if (same) {
                        c += 7;
                        continue;
                    }
                }
                int32_t q = row[m == 256 ? c : rb[c]];
                if (q == prev) continue;
                prev = q;
                if (q < 0) continue;
                int32_t b = blk[q];
                if (b != sink && number[b] < 0) {
                    order[k] = b;
                    number[b] = (int32_t)k++;
                }
            }
        }
    }
    /* number[-1] reads -1 for a dead transition: the renumbering below has no branch */
    int32_t *shifted = malloc(sizeof(int32_t) * (n + 1));
    if (!shifted) {
        free(number); free(order); free(rep);
        return -1;
    }
    shifted[0] = -1;
    for (Py_ssize_t s = 0; s < n; s++)
        ids[s] = shifted[s + 1] = blk[s] == sink ? -1 : number[blk[s]];
    for (Py_ssize_t i = 0; i < k; i++) reps[i] = rep[order[i]];
    /* row i of the numbered table: state reps[i]'s row, targets renumbered */
    for (Py_ssize_t i = 0; i < k; i++) {
        const int32_t *row = t + (Py_ssize_t)reps[i] * 256;
        for (int b = 0; b < 256; b++) o[i * 256 + b] = shifted[row[b] + 1];
    }
    free(number); free(order); free(rep); free(shifted);
    return k;
}

/* The arguments of minimize_table and number_table, checked; returns the table's row count,
 * or -1 with an exception set. */
static Py_ssize_t table_args(PyObject *args, const char *name, PyObject **objs, Py_buffer *v,
                             int *initial) {
    if (!PyArg_ParseTuple(args, "OOiOOO", &objs[0], &objs[1], initial, &objs[2], &objs[3],
                          &objs[4]))
        return -1;
    if (get_buffers(objs, v, 5, 2) < 0) return -1;
    Py_ssize_t n = v[0].len / (4 * 256);
    if (v[0].itemsize != 4 || v[0].len % (4 * 256) || v[1].itemsize != 1 || v[1].len != n
        || v[2].itemsize != 4 || v[2].len != 4 * n || v[3].itemsize != 4 || v[3].len != 4 * n
        || v[4].itemsize != 4 || v[4].len != v[0].len || *initial < 0 || *initial >= n) {
        PyErr_Format(PyExc_ValueError, "%s: expected int32[n, 256], bool[n], 0 <= initial < n, "
                     "int32[n], int32[n], int32[n, 256]", name);
    } else if (!leads_outside(v[0].buf, n, name)) {
        return n;
    }
    for (int i = 0; i < 5; i++) PyBuffer_Release(&v[i]);
    return -1;
}

/* The result of minimize_table and number_table: the count k, or MemoryError when it is
 * negative; the call's five buffers released. */
static PyObject *numbered(Py_ssize_t k, Py_buffer *v) {
    PyObject *result = k < 0 ? PyErr_NoMemory() : PyLong_FromSsize_t(k);
    for (int i = 0; i < 5; i++) PyBuffer_Release(&v[i]);
    return result;
}

static PyObject *minimize_table(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[5];      /* transitions, accepting; then ids, reps, out (written) */
    Py_buffer v[5];
    int initial;
    Py_ssize_t n = table_args(args, "minimize_table", objs, v, &initial);
    if (n < 0) return NULL;
    const int32_t *t = v[0].buf;
    int32_t cls[256];
    int rb[256];
    int m = classes_of(t, n, cls, rb);
    int32_t *blk = malloc(sizeof(int32_t) * (n + 1));
    Py_ssize_t nb = blk ? refine(t, v[1].buf, n, m, rb, blk) : -1;
    Py_ssize_t k = nb < 0 ? -1 : number_blocks(t, n, m, rb, blk, nb, initial, v[2].buf,
                                               v[3].buf, v[4].buf);
    free(blk);
    return numbered(k, v);
}

/* number_table: minimize_table's numbering of a table whose states are pairwise
 * inequivalent already (no refinement: only the states reachable from the initial state,
 * renumbered breadth-first, bytes ascending). */
static PyObject *number_table(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[5];
    Py_buffer v[5];
    int initial;
    Py_ssize_t n = table_args(args, "number_table", objs, v, &initial);
    if (n < 0) return NULL;
    int rb[256];
    for (int b = 0; b < 256; b++) rb[b] = b;
    int32_t *blk = malloc(sizeof(int32_t) * (n + 1));
    Py_ssize_t k = -1;
    if (blk) {
        for (Py_ssize_t s = 0; s <= n; s++) blk[s] = (int32_t)s;
        k = number_blocks(v[0].buf, n, 256, rb, blk, n + 1, initial, v[2].buf, v[3].buf,
                          v[4].buf);
    }
    free(blk);
    return numbered(k, v);
}

/* The product of tables a (na rows) and b (nb rows): pairs (qa, qb) reachable from (a0, b0),
 * breadth first, bytes ascending; a pair lives while a does (qb = -1 once b is dead). Fills
 * *trans (int32[k, 256], -1 = dead) and *pairs (int32[k, 2]); returns k, -1 past max_states
 * pairs, -2 out of memory. */
static Py_ssize_t product_pairs(const int32_t *a, const int32_t *b, int32_t a0, int32_t b0,
                                Py_ssize_t nb, Py_ssize_t max_states, int32_t **trans,
                                int32_t **pairs) {
    Py_ssize_t cap = 1024, k = 0, slots = 4096;
    int32_t *t = malloc(sizeof(int32_t) * 256 * cap), *pr = malloc(sizeof(int32_t) * 2 * cap);
    int64_t *keys = malloc(sizeof(int64_t) * slots);
    int32_t *vals = malloc(sizeof(int32_t) * slots);
    if (!t || !pr || !keys || !vals) goto oom;
    for (Py_ssize_t i = 0; i < slots; i++) keys[i] = -1;
#define PAIR_KEY(x, y) ((int64_t)(x) * (int64_t)(nb + 1) + (int64_t)(y) + 1)
    {
        int64_t key = PAIR_KEY(a0, b0);
        Py_ssize_t i = (Py_ssize_t)((uint64_t)key * 0x9E3779B97F4A7C15ULL >> 20) & (slots - 1);
        keys[i] = key;
        vals[i] = 0;
        pr[0] = a0;
        pr[1] = b0;
        k = 1;
    }
    for (Py_ssize_t s = 0; s < k; s++) {
        const int32_t *ra = a + (Py_ssize_t)pr[2 * s] * 256;
        int32_t qb = pr[2 * s + 1];
        const int32_t *rb = qb >= 0 ? b + (Py_ssize_t)qb * 256 : NULL;
        for (int c = 0; c < 256; c++) {
            int32_t x = ra[c];
            if (x < 0) {
                t[s * 256 + c] = -1;
                continue;
            }
            int32_t y = rb ? rb[c] : -1;
            int64_t key = PAIR_KEY(x, y);
            Py_ssize_t i = (Py_ssize_t)((uint64_t)key * 0x9E3779B97F4A7C15ULL >> 20) & (slots - 1);
            while (keys[i] >= 0 && keys[i] != key) i = (i + 1) & (slots - 1);
            if (keys[i] < 0) {
                if (k >= max_states) {
                    free(t); free(pr); free(keys); free(vals);
                    return -1;
                }
                if (k == cap) {
                    cap *= 2;
                    int32_t *t2 = realloc(t, sizeof(int32_t) * 256 * cap);
                    if (!t2) goto oom;
                    t = t2;
                    int32_t *p2 = realloc(pr, sizeof(int32_t) * 2 * cap);
                    if (!p2) goto oom;
                    pr = p2;
                }
                keys[i] = key;
                vals[i] = (int32_t)k;
                pr[2 * k] = x;
                pr[2 * k + 1] = y;
                k++;
                if (2 * k > slots) {            /* keep the table at most half full */
                    Py_ssize_t ns = slots * 2;
                    int64_t *nk = malloc(sizeof(int64_t) * ns);
                    int32_t *nv = malloc(sizeof(int32_t) * ns);
                    if (!nk || !nv) {
                        free(nk); free(nv);
                        goto oom;
                    }
                    for (Py_ssize_t j = 0; j < ns; j++) nk[j] = -1;
                    for (Py_ssize_t j = 0; j < slots; j++) {
                        if (keys[j] < 0) continue;
                        Py_ssize_t h = (Py_ssize_t)((uint64_t)keys[j] * 0x9E3779B97F4A7C15ULL
                                                    >> 20) & (ns - 1);
                        while (nk[h] >= 0) h = (h + 1) & (ns - 1);
                        nk[h] = keys[j];
                        nv[h] = vals[j];
                    }
                    free(keys); free(vals);
                    keys = nk; vals = nv; slots = ns;
                    t[s * 256 + c] = (int32_t)(k - 1);
                    continue;
                }
            }
            t[s * 256 + c] = vals[i];
        }
    }
#undef PAIR_KEY
    free(keys); free(vals);
    *trans = t;
    *pairs = pr;
    return k;
oom:
    free(t); free(pr); free(keys); free(vals);
    return -2;
}

static PyObject *pair_product(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[2];
    int a0, b0;
    Py_ssize_t max_states;
    if (!PyArg_ParseTuple(args, "OOiin", &objs[0], &objs[1], &a0, &b0, &max_states))
        return NULL;
    Py_buffer v[2];
    if (get_buffers(objs, v, 2, 2) < 0) return NULL;
    Py_buffer va = v[0], vb = v[1];
    PyObject *result = NULL;
    Py_ssize_t na = va.len / (4 * 256), nb = vb.len / (4 * 256);
    if (va.itemsize != 4 || va.len % (4 * 256) || vb.itemsize != 4 || vb.len % (4 * 256)
        || a0 < 0 || a0 >= na || b0 < -1 || b0 >= nb || max_states < 1) {
        PyErr_SetString(PyExc_ValueError, "pair_product: expected int32[na, 256], "
                        "int32[nb, 256], 0 <= a0 < na, -1 <= b0 < nb, max_states >= 1");
        goto out;
    }
    const int32_t *a = va.buf, *b = vb.buf;
    for (Py_ssize_t i = 0; i < na * 256; i++)
        if (a[i] < -1 || a[i] >= na) {
            PyErr_SetString(PyExc_ValueError, "pair_product: a transition leads outside a");
            goto out;
        }
    for (Py_ssize_t i = 0; i < nb * 256; i++)
        if (b[i] < -1 || b[i] >= nb) {
            PyErr_SetString(PyExc_ValueError, "pair_product: a transition leads outside b");
            goto out;
        }
    int32_t *trans = NULL, *pairs = NULL;
    Py_ssize_t k = product_pairs(a, b, a0, b0, nb, max_states, &trans, &pairs);
    if (k == -1) {
        result = Py_None;
        Py_INCREF(result);
        goto out;
    }
    if (k < 0) {
        PyErr_NoMemory();
        goto out;
    }
    PyObject *tb = PyBytes_FromStringAndSize((const char *)trans, (Py_ssize_t)(4 * 256 * k));
    PyObject *pb = PyBytes_FromStringAndSize((const char *)pairs, (Py_ssize_t)(4 * 2 * k));
    free(trans);
    free(pairs);
    if (tb && pb) result = PyTuple_Pack(2, tb, pb);
    Py_XDECREF(tb);
    Py_XDECREF(pb);
out:
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return result;
}

static PyMethodDef methods[] = {
    {"column_classes", column_classes, METH_VARARGS,
     "column_classes(transitions int32[n, 256], out int32[256]) -> number of classes"},
    {"class_columns", class_columns, METH_VARARGS,
     "class_columns(transitions int32[n, 256], out int32[256]) -> bytes of int32[n, classes]: "
     "the classes written to out, and each state's target on the first byte of each class"},
    {"cycle_reach", cycle_reach, METH_VARARGS,
     "cycle_reach(transitions int32[n, 256], out uint8[n]): out[s] = 1 when a cycle is "
     "reachable from state s"},
    {"future_rows", future_rows, METH_VARARGS,
     "future_rows(transitions int32[n, 256], accepting bool[n], q[, run_ends int32]) -> bytes: "
     "the table read "
     "from q, numbered breadth-first from it (see _dfa_tables.c)"},
    {"minimize_table", minimize_table, METH_VARARGS,
     "minimize_table(transitions int32[n, 256], accepting bool[n], initial, ids int32[n], "
     "reps int32[n], out int32[n, 256]) -> k: ids[s] is state s's number in the minimal DFA "
     "(-1: dead), reps[:k] a state of each number, out[:k] the minimal table"},
    {"number_table", number_table, METH_VARARGS,
     "number_table(transitions, accepting, initial, ids, reps, out) -> k: minimize_table's "
     "output for a table with no two equivalent states (numbering only)"},
    {"pair_product", pair_product, METH_VARARGS,
     "pair_product(a int32[na, 256], b int32[nb, 256], a0, b0, max_states) -> (transitions "
     "bytes of int32[k, 256], pairs bytes of int32[k, 2]) of the pairs reachable from (a0, b0) "
     "while a lives (b's state -1 once dead), or None past max_states pairs"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dfa_tables",
                                    "C kernels over DFA tables (see _dfa_tables.c).", -1,
                                    methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__dfa_tables(void) { return PyModule_Create(&module); }
