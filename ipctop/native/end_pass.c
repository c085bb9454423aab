/* The sampler's reading of every end in two native passes (engine/end_pass.py).
 *
 * At 512 ends the sampler's per-end Python (a slot read, an answer read, a
 * _Seen and a ThreadSample per end) cost 9 ms a sample, most of its CPU.
 * ends_read reads every slot and answer and says which ends /proc must tell
 * about; ends_figures, given what /proc said, makes each end's rates, its
 * ThreadSample and its progress: engine/end_figures.py's PythonEnds, the
 * reference, line for line. What an end showed is kept between readings as a
 * struct end_seen per end, in the order of the sampler's ends.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <sched.h>

#include "native.h"

/* PythonEnds' Seen; `none` says which of its fields are None. */
struct end_seen {
    uint64_t rounds, errors;
    uint64_t vcsw, ivcsw;
    uint64_t ops[IPCTOP_NOPS];
    double at; /* monotonic seconds when vcsw/ivcsw/cpu were true */
    int64_t ack;
    int64_t cpu;
    double vrate, ivrate;
    uint64_t none;
};

enum {
    SEEN_VCSW = 1,
    SEEN_IVCSW = 2,
    SEEN_ACK = 4,
    SEEN_CPU = 8,
    SEEN_VRATE = 16,
    SEEN_IVRATE = 32,
};

_Static_assert(sizeof(struct end_seen) == 128, "engine/end_pass.py's _SEEN is 128 bytes");

/* One end's slot as read: the SlotReading and the answer (ack 0: none). */
struct end_read {
    uint64_t rounds, errors;
    int64_t bad_value;
    uint64_t ops[IPCTOP_NOPS];
    uint64_t ns, vcsw, ivcsw;
    int32_t tid, state, cpu;
    uint32_t ack;
    int32_t from_proc;
    int32_t pad;
};

#define THREAD_FIELDS 12 /* ThreadSample's fields, in the order they are filled */
#define STATE_NAMES 6    /* counters.STATES' five, then "unknown" */

static int view(PyObject *o, Py_buffer *v, int writable, Py_ssize_t item, const char *what)
{
    if (PyObject_GetBuffer(o, v, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0)
        return -1;
    if (v->len % item) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes is not a whole number of %zd-byte items",
                     what, v->len, item);
        return -1;
    }
    return 0;
}

static int check_slots(const int32_t *sl, Py_ssize_t n, Py_ssize_t block)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if (sl[i] < 0 || ((Py_ssize_t)sl[i] + 1) * IPCTOP_SLOT_SIZE > block) {
            PyErr_Format(PyExc_ValueError, "slot %d outside the counter block", sl[i]);
            return -1;
        }
    return 0;
}

static int check_prev(const int32_t *pi, Py_ssize_t n, Py_ssize_t m)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if (pi[i] < -1 || pi[i] >= m) {
            PyErr_Format(PyExc_ValueError, "prev_idx %d outside the %zd ends last read", pi[i], m);
            return -1;
        }
    return 0;
}

/* counters.read_answer: the end's last whole answer, or 0 if it never answered
 * or was writing one both times we looked. */
static uint32_t read_answer(const struct end_slot *s, struct end_read *r)
{
    for (int k = 0; k < 2; k++) {
        uint32_t ack = __atomic_load_n(&s->stats_ack, __ATOMIC_ACQUIRE);
        if (ack == 0)
            return 0;
        r->cpu = s->cpu;
        r->ns = s->stats_ns;
        r->vcsw = s->nvcsw;
        r->ivcsw = s->nivcsw;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (ack != IPCTOP_STATS_BUSY && __atomic_load_n(&s->stats_ack, __ATOMIC_RELAXED) == ack)
            return ack;
    }
    return 0;
}

static void release(Py_buffer *views, size_t n)
{
    /* PyBuffer_Release does nothing for a view never filled (its obj is NULL). */
    for (size_t k = 0; k < n; k++)
        PyBuffer_Release(&views[k]);
}

/* ends_read(block, slots, detail, prev, prev_idx) -> (reading, [position, ...])
 * Every end's slot (slots: int32 per end) and answer; the positions are the
 * ends /proc must tell about (PythonEnds._answers). prev holds the last
 * reading's end_seen records, prev_idx each end's record there or -1. */
