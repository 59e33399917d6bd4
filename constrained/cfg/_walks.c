/* Token walks through a lexer DFA over the vocabulary's token trie, in C: the inner loop of
 * every CFG mask.
 *
 * The trie's nodes are numbered in preorder, so a node's subtree is the range
 * [node, skip[node]) and a walk reads the node arrays front to back, jumping over the subtree
 * of a dead node. Tokens are in byte order: a node's tokens are a span of ``token_ids``
 * starting at lo[node], and the own[node] tokens ending exactly at the node come first.
 *
 * walk(trans, cross, start, roots, ..., byte_class) reads, from lexer state ``start`` (``trans``:
 * the successors per byte class, see Lex), either every text
 * token (roots empty: the whole trie) or the subtrees of ``roots`` (each root's byte read first:
 * the token remainders that start at the root's depth). Each trie node reached is
 *   - alive: the lexer continues; the tokens ending there are ok (the lexeme may go on later);
 *   - crossing in state q: its byte cannot extend the lexeme, which is a full match in q
 *     (cross[q] >= 0: the class of the terminals it completes);
 *     the next lexeme starts at that byte, for every token below the node;
 *   - dead otherwise: its tokens are not viable.
 * Two shortcuts take every token below a node as ok without visiting it: the subtree's bytes
 * (a 256-bit set per node, ``sub_sets[sub_id[node]]``) all loop on the current lexer state; or
 * the subtree is text of a reference automaton (``text``: JSON string characters, UTF-8 included; ``clean``:
 * the nodes whose subtrees it reads from ``text_start``) and the lexer state simulates it
 * (checked once per lexer state, remembered in ``sim``).
 * A walk of the whole trie into words also uses text slices: when the start state survives
 * every text of up to K characters (``text_chars``, once per lexer state; K = ``cap`` for a
 * plain string body, the characters left for a counted one), the first slice node on a path
 * (``slice_chars``: nodes whose subtree is text reached by whole characters, with the most
 * characters of a token below) whose tokens have at most K characters is skipped, and every
 * slice token of at most K characters is ORed at once (``text_slice`` row K). When K is tight
 * (no text of K + 1 characters survives: a counted string near its end), every slice node is
 * skipped: its longer tokens are dropped anyway. When instead every text of more than K
 * characters crosses at the first byte of its character K + 1 into one class (uniform: the
 * end of a long string's chunk), every slice node is skipped too and one marker, crossing
 * node -1 - K of that class, stands for the crossings of all slice tokens of more than K
 * characters (the caller reads their remainders with text_slice rows, see token_tables).
 * Any walk also takes whole every subtree entered in its start state whose tokens are text
 * of at most K bytes from there on (``rest``: the most bytes of a token from a node's byte
 * on): the remainders of tokens whose lexeme ended before them, read by a counted string (a
 * long string's next chunk, say) that reads any K characters.
 * Its cost is the number of nodes reached, never the vocabulary size. Arrays come in through
 * the buffer protocol (numpy); ok tokens go to a caller's bitmask or come back as int32 bytes,
 * crossing nodes as int32 bytes grouped by class.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

enum { N_BUF = 23 };

/* A lexer's transitions per byte class: the state after byte b in state s is
 * t[s * width + cls[b]] (-1 dead). */
typedef struct {
    const int32_t *t, *cls;
    Py_ssize_t width;
} Lex;

/* the table width of byte classes ``cls`` (numbered from 0), or -1 when they are not */
static Py_ssize_t class_width(const int32_t *cls) {
    int32_t most = -1;
    for (int b = 0; b < 256; b++) {
        if (cls[b] < 0 || cls[b] > 255) return -1;
        if (cls[b] > most) most = cls[b];
    }
    return most + 1;
}

/* Whether lexer state s stays alive on every text the reference automaton ``text`` reads from
 * r0 (a simulation: every reachable pair (r, x) has x alive wherever r is). On success every
 * lexer state paired with r0 simulates it too and is marked in sim. -1 on memory error. */
/* Acquire C-contiguous buffers of objs[0..n), writable from index first_writable on; on
 * failure none is held and -1 is returned with the error set. */
static int get_buffers(PyObject **objs, Py_buffer *v, int n, int first_writable) {
    for (int got = 0; got < n; got++) {
        int flags = PyBUF_C_CONTIGUOUS | (got >= first_writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objs[got], &v[got], flags) < 0) {
            for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
            return -1;
        }
    }
    return 0;
}

static int simulates(const Lex *lex, Py_ssize_t n_states, const int32_t *text,
                     Py_ssize_t n_text, int32_t r0, int32_t s, int8_t *sim) {
    size_t n_pairs = (size_t)n_text * (size_t)n_states;
    uint8_t *seen = calloc(n_pairs, 1);
    int32_t *stack = malloc(sizeof(int32_t) * 2 * (n_pairs + 1));
    if (!seen || !stack) {
        free(seen);
        free(stack);
        return -1;
    }
    Py_ssize_t sp = 0;
    int ok = 1;
    stack[sp++] = r0;
    stack[sp++] = s;
    seen[(size_t)r0 * n_states + s] = 1;
    while (sp && ok) {
        int32_t x = stack[--sp], r = stack[--sp];
        const int32_t *tr = text + (int64_t)r * 256, *lx = lex->t + (int64_t)x * lex->width;
        for (int b = 0; b < 256; b++) {
            if (tr[b] < 0) continue;
            int32_t nx = lx[lex->cls[b]];
            if (nx < 0) { ok = 0; break; }
            size_t key = (size_t)tr[b] * n_states + nx;
            if (!seen[key]) {
                seen[key] = 1;
                stack[sp++] = tr[b];
                stack[sp++] = nx;
            }
        }
    }
    if (ok)
        for (Py_ssize_t x = 0; x < n_states; x++)
            if (seen[(size_t)r0 * n_states + x]) sim[x] = 1;
    free(seen);
    free(stack);
    return ok;
}

/* One byte of each class of bytes that a search over pairs (text state, lexer state) cannot
 * tell apart: equal lexer class and equal move in every text state. chars_read reads these
 * instead of all 256 bytes (a JSON string's text and a lexer reading it share most classes:
 * 20 to 40 bytes stand for the 256). Found once per walk, when first needed (n < 0 until). */
typedef struct {
    int n;
    uint8_t b[256];
} PairBytes;

static void pair_bytes(const Lex *lex, const int32_t *text, Py_ssize_t n_text, PairBytes *out) {
    uint64_t h[256];
    int16_t slot[512];      /* open addressing on the hash: a byte standing for its class */
    for (int j = 0; j < 512; j++) slot[j] = -1;
    out->n = 0;
    for (int b = 0; b < 256; b++) {
        uint64_t x = (uint64_t)(uint32_t)lex->cls[b] * 0x9E3779B97F4A7C15ULL + 1;
        for (Py_ssize_t r = 0; r < n_text; r++)
            x = (x ^ (uint64_t)(uint32_t)text[r * 256 + b]) * 0x100000001B3ULL;
        h[b] = x;
        for (size_t j = (size_t)(x >> 55);; j = (j + 1) & 511) {
            int a = slot[j];
            if (a < 0) {
                slot[j] = (int16_t)b;
                out->b[out->n++] = (uint8_t)b;
                break;
            }
            if (h[a] != x || lex->cls[a] != lex->cls[b]) continue;
            int same = 1;
            for (Py_ssize_t r = 0; r < n_text && same; r++)
                same = text[r * 256 + a] == text[r * 256 + b];
            if (same) break;
        }
    }
}

