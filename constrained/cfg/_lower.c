/* Grammar lowering in C (see prepare.py): symbols numbered, useless rules removed.
 *
 * index(rules, terminals, start) reads a grammar's rules (a dict from rule name to a sequence of
 * alternatives, each a sequence of symbol names) once, interning every name, and returns
 * (capsule, reachable terminal names), or (None, rule, symbol) for the first symbol that names
 * neither a rule nor a key of ``terminals``.
 *
 * lower(capsule, start, status, ignored, start_name) then works on the rules reachable from
 * ``start`` (the start given to index()) with ``status`` (terminal name -> bits: 1 its language is not empty, 2 it matches
 * the empty text, so it is replaced by an optional rule ``name?``: ``name | <empty>``):
 * tail recursion becomes left recursion (``X: a X | b`` -> ``X: X@rep b``, ``X@rep: <empty> |
 * X@rep a`` where X occurs nowhere else in its alternatives), unproductive alternatives and
 * unreachable rules are dropped, and the rest is numbered: terminals (those used, plus
 * ``ignored``) sorted by name, then ``start_name`` and the live rules sorted by name. Returns
 * (terminal names, nonterminal names, lhs, rhs, by_lhs, nullable nonterminals, packed), or None
 * when ``start`` derives no text; ``packed`` holds the same alternatives as native int32 bytes
 * (symbols of all alternatives, each alternative's first symbol and one past the last, each
 * one's left-hand side) and a nullable flag byte per symbol, as the Earley parser reads them.
 * Names, orders and alternatives are those of the plain Python passes the tests keep as the
 * reference (tests/cfg/test_cfg_prepare.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t *v;
    Py_ssize_t n, cap;
} Vec;

static int vec_push(Vec *a, int32_t x) {
    if (a->n == a->cap) {
        Py_ssize_t cap = a->cap ? a->cap * 2 : 16;
        int32_t *v = realloc(a->v, (size_t)cap * sizeof(int32_t));
        if (!v) {
            PyErr_NoMemory();
            return -1;
        }
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

/* The grammar as read by index(): symbol ids by name; the alternatives of rule r are
 * alts[rule_start[r] .. rule_start[r + 1]), alternative a's symbols are
 * syms[alt_start[a] .. alt_start[a + 1]). Rules get ids 0 .. n_rules - 1 in the dict's order. */
typedef struct {
    PyObject *ids;          /* dict: name -> int id */
    PyObject *names;        /* list: id -> name */
    Py_ssize_t n_rules;
    Vec rule_start, alt_start, syms;
    Py_ssize_t root;        /* the start rule */
    uint8_t *reached;       /* per symbol read: reachable from the start */
} Index;

static void index_free(PyObject *capsule) {
    Index *x = PyCapsule_GetPointer(capsule, "constrained.lower.index");
    if (!x) return;
    Py_XDECREF(x->ids);
    Py_XDECREF(x->names);
    free(x->rule_start.v);
    free(x->alt_start.v);
    free(x->syms.v);
    free(x->reached);
    free(x);
}

/* id of ``name``, added (as a new symbol) when absent; -1 on error */
static Py_ssize_t intern(PyObject *ids, PyObject *names, PyObject *name) {
    PyObject *found = PyDict_GetItemWithError(ids, name);
    if (found) return PyLong_AsSsize_t(found);
    if (PyErr_Occurred()) return -1;
    Py_ssize_t id = PyList_GET_SIZE(names);
    PyObject *o = PyLong_FromSsize_t(id);
    if (!o) return -1;
    int bad = PyDict_SetItem(ids, name, o) < 0 || PyList_Append(names, name) < 0;
    Py_DECREF(o);
    return bad ? -1 : id;
}