PyObject *ipctop_ends_read(PyObject *self, PyObject *a)
{
    PyObject *buf, *slots, *prev, *prev_idx;
    int detail;

    if (!PyArg_ParseTuple(a, "OOpOO", &buf, &slots, &detail, &prev, &prev_idx))
        return NULL;
    Py_buffer v[4] = {{0}};
    PyObject *reading = NULL, *procs = NULL, *out = NULL;
    if (view(buf, &v[0], 0, 1, "the counter block") < 0 || view(slots, &v[1], 0, 4, "slots") < 0 ||
        view(prev, &v[2], 0, sizeof(struct end_seen), "prev") < 0 ||
        view(prev_idx, &v[3], 0, 4, "prev_idx") < 0)
        goto done;
    Py_ssize_t n = v[1].len / 4, m = v[2].len / (Py_ssize_t)sizeof(struct end_seen);
    const int32_t *sl = v[1].buf, *pi = v[3].buf;
    const struct end_seen *pv = v[2].buf;
    if (v[3].len != v[1].len) {
        PyErr_SetString(PyExc_ValueError, "ends_read: prev_idx needs one entry per slot");
        goto done;
    }
    if (check_slots(sl, n, v[0].len) < 0 || check_prev(pi, n, m) < 0)
        goto done;
    if (!(reading = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(struct end_read))) ||
        !(procs = PyList_New(0)))
        goto done;
    struct end_read *rd = (struct end_read *)PyBytes_AS_STRING(reading);
    for (Py_ssize_t i = 0; i < n; i++) {
        const struct end_slot *s =
            (const struct end_slot *)((const char *)v[0].buf + (Py_ssize_t)sl[i] * IPCTOP_SLOT_SIZE);
        struct end_read *r = &rd[i];
        memset(r, 0, sizeof *r);
        r->rounds = s->rounds;
        r->errors = s->errors;
        r->tid = s->tid;
        r->state = s->state;
        r->bad_value = s->bad_value;
        for (int k = 0; k < IPCTOP_NOPS; k++)
            r->ops[k] = s->ops[k];
        r->ack = (r->tid && !detail) ? read_answer(s, r) : 0;
        if (r->tid && !r->ack) {
            const struct end_seen *p = pi[i] >= 0 ? &pv[pi[i]] : NULL;
            r->from_proc = detail || !p || (p->none & SEEN_ACK);
        }
        if (r->from_proc) {
            PyObject *at = PyLong_FromSsize_t(i);
            if (!at || PyList_Append(procs, at) < 0) {
                Py_XDECREF(at);
                goto done;
            }
            Py_DECREF(at);
        }
    }
    out = PyTuple_Pack(2, reading, procs);
done:
    Py_XDECREF(reading);
    Py_XDECREF(procs);
    release(v, 4);
    return out;
}

static void keep_counts(struct end_seen *s, const struct end_read *r)
{
    s->rounds = r->rounds;
    s->errors = r->errors;
    memcpy(s->ops, r->ops, sizeof s->ops);
}

/* A /proc reading: (cpu, voluntary, involuntary), each an int or None. */
static int task_fields(PyObject *task, struct end_seen *s)
{
    static const uint64_t bits[3] = {SEEN_CPU, SEEN_VCSW, SEEN_IVCSW};
    int64_t got[3];

    if (!PyTuple_Check(task) || PyTuple_GET_SIZE(task) != 3) {
        PyErr_SetString(PyExc_TypeError, "a /proc reading is (cpu, voluntary, involuntary)");
        return -1;
    }
    for (int k = 0; k < 3; k++) {
        PyObject *item = PyTuple_GET_ITEM(task, k);
        got[k] = 0;
        if (item == Py_None) {
            s->none |= bits[k];
            continue;
        }
        long long x = PyLong_AsLongLong(item);
        if (x == -1 && PyErr_Occurred())
            return -1;
        got[k] = x;
    }
    s->cpu = got[0];
    s->vcsw = (uint64_t)got[1];
    s->ivcsw = (uint64_t)got[2];
    return 0;
}

static double rate_of(uint64_t prev, uint64_t cur, double span)
{
    double x = (double)(int64_t)(cur - prev) / span;
    return x > 0.0 ? x : 0.0; /* max(0.0, x) */
}