/* What lexer state s does with text the reference automaton ``text`` reads from r0 (r0:
 * between characters; a byte read from r0 starts a character), counted in characters started:
 * K, the most characters k <= cap such that s stays alive on every prefix of every text of k
 * characters; and whether the count is tight: no text of K + 1 characters keeps s alive and s
 * never dies on a text byte in a state that completes a lexeme (so a text token of more than K
 * characters is dropped, never crosses); claimed only where no pair is reached by texts of two
 * lengths. A breadth-first search over pairs (text state, lexer
 * state) by characters started (a pair keeps the fewest characters it is reached with).
 * The count is uniform when every text of more than K characters crosses at the first byte
 * of its character K + 1, in a state completing the same class (*cls): every pair reached
 * with K whole characters is a full match of that class that no text byte extends, and no
 * pair is reached by texts of two lengths (a counted string's chunk that ends at K: its longer
 * text tokens all go on in the next lexeme at the same place).
 * Returns K | tight << 8 | uniform << 9, or -1 on memory error. */
static int chars_read(const Lex *lex, const int32_t *cross, Py_ssize_t n_states,
                      const int32_t *text, Py_ssize_t n_text, int32_t r0, int32_t s, int cap,
                      int32_t *cls, PairBytes *pairs) {
    if (pairs->n < 0) pair_bytes(lex, text, n_text, pairs);
    const uint8_t *reps = pairs->b;
    int n_reps = pairs->n;
    size_t n_pairs = (size_t)n_text * (size_t)n_states;
    uint16_t *level = calloc(n_pairs, sizeof(uint16_t));     /* 0 unseen, else level + 1 */
    int32_t *cur = malloc(sizeof(int32_t) * 2 * (n_pairs + 1));
    int32_t *next = malloc(sizeof(int32_t) * 2 * (n_pairs + 1));
    if (!level || !cur || !next) {
        free(level);
        free(cur);
        free(next);
        return -1;
    }
    Py_ssize_t n_cur = 0, n_next = 0;
    cur[n_cur++] = r0;
    cur[n_cur++] = s;
    level[(size_t)r0 * n_states + s] = 1;
    int k = -1, last = 0, crosses = 0, c = 0;
    int multi = 0, mixed = 0, most_fails = -1;   /* against a uniform count */
    int32_t death_cls = -1;
    /* level c: pairs reached by texts of c started characters (a stack: weight-0 moves) */
    for (; c <= cap + 1 && n_cur; c++) {
        last = c;
        while (n_cur) {
            int32_t x = cur[--n_cur], r = cur[--n_cur];
            if (level[(size_t)r * n_states + x] != c + 1) continue;   /* reached earlier */
            const int32_t *tr = text + (int64_t)r * 256, *lx = lex->t + (int64_t)x * lex->width;
            int starts = r == r0;
            for (int j = 0; j < n_reps; j++) {
                int b = reps[j];
                if (tr[b] < 0) continue;
                int32_t nx = lx[lex->cls[b]];
                if (nx < 0) {
                    /* dies in character c + 1 (a new one) or c (the one being read) */
                    int fails = starts ? c : c - 1;
                    if (k < 0 || fails < k) k = fails;
                    if (fails > most_fails) most_fails = fails;
                    if (cross[x] >= 0) crosses = 1;
                    if (!starts || cross[x] < 0 || (death_cls >= 0 && cross[x] != death_cls))
                        mixed = 1;
                    death_cls = cross[x];
                    continue;
                }
                size_t key = (size_t)tr[b] * n_states + nx;
                int at = starts ? c + 1 : c;
                if (level[key] && level[key] != at + 1) multi = 1;
                if (level[key] && level[key] <= at + 1) continue;
                level[key] = (uint16_t)(at + 1);
                if (starts) { next[n_next++] = tr[b]; next[n_next++] = nx; }
                else { cur[n_cur++] = tr[b]; cur[n_cur++] = nx; }
            }
        }
        int32_t *t = cur; cur = next; next = t;
        n_cur = n_next;
        n_next = 0;
    }
    free(level);
    free(cur);
    free(next);
    if (k < 0 || k > cap) k = cap;
    /* tight: every pair died by level k (none at k + 1) and no death could end a lexeme; and
     * no pair was reached by texts of two lengths: the search goes on from a pair only with
     * the fewest characters, so a longer text through it (a const longer than the string
     * type beside it: "startVersion" or any text of at most 11 characters) would be missed */
    int tight = !n_cur && last == k && !crosses && !multi && k < cap;
    int uniform = !n_cur && last == k && k < cap && !multi && !mixed && most_fails == k &&
                  death_cls >= 0;
    if (cls) *cls = uniform ? death_cls : -1;
    return k | (tight << 8) | (uniform << 9);
}

/* chars_read of state s, computed once and kept: text_chars[s] (-1 unknown) and the uniform
 * class in text_cross[s]. Returns text_chars[s], or -1 on memory error. */
static int known_chars(const Lex *lex, const int32_t *cross, Py_ssize_t n_states,
                       const int32_t *text, Py_ssize_t n_text, int32_t r0, int32_t s, int cap,
                       int16_t *text_chars, int32_t *text_cross, PairBytes *pairs) {
    if (text_chars[s] < 0) {
        int k = chars_read(lex, cross, n_states, text, n_text, r0, s, cap, &text_cross[s],
                           pairs);
        if (k < 0) return -1;
        text_chars[s] = (int16_t)k;
    }
    return text_chars[s];
}

