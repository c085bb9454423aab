/* ipctop._native: the hot loops, run with the GIL released.
 *
 * run_end() runs one end of a pair in the calling thread (threads mode);
 * fork_end() runs it in a forked child that never returns to Python
 * (processes mode), so no interpreter state is touched after fork().
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "native.h"

static const struct workload_entry *tables[] = {
    ipctop_sysv_loops,
    ipctop_stream_loops,
    ipctop_posix_loops,
    ipctop_futex_loops,
    ipctop_spin_loops,
    ipctop_signal_loops,
    ipctop_sysv_multi_loops,
    ipctop_hackbench_loops,
    ipctop_chat_loops,
    NULL,
};

static const struct workload_entry *find_entry(const char *name)
{
    for (int t = 0; tables[t]; t++)
        for (const struct workload_entry *e = tables[t]; e->name; e++)
            if (strcmp(e->name, name) == 0)
                return e;
    return NULL;
}

static loop_fn find_loop(const char *name)
{
    const struct workload_entry *e = find_entry(name);
    return e ? e->loop : NULL;
}

/* Runs one end to completion; records tid, state and errno in its slot. */
static int run_loop(loop_fn loop, struct end_ctx *ctx, int cpu, int rt, uint32_t *gate,
                    uint32_t gate_id)
{
    struct end_slot *s = ctx->slot;
    int err;

    __atomic_store_n(&s->tid, (int32_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
    /* Threads inherit their creator's nice: an end made by a monitor thread
       that raised its own priority runs at nice 0 again (per thread on Linux). */
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0);
    if (errno == 0 && nice < 0)
        (void)setpriority(PRIO_PROCESS, 0, 0);
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) < 0) {
            err = errno;
            s->last_errno = err;
            __atomic_store_n(&s->state, ST_FAILED, __ATOMIC_RELEASE);
            return err;
        }
    }
    if (rt > 0) {
        /* rt-tests' -p: this thread only (a pid of 0 is the calling thread). */
        struct sched_param sp = {.sched_priority = rt};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
            err = errno;
            s->last_errno = err;
            __atomic_store_n(&s->state, ST_FAILED, __ATOMIC_RELEASE);
            return err;
        }
    }
    __atomic_store_n(&s->state, ST_RUNNING, __ATOMIC_RELEASE);
    /* After ST_RUNNING, which the engine waits for before it opens the gate. */
    if (gate && ipctop_gate_wait(s, gate, gate_id)) {
        __atomic_store_n(&s->state, ST_DONE, __ATOMIC_RELEASE);
        return 0;
    }
    err = loop(ctx);
    s->last_errno = err;
    int state = ST_DONE;
    if (err && !stop_requested(s))
        state = (err == EIDRM || err == EINVAL) ? ST_REMOVED : ST_FAILED;
    __atomic_store_n(&s->state, state, __ATOMIC_RELEASE);
    return err;
}

struct prepared {
    loop_fn loop;
    struct end_ctx ctx;
    int cpu;
    int rt;
    Py_buffer counters;
    Py_buffer shm;
    int have_shm;
    Py_buffer lat;
    int have_lat;
    uint32_t *gate; /* NULL: not held at the start (a single add, or no bulk start) */
    uint32_t gate_id;
};

static void release(struct prepared *p)
{
    PyBuffer_Release(&p->counters);
    if (p->have_shm)
        PyBuffer_Release(&p->shm);
    if (p->have_lat)
        PyBuffer_Release(&p->lat);
}

/* The end's latency area and its peer's, in the block `lat` (None: untimed). */
static int prepare_latency(struct prepared *p, PyObject *lat, Py_ssize_t slot, Py_ssize_t peer,
                           unsigned int every)
{
    if (lat == Py_None)
        return 0;
    if (PyObject_GetBuffer(lat, &p->lat, PyBUF_WRITABLE) < 0)
        return -1;
    p->have_lat = 1;
    Py_ssize_t areas = p->lat.len / IPCTOP_LAT_AREA;
    if (slot >= areas || peer < 0 || peer >= areas || every < 1) {
        PyErr_SetString(PyExc_ValueError, "latency area outside its block, or every < 1");
        return -1;
    }
    p->ctx.lat = (struct lat_area *)((char *)p->lat.buf + slot * IPCTOP_LAT_AREA);
    p->ctx.peer_lat = (struct lat_area *)((char *)p->lat.buf + peer * IPCTOP_LAT_AREA);
    p->ctx.lat_every = every;
    p->ctx.lat_left = 1; /* the first round is timed */
    return 0;
}