/* end_figures._switches: where the thread runs and how often it switches. */
static int switches(const struct end_read *r, const struct end_seen *p, PyObject *task,
                    double now, struct end_seen *s)
{
    double at;

    if (r->ack) {
        if (p && !(p->none & SEEN_ACK) && p->ack == (int64_t)r->ack) {
            /* Not a round since we asked: blocked or waiting for a CPU. */
            *s = *p;
            keep_counts(s, r);
            if (r->rounds == p->rounds) {
                s->vrate = s->ivrate = 0.0;
                s->none &= ~(uint64_t)(SEEN_VRATE | SEEN_IVRATE);
            }
            return 0;
        }
        at = (double)r->ns / 1e9;
        s->cpu = r->cpu;
        s->vcsw = r->vcsw;
        s->ivcsw = r->ivcsw;
        s->ack = r->ack;
        s->none = 0;
    } else if (r->tid && !r->from_proc && p) {
        *s = *p; /* answered before but not now (mid-answer): keep what it said */
        keep_counts(s, r);
        return 0;
    } else {
        at = now;
        s->ack = 0;
        s->none = SEEN_ACK;
        if (task == NULL || task == Py_None) {
            s->cpu = 0;
            s->vcsw = s->ivcsw = 0;
            s->none |= SEEN_CPU | SEEN_VCSW | SEEN_IVCSW;
        } else if (task_fields(task, s) < 0) {
            return -1;
        }
    }
    keep_counts(s, r);
    s->at = at;
    s->vrate = s->ivrate = 0.0;
    double span = p ? at - p->at : 0.0;
    if (p && span > 0) {
        if ((p->none | s->none) & SEEN_VCSW)
            s->none |= SEEN_VRATE;
        else
            s->vrate = rate_of(p->vcsw, s->vcsw, span);
        if ((p->none | s->none) & SEEN_IVCSW)
            s->none |= SEEN_IVRATE;
        else
            s->ivrate = rate_of(p->ivcsw, s->ivcsw, span);
    }
    if (s->none & SEEN_VCSW) {
        s->none |= SEEN_VRATE | SEEN_IVRATE;
        s->vrate = s->ivrate = 0.0;
    }
    return 0;
}

/* 1 when thread tid may run on `cpu` alone; 0 otherwise, and when the kernel
 * will not say (gone, another user's, a mask wider than cpu_set_t): Python
 * then looks again with os.sched_getaffinity, as the reference does. */
static int bound_alone(long tid, long cpu)
{
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity((pid_t)tid, sizeof set, &set) != 0)
        return 0;
    return CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
}

static PyObject *float_or_none(int none, double x)
{
    return none ? Py_NewRef(Py_None) : PyFloat_FromDouble(x);
}

/* ThreadSample(**fields), made as its frozen dataclass __init__ makes it:
 * object.__new__, then object.__setattr__ per field (no __post_init__). */
static PyObject *thread_sample(PyObject *cls, PyObject *fields, PyObject **vals)
{
    PyObject *empty = PyTuple_New(0);
    if (!empty)
        return NULL;
    PyObject *o = PyBaseObject_Type.tp_new((PyTypeObject *)cls, empty, NULL);
    Py_DECREF(empty);
    if (!o)
        return NULL;
    for (int k = 0; k < THREAD_FIELDS; k++)
        if (PyObject_GenericSetAttr(o, PyTuple_GET_ITEM(fields, k), vals[k]) < 0) {
            Py_DECREF(o);
            return NULL;
        }
    return o;
}

/* progress[pair] += count, the dict in the order pairs first come. */
static int add_progress(PyObject *progress, PyObject *pair, uint64_t count)
{
    PyObject *had = PyDict_GetItemWithError(progress, pair); /* borrowed */
    if (!had && PyErr_Occurred())
        return -1;
    PyObject *add = PyLong_FromUnsignedLongLong(count);
    if (!add)
        return -1;
    PyObject *sum = had ? PyNumber_Add(had, add) : Py_NewRef(add);
    Py_DECREF(add);
    if (!sum)
        return -1;
    int rc = PyDict_SetItem(progress, pair, sum);
    Py_DECREF(sum);
    return rc;
}

/* The first n of the end's op counts, as the tuple of ints the Python pass slices. */
static PyObject *op_counts(const struct end_read *r, int n)
{
    PyObject *t = PyTuple_New(n);
    if (!t)
        return NULL;
    for (int k = 0; k < n; k++) {
        PyObject *x = PyLong_FromUnsignedLongLong(r->ops[k]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, x);
    }
    return t;
}