/* the 256-bit set of bytes b that leave state s as it is */
static void loop_bytes(const Lex *lex, int32_t s, uint64_t out[4]) {
    const int32_t *row = lex->t + (int64_t)s * lex->width;
    out[0] = out[1] = out[2] = out[3] = 0;
    for (int b = 0; b < 256; b++)
        if (row[lex->cls[b]] == s) out[b >> 6] |= 1ULL << (b & 63);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* [(class, nodes as int32 bytes)] by increasing class, nodes in walk order within a class */
static PyObject *crossing_groups(const int32_t *nodes, const int32_t *cls, Py_ssize_t n) {
    PyObject *list = PyList_New(0);
    if (!list || n == 0) return list;
    int64_t *key = malloc(sizeof(int64_t) * (size_t)n);
    int32_t *buf = malloc(sizeof(int32_t) * (size_t)n);
    if (!key || !buf) {
        free(key);
        free(buf);
        Py_DECREF(list);
        return PyErr_NoMemory();
    }
    int sorted = 1;
    for (Py_ssize_t k = 0; k < n; k++) {
        key[k] = ((int64_t)cls[k] << 32) | (int64_t)k;
        if (k && cls[k] < cls[k - 1]) sorted = 0;
    }
    if (!sorted) qsort(key, (size_t)n, sizeof(int64_t), cmp_i64);
    for (Py_ssize_t a = 0; a < n;) {
        int32_t c = (int32_t)(key[a] >> 32);
        Py_ssize_t b = a;
        for (; b < n && (int32_t)(key[b] >> 32) == c; b++) buf[b - a] = nodes[key[b] & 0xffffffff];
        PyObject *item = Py_BuildValue("(iy#)", c, (const char *)buf, (Py_ssize_t)(4 * (b - a)));
        if (!item || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(list);
            list = NULL;
            break;
        }
        Py_DECREF(item);
        a = b;
    }
    free(key);
    free(buf);
    return list;
}

static PyObject *walk(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[N_BUF];
    long long start, max_depth;
    long long text_start;
    /* trans, cross, start, node_byte, depth, skip, lo, hi, own, token_ids, sub_id, max_depth,
       roots, out_words, text, text_start, clean, sim, text_slice, slice_chars, text_chars,
       cap, rest, text_cross, byte_class, ends, sub_sets */
    long long cap;
    if (!PyArg_ParseTuple(args, "OOLOOOOOOOOLOOOLOOOOOLOOOOO", &objs[0], &objs[1], &start,
                          &objs[2], &objs[3], &objs[4], &objs[5], &objs[6], &objs[7], &objs[8],
                          &objs[9], &max_depth, &objs[10], &objs[11], &objs[12], &text_start,
                          &objs[13], &objs[14], &objs[15], &objs[16], &objs[17], &cap,
                          &objs[18], &objs[19], &objs[20], &objs[21], &objs[22]))
        return NULL;
    static const Py_ssize_t sizes[N_BUF] = {4, 4, 1, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1, 1, 4, 1,
                                            2, 1, 4, 4, 4, 8};
    static const char *names[N_BUF] = {"trans", "cross", "node_byte", "depth", "skip", "lo",
                                       "hi", "own", "token_ids", "sub_id", "roots",
                                       "out_words", "text", "clean", "sim", "text_slice",
                                       "slice_chars", "text_chars", "rest", "text_cross",
                                       "byte_class", "ends", "sub_sets"};
    Py_buffer v[N_BUF];
    int got = 0;
    for (; got < N_BUF; got++) {
        int flags = (got == 11 || got == 14 || got == 17 || got == 19)
                        ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS
                                             : PyBUF_C_CONTIGUOUS;
        if (PyObject_GetBuffer(objs[got], &v[got], flags | PyBUF_FORMAT) < 0) goto fail;
        if (v[got].itemsize != sizes[got]) {
            PyErr_Format(PyExc_TypeError, "walk: %s has items of %zd bytes, expected %zd",
                         names[got], v[got].itemsize, sizes[got]);
            got++;
            goto fail;
        }
    }
    const int32_t *trans = v[0].buf;
    const int32_t *cross = v[1].buf;     /* class of the terminals a lexeme ends with, or -1 */
    const uint8_t *node_byte = v[2].buf;
    const int16_t *depth = v[3].buf;
    const int32_t *skip = v[4].buf, *lo = v[5].buf, *hi = v[6].buf, *own = v[7].buf;
    const int32_t *token_ids = v[8].buf;
    /* per node, the 256-bit set of the bytes of the node and of every node below it:
       sub_sets[sub_id[node]] (nodes share few distinct sets) */
    const int32_t *sub_id = v[9].buf;
    const uint64_t *sub_sets = v[22].buf;
    const int32_t *roots = v[10].buf;
    uint32_t *out_words = v[11].buf;
    const int32_t *text = v[12].buf;
    const uint8_t *clean = v[13].buf;
    int8_t *sim = v[14].buf;
    const uint32_t *text_slice = v[15].buf;      /* (cap + 1) rows of n_words */
    const uint8_t *slice_chars = v[16].buf;      /* 0, or a slice node's most characters */
    int16_t *text_chars = v[17].buf;             /* per lexer state, -1 unknown */
    const uint8_t *rest = v[18].buf;    /* per node: most bytes of a token from its byte on */
    int32_t *text_cross = v[19].buf;    /* per lexer state: the uniform class (see chars_read) */
    /* per node: the one token ending there, -1 when none, -2 when several */
    const int32_t *ends = v[21].buf;
    Py_ssize_t width = v[20].len == 4 * 256 ? class_width(v[20].buf) : -1;
    Lex lex = {trans, v[20].buf, width};
    Py_ssize_t n_text = v[12].len / (4 * 256);
    Py_ssize_t n_nodes = v[2].len, n_tok = v[8].len / 4, n_roots = v[10].len / 4;
    Py_ssize_t n_states = width > 0 ? v[0].len / (4 * width) : 0, n_words = v[11].len / 4;
    int as_words = n_words > 0;
    int slice_ok = as_words && !n_roots && cap > 0 && v[15].len == (cap + 1) * v[11].len &&
                   v[16].len == v[2].len;
    int budget = 0, covered = 0;    /* characters the start state reads as text, up to cap */
    int tight = 0;                  /* and it reads no more: longer text tokens are dropped */
    /* or its longer text tokens all cross at their character budget + 1 into class slice_cls
       (see chars_read): the slice nodes are skipped and one marker stands for their crossings */
    int32_t slice_cls = -1;
    int slice_cross = 0;
    /* outputs hold every node and token below the roots (the whole trie without roots) */
    Py_ssize_t need_nodes = n_roots ? 0 : n_nodes, need_tok = n_roots ? 0 : n_tok;
    int bad = width <= 0 || v[0].len != 4 * width * n_states || start < 0 ||
              start >= n_states || max_depth < 1 || v[9].len != 4 * n_nodes || v[22].len % 32 ||
              text_start < 0 || text_start >= n_text || text_start > 7 ||
              v[13].len != n_nodes || v[14].len != n_states || v[1].len != 4 * n_states ||
              cap < 0 || cap > 255 || v[17].len != 2 * n_states || v[18].len != n_nodes ||
              v[19].len != 4 * n_states || v[21].len != 4 * n_nodes;
    for (Py_ssize_t r = 0; r < n_roots && !bad; r++) {
        bad = roots[r] < 0 || roots[r] >= n_nodes;
        if (!bad) {
            need_nodes += skip[roots[r]] - roots[r];
            need_tok += hi[roots[r]] - lo[roots[r]];
        }
    }
    /* token ids are checked against out_words once, when the trie is built (token_tables) */
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "walk: inconsistent start state, roots or sizes");
        goto fail;
    }
    int32_t *st = malloc(sizeof(int32_t) * (size_t)(max_depth + 1));
    uint64_t *loops = NULL;     /* loop bytes per lexer state, computed when first needed */
    uint8_t *have = NULL;
    int32_t *out_ok = as_words ? NULL : malloc(sizeof(int32_t) * (size_t)(need_tok + 1));
    int32_t *out_nodes = malloc(sizeof(int32_t) * (size_t)(need_nodes + 1));
    int32_t *out_states = malloc(sizeof(int32_t) * (size_t)(need_nodes + 1));
    int oom = 0;
    if (!st || (!as_words && !out_ok) || !out_nodes || !out_states) {
        free(st);
        free(out_ok);
        free(out_nodes);
        free(out_states);
        PyErr_NoMemory();
        goto fail;
    }
    Py_ssize_t n_ok = 0, n_cross = 0;
    PairBytes pairs = {-1, {0}};
    Py_BEGIN_ALLOW_THREADS
    if (slice_ok) {
        if (known_chars(&lex, cross, n_states, text, n_text, (int32_t)text_start,
                        (int32_t)start, (int)cap, text_chars, text_cross, &pairs) < 0) oom = 1;
        budget = oom ? 0 : text_chars[start] & 0xff;
        tight = oom ? 0 : (text_chars[start] >> 8) & 1;
        if (!oom && budget && (text_chars[start] >> 9) & 1) slice_cls = text_cross[start];
    }