static PyObject *index_rules(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *rules, *terminals, *start;
    if (!PyArg_ParseTuple(args, "O!OU", &PyDict_Type, &rules, &terminals, &start)) return NULL;
    Index *x = calloc(1, sizeof(Index));
    if (!x) return PyErr_NoMemory();
    PyObject *capsule = PyCapsule_New(x, "constrained.lower.index", index_free);
    if (!capsule) {
        free(x);
        return NULL;
    }
    PyObject *result = NULL;
    Vec todo = {0};
    x->ids = PyDict_New();
    x->names = PyList_New(0);
    if (!x->ids || !x->names) goto done;
    PyObject *name, *alts;
    Py_ssize_t pos = 0;
    while (PyDict_Next(rules, &pos, &name, &alts))
        if (intern(x->ids, x->names, name) < 0) goto done;
    x->n_rules = PyList_GET_SIZE(x->names);
    pos = 0;
    while (PyDict_Next(rules, &pos, &name, &alts)) {
        if (vec_push(&x->rule_start, (int32_t)x->alt_start.n) < 0) goto done;
        PyObject *alts_seq = PySequence_Fast(alts, "a rule's alternatives must be a sequence");
        if (!alts_seq) goto done;
        Py_ssize_t n_alts = PySequence_Fast_GET_SIZE(alts_seq);
        for (Py_ssize_t i = 0; i < n_alts; i++) {
            PyObject *alt = PySequence_Fast(PySequence_Fast_GET_ITEM(alts_seq, i),
                                            "an alternative must be a sequence of names");
            if (!alt || vec_push(&x->alt_start, (int32_t)x->syms.n) < 0) {
                Py_XDECREF(alt);
                Py_DECREF(alts_seq);
                goto done;
            }
            Py_ssize_t n = PySequence_Fast_GET_SIZE(alt);
            for (Py_ssize_t j = 0; j < n; j++) {
                PyObject *sym = PySequence_Fast_GET_ITEM(alt, j);
                PyObject *found = PyDict_GetItemWithError(x->ids, sym);
                Py_ssize_t id;
                if (found) {
                    id = PyLong_AsSsize_t(found);
                } else {
                    int known = PyErr_Occurred() ? -1 : PySequence_Contains(terminals, sym);
                    if (known <= 0) {
                        if (known == 0) result = Py_BuildValue("(OOO)", Py_None, name, sym);
                        Py_DECREF(alt);
                        Py_DECREF(alts_seq);
                        goto done;
                    }
                    id = intern(x->ids, x->names, sym);
                }
                if (id < 0 || vec_push(&x->syms, (int32_t)id) < 0) {
                    Py_DECREF(alt);
                    Py_DECREF(alts_seq);
                    goto done;
                }
            }
            Py_DECREF(alt);
        }
        Py_DECREF(alts_seq);
    }
    if (vec_push(&x->rule_start, (int32_t)x->alt_start.n) < 0 ||
        vec_push(&x->alt_start, (int32_t)x->syms.n) < 0) goto done;

    /* terminals reachable from the start */
    Py_ssize_t n_syms = PyList_GET_SIZE(x->names);
    uint8_t *reached = x->reached = calloc((size_t)n_syms + 1, 1);
    if (!reached) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *s = PyDict_GetItemWithError(x->ids, start);
    if (!s) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "start rule not defined");
        goto done;
    }
    Py_ssize_t root = PyLong_AsSsize_t(s);
    if (root < 0 || root >= x->n_rules) {
        PyErr_SetString(PyExc_KeyError, "start is not a rule");
        goto done;
    }
    x->root = root;
    reached[root] = 1;
    if (vec_push(&todo, (int32_t)root) < 0) goto done;
    PyObject *terms = PyList_New(0);
    if (!terms) goto done;
    while (todo.n) {
        int32_t r = todo.v[--todo.n];
        for (int32_t k = x->alt_start.v[x->rule_start.v[r]];
             k < x->alt_start.v[x->rule_start.v[r + 1]]; k++) {
            int32_t y = x->syms.v[k];
            if (reached[y]) continue;
            reached[y] = 1;
            if (y < x->n_rules) {
                if (vec_push(&todo, y) < 0) {
                    Py_DECREF(terms);
                    goto done;
                }
            } else if (PyList_Append(terms, PyList_GET_ITEM(x->names, y)) < 0) {
                Py_DECREF(terms);
                goto done;
            }
        }
    }
    result = Py_BuildValue("(ON)", capsule, terms);
done:
    free(todo.v);
    Py_DECREF(capsule);
    return result;
}