/* Parses (counters, slot, workload, role, cpu, args[, shm[, lat, peer_slot, every, rt,
 * think_ns[, gate_offset, gate_id]]]); a gate_offset of -1 is no gate. */
static int prepare(PyObject *a, struct prepared *p)
{
    Py_ssize_t slot, peer = -1;
    const char *name;
    PyObject *args, *shm = Py_None, *lat = Py_None;
    unsigned int every = 1;
    unsigned long long think_ns = 0;
    Py_ssize_t gate_off = -1;
    unsigned int gate_id = 0;

    memset(p, 0, sizeof(*p));
    if (!PyArg_ParseTuple(a, "w*nsiiO|OOnIiKnI", &p->counters, &slot, &name, &p->ctx.role,
                          &p->cpu, &args, &shm, &lat, &peer, &every, &p->rt, &think_ns, &gate_off,
                          &gate_id))
        return -1;
    if (gate_off >= 0) {
        if (gate_off % 4 || gate_off + 4 > p->counters.len || gate_id == 0) {
            PyBuffer_Release(&p->counters);
            PyErr_SetString(PyExc_ValueError, "gate word outside the counter block, or id 0");
            return -1;
        }
        p->gate = (uint32_t *)((char *)p->counters.buf + gate_off);
        p->gate_id = gate_id;
    }
    p->ctx.think_loops = think_ns ? ipctop_think_loops(think_ns) : 0;
    p->ctx.think_ns = think_ns;
    p->ctx.think_skip = 1; /* the first think is timed */
    if (slot < 0 || (slot + 1) * IPCTOP_SLOT_SIZE > p->counters.len) {
        PyBuffer_Release(&p->counters);
        PyErr_SetString(PyExc_IndexError, "slot outside the counter block");
        return -1;
    }
    p->loop = find_loop(name);
    if (!p->loop) {
        PyBuffer_Release(&p->counters);
        PyErr_Format(PyExc_ValueError, "no native loop for workload %s", name);
        return -1;
    }
    PyObject *seq = PySequence_Fast(args, "args must be a sequence of ints");
    if (!seq) {
        PyBuffer_Release(&p->counters);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > IPCTOP_MAX_ARGS) {
        Py_DECREF(seq);
        PyBuffer_Release(&p->counters);
        PyErr_SetString(PyExc_ValueError, "too many loop arguments");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        p->ctx.arg[i] = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (PyErr_Occurred()) {
        PyBuffer_Release(&p->counters);
        return -1;
    }
    if (shm != Py_None) {
        if (PyObject_GetBuffer(shm, &p->shm, PyBUF_WRITABLE) < 0) {
            PyBuffer_Release(&p->counters);
            return -1;
        }
        p->have_shm = 1;
        p->ctx.shm = p->shm.buf;
        p->ctx.shm_len = (size_t)p->shm.len;
    }
    if (prepare_latency(p, lat, slot, peer, every) < 0) {
        release(p);
        return -1;
    }
    p->ctx.slot = (struct end_slot *)((char *)p->counters.buf + slot * IPCTOP_SLOT_SIZE);
    return 0;
}

static PyObject *run_end(PyObject *self, PyObject *a)
{
    struct prepared p;
    int err;

    if (prepare(a, &p) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    err = run_loop(p.loop, &p.ctx, p.cpu, p.rt, p.gate, p.gate_id);
    Py_END_ALLOW_THREADS
    release(&p);
    return PyLong_FromLong(err);
}

static PyObject *fork_end(PyObject *self, PyObject *a)
{
    struct prepared p;
    pid_t parent = getpid();

    if (prepare(a, &p) < 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        /* The child runs only syscalls and its loop, then _exit()s. */
        sigset_t none;
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGINT, SIG_IGN); /* the parent owns the orderly shutdown */
        signal(SIGHUP, SIG_IGN);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        _exit(run_loop(p.loop, &p.ctx, p.cpu, p.rt, p.gate, p.gate_id) ? 1 : 0);
    }
    int err = errno;
    release(&p);
    if (pid < 0) {
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return PyLong_FromLong(pid);
}

static PyObject *msg_create(PyObject *self, PyObject *a)
{
    long key;
    int mode;
    if (!PyArg_ParseTuple(a, "li", &key, &mode))
        return NULL;
    int id = msgget((key_t)key, IPC_CREAT | IPC_EXCL | (mode & 0777));
    if (id < 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    return PyLong_FromLong(id);
}

static PyObject *sem_create(PyObject *self, PyObject *a)
{
    long key;
    int mode;
    PyObject *init;
    if (!PyArg_ParseTuple(a, "liO", &key, &mode, &init))
        return NULL;
    PyObject *seq = PySequence_Fast(init, "initial values must be a sequence");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n < 1 || n > 65535) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "bad semaphore count");
        return NULL;
    }
    unsigned short *vals = PyMem_Calloc((size_t)n, sizeof(*vals));
    if (!vals) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++)
        vals[i] = (unsigned short)PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (PyErr_Occurred()) {
        PyMem_Free(vals);
        return NULL;
    }
    int id = semget((key_t)key, (int)n, IPC_CREAT | IPC_EXCL | (mode & 0777));
    if (id < 0) {
        PyMem_Free(vals);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    union semun { int val; struct semid_ds *buf; unsigned short *array; } arg;
    arg.array = vals;
    if (semctl(id, 0, SETALL, arg) < 0) {
        int err = errno;
        semctl(id, 0, IPC_RMID);
        PyMem_Free(vals);
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    PyMem_Free(vals);
    return PyLong_FromLong(id);
}

/* IPC_RMID; returns False when the id was already gone (EINVAL/EIDRM). */
static PyObject *rmid(PyObject *self, PyObject *a)
{
    const char *kind;
    int id, r;
    if (!PyArg_ParseTuple(a, "si", &kind, &id))
        return NULL;
    if (strcmp(kind, "msg") == 0)
        r = msgctl(id, IPC_RMID, NULL);
    else if (strcmp(kind, "sem") == 0)
        r = semctl(id, 0, IPC_RMID);
    else {
        PyErr_SetString(PyExc_ValueError, "kind must be msg or sem");
        return NULL;
    }
    if (r < 0) {
        if (errno == EINVAL || errno == EIDRM)
            Py_RETURN_FALSE;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    Py_RETURN_TRUE;
}

/* Sends one ping of `size` bytes (16 by default) carrying a pair id, without
 * blocking: wake-up markers and test plants. */
static PyObject *msg_send(PyObject *self, PyObject *a)
{
    int id;
    long type;
    long long pair;
    Py_ssize_t size = 16;
    if (!PyArg_ParseTuple(a, "ilL|n", &id, &type, &pair, &size))
        return NULL;
    if (size < 1 || size > (1 << 24)) {
        PyErr_SetString(PyExc_ValueError, "message size outside 1..16 MiB");
        return NULL;
    }
    struct { long mtype; char text[]; } *m = PyMem_Calloc(1, sizeof(long) + (size_t)size);
    if (!m)
        return PyErr_NoMemory();
    int64_t p64 = pair;
    m->mtype = type;
    memcpy(m->text, &p64, (size_t)size < sizeof(p64) ? (size_t)size : sizeof(p64));
    int r = msgsnd(id, m, (size_t)size, IPC_NOWAIT);
    int err = errno;
    PyMem_Free(m);
    if (r < 0) {
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    Py_RETURN_NONE;
}

/* Removes every queued message of one type; returns how many. */
static PyObject *msg_drain(PyObject *self, PyObject *a)
{
    int id;
    long type;
    long n = 0;
    if (!PyArg_ParseTuple(a, "il", &id, &type))
        return NULL;
    struct { long mtype; char text[64]; } m;
    while (msgrcv(id, &m, sizeof(m.text), type, IPC_NOWAIT | MSG_NOERROR) >= 0)
        n++;
    if (errno != ENOMSG && errno != EIDRM && errno != EINVAL)
        return PyErr_SetFromErrno(PyExc_OSError);
    return PyLong_FromLong(n);
}

/* Runs a workload's setup or wake hook on a pair's shared area; returns errno
 * (0 also when the workload has no such hook). */
static PyObject *pair_hook(PyObject *self, PyObject *a)
{
    const char *name, *hook;
    int role;
    PyObject *args, *shm = Py_None;
    struct end_ctx ctx;
    Py_buffer view;
    int have_view = 0, err;

    if (!PyArg_ParseTuple(a, "ssiO|O", &name, &hook, &role, &args, &shm))
        return NULL;
    const struct workload_entry *e = find_entry(name);
    if (!e)
        return PyErr_Format(PyExc_ValueError, "no native loop for workload %s", name);
    loop_fn fn;
    if (strcmp(hook, "setup") == 0)
        fn = e->setup;
    else if (strcmp(hook, "wake") == 0)
        fn = e->wake;
    else
        return PyErr_Format(PyExc_ValueError, "hook must be setup or wake, not %s", hook);
    if (!fn)
        return PyLong_FromLong(0);
    memset(&ctx, 0, sizeof(ctx));
    ctx.role = role;
    PyObject *seq = PySequence_Fast(args, "args must be a sequence of ints");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n && i < IPCTOP_MAX_ARGS; i++)
        ctx.arg[i] = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (PyErr_Occurred())
        return NULL;
    if (shm != Py_None) {
        if (PyObject_GetBuffer(shm, &view, PyBUF_WRITABLE) < 0)
            return NULL;
        have_view = 1;
        ctx.shm = view.buf;
        ctx.shm_len = (size_t)view.len;
    }
    err = fn(&ctx);
    if (have_view)
        PyBuffer_Release(&view);
    return PyLong_FromLong(err);
}

/* mq_open(O_RDWR|O_CREAT|O_EXCL) of a new queue; returns its descriptor. */
static PyObject *mq_create(PyObject *self, PyObject *a)
{
    const char *name;
    int mode;
    long maxmsg, msgsize;
    if (!PyArg_ParseTuple(a, "sill", &name, &mode, &maxmsg, &msgsize))
        return NULL;
    struct mq_attr attr = {.mq_maxmsg = maxmsg, .mq_msgsize = msgsize};
    mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)(mode & 0777), &attr);
    if (q == (mqd_t)-1)
        return PyErr_SetFromErrnoWithFilename(PyExc_OSError, name);
    return PyLong_FromLong((long)q);
}