#define EMIT(k)                                                                  \
    do {                                                                         \
        int32_t t_ = token_ids[k];                                               \
        if (as_words) out_words[t_ >> 5] |= 1u << (t_ & 31);                     \
        else out_ok[n_ok] = t_;                                                  \
        n_ok++;                                                                  \
    } while (0)
    for (Py_ssize_t r = 0; r < (n_roots ? n_roots : 1) && !oom; r++) {
        Py_ssize_t i = n_roots ? roots[r] : 0;
        Py_ssize_t end = n_roots ? skip[i] : n_nodes;
        if (i >= end) continue;
        st[depth[i] - 1] = (int32_t)start;
        while (i < end) {
            int d = depth[i];
            int32_t s = st[d - 1];
            if (budget && slice_chars[i] && (tight || slice_chars[i] <= budget)) {
                covered = 1;     /* its tokens that are viable are in text_slice row budget */
                i = skip[i];
                continue;
            }
            if (budget && slice_chars[i] && slice_cls >= 0) {
                covered = 1;     /* and its longer ones cross as the marker says */
                slice_cross = 1;
                i = skip[i];
                continue;
            }
            if (s == start && cap > 0 && rest[i] <= cap && ((clean[i] >> text_start) & 1)) {
                /* every token below is text of at most rest[i] bytes from here, and the
                   walk's start state survives every text of that many characters */
                if (known_chars(&lex, cross, n_states, text, n_text, (int32_t)text_start,
                                (int32_t)start, (int)cap, text_chars, text_cross,
                                &pairs) < 0) {
                    oom = 1;
                    break;
                }
                if ((text_chars[start] & 0xff) >= rest[i]) {
                    for (int32_t k = lo[i]; k < hi[i]; k++) EMIT(k);
                    i = skip[i];
                    continue;
                }
            }
            if (sim[s] && ((clean[i] >> text_start) & 1)) {
                /* every token below is text s keeps reading: all are ok (sim[s]: 1 yes, 0
                   no, -1 not known yet; tested first, as it rarely varies between nodes) */
                if (sim[s] < 0) {
                    int got_sim = simulates(&lex, n_states, text, n_text, (int32_t)text_start,
                                            s, sim);
                    if (got_sim < 0) { oom = 1; break; }
                    sim[s] = (int8_t)got_sim;
                }
                if (sim[s]) {
                    for (int32_t k = lo[i]; k < hi[i]; k++) EMIT(k);
                    i = skip[i];
                    continue;
                }
            }
            int32_t ns = trans[(int64_t)s * width + lex.cls[node_byte[i]]];
            if (ns >= 0) {
                if (ns == s && hi[i] - lo[i] > own[i]) {
                    /* every byte below loops on s: all tokens below are ok */
                    if (!loops) {
                        loops = malloc(sizeof(uint64_t) * 4 * (size_t)n_states);
                        have = calloc((size_t)n_states, 1);
                        if (!loops || !have) { oom = 1; break; }
                    }
                    uint64_t *l = loops + 4 * (int64_t)s;
                    if (!have[s]) { loop_bytes(&lex, s, l); have[s] = 1; }
                    const uint64_t *b = sub_sets + 4 * (int64_t)sub_id[i];
                    if (!((b[0] & ~l[0]) | (b[1] & ~l[1]) | (b[2] & ~l[2]) | (b[3] & ~l[3]))) {
                        for (int32_t k = lo[i]; k < hi[i]; k++) EMIT(k);
                        i = skip[i];
                        continue;
                    }
                }
                st[d] = ns;
                /* the token ending here, if any, without a branch (most nodes end one token
                   or none, unpredictably) */
                int32_t t0 = ends[i], has = t0 >= 0, t = t0 & ~(t0 >> 31);
                if (as_words) out_words[t >> 5] |= (uint32_t)has << (t & 31);
                else out_ok[n_ok] = t;
                n_ok += has;
                if (t0 < -1)
                    for (int32_t k = lo[i], e = lo[i] + own[i]; k < e; k++) EMIT(k);
                i++;
            } else {
                if (cross[s] >= 0) {
                    out_nodes[n_cross] = (int32_t)i;
                    out_states[n_cross++] = cross[s];
                }
                i = skip[i];
            }
        }
    }
#undef EMIT
    if (covered) {
        const uint32_t *row = text_slice + (int64_t)budget * n_words;
        for (Py_ssize_t w = 0; w < n_words; w++) out_words[w] |= row[w];
    }
    Py_END_ALLOW_THREADS
    free(st);
    free(loops);
    free(have);
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    PyObject *result = NULL;
    if (oom) {
        PyErr_NoMemory();
    } else {
        PyObject *ok = as_words ? (Py_INCREF(Py_None), Py_None)
                                : PyBytes_FromStringAndSize((const char *)out_ok, 4 * n_ok);
        PyObject *groups = crossing_groups(out_nodes, out_states, n_cross);
        if (groups && slice_cross) {
            /* the marker: crossing nodes -1 - budget (every slice token of more than budget
               characters, at the first byte of its character budget + 1) */
            int32_t marker = -1 - budget;
            PyObject *item = Py_BuildValue("(iy#)", slice_cls, (const char *)&marker,
                                           (Py_ssize_t)4);
            if (!item || PyList_Append(groups, item) < 0) Py_CLEAR(groups);
            Py_XDECREF(item);
        }
        if (ok && groups) result = Py_BuildValue("nOO", n_ok, ok, groups);
        Py_XDECREF(ok);
        Py_XDECREF(groups);
    }
    free(out_ok);
    free(out_nodes);
    free(out_states);
    return result;
fail:
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

/* room for ``need`` entries in *a (*cap of them now): doubles past need; -1 with MemoryError */
static int grow_to(int32_t **a, Py_ssize_t *cap, Py_ssize_t need) {
    if (need <= *cap) return 0;
    int32_t *g = realloc(*a, sizeof(int32_t) * (size_t)(2 * need));
    if (!g) {
        PyErr_NoMemory();
        return -1;
    }
    *a = g;
    *cap = 2 * need;
    return 0;
}

/* walk_components(parts, accepting, init, node_byte, depth, skip, lo, own, token_ids,
 * max_depth, roots, max_visits) -> (ok ids, [(set, crossing nodes)], [component positions of
 * each set]) or None: the walk below trie nodes ``roots`` from the empty lexeme of a lexer
 * whose product is not built, reading its components directly. ``parts`` holds per component
 * its one text (bytes) or its int32[n, 256] table, ``accepting`` None or its uint8[n] flags,
 * ``init`` (int32) its initial states. The state is the set of live (component, state) pairs,
 * one set per depth below a root; the tokens found ok and the crossing nodes (grouped by the
 * components that accept the lexeme before them, groups numbered in order of first crossing)
 * are those ``walk`` finds on the product. None once more than ``max_visits`` nodes were
 * read (the product is then worth building). */