/* --- lower() --- */

/* The rules being rewritten: per symbol, its alternatives (when it is a working rule) as a list
 * of alternative ids; alternative a's symbols are pool[off[a] .. off[a] + len[a]). */
typedef struct {
    Vec off, len, head, pool;
    Vec *rule_alts;          /* per symbol; rule_alts[s].n == 0 and !is_rule[s] for terminals */
    uint8_t *is_rule;        /* a working rule (reachable or made here) */
    Py_ssize_t n_syms, cap_syms;
} Work;

static void work_free(Work *w) {
    free(w->off.v);
    free(w->len.v);
    free(w->head.v);
    free(w->pool.v);
    if (w->rule_alts)
        for (Py_ssize_t i = 0; i < w->n_syms; i++) free(w->rule_alts[i].v);
    free(w->rule_alts);
    free(w->is_rule);
}

static int work_grow(Work *w, Py_ssize_t n_syms) {
    if (n_syms > w->cap_syms) {
        Py_ssize_t cap = n_syms * 2 + 8;
        Vec *ra = realloc(w->rule_alts, (size_t)cap * sizeof(Vec));
        if (!ra) {
            PyErr_NoMemory();
            return -1;
        }
        w->rule_alts = ra;
        uint8_t *ir = realloc(w->is_rule, (size_t)cap);
        if (!ir) {
            PyErr_NoMemory();
            return -1;
        }
        w->is_rule = ir;
        memset(w->rule_alts + w->cap_syms, 0, (size_t)(cap - w->cap_syms) * sizeof(Vec));
        memset(w->is_rule + w->cap_syms, 0, (size_t)(cap - w->cap_syms));
        w->cap_syms = cap;
    }
    if (n_syms > w->n_syms) w->n_syms = n_syms;
    return 0;
}