/* One end's ThreadSample; ident is (pair, role, tid, bound_cpu). */
static PyObject *end_thread(const struct end_read *r, const struct end_seen *s, PyObject *ident,
                            double ops, PyObject *state, int n_ops, PyObject *cls,
                            PyObject *fields)
{
    static const int made[] = {4, 5, 6, 7, 9, 10, 11}; /* the new references of vals */
    PyObject *vals[THREAD_FIELDS] = {NULL}, *o = NULL;
    for (int k = 0; k < 4; k++)
        vals[k] = PyTuple_GET_ITEM(ident, k);
    vals[8] = state;
    if ((vals[4] = (s->none & SEEN_CPU) ? Py_NewRef(Py_None) : PyLong_FromLongLong(s->cpu)) &&
        (vals[5] = PyLong_FromUnsignedLongLong(r->rounds)) && (vals[6] = PyFloat_FromDouble(ops)) &&
        (vals[7] = PyLong_FromUnsignedLongLong(r->errors)) &&
        (vals[9] = float_or_none(s->none & SEEN_VRATE, s->vrate)) &&
        (vals[10] = float_or_none(s->none & SEEN_IVRATE, s->ivrate)) &&
        (vals[11] = op_counts(r, n_ops)))
        o = thread_sample(cls, fields, vals);
    for (size_t k = 0; k < sizeof made / sizeof made[0]; k++)
        Py_XDECREF(vals[made[k]]);
    return o;
}

static int check_args(Py_ssize_t n, PyObject *tasks, PyObject *ident, PyObject *cls,
                      PyObject *fields, PyObject *states)
{
    if (!PyList_Check(tasks) || !PyList_Check(ident) || PyList_GET_SIZE(ident) != n) {
        PyErr_SetString(PyExc_TypeError, "ends_figures: tasks and ident are lists, ident one per end");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(ident, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 4 || !PyLong_Check(PyTuple_GET_ITEM(t, 2))) {
            PyErr_SetString(PyExc_TypeError, "ends_figures: ident is (pair, role, tid, bound_cpu)");
            return -1;
        }
    }
    if (!PyType_Check(cls) || !PyTuple_Check(fields) || PyTuple_GET_SIZE(fields) != THREAD_FIELDS ||
        !PyTuple_Check(states) || PyTuple_GET_SIZE(states) != STATE_NAMES) {
        PyErr_SetString(PyExc_TypeError,
                        "ends_figures: a class, its 12 field names and 6 state names");
        return -1;
    }
    for (int k = 0; k < THREAD_FIELDS; k++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(fields, k))) {
            PyErr_SetString(PyExc_TypeError, "ends_figures: field names are str");
            return -1;
        }
    return 0;
}

/* ends_figures(reading, prev, prev_idx, tasks, started, inactive, watch, ident,
 *              now, dt, cls, fields, states, n_ops)
 *   -> (seen, threads, progress, errors, op_rates, drift)
 * PythonEnds.step's loop over ends_read's reading. tasks: what /proc said of
 * each end ends_read named, in its order ((cpu, voluntary, involuntary) or
 * None); started: per end, its pair's start (NaN: no pair), read for an end
 * not in prev; inactive: per end, 1 when its pair stopped or failed (Python
 * puts the pair's state in); watch: per end, its CPU while its drift is
 * unsaid, else -1; ident: per end (pair, role, tid, bound_cpu); n_ops: how
 * many of the slot's op counters the workload names (each ThreadSample's ops,
 * each row of op_rates). errors: (position, new wrong messages, bad value) per
 * end that saw some; op_rates None when n_ops is 0; drift: the watched ends
 * Python must look at (on another CPU, or an affinity not that CPU alone). */