static PyObject *walk_components(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_parts, *o_acc, *objs[8];
    long long max_depth, max_visits;
    if (!PyArg_ParseTuple(args, "O!O!OOOOOOOLOL", &PyList_Type, &o_parts, &PyList_Type,
                          &o_acc, &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5],
                          &objs[6], &max_depth, &objs[7], &max_visits))
        return NULL;
    Py_ssize_t k = PyList_GET_SIZE(o_parts);
    if (PyList_GET_SIZE(o_acc) != k || k < 1 || max_depth < 1 || max_depth > 65535) {
        PyErr_SetString(PyExc_ValueError, "walk_components: inconsistent components");
        return NULL;
    }
    /* init, node_byte, depth, skip, lo, own, token_ids, roots */
    static const Py_ssize_t sizes[8] = {4, 1, 2, 4, 4, 4, 4, 4};
    Py_buffer v[8];
    if (get_buffers(objs, v, 8, 8) < 0) return NULL;
    Py_buffer *comp = calloc((size_t)(2 * k), sizeof(Py_buffer));
    const int32_t **table = calloc((size_t)k, sizeof(int32_t *));
    const uint8_t **acc = calloc((size_t)k, sizeof(uint8_t *));
    const uint8_t **word = calloc((size_t)k, sizeof(uint8_t *));
    Py_ssize_t *n_st = calloc((size_t)k, sizeof(Py_ssize_t));
    int got = 0;
    PyObject *result = NULL;
    int32_t *pool = NULL, *lvl = NULL, *out_ok = NULL, *out_nodes = NULL, *out_cls = NULL;
    int32_t *sets = NULL, *set_start = NULL, *set_len = NULL, *tmp = NULL;
    if (!comp || !table || !acc || !word || !n_st) {
        PyErr_NoMemory();
        goto done;
    }
    int bad = 0;
    for (int b = 0; b < 8 && !bad; b++) bad = v[b].itemsize != sizes[b];
    const int32_t *init = v[0].buf;
    const uint8_t *node_byte = v[1].buf;
    const int16_t *depth = v[2].buf;
    const int32_t *skip = v[3].buf, *lo = v[4].buf, *own = v[5].buf;
    const int32_t *token_ids = v[6].buf, *roots = v[7].buf;
    Py_ssize_t n_nodes = v[1].len, n_roots = v[7].len / 4;
    bad = bad || v[0].len != 4 * k || v[2].len != 2 * n_nodes || v[3].len != 4 * n_nodes ||
          v[4].len != 4 * n_nodes || v[5].len != 4 * n_nodes;
    for (Py_ssize_t j = 0; j < k && !bad; j++) {
        PyObject *part = PyList_GET_ITEM(o_parts, j), *a = PyList_GET_ITEM(o_acc, j);
        if (PyBytes_Check(part) && a == Py_None) {
            word[j] = (const uint8_t *)PyBytes_AS_STRING(part);
            n_st[j] = PyBytes_GET_SIZE(part);       /* the text's length */
            bad = init[j] < -1 || init[j] > n_st[j];
            continue;
        }
        if (PyObject_GetBuffer(part, &comp[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto done;
        got++;
        if (PyObject_GetBuffer(a, &comp[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) goto done;
        got++;
        Py_buffer *bt = &comp[got - 2], *ba = &comp[got - 1];
        n_st[j] = ba->len;
        bad = bt->itemsize != 4 || ba->itemsize != 1 || bt->len != 4 * 256 * ba->len ||
              init[j] < -1 || init[j] >= ba->len;
        table[j] = bt->buf;         /* (a ByteDFA's table: its targets are its states) */
        acc[j] = ba->buf;
    }
    /* the trie is the vocabulary's (token_tables checks it once, as the other walks trust) */
    for (Py_ssize_t r = 0; r < n_roots && !bad; r++) bad = roots[r] < 0 || roots[r] >= n_nodes;
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "walk_components: inconsistent tables or trie");
        goto done;
    }
    Py_ssize_t k0 = 0;
    for (Py_ssize_t j = 0; j < k; j++) k0 += init[j] >= 0;
    /* level d (the state after the byte at depth d) starts at lvl[2d] and holds lvl[2d+1]
     * pairs; a level holds at most as many pairs as the one above it */
    pool = malloc(sizeof(int32_t) * 2 * (size_t)(k0 + 1) * (size_t)(max_depth + 1));
    lvl = malloc(sizeof(int32_t) * 2 * (size_t)(max_depth + 1));
    Py_ssize_t n_ok = 0, n_cross = 0, n_sets = 0, sets_n = 0;
    Py_ssize_t cap_ok = 64, cap_nodes = 64, cap_cls = 64, cap_sets = 64, cap_start = 8,
               cap_len = 8;
    out_ok = malloc(sizeof(int32_t) * (size_t)cap_ok);
    out_nodes = calloc((size_t)cap_nodes, sizeof(int32_t));
    out_cls = calloc((size_t)cap_cls, sizeof(int32_t));
    sets = malloc(sizeof(int32_t) * (size_t)cap_sets);
    set_start = malloc(sizeof(int32_t) * (size_t)cap_start);
    set_len = malloc(sizeof(int32_t) * (size_t)cap_len);
    tmp = malloc(sizeof(int32_t) * (size_t)(k0 + 1));
    if (!pool || !lvl || !out_ok || !out_nodes || !out_cls || !sets || !set_start || !set_len ||
        !tmp) {
        PyErr_NoMemory();
        goto done;
    }
    /* the initial pairs, first in the pool: the level above every root (deeper levels come
     * after them, so they stay there from root to root) */
    for (Py_ssize_t j = 0, m0 = 0; j < k; j++)
        if (init[j] >= 0) {
            pool[2 * m0] = (int32_t)j;
            pool[2 * m0 + 1] = init[j];
            m0++;
        }
    long long visits = 0;
    for (Py_ssize_t r = 0; r < n_roots; r++) {
        Py_ssize_t i = roots[r], end = skip[i];
        int d0 = depth[i];
        lvl[2 * (d0 - 1)] = 0;
        lvl[2 * (d0 - 1) + 1] = (int32_t)k0;
        while (i < end) {
            if (++visits > max_visits) {
                result = Py_None;
                Py_INCREF(result);
                goto done;
            }
            int d = depth[i];
            if (d < d0) break;      /* (a malformed trie) */
            const int32_t *prev = pool + 2 * (int64_t)lvl[2 * (d - 1)];
            Py_ssize_t n_prev = lvl[2 * (d - 1) + 1];
            int32_t *next = pool + 2 * ((int64_t)lvl[2 * (d - 1)] + n_prev);
            uint8_t b = node_byte[i];
            Py_ssize_t m = 0;
            for (Py_ssize_t p = 0; p < n_prev; p++) {
                int32_t j = prev[2 * p], q = prev[2 * p + 1], nq;
                if (word[j]) nq = q < n_st[j] && word[j][q] == b ? q + 1 : -1;
                else nq = table[j][(int64_t)q * 256 + b];
                if (nq >= 0) {
                    next[2 * m] = j;
                    next[2 * m + 1] = nq;
                    m++;
                }
            }
            if (m) {
                lvl[2 * d] = lvl[2 * (d - 1)] + (int32_t)n_prev;
                lvl[2 * d + 1] = (int32_t)m;
                if (grow_to(&out_ok, &cap_ok, n_ok + own[i]) < 0) goto done;
                for (int32_t t = lo[i], e = lo[i] + own[i]; t < e; t++)
                    out_ok[n_ok++] = token_ids[t];
                i++;
                continue;
            }
            /* the byte ends the lexeme: a crossing when the lexeme is a full match */
            Py_ssize_t a = 0;
            for (Py_ssize_t p = 0; p < n_prev; p++) {
                int32_t j = prev[2 * p], q = prev[2 * p + 1];
                if (word[j] ? q == n_st[j] : acc[j][q] != 0) tmp[a++] = j;
            }
            if (a) {
                Py_ssize_t c = 0;
                for (; c < n_sets; c++)
                    if (set_len[c] == a &&
                        memcmp(sets + set_start[c], tmp, sizeof(int32_t) * (size_t)a) == 0)
                        break;
                if (c == n_sets) {
                    if (grow_to(&set_start, &cap_start, n_sets + 1) < 0 ||
                        grow_to(&set_len, &cap_len, n_sets + 1) < 0 ||
                        grow_to(&sets, &cap_sets, sets_n + a) < 0)
                        goto done;
                    memcpy(sets + sets_n, tmp, sizeof(int32_t) * (size_t)a);
                    set_start[n_sets] = (int32_t)sets_n;
                    set_len[n_sets] = (int32_t)a;
                    sets_n += a;
                    n_sets++;
                }
                if (grow_to(&out_nodes, &cap_nodes, n_cross + 1) < 0 ||
                    grow_to(&out_cls, &cap_cls, n_cross + 1) < 0)
                    goto done;
                out_nodes[n_cross] = (int32_t)i;
                out_cls[n_cross++] = (int32_t)c;
            }
            i = skip[i];
        }
    }
    {
        PyObject *ok = PyBytes_FromStringAndSize((const char *)out_ok, 4 * n_ok);
        PyObject *groups = crossing_groups(out_nodes, out_cls, n_cross);
        PyObject *members = PyList_New(n_sets);
        for (Py_ssize_t c = 0; c < n_sets && members; c++) {
            PyObject *t = PyTuple_New(set_len[c]);
            if (!t) { Py_CLEAR(members); break; }
            for (int32_t x = 0; x < set_len[c]; x++) {
                PyObject *pos = PyLong_FromLong(sets[set_start[c] + x]);
                if (!pos) { Py_DECREF(t); t = NULL; break; }
                PyTuple_SET_ITEM(t, x, pos);
            }
            if (!t) { Py_CLEAR(members); break; }
            PyList_SET_ITEM(members, c, t);
        }
        if (ok && groups && members) result = Py_BuildValue("OOO", ok, groups, members);
        Py_XDECREF(ok);
        Py_XDECREF(groups);
        Py_XDECREF(members);
    }
done:
    for (int x = 0; x < got; x++) PyBuffer_Release(&comp[x]);
    for (int x = 0; x < 8; x++) PyBuffer_Release(&v[x]);
    free(comp); free(table); free(acc); free(word); free(n_st);
    free(pool); free(lvl); free(out_ok); free(out_nodes); free(out_cls);
    free(sets); free(set_start); free(set_len); free(tmp);
    return result;
}

/* sub[i]: the 256-bit set of the bytes of node i and of every node below it (preorder);
 * rest[i]: the most bytes of a token below node i counted from its own byte (the longest
 * path down to a leaf, capped at 255) */
static PyObject *subtree_bytes(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_byte, *o_skip, *o_out, *o_rest;
    if (!PyArg_ParseTuple(args, "OOOO", &o_byte, &o_skip, &o_out, &o_rest)) return NULL;
    Py_buffer v[4];
    PyObject *objs[4] = {o_byte, o_skip, o_out, o_rest};
    if (get_buffers(objs, v, 4, 2) < 0) return NULL;
    Py_ssize_t n = v[0].len;
    PyObject *result = NULL;
    if (v[1].len != 4 * n || v[2].len != 32 * n || v[3].len != n) {
        PyErr_SetString(PyExc_ValueError, "subtree_bytes: sizes disagree");
    } else {
        const uint8_t *byte = v[0].buf;
        const int32_t *skip = v[1].buf;
        uint64_t *out = v[2].buf;
        uint8_t *rest = v[3].buf;
        for (Py_ssize_t i = n - 1; i >= 0; i--) {
            uint64_t *o = out + 4 * i;
            unsigned below = 0;
            o[0] = o[1] = o[2] = o[3] = 0;
            o[byte[i] >> 6] |= 1ULL << (byte[i] & 63);
            for (Py_ssize_t j = i + 1; j < skip[i]; j = skip[j]) {
                if (j < 0 || j >= n || skip[j] <= j) break;
                const uint64_t *c = out + 4 * j;
                o[0] |= c[0]; o[1] |= c[1]; o[2] |= c[2]; o[3] |= c[3];
                if (rest[j] > below) below = rest[j];
            }
            rest[i] = (uint8_t)(below < 255 ? below + 1 : 255);
        }
        result = Py_None;
        Py_INCREF(result);
    }
    for (int k = 0; k < 4; k++) PyBuffer_Release(&v[k]);
    return result;
}

/* clean[i] bit r: the reference automaton, from state r, reads node i's byte and every token
 * below without dying (children before parents: reverse preorder) */
static PyObject *clean_bits(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_byte, *o_skip, *o_text, *o_out;
    if (!PyArg_ParseTuple(args, "OOOO", &o_byte, &o_skip, &o_text, &o_out)) return NULL;
    Py_buffer vb, vs, vt, vo;
    if (PyObject_GetBuffer(o_byte, &vb, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(o_skip, &vs, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&vb);
        return NULL;
    }
    if (PyObject_GetBuffer(o_text, &vt, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&vb);
        PyBuffer_Release(&vs);
        return NULL;
    }
    if (PyObject_GetBuffer(o_out, &vo, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&vb);
        PyBuffer_Release(&vs);
        PyBuffer_Release(&vt);
        return NULL;
    }
    Py_ssize_t n = vb.len, n_text = vt.len / (4 * 256);
    PyObject *result = NULL;
    if (vs.len != 4 * n || vo.len != n || n_text < 1 || n_text > 8) {
        PyErr_SetString(PyExc_ValueError, "clean_bits: sizes disagree");
    } else {
        const uint8_t *byte = vb.buf;
        const int32_t *skip = vs.buf, *text = vt.buf;
        uint8_t *out = vo.buf;
        for (Py_ssize_t i = n - 1; i >= 0; i--) {
            uint8_t bits = 0;
            for (int r = 0; r < n_text; r++) {
                int32_t nr = text[r * 256 + byte[i]];
                if (nr < 0) continue;
                int all = 1;
                for (Py_ssize_t j = i + 1; j < skip[i] && all; j = skip[j]) {
                    if (j < 0 || j >= n || skip[j] <= j) { all = 0; break; }
                    all = (out[j] >> nr) & 1;
                }
                if (all) bits |= (uint8_t)(1u << r);
            }
            out[i] = bits;
        }
        result = Py_None;
        Py_INCREF(result);
    }
    PyBuffer_Release(&vb);
    PyBuffer_Release(&vs);
    PyBuffer_Release(&vt);
    PyBuffer_Release(&vo);
    return result;
}

/* slice_chars[i] = the most characters of a token below node i, for the nodes whose subtree is
 * clean from text state r0, whose path reads from r0 back to r0 (whole characters) and whose
 * tokens have at most cap characters; 0 elsewhere (a walk skips the first one on its path
 * whose tokens all fit in the characters it may read). tok_chars[k] = the characters of
 * the token at position k of token_ids when it lies under a slice node (up to 255), else 0.
 * Returns the number of slice nodes. */
static PyObject *slice_nodes(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[9];
    int r0, cap;
    if (!PyArg_ParseTuple(args, "OOOOOOOiiOO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &objs[5], &objs[6], &r0, &cap, &objs[7], &objs[8]))
        return NULL;
    /* node_byte, depth, skip, lo, own, clean, text, out slice_chars, out tok_chars */
    Py_buffer v[9];
    if (get_buffers(objs, v, 9, 7) < 0) return NULL;
    Py_ssize_t n = v[0].len, n_text = v[6].len / (4 * 256), n_tok = v[8].len;
    const uint8_t *byte = v[0].buf, *clean = v[5].buf;
    const int16_t *depth = v[1].buf;
    const int32_t *skip = v[2].buf, *lo = v[3].buf, *own = v[4].buf, *text = v[6].buf;
    uint8_t *out = v[7].buf, *tok_chars = v[8].buf;
    PyObject *result = NULL;
    int32_t *st = malloc(sizeof(int32_t) * 32768);
    int16_t *chars = malloc(sizeof(int16_t) * 32768);
    uint8_t *most = malloc((size_t)n + 1);
    int bad = v[1].len != 2 * n || v[2].len != 4 * n || v[3].len != 4 * n || v[4].len != 4 * n ||
              v[5].len != n || v[7].len != n || r0 < 0 || r0 >= n_text || r0 > 7 || cap < 1 ||
              cap > 255;
    if (!st || !chars || !most) {
        PyErr_NoMemory();
    } else if (bad) {
        PyErr_SetString(PyExc_ValueError, "slice_nodes: sizes disagree");
    } else {
        /* characters of each node's path, and of its tokens */
        int top = 0;
        chars[0] = 0;
        for (Py_ssize_t i = 0; i < n && !bad; i++) {
            int d = depth[i];
            if (d < 1 || d - 1 > top || skip[i] <= i || skip[i] > n || lo[i] < 0 ||
                lo[i] + own[i] > n_tok) { bad = 1; break; }
            int c = chars[d - 1] + ((byte[i] & 0xC0) != 0x80);
            chars[d] = (int16_t)(c > 255 ? 255 : c);
            top = d;
            most[i] = (uint8_t)chars[d];
            for (int32_t k = lo[i]; k < lo[i] + own[i]; k++) tok_chars[k] = (uint8_t)chars[d];
        }
        /* the most characters below each node (children come after their parent) */
        for (Py_ssize_t i = n - 1; i >= 0 && !bad; i--)
            for (Py_ssize_t j = i + 1; j < skip[i]; j = skip[j])
                if (most[j] > most[i]) most[i] = most[j];
        Py_ssize_t count = 0;
        int under = 0;        /* depth of the highest slice node above, 0 if none */
        st[0] = r0;
        for (Py_ssize_t i = 0; i < n && !bad; i++) {
            int d = depth[i];
            int32_t r = st[d - 1];
            out[i] = 0;
            if (under && d <= under) under = 0;
            if (r == r0 && ((clean[i] >> r0) & 1) && most[i] <= cap) {
                out[i] = most[i];
                count++;
                if (!under) under = d;
            }
            if (!under)       /* tokens under no slice node: no row holds them */
                for (int32_t k = lo[i]; k < lo[i] + own[i]; k++) tok_chars[k] = 0;
            st[d] = r < 0 ? -1 : text[(int64_t)r * 256 + byte[i]];
        }
        if (bad) PyErr_SetString(PyExc_ValueError, "slice_nodes: not a preorder trie");
        else result = PyLong_FromSsize_t(count);
    }
    free(st);
    free(chars);
    free(most);
    for (int k = 0; k < 9; k++) PyBuffer_Release(&v[k]);
    return result;
}

/* text_reach(trans, byte_class, cross, text, text_start, state, cap, text_chars, text_cross) ->
 * (K, tight, class): what lexer state ``state`` does with text (chars_read, kept in the
 * per-state arrays as the walks keep it): K characters surely read, whether longer text dies,
 * and the class its longer text uniformly crosses into (-1 when it does not). */
static PyObject *text_reach(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[6];
    int r0, state, cap;
    if (!PyArg_ParseTuple(args, "OOOOiiiOO", &objs[0], &objs[1], &objs[2], &objs[3], &r0, &state,
                          &cap, &objs[4], &objs[5]))
        return NULL;
    Py_buffer v[6];
    if (get_buffers(objs, v, 6, 4) < 0) return NULL;
    Py_ssize_t width = v[1].len == 4 * 256 ? class_width(v[1].buf) : -1;
    Lex lex = {v[0].buf, v[1].buf, width};
    Py_ssize_t n_states = v[2].len / 4, n_text = v[3].len / (4 * 256);
    PyObject *result = NULL;
    if (width <= 0 || v[0].len != 4 * width * n_states || v[4].len != 2 * n_states ||
        v[5].len != 4 * n_states || state < 0 || state >= n_states || r0 < 0 ||
        r0 >= n_text || cap < 1 || cap > 255) {
        PyErr_SetString(PyExc_ValueError, "text_reach: sizes or states disagree");
    } else {
        int16_t *text_chars = v[4].buf;
        int32_t *text_cross = v[5].buf;
        PairBytes pairs = {-1, {0}};
        int got = known_chars(&lex, v[2].buf, n_states, v[3].buf, n_text, r0, state, cap,
                              text_chars, text_cross, &pairs);
        if (got < 0) PyErr_NoMemory();
        else result = Py_BuildValue("iii", got & 0xff, (got >> 8) & 1,
                                    (got >> 9) & 1 ? text_cross[state] : -1);
    }
    for (int k = 0; k < 6; k++) PyBuffer_Release(&v[k]);
    return result;
}

/* slice_crossings(node_byte, depth, skip, slice_chars, k) -> int32 bytes: the nodes where a
 * character k + 1 starts (counted from the trie's root, as text_slice rows count them) below
 * a slice node or on the path to one, in preorder: where every slice token of more than k
 * characters crosses when every text crosses there (the other tokens below such a node are
 * text up to it, and cross there too). */
static PyObject *slice_crossings(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[4];
    int k;
    if (!PyArg_ParseTuple(args, "OOOOi", &objs[0], &objs[1], &objs[2], &objs[3], &k))
        return NULL;
    Py_buffer v[4];
    if (get_buffers(objs, v, 4, 4) < 0) return NULL;
    Py_ssize_t n = v[0].len;
    const uint8_t *byte = v[0].buf, *slice_chars = v[3].buf;
    const int16_t *depth = v[1].buf;
    const int32_t *skip = v[2].buf;
    PyObject *result = NULL;
    int32_t *out = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int16_t *chars = malloc(sizeof(int16_t) * 32768);
    if (!out || !chars) {
        PyErr_NoMemory();
    } else if (v[1].len != 2 * n || v[2].len != 4 * n || v[3].len != n || k < 0 || k > 254) {
        PyErr_SetString(PyExc_ValueError, "slice_crossings: sizes disagree");
    } else {
        Py_ssize_t n_out = 0;
        int under = 0, bad = 0;     /* depth of the slice node above, 0 if none */
        chars[0] = 0;
        for (Py_ssize_t i = 0; i < n;) {
            int d = depth[i];
            if (d < 1 || d > 32767 || skip[i] <= i || skip[i] > n) { bad = 1; break; }
            if (under && d <= under) under = 0;
            if (!under && slice_chars[i]) under = d;
            int starts = (byte[i] & 0xC0) != 0x80;
            int c = chars[d - 1] + starts;
            chars[d] = (int16_t)(c > 255 ? 255 : c);
            if (starts && c == k + 1) {
                /* below a slice node, or above one (on its path of whole characters) */
                int slice = under;
                for (Py_ssize_t j = i; j < skip[i] && !slice; j++) slice = slice_chars[j] != 0;
                if (slice) out[n_out++] = (int32_t)i;
                i = skip[i];
                continue;
            }
            i = c > k + 1 ? skip[i] : i + 1;
        }
        if (bad) PyErr_SetString(PyExc_ValueError, "slice_crossings: not a preorder trie");
        else result = PyBytes_FromStringAndSize((const char *)out, 4 * n_out);
    }
    free(out);
    free(chars);
    for (int j = 0; j < 4; j++) PyBuffer_Release(&v[j]);
    return result;
}

/* exact_tokens(node_byte, skip, lo, own, token_ids, text) -> [bytes]: item i holds the ids
 * (int32) of the tokens spelled exactly text[:i + 1], empty when none; the list ends where the
 * trie does (no token starts with the text read so far). One walk down the trie answers every
 * prefix (the children of a node are a chain of subtrees: i + 1, skip[i + 1], ... up to
 * skip[i]). */
static PyObject *exact_tokens(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[5];
    const char *text;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "OOOOOy#", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &text, &len))
        return NULL;
    Py_buffer v[5];
    if (get_buffers(objs, v, 5, 5) < 0) return NULL;
    Py_ssize_t n = v[0].len, n_tok = v[4].len / 4;
    const uint8_t *byte = v[0].buf;
    const int32_t *skip = v[1].buf, *lo = v[2].buf, *own = v[3].buf, *ids = v[4].buf;
    PyObject *result = NULL;
    if (v[1].len != 4 * n || v[2].len != 4 * n || v[3].len != 4 * n) {
        PyErr_SetString(PyExc_ValueError, "exact_tokens: sizes disagree");
    } else if ((result = PyList_New(0)) != NULL) {
        Py_ssize_t first = 0, end = n;     /* the chain of candidate children */
        for (Py_ssize_t d = 0; d < len; d++) {
            uint8_t b = (uint8_t)text[d];
            Py_ssize_t j = first, found = -1;
            while (j < end) {
                if (skip[j] <= j || skip[j] > end) { j = -1; break; }
                if (byte[j] == b) { found = j; break; }
                j = skip[j];
            }
            if (j < 0) {
                Py_CLEAR(result);
                PyErr_SetString(PyExc_ValueError, "exact_tokens: not a preorder trie");
                break;
            }
            if (found < 0) break;
            int32_t a = lo[found], k = own[found];
            if (a < 0 || k < 0 || (Py_ssize_t)a + k > n_tok) {
                Py_CLEAR(result);
                PyErr_SetString(PyExc_ValueError, "exact_tokens: token span outside the ids");
                break;
            }
            PyObject *item = PyBytes_FromStringAndSize((const char *)(ids + a), 4 * (Py_ssize_t)k);
            if (!item || PyList_Append(result, item) < 0) {
                Py_XDECREF(item);
                Py_CLEAR(result);
                break;
            }
            Py_DECREF(item);
            first = found + 1;
            end = skip[found];
        }
    }
    for (int k = 0; k < 5; k++) PyBuffer_Release(&v[k]);
    return result;
}

static PyMethodDef methods[] = {
    {"slice_nodes", slice_nodes, METH_VARARGS,
     "slice_nodes(node_byte, depth, skip, lo, own, clean, text, r0, cap, slice_chars, "
     "tok_chars) fills slice_chars (uint8 per node) and tok_chars (uint8 per token position); "
     "returns the number of slice nodes"},
    {"walk", walk, METH_VARARGS,
     "walk(trans, cross, start, node_byte, depth, skip, lo, hi, own, token_ids, sub_id, "
     "max_depth, roots, out_words, text, text_start, clean, sim, text_slice, slice_chars, "
     "text_chars, cap, rest, text_cross, byte_class, ends, sub_sets) -> (n_ok, ok ids, "
     "[(class, crossing nodes)]); ok "
     "tokens go to "
     "out_words as bits "
     "when it is not empty (ok ids None), else come back as int32 bytes; crossing nodes come "
     "as int32 bytes by accepting class"},
    {"walk_components", walk_components, METH_VARARGS,
     "walk_components(parts, accepting, init, node_byte, depth, skip, lo, own, token_ids, "
     "max_depth, roots, max_visits) -> (ok ids, [(set, crossing nodes)], [component positions "
     "per set]), or None past max_visits nodes"},
    {"text_reach", text_reach, METH_VARARGS,
     "text_reach(trans, byte_class, cross, text, text_start, state, cap, text_chars, "
     "text_cross) -> "
     "(characters surely read, tight, class its longer text crosses into or -1), kept in the "
     "per-state arrays"},
    {"slice_crossings", slice_crossings, METH_VARARGS,
     "slice_crossings(node_byte, depth, skip, slice_chars, k) -> int32 bytes of the nodes "
     "below slice nodes where a character k + 1 starts"},
    {"exact_tokens", exact_tokens, METH_VARARGS,
     "exact_tokens(node_byte, skip, lo, own, token_ids, text) -> [int32 ids of the tokens "
     "spelled text[:i + 1], for i = 0, 1, ... while the trie has a node for it]"},
    {"clean_bits", clean_bits, METH_VARARGS,
     "clean_bits(node_byte, skip, text, out) fills out (uint8 per node, bit per text state)"},
    {"subtree_bytes", subtree_bytes, METH_VARARGS,
     "subtree_bytes(node_byte, skip, out, rest) fills out (uint64[n, 4]) with each subtree's "
     "bytes and rest (uint8[n]) with the most bytes of a token below each node"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walks",
                                    "Token walks through a lexer DFA (see _walks.c).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__walks(void) { return PyModule_Create(&module); }