/* a new alternative of ``head`` with symbols ``prefix`` (0 or 1 of them) then src[0..n) */
static int32_t work_alt(Work *w, int32_t head, int32_t prefix, int has_prefix,
                        const int32_t *src, Py_ssize_t n) {
    int32_t a = (int32_t)w->off.n;
    if (vec_push(&w->off, (int32_t)w->pool.n) < 0 ||
        vec_push(&w->len, (int32_t)(n + (has_prefix ? 1 : 0))) < 0 ||
        vec_push(&w->head, head) < 0) return -1;
    if (has_prefix && vec_push(&w->pool, prefix) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (vec_push(&w->pool, src[i]) < 0) return -1;
    return a;
}

/* id of a rule name made here (``base`` + ``suffix``, then "'" while that names a working
 * rule when ``fresh``) */
static Py_ssize_t made_name(Index *x, Work *w, PyObject *base, const char *suffix, int fresh) {
    PyObject *name = PyUnicode_FromFormat("%U%s", base, suffix);
    if (!name) return -1;
    for (;;) {
        PyObject *found = PyDict_GetItemWithError(x->ids, name);
        if (!found && PyErr_Occurred()) {
            Py_DECREF(name);
            return -1;
        }
        Py_ssize_t id = found ? PyLong_AsSsize_t(found) : -1;
        if (!fresh || id < 0 || id >= w->n_syms || !w->is_rule[id]) break;
        PyObject *longer = PyUnicode_FromFormat("%U'", name);
        Py_DECREF(name);
        if (!longer) return -1;
        name = longer;
    }
    Py_ssize_t id = intern(x->ids, x->names, name);
    Py_DECREF(name);
    if (id < 0 || work_grow(w, id + 1) < 0) return -1;
    return id;
}

/* X: a X | b  ->  X: R b,  R: <empty> | R a  (see _left_recursive_tails in prepare.py) */
static int left_recursive_tails(Index *x, Work *w, const int32_t *order, Py_ssize_t n_order) {
    for (Py_ssize_t i = 0; i < n_order; i++) {
        int32_t r = order[i];
        Vec *alts = &w->rule_alts[r];
        Py_ssize_t n_tails = 0, n_bases = 0;
        int inside = 0;     /* r occurs in an alternative other than as its last symbol */
        for (Py_ssize_t k = 0; k < alts->n && !inside; k++) {
            int32_t a = alts->v[k], len = w->len.v[a];
            const int32_t *s = w->pool.v + w->off.v[a];
            int ends = len && s[len - 1] == r;
            if (ends && len > 1) n_tails++;
            if (!ends) n_bases++;
            for (int32_t j = 0; j < len - ends; j++)
                if (s[j] == r) inside = 1;
        }
        if (inside || !n_tails || !n_bases) continue;
        Py_ssize_t rep = made_name(x, w, PyList_GET_ITEM(x->names, r), "@rep", 1);
        if (rep < 0) return -1;
        Vec old = w->rule_alts[r], rep_alts = {0}, bases = {0};
        int32_t *tmp = NULL;
        int32_t e = work_alt(w, (int32_t)rep, 0, 0, NULL, 0);
        if (e < 0 || vec_push(&rep_alts, e) < 0) goto fail;
        for (Py_ssize_t k = 0; k < old.n; k++) {
            int32_t a = old.v[k], len = w->len.v[a];
            int ends = len && w->pool.v[w->off.v[a] + len - 1] == r;
            if (ends && len == 1) continue;
            /* copied first: work_alt may move the pool */
            free(tmp);
            tmp = malloc((size_t)len * sizeof(int32_t) + 1);
            if (!tmp) {
                PyErr_NoMemory();
                goto fail;
            }
            memcpy(tmp, w->pool.v + w->off.v[a], (size_t)len * sizeof(int32_t));
            int32_t b = ends ? work_alt(w, (int32_t)rep, (int32_t)rep, 1, tmp, len - 1)
                             : work_alt(w, r, (int32_t)rep, 1, tmp, len);
            if (b < 0 || vec_push(ends ? &rep_alts : &bases, b) < 0) goto fail;
        }
        free(tmp);
        free(old.v);
        w->rule_alts[r] = bases;
        free(w->rule_alts[rep].v);
        w->rule_alts[rep] = rep_alts;
        w->is_rule[rep] = 1;
        continue;
    fail:
        free(tmp);
        free(rep_alts.v);
        free(bases.v);
        return -1;
    }
    return 0;
}

/* sorted names (a new list) of the ids in ``ids`` */
static PyObject *sorted_names(Index *x, const Vec *ids) {
    PyObject *out = PyList_New(ids->n);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < ids->n; i++) {
        PyObject *name = PyList_GET_ITEM(x->names, ids->v[i]);
        Py_INCREF(name);
        PyList_SET_ITEM(out, i, name);
    }
    if (PyList_Sort(out) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* Each symbol occurrence of the alternatives of ``rules`` not in ``in_set``: counted per
 * alternative (``missing``) and per symbol (``wait_start``, shifted by one) when ``waiting`` is
 * NULL, else written as the alternative waiting for it (``fill``: written per symbol). */
static void scan_missing(const Work *w, const Vec *rules, const uint8_t *in_set,
                         int32_t *missing, int32_t *wait_start, int32_t *waiting, int32_t *fill) {
    for (Py_ssize_t i = 0; i < rules->n; i++) {
        const Vec *alts = &w->rule_alts[rules->v[i]];
        for (Py_ssize_t k = 0; k < alts->n; k++) {
            int32_t a = alts->v[k];
            const int32_t *s = w->pool.v + w->off.v[a];
            for (int32_t j = 0; j < w->len.v[a]; j++) {
                if (in_set[s[j]]) continue;
                if (waiting) {
                    waiting[wait_start[s[j]] + fill[s[j]]++] = a;
                } else {
                    missing[a]++;
                    wait_start[s[j] + 1]++;
                }
            }
        }
    }
}

/* Adds to ``in_set`` the head of every alternative of ``rules`` all of whose symbols are in it,
 * to the least fixpoint, in time linear in the alternatives: each counts its symbols not yet
 * in, a symbol coming in counts down the alternatives waiting for it. */
static int derive(Work *w, const Vec *rules, uint8_t *in_set) {
    Py_ssize_t n_alts = w->off.n;
    int32_t *missing = calloc((size_t)n_alts + 1, sizeof(int32_t));
    int32_t *wait_start = calloc((size_t)w->n_syms + 2, sizeof(int32_t));
    int32_t *fill = calloc((size_t)w->n_syms + 1, sizeof(int32_t));
    int32_t *waiting = NULL;
    Vec ready = {0};
    int rc = -1;
    if (!missing || !wait_start || !fill) {
        PyErr_NoMemory();
        goto out;
    }
    scan_missing(w, rules, in_set, missing, wait_start, NULL, NULL);
    for (Py_ssize_t y = 0; y < w->n_syms; y++) wait_start[y + 1] += wait_start[y];
    waiting = malloc((size_t)wait_start[w->n_syms] * sizeof(int32_t) + 1);
    if (!waiting) {
        PyErr_NoMemory();
        goto out;
    }
    scan_missing(w, rules, in_set, missing, wait_start, waiting, fill);
    for (Py_ssize_t i = 0; i < rules->n; i++) {
        const Vec *alts = &w->rule_alts[rules->v[i]];
        for (Py_ssize_t k = 0; k < alts->n; k++)
            if (!missing[alts->v[k]] && vec_push(&ready, w->head.v[alts->v[k]]) < 0) goto out;
    }
    while (ready.n) {
        int32_t h = ready.v[--ready.n];
        if (in_set[h]) continue;
        in_set[h] = 1;
        for (int32_t k = wait_start[h]; k < wait_start[h + 1]; k++)
            if (!--missing[waiting[k]] && vec_push(&ready, w->head.v[waiting[k]]) < 0) goto out;
    }
    rc = 0;
out:
    free(missing);
    free(wait_start);
    free(fill);
    free(waiting);
    free(ready.v);
    return rc;
}

static PyObject *int_tuple(const int32_t *v, Py_ssize_t n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyLong_FromLong(v[i]);
        if (!o) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, o);
    }
    return t;
}