PyObject *ipctop_ends_figures(PyObject *self, PyObject *a)
{
    PyObject *reading, *prev, *prev_idx, *tasks, *started, *inactive, *watch, *ident, *cls,
        *fields, *states;
    double now, dt;
    int n_ops;

    if (!PyArg_ParseTuple(a, "OOOOOOOOddOOOi", &reading, &prev, &prev_idx, &tasks, &started,
                          &inactive, &watch, &ident, &now, &dt, &cls, &fields, &states, &n_ops))
        return NULL;
    if (n_ops < 0 || n_ops > IPCTOP_NOPS) {
        /* end_figures.check_n_ops's words */
        PyErr_Format(PyExc_ValueError, "n_ops %d: a slot counts 0 to %d operations", n_ops,
                     IPCTOP_NOPS);
        return NULL;
    }
    Py_buffer v[6] = {{0}};
    PyObject *seen = NULL, *threads = NULL, *progress = NULL, *errors = NULL, *op_rates = NULL,
             *drift = NULL, *out = NULL;
    if (view(reading, &v[0], 0, sizeof(struct end_read), "reading") < 0 ||
        view(prev, &v[1], 0, sizeof(struct end_seen), "prev") < 0 ||
        view(prev_idx, &v[2], 0, 4, "prev_idx") < 0 || view(started, &v[3], 0, 8, "started") < 0 ||
        view(inactive, &v[4], 0, 1, "inactive") < 0 || view(watch, &v[5], 0, 4, "watch") < 0)
        goto done;
    Py_ssize_t n = v[0].len / (Py_ssize_t)sizeof(struct end_read);
    Py_ssize_t m = v[1].len / (Py_ssize_t)sizeof(struct end_seen);
    if (v[2].len != 4 * n || v[3].len != 8 * n || v[4].len != n || v[5].len != 4 * n) {
        PyErr_SetString(PyExc_ValueError, "ends_figures: prev_idx, started, inactive and watch "
                                          "need one entry per end of the reading");
        goto done;
    }
    const struct end_read *rd = v[0].buf;
    const struct end_seen *pv = v[1].buf;
    const int32_t *pi = v[2].buf, *wt = v[5].buf;
    const double *st = v[3].buf;
    const unsigned char *off = v[4].buf;
    if (check_prev(pi, n, m) < 0 || check_args(n, tasks, ident, cls, fields, states) < 0)
        goto done;
    if (!(seen = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(struct end_seen))) ||
        !(threads = PyList_New(n)) || !(progress = PyDict_New()) || !(errors = PyList_New(0)) ||
        !(drift = PyList_New(0)) || !(op_rates = n_ops ? PyList_New(n) : Py_NewRef(Py_None)))
        goto done;
    struct end_seen *sv = (struct end_seen *)PyByteArray_AS_STRING(seen);
    static const uint64_t no_ops[IPCTOP_NOPS];
    Py_ssize_t next_task = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const struct end_read *r = &rd[i];
        const struct end_seen *p = pi[i] >= 0 ? &pv[pi[i]] : NULL;
        struct end_seen *s = &sv[i];
        PyObject *id = PyList_GET_ITEM(ident, i), *task = NULL;
        memset(s, 0, sizeof *s);
        if (r->from_proc) {
            if (next_task >= PyList_GET_SIZE(tasks)) {
                PyErr_SetString(PyExc_ValueError, "ends_figures: fewer /proc readings than ends");
                goto fail;
            }
            task = PyList_GET_ITEM(tasks, next_task++);
        }
        if (switches(r, p, task, now, s) < 0)
            goto fail;
        double ops, op_dt;
        const uint64_t *op_prev;
        uint64_t errors_before;
        if (!p) {
            double span = now - (isnan(st[i]) ? now - dt : st[i]);
            if (1e-9 > span) /* max(span, 1e-9) */
                span = 1e-9;
            ops = (double)r->rounds / span;
            op_prev = no_ops, op_dt = span, errors_before = 0;
        } else {
            ops = (double)(int64_t)(r->rounds - p->rounds) / dt;
            op_prev = p->ops, op_dt = dt, errors_before = p->errors;
        }
        if (n_ops) {
            PyObject *row = PyList_New(n_ops);
            if (!row)
                goto fail;
            PyList_SET_ITEM(op_rates, i, row);
            for (int k = 0; k < n_ops; k++) {
                PyObject *x = PyFloat_FromDouble((double)(int64_t)(r->ops[k] - op_prev[k]) / op_dt);
                if (!x)
                    goto fail;
                PyList_SET_ITEM(row, k, x);
            }
        }
        if (r->errors > errors_before) {
            PyObject *e = Py_BuildValue("(nKL)", i, (unsigned long long)(r->errors - errors_before),
                                        (long long)r->bad_value);
            if (!e || PyList_Append(errors, e) < 0) {
                Py_XDECREF(e);
                goto fail;
            }
            Py_DECREF(e);
        }
        int running = r->state == ST_RUNNING && !off[i];
        if (running) {
            uint64_t count = r->rounds;
            for (int k = 0; k < IPCTOP_NOPS; k++)
                count += r->ops[k];
            if (add_progress(progress, PyTuple_GET_ITEM(id, 0), count) < 0)
                goto fail;
        }
        if (wt[i] >= 0) {
            long tid = PyLong_AsLong(PyTuple_GET_ITEM(id, 2));
            if (tid == -1 && PyErr_Occurred())
                goto fail;
            int ran_off = !(s->none & SEEN_CPU) && s->cpu != wt[i];
            if (ran_off || !bound_alone(tid, wt[i])) {
                PyObject *at = PyLong_FromSsize_t(i);
                if (!at || PyList_Append(drift, at) < 0) {
                    Py_XDECREF(at);
                    goto fail;
                }
                Py_DECREF(at);
            }
        }
        int code = r->state >= 0 && r->state < STATE_NAMES - 1 ? r->state : STATE_NAMES - 1;
        PyObject *t = end_thread(r, s, id, running ? ops : 0.0, PyTuple_GET_ITEM(states, code),
                                 n_ops, cls, fields);
        if (!t)
            goto fail;
        PyList_SET_ITEM(threads, i, t);
    }
    out = PyTuple_Pack(6, seen, threads, progress, errors, op_rates, drift);
    goto done;