/* mq_unlink; returns False when the name was already gone. */
static PyObject *mq_remove(PyObject *self, PyObject *a)
{
    const char *name;
    if (!PyArg_ParseTuple(a, "s", &name))
        return NULL;
    if (mq_unlink(name) < 0) {
        if (errno == ENOENT)
            Py_RETURN_FALSE;
        return PyErr_SetFromErrnoWithFilename(PyExc_OSError, name);
    }
    Py_RETURN_TRUE;
}

static PyObject *workloads(PyObject *self, PyObject *unused)
{
    PyObject *out = PyList_New(0);
    if (!out)
        return NULL;
    for (int t = 0; tables[t]; t++)
        for (const struct workload_entry *e = tables[t]; e->name; e++) {
            PyObject *s = PyUnicode_FromString(e->name);
            if (!s || PyList_Append(out, s) < 0) {
                Py_XDECREF(s);
                Py_DECREF(out);
                return NULL;
            }
            Py_DECREF(s);
        }
    return out;
}

PyObject *ipctop_lat_take(PyObject *self, PyObject *a);
PyObject *ipctop_lat_summary(PyObject *self, PyObject *a);
PyObject *ipctop_lat_add(PyObject *self, PyObject *a);
PyObject *ipctop_lat_bucket(PyObject *self, PyObject *a);
PyObject *ipctop_lat_read(PyObject *self, PyObject *a);
PyObject *ipctop_lat_pairs(PyObject *self, PyObject *a);
PyObject *ipctop_hackbench_run(PyObject *self, PyObject *a);
PyObject *ipctop_read_tasks(PyObject *self, PyObject *a);
PyObject *ipctop_gate_set(PyObject *self, PyObject *a);
PyObject *ipctop_ends_read(PyObject *self, PyObject *a);
PyObject *ipctop_ends_figures(PyObject *self, PyObject *a);
PyObject *ipctop_ends_ask(PyObject *self, PyObject *a);
PyObject *ipctop_ends_ended(PyObject *self, PyObject *a);