static Py_ssize_t id_of(Index *x, PyObject *name) {
    PyObject *found = PyDict_GetItemWithError(x->ids, name);
    if (!found) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
        return -1;
    }
    return PyLong_AsSsize_t(found);
}

static PyObject *lower(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *capsule, *start, *status, *ignored, *start_name;
    if (!PyArg_ParseTuple(args, "OUO!O!U", &capsule, &start, &PyDict_Type, &status,
                          &PyList_Type, &ignored, &start_name)) return NULL;
    Index *x = PyCapsule_GetPointer(capsule, "constrained.lower.index");
    if (!x) return NULL;
    Work w = {0};
    Vec order = {0}, todo = {0}, live = {0}, used = {0}, optional = {0};
    Vec flat = {0}, starts = {0}, heads = {0};       /* the packed alternatives */
    uint8_t *prod = NULL;
    int32_t *num = NULL, *rename = NULL, *buf = NULL;
    PyObject *result = NULL, *opt_names = NULL, *t_names = NULL, *n_names = NULL;
    PyObject *lhs = NULL, *rhs = NULL, *by_lhs = NULL, *nullable = NULL, *ns = NULL;
    PyObject *name, *bits_o;
    Py_ssize_t pos = 0;
    Py_ssize_t root = id_of(x, start);
    if (root < 0) goto done;
    if (root >= x->n_rules) {
        PyErr_SetString(PyExc_KeyError, "start is not a rule");
        goto done;
    }
    /* every terminal named here gets an id (ignored ones may be used by no rule) */
    opt_names = PyList_New(0);
    if (!opt_names) goto done;
    while (PyDict_Next(status, &pos, &name, &bits_o)) {
        long bits = PyLong_AsLong(bits_o);
        if ((bits == -1 && PyErr_Occurred()) || intern(x->ids, x->names, name) < 0) goto done;
        if ((bits & 2) && PyList_Append(opt_names, name) < 0) goto done;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ignored); i++)
        if (intern(x->ids, x->names, PyList_GET_ITEM(ignored, i)) < 0) goto done;
    Py_ssize_t n_named = PyList_GET_SIZE(x->names);
    if (work_grow(&w, n_named) < 0 || PyList_Sort(opt_names) < 0) goto done;

    /* optional terminals: the rule ``name?`` each, in name order */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(opt_names); i++) {
        PyObject *t = PyList_GET_ITEM(opt_names, i);
        Py_ssize_t tid = id_of(x, t), oid = tid < 0 ? -1 : made_name(x, &w, t, "?", 0);
        if (oid < 0 || vec_push(&optional, (int32_t)oid) < 0 ||
            vec_push(&optional, (int32_t)tid) < 0) goto done;
    }
    rename = malloc((size_t)n_named * sizeof(int32_t) + 1);
    if (!rename) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_named; i++) rename[i] = (int32_t)i;
    for (Py_ssize_t i = 0; i < optional.n; i += 2) rename[optional.v[i + 1]] = optional.v[i];

    /* the rules reachable from the start (found by index()), in the grammar's order, optional
     * terminals renamed */
    if (root != x->root) {
        PyErr_SetString(PyExc_ValueError, "lower: start is not the start given to index()");
        goto done;
    }
    const uint8_t *flag = x->reached;
    for (int32_t r = 0; r < x->n_rules; r++) {
        if (!flag[r]) continue;
        if (vec_push(&order, r) < 0) goto done;
        w.is_rule[r] = 1;
        for (int32_t k = x->rule_start.v[r]; k < x->rule_start.v[r + 1]; k++) {
            int32_t lo = x->alt_start.v[k], hi = x->alt_start.v[k + 1];
            int32_t a = work_alt(&w, r, 0, 0, x->syms.v + lo, hi - lo);
            if (a < 0 || vec_push(&w.rule_alts[r], a) < 0) goto done;
            int32_t *s = w.pool.v + w.off.v[a];
            for (int32_t j = 0; j < hi - lo; j++) s[j] = rename[s[j]];
        }
    }
    for (Py_ssize_t i = 0; i < optional.n; i += 2) {
        int32_t oid = optional.v[i], tid = optional.v[i + 1];
        w.rule_alts[oid].n = 0;
        int32_t a = work_alt(&w, oid, 0, 0, &tid, 1), e = work_alt(&w, oid, 0, 0, NULL, 0);
        if (a < 0 || e < 0 || vec_push(&w.rule_alts[oid], a) < 0 ||
            vec_push(&w.rule_alts[oid], e) < 0) goto done;
        if (!w.is_rule[oid] && vec_push(&order, oid) < 0) goto done;
        w.is_rule[oid] = 1;
    }

    Py_ssize_t n_before = order.n;
    if (left_recursive_tails(x, &w, order.v, n_before) < 0) goto done;
    /* the repetition rules made (a name may be one of an unreachable grammar rule) */
    prod = calloc((size_t)w.n_syms + 1, 1);
    if (!prod) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_before; i++) prod[order.v[i]] = 1;
    for (Py_ssize_t y = 0; y < w.n_syms; y++)
        if (w.is_rule[y] && !prod[y] && vec_push(&order, (int32_t)y) < 0) goto done;
    memset(prod, 0, (size_t)w.n_syms);

    /* productive symbols: non-empty terminals, then heads of productive alternatives */
    pos = 0;
    while (PyDict_Next(status, &pos, &name, &bits_o)) {
        Py_ssize_t tid = id_of(x, name);
        if (tid < 0) goto done;
        if ((PyLong_AsLong(bits_o) & 1) && !w.is_rule[tid]) prod[tid] = 1;
    }
    if (derive(&w, &order, prod) < 0) goto done;
    if (!prod[root]) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    /* kept alternatives (all symbols productive) of productive rules */
    for (Py_ssize_t i = 0; i < order.n; i++) {
        int32_t r = order.v[i];
        Vec *alts = &w.rule_alts[r];
        if (!prod[r]) {
            alts->n = 0;
            continue;
        }
        Py_ssize_t n = 0;
        for (Py_ssize_t k = 0; k < alts->n; k++) {
            int32_t a = alts->v[k], ok = 1;
            const int32_t *s = w.pool.v + w.off.v[a];
            for (int32_t j = 0; j < w.len.v[a] && ok; j++) ok = prod[s[j]];
            if (ok) alts->v[n++] = a;
        }
        alts->n = n;
    }
    /* live rules and used terminals, from the start */
    memset(prod, 0, (size_t)w.n_syms);       /* now: reached */
    prod[root] = 1;
    todo.n = 0;
    if (vec_push(&todo, (int32_t)root) < 0 || vec_push(&live, (int32_t)root) < 0) goto done;
    while (todo.n) {
        Vec *alts = &w.rule_alts[todo.v[--todo.n]];
        for (Py_ssize_t k = 0; k < alts->n; k++) {
            int32_t a = alts->v[k];
            const int32_t *s = w.pool.v + w.off.v[a];
            for (int32_t j = 0; j < w.len.v[a]; j++) {
                int32_t y = s[j];
                if (prod[y]) continue;
                prod[y] = 1;
                if (w.rule_alts[y].n && w.is_rule[y]) {
                    if (vec_push(&todo, y) < 0 || vec_push(&live, y) < 0) goto done;
                } else if (vec_push(&used, y) < 0) {
                    goto done;
                }
            }
        }
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ignored); i++) {
        Py_ssize_t tid = id_of(x, PyList_GET_ITEM(ignored, i));
        if (tid < 0) goto done;
        if (!prod[tid]) {
            prod[tid] = 1;
            if (vec_push(&used, (int32_t)tid) < 0) goto done;
        }
    }

    /* numbering: terminals by name, then start_name and the live rules by name */
    t_names = sorted_names(x, &used);
    n_names = sorted_names(x, &live);
    if (!t_names || !n_names) goto done;
    Py_ssize_t n_t = PyList_GET_SIZE(t_names), n_nt = PyList_GET_SIZE(n_names) + 1;
    num = malloc(((size_t)PyList_GET_SIZE(x->names) + 1) * sizeof(int32_t));
    if (!num) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_t; i++) {
        Py_ssize_t id = id_of(x, PyList_GET_ITEM(t_names, i));
        if (id < 0) goto done;
        num[id] = (int32_t)i;
    }
    for (Py_ssize_t i = 1; i < n_nt; i++) {
        Py_ssize_t id = id_of(x, PyList_GET_ITEM(n_names, i - 1));
        if (id < 0) goto done;
        num[id] = (int32_t)(n_t + i);
    }
    if (PyList_Insert(n_names, 0, start_name) < 0) goto done;

    Py_ssize_t n_alts = 1;
    for (Py_ssize_t i = 1; i < n_nt; i++)
        n_alts += w.rule_alts[id_of(x, PyList_GET_ITEM(n_names, i))].n;
    lhs = PyTuple_New(n_alts);
    rhs = PyTuple_New(n_alts);
    by_lhs = PyDict_New();
    if (!lhs || !rhs || !by_lhs) goto done;
    int32_t first[1] = {num[root]};
    Py_ssize_t at = 0, buf_cap = 0;
    if (vec_push(&starts, 0) < 0) goto done;
    for (Py_ssize_t i = 0; i < n_nt; i++) {
        int32_t head = (int32_t)(n_t + i);
        Vec *alts = i ? &w.rule_alts[id_of(x, PyList_GET_ITEM(n_names, i))] : NULL;
        Py_ssize_t n = i ? alts->n : 1, from = at;
        for (Py_ssize_t k = 0; k < n; k++, at++) {
            const int32_t *s = first;
            Py_ssize_t len = 1;
            if (i) {
                int32_t a = alts->v[k];
                len = w.len.v[a];
                if (len > buf_cap) {
                    int32_t *nb = realloc(buf, (size_t)len * 2 * sizeof(int32_t));
                    if (!nb) {
                        PyErr_NoMemory();
                        goto done;
                    }
                    buf = nb;
                    buf_cap = len * 2;
                }
                for (Py_ssize_t j = 0; j < len; j++) buf[j] = num[w.pool.v[w.off.v[a] + j]];
                s = buf;
            }
            PyObject *h = PyLong_FromLong(head), *r = int_tuple(s, len);
            for (Py_ssize_t j = 0; j < len; j++)
                if (vec_push(&flat, s[j]) < 0) {
                    Py_XDECREF(h);
                    Py_XDECREF(r);
                    goto done;
                }
            if (vec_push(&starts, (int32_t)flat.n) < 0 || vec_push(&heads, head) < 0) {
                Py_XDECREF(h);
                Py_XDECREF(r);
                goto done;
            }
            if (!h || !r) {
                Py_XDECREF(h);
                Py_XDECREF(r);
                goto done;
            }
            PyTuple_SET_ITEM(lhs, at, h);
            PyTuple_SET_ITEM(rhs, at, r);
        }
        PyObject *key = PyLong_FromLong(head), *val = PyTuple_New(at - from);
        for (Py_ssize_t k = from; val && k < at; k++) {
            PyObject *o = PyLong_FromSsize_t(k);
            if (!o) {
                Py_CLEAR(val);
                break;
            }
            PyTuple_SET_ITEM(val, k - from, o);
        }
        int bad = !key || !val || PyDict_SetItem(by_lhs, key, val) < 0;
        Py_XDECREF(key);
        Py_XDECREF(val);
        if (bad) goto done;
    }

    /* nullable nonterminals: derived from the empty alternatives alone */
    memset(prod, 0, (size_t)w.n_syms);
    if (derive(&w, &live, prod) < 0) goto done;
    ns = PySet_New(NULL);
    if (!ns) goto done;
    for (Py_ssize_t i = -1; i < live.n; i++) {       /* -1: start_name, nullable with start */
        int32_t y = i < 0 ? (int32_t)root : live.v[i];
        if (!prod[y]) continue;
        PyObject *o = PyLong_FromLong(i < 0 ? (long)n_t : num[y]);
        int bad = !o || PySet_Add(ns, o) < 0;
        Py_XDECREF(o);
        if (bad) goto done;
    }
    nullable = PyFrozenSet_New(ns);
    if (!nullable) goto done;
    PyObject *null_flags = PyBytes_FromStringAndSize(NULL, n_t + n_nt);
    if (!null_flags) goto done;
    memset(PyBytes_AS_STRING(null_flags), 0, (size_t)(n_t + n_nt));
    for (Py_ssize_t i = -1; i < live.n; i++) {
        int32_t y = i < 0 ? (int32_t)root : live.v[i];
        if (prod[y]) PyBytes_AS_STRING(null_flags)[i < 0 ? n_t : num[y]] = 1;
    }
    PyObject *tn = PyList_AsTuple(t_names), *nn = PyList_AsTuple(n_names);
    PyObject *packed = Py_BuildValue(
        "(y#y#y#N)", (const char *)flat.v, (Py_ssize_t)(4 * flat.n), (const char *)starts.v,
        (Py_ssize_t)(4 * starts.n), (const char *)heads.v, (Py_ssize_t)(4 * heads.n),
        null_flags);
    if (tn && nn && packed)
        result = Py_BuildValue("(NNOOOON)", tn, nn, lhs, rhs, by_lhs, nullable, packed);
    else {
        Py_XDECREF(tn);
        Py_XDECREF(nn);
        Py_XDECREF(packed);
    }
done:
    work_free(&w);
    free(order.v);
    free(todo.v);
    free(live.v);
    free(used.v);
    free(optional.v);
    free(flat.v);
    free(starts.v);
    free(heads.v);
    free(prod);
    free(num);
    free(rename);
    free(buf);
    Py_XDECREF(ns);
    Py_XDECREF(opt_names);
    Py_XDECREF(t_names);
    Py_XDECREF(n_names);
    Py_XDECREF(lhs);
    Py_XDECREF(rhs);
    Py_XDECREF(by_lhs);
    Py_XDECREF(nullable);
    return result;
}

static PyMethodDef methods[] = {
    {"index", index_rules, METH_VARARGS,
     "index(rules, terminals, start) -> (capsule, reachable terminal names) | (None, rule, symbol)"},
    {"lower", lower, METH_VARARGS,
     "lower(index, start, status, ignored, start_name) -> (terminal names, nonterminal names, "
     "lhs, rhs, by_lhs, nullable, packed) | None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lower", NULL, -1, methods};

PyMODINIT_FUNC PyInit__lower(void) { return PyModule_Create(&module); }