fail:
    out = NULL;
done:
    Py_XDECREF(seen);
    Py_XDECREF(threads);
    Py_XDECREF(progress);
    Py_XDECREF(errors);
    Py_XDECREF(op_rates);
    Py_XDECREF(drift);
    release(v, 6);
    return out;
}

/* ends_ask(block, slots, word): post request `word` in every slot. */
PyObject *ipctop_ends_ask(PyObject *self, PyObject *a)
{
    PyObject *buf, *slots;
    unsigned int word;

    if (!PyArg_ParseTuple(a, "OOI", &buf, &slots, &word))
        return NULL;
    Py_buffer v[2] = {{0}};
    PyObject *out = NULL;
    if (view(buf, &v[0], 1, 1, "the counter block") < 0 || view(slots, &v[1], 0, 4, "slots") < 0)
        goto done;
    const int32_t *sl = v[1].buf;
    Py_ssize_t n = v[1].len / 4;
    if (check_slots(sl, n, v[0].len) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        struct end_slot *s = (struct end_slot *)((char *)v[0].buf + (Py_ssize_t)sl[i] * IPCTOP_SLOT_SIZE);
        __atomic_store_n(&s->stats_req, (uint32_t)word, __ATOMIC_RELAXED);
    }
    out = Py_NewRef(Py_None);
done:
    release(v, 2);
    return out;
}

/* ends_ended(block, slots) -> [position, ...] of the ends whose state is
 * failed or removed (counters.ENDED): Engine.poll's look at every end's state
 * in one pass, instead of a slot read in Python per end per sample. */
PyObject *ipctop_ends_ended(PyObject *self, PyObject *a)
{
    PyObject *buf, *slots;

    if (!PyArg_ParseTuple(a, "OO", &buf, &slots))
        return NULL;
    Py_buffer v[2] = {{0}};
    PyObject *out = NULL;
    if (view(buf, &v[0], 0, 1, "the counter block") < 0 || view(slots, &v[1], 0, 4, "slots") < 0)
        goto done;
    const int32_t *sl = v[1].buf;
    Py_ssize_t n = v[1].len / 4;
    if (check_slots(sl, n, v[0].len) < 0 || !(out = PyList_New(0)))
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        const struct end_slot *s =
            (const struct end_slot *)((const char *)v[0].buf + (Py_ssize_t)sl[i] * IPCTOP_SLOT_SIZE);
        int32_t state = s->state;
        if (state != ST_FAILED && state != ST_REMOVED)
            continue;
        PyObject *at = PyLong_FromSsize_t(i);
        if (!at || PyList_Append(out, at) < 0) {
            Py_XDECREF(at);
            Py_CLEAR(out);
            goto done;
        }
        Py_DECREF(at);
    }
done:
    release(v, 2);
    return out;
}