/* Where each field of the counter slot is: tests/engine/test_workload_registry.py
 * checks that engine/counters.py reads the same offsets. */
static PyObject *slot_layout(PyObject *self, PyObject *unused)
{
#define FIELD(name) {#name, offsetof(struct end_slot, name)}
    static const struct {
        const char *name;
        size_t offset;
    } fields[] = {
        FIELD(rounds), FIELD(errors), FIELD(tid), FIELD(state), FIELD(last_errno),
        FIELD(stop), FIELD(bad_value), FIELD(ops), FIELD(failed_op), FIELD(stats_req),
        FIELD(stats_ack), FIELD(cpu), FIELD(stats_ns), FIELD(nvcsw), FIELD(nivcsw),
    };
#undef FIELD
    PyObject *out = PyDict_New();
    if (!out)
        return NULL;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        PyObject *v = PyLong_FromSize_t(fields[i].offset);
        if (!v || PyDict_SetItemString(out, fields[i].name, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(v);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"run_end", run_end, METH_VARARGS,
     "run_end(counters, slot, workload, role, cpu, args[, shm[, lat, peer, every, rt, think_ns"
     "[, gate_offset, gate_id]]]) -> errno; GIL released"},
    {"fork_end", fork_end, METH_VARARGS,
     "fork_end(counters, slot, workload, role, cpu, args[, shm]) -> pid of a C-only child"},
    {"msg_create", msg_create, METH_VARARGS, "msg_create(key, mode) -> msqid (IPC_EXCL)"},
    {"sem_create", sem_create, METH_VARARGS, "sem_create(key, mode, values) -> semid (IPC_EXCL)"},
    {"rmid", rmid, METH_VARARGS, "rmid('msg'|'sem', id) -> False if already gone"},
    {"msg_send", msg_send, METH_VARARGS, "msg_send(msqid, type, pair[, size]) without blocking"},
    {"msg_drain", msg_drain, METH_VARARGS, "msg_drain(msqid, type) -> messages removed"},
    {"pair_hook", pair_hook, METH_VARARGS,
     "pair_hook(workload, 'setup'|'wake', role, args[, shm]) -> errno"},
    {"mq_create", mq_create, METH_VARARGS,
     "mq_create(name, mode, maxmsg, msgsize) -> mqd (O_EXCL)"},
    {"mq_unlink", mq_remove, METH_VARARGS, "mq_unlink(name) -> False if already gone"},
    {"gate_set", ipctop_gate_set, METH_VARARGS,
     "gate_set(counters, offset, value) -> ends woken: store the start gate's word, wake all"},
    {"workloads", workloads, METH_NOARGS, "names of the workloads with a native loop"},
    {"slot_layout", slot_layout, METH_NOARGS, "{field: offset} of struct end_slot"},
    {"lat_take", ipctop_lat_take, METH_VARARGS,
     "lat_take(src, offset, prev, acc): acc += histogram at offset - prev; prev = it"},
    {"lat_add", ipctop_lat_add, METH_VARARGS, "lat_add(acc, h, ...): acc += each histogram"},
    {"lat_summary", ipctop_lat_summary, METH_VARARGS,
     "lat_summary(acc, quantiles) -> (count, sum_ns, values_ns, max_ns)"},
    {"lat_bucket", ipctop_lat_bucket, METH_VARARGS, "lat_bucket(ns) -> bucket index"},
    {"lat_read", ipctop_lat_read, METH_VARARGS,
     "lat_read(src, snap, old, slots, all_rtt, all_oneway, quantiles) -> [(rtt, oneway), ...]"},
    {"lat_pairs", ipctop_lat_pairs, METH_VARARGS,
     "lat_pairs(src, snap, old, claimed, slots, tids, all_rtt, all_oneway, quantiles, indexes, "
     "classes) -> [PairLatency, ...]"},
    {"hackbench_run", ipctop_hackbench_run, METH_VARARGS,
     "hackbench_run(groups, fds, loops, size, pipes, processes, groups_too=False) -> seconds "
     "or (seconds, group seconds, task CPUs); GIL released"},
    {"read_tasks", ipctop_read_tasks, METH_VARARGS,
     "read_tasks(proc, [(pid, tid), ...], detail[, fds]) -> [None | 9 numbers]; GIL released"},
    {"ends_read", ipctop_ends_read, METH_VARARGS,
     "ends_read(counters, slots, detail, prev, prev_idx) -> (reading, [end read from /proc, ...])"},
    {"ends_figures", ipctop_ends_figures, METH_VARARGS,
     "ends_figures(reading, prev, prev_idx, tasks, started, inactive, watch, ident, now, dt, "
     "cls, fields, states, n_ops) -> (seen, threads, progress, errors, op_rates, drift)"},
    {"ends_ask", ipctop_ends_ask, METH_VARARGS, "ends_ask(counters, slots, word): post a request"},
    {"ends_ended", ipctop_ends_ended, METH_VARARGS,
     "ends_ended(counters, slots) -> [position of an end failed or removed, ...]"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "ipctop._native", NULL, -1, methods};

PyMODINIT_FUNC PyInit__native(void)
{
    PyObject *m = PyModule_Create(&moddef);
    if (m && (PyModule_AddIntConstant(m, "SLOT_SIZE", IPCTOP_SLOT_SIZE) < 0 ||
              PyModule_AddIntConstant(m, "LAT_AREA", IPCTOP_LAT_AREA) < 0 ||
              PyModule_AddIntConstant(m, "LAT_BUCKETS", LAT_BUCKETS) < 0 ||
              PyModule_AddIntConstant(m, "LAT_RTT", offsetof(struct lat_area, rtt)) < 0 ||
              PyModule_AddIntConstant(m, "LAT_ONEWAY", offsetof(struct lat_area, oneway)) < 0 ||
              PyModule_AddIntConstant(m, "LAT_USED", offsetof(struct lat_hist, used)) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
