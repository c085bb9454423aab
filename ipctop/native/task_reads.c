/* read_tasks(): every thread's /proc files for one sampler tick, in one call.
 *
 * At 2,048 threads the detail view opens three files per thread per tick; in
 * Python each open, read and parse is several microseconds of interpreter
 * work holding the GIL the UI thread needs. Here the whole pass runs with the
 * GIL released and only the numbers come back. It parses exactly as
 * engine/procfs.py does (tests/engine/test_task_reads.py compares the two on real
 * threads), which stays the fallback when this module is not built.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { F_VCSW, F_IVCSW, F_CPU, F_UTIME, F_STIME, F_RUN, F_WAIT, F_SLICES, F_MIGR, NFIELDS };

struct task_out {
    int gone;                   /* stat or status missing: the thread exited */
    long long v[NFIELDS];
    unsigned char have[NFIELDS]; /* 0: None (source missing or detail off) */
};

struct reader {
    char *buf;
    size_t cap;
    int err;                    /* errno of a failure that is not "gone" */
    const char *bad;            /* what failed to parse (ValueError) */
    char path[PATH_MAX + 16];   /* the file err or bad is about (a task dir and a name) */
};

/* "gone" as procfs._read means it: the file, or the task it belongs to, is not there. */
static int is_gone(int e)
{
    return e == ENOENT || e == ESRCH || e == ENOTDIR;
}

/* One thread's files: its directory, opened only when a file must be, and
 * the files a caller keeps open across ticks (FD_NONE: not kept). */
enum { K_STAT, K_STATUS, K_SCHED, K_SCHEDSTAT, NKEPT };
#define FD_NONE (-2) /* open, read and close every time */
#define FD_LATER (-1) /* not open yet: open it and keep it */

struct task_files {
    const char *shown; /* <proc>/<pid>/task/<tid> */
    int dir;           /* -1 until needed */
    int fd[NKEPT];
    int changed;       /* an fd was opened or closed: the caller's list is rewritten */
};

static const char *const kept_names[NKEPT] = {"stat", "status", "sched", "schedstat"};

static ssize_t pread_all(struct reader *r, int fd)
{
    size_t len = 0;
    for (;;) {
        if (len + 1 >= r->cap) {
            char *grown = realloc(r->buf, r->cap * 2);
            if (!grown) {
                errno = ENOMEM;
                return -1;
            }
            r->buf = grown;
            r->cap *= 2;
        }
        /* pread at 0 makes a kept seq_file render afresh: the numbers of now. */
        ssize_t n = pread(fd, r->buf + len, r->cap - 1 - len, (off_t)len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    r->buf[len] = '\0';
    return (ssize_t)len;
}

/* Reads one of the thread's files whole into r->buf, NUL-terminated. Returns
 * its length, -1 when gone, -2 on another error (r->err and r->path set). */
static ssize_t slurp(struct reader *r, struct task_files *f, int which)
{
    const char *name = kept_names[which];
    for (int fresh = 0;; fresh = 1) {
        int fd = f->fd[which];
        if (fd < 0) {
            fresh = 1;
            if (f->dir < 0)
                f->dir = open(f->shown, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_PATH);
            fd = f->dir < 0 ? -1 : openat(f->dir, name, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                break;
        }
        ssize_t n = pread_all(r, fd);
        int e = errno;
        if (n >= 0 && f->fd[which] == FD_LATER) {
            f->fd[which] = fd; /* kept for the next tick */
            f->changed = 1;
        } else if (n < 0 || f->fd[which] == FD_NONE) {
            close(fd);
            if (f->fd[which] >= 0) {
                f->fd[which] = FD_LATER;
                f->changed = 1;
            }
        }
        if (n >= 0)
            return n;
        errno = e;
        /* A kept file of a thread that exited: its tid may be a new thread's now. */
        if (fresh || e != ESRCH)
            break;
    }
    if (is_gone(errno))
        return -1;
    r->err = errno;
    snprintf(r->path, sizeof r->path, "%s/%s", f->shown, name);
    return -2;
}

/* int() of the text from p to the end of its line: optional blanks around it. */
static int line_int(const char *p, long long *out)
{
    char *end;
    while (*p == ' ' || *p == '\t')
        p++;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno)
        return -1;
    while (*end == ' ' || *end == '\t' || *end == '\r')
        end++;
    if (*end != '\n' && *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static void bad(struct reader *r, const char *shown, const char *name, const char *what)
{
    r->bad = what;
    snprintf(r->path, sizeof r->path, "%s/%s", shown, name);
}

/* Fields 14, 15 and 39 of stat (utime, stime, processor), counted after comm. */
static int parse_stat(struct reader *r, size_t len, struct task_out *t)
{
    /* comm may hold spaces and ")" itself; the last ")" ends it. */
    const char *close = memrchr(r->buf, ')', len);
    if (!close)
        return -1;
    const char *p = close + 1;
    long long want[3];
    int got = 0;
    /* After comm, field 3 (state) is token 0, so field n is token n - 3. */
    for (int tok = 0; got < 3; tok++) {
        while (*p == ' ' || *p == '\n')
            p++;
        if (!*p)
            return -1;
        if (tok == 11 || tok == 12 || tok == 36) {
            char *end;
            errno = 0;
            want[got++] = strtoll(p, &end, 10);
            if (end == p || errno || (*end != ' ' && *end != '\n' && *end != '\0'))
                return -1;
        }
        while (*p && *p != ' ' && *p != '\n')
            p++;
    }
    t->v[F_UTIME] = want[0];
    t->v[F_STIME] = want[1];
    t->v[F_CPU] = want[2];
    t->have[F_UTIME] = t->have[F_STIME] = t->have[F_CPU] = 1;
    return 0;
}

/* The number after `head` (which starts with a newline), or -1 if absent/bad. */
static int after(const char *buf, size_t len, const char *head, long long *out)
{
    const char *at = memmem(buf, len, head, strlen(head));
    return at ? line_int(at + strlen(head), out) : -1;
}

/* The number after the last ":" of the line that starts with `name` (after
 * the file's first line, as procfs._line looks): 0, 1 when absent, -1 if bad. */
static int sched_line(const char *buf, size_t len, const char *name, long long *out)
{
    char head[64];
    int hl = snprintf(head, sizeof head, "\n%s", name);
    const char *at = memmem(buf, len, head, (size_t)hl);
    if (!at)
        return 1;
    const char *eol = memchr(at + 1, '\n', len - (size_t)(at + 1 - buf));
    const char *colon = NULL;
    for (const char *q = at + 1; q < (eol ? eol : buf + len); q++)
        if (*q == ':')
            colon = q;
    return colon && line_int(colon + 1, out) == 0 ? 0 : -1;
}

/* sched's switch counts and migrations; *switches says whether the counts
 * were there (a kernel without sched leaves status to give them). */
static int parse_sched(struct reader *r, const char *shown, size_t n, struct task_out *t,
                       int *switches)
{
    static const char *const names[] = {"se.nr_migrations", "nr_voluntary_switches",
                                        "nr_involuntary_switches"};
    static const int slots[] = {F_MIGR, F_VCSW, F_IVCSW};
    int found[3];
    for (int i = 0; i < 3; i++) {
        found[i] = sched_line(r->buf, n, names[i], &t->v[slots[i]]);
        if (found[i] < 0) {
            bad(r, shown, "sched", "has a line without a number after its colon");
            return -2;
        }
    }
    t->have[F_MIGR] = found[0] == 0;
    *switches = found[1] == 0 && found[2] == 0;
    return 0;
}

/* 0 done, -1 gone, -2 error (r says which). With detail, sched is read before
 * status: it holds the same switch counts (the task's nvcsw and nivcsw) and is
 * read anyway for migrations, so status, the costliest file, is skipped. */
static int read_one(struct reader *r, struct task_files *f, int detail, struct task_out *t)
{
    int rc, switches = 0;
    ssize_t n = slurp(r, f, K_STAT);
    if (n < 0) {
        rc = (int)n;
        goto out;
    }
    if (parse_stat(r, (size_t)n, t) < 0) {
        bad(r, f->shown, "stat", "has no utime, stime and processor fields");
        rc = -2;
        goto out;
    }
    if (detail) {
        /* A missing sched or schedstat is a None figure, not a gone thread. */
        n = slurp(r, f, K_SCHED);
        if (n == -2 || (n >= 0 && parse_sched(r, f->shown, (size_t)n, t, &switches) < 0)) {
            rc = -2;
            goto out;
        }
    }
    if (!switches) {
        n = slurp(r, f, K_STATUS);
        if (n < 0) {
            rc = (int)n;
            goto out;
        }
        if (after(r->buf, (size_t)n, "\nvoluntary_ctxt_switches:", &t->v[F_VCSW]) < 0 ||
            after(r->buf, (size_t)n, "\nnonvoluntary_ctxt_switches:", &t->v[F_IVCSW]) < 0) {
            bad(r, f->shown, "status", "has no ctxt_switches lines");
            rc = -2;
            goto out;
        }
    }
    t->have[F_VCSW] = t->have[F_IVCSW] = 1;
    rc = 0;
    if (!detail)
        goto out;
    n = slurp(r, f, K_SCHEDSTAT);
    if (n == -2) {
        rc = -2;
        goto out;
    }
    if (n >= 0) {
        char *p = r->buf, *end;
        for (int i = 0; i < 3; i++) {
            errno = 0;
            long long v = strtoll(p, &end, 10);
            if (end == p || errno) {
                bad(r, f->shown, "schedstat", "does not start with three numbers");
                rc = -2;
                goto out;
            }
            t->v[F_RUN + i] = v;
            t->have[F_RUN + i] = 1;
            p = end;
        }
    }
out:
    if (f->dir >= 0)
        close(f->dir);
    f->dir = -1;
    return rc;
}

/* fds[i] (a list of NKEPT ints) into files[i]; FD_NONE for all without fds. */
static int take_fds(PyObject *fds, Py_ssize_t count, int *out)
{
    for (Py_ssize_t i = 0; i < count * NKEPT; i++)
        out[i] = FD_NONE;
    if (fds == Py_None)
        return 0;
    if (!PyList_Check(fds) || PyList_GET_SIZE(fds) != count) {
        PyErr_SetString(PyExc_ValueError, "fds must be a list as long as ids");
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *row = PyList_GET_ITEM(fds, i);
        if (!PyList_Check(row) || PyList_GET_SIZE(row) != NKEPT) {
            PyErr_SetString(PyExc_ValueError, "each fds entry must be a list of 4 ints");
            return -1;
        }
        for (int k = 0; k < NKEPT; k++) {
            long v = PyLong_AsLong(PyList_GET_ITEM(row, k));
            if (v == -1 && PyErr_Occurred())
                return -1;
            out[i * NKEPT + k] = (int)v;
        }
    }
    return 0;
}

/* The fds a call opened or closed, back into the caller's lists. */
static int give_fds(PyObject *fds, Py_ssize_t count, const int *in, const unsigned char *changed)
{
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!changed[i])
            continue;
        PyObject *row = PyList_GET_ITEM(fds, i);
        for (int k = 0; k < NKEPT; k++) {
            PyObject *v = PyLong_FromLong(in[i * NKEPT + k]);
            if (!v || PyList_SetItem(row, k, v) < 0)
                return -1;
        }
    }
    return 0;
}

PyObject *ipctop_read_tasks(PyObject *self, PyObject *a)
{
    const char *proc;
    PyObject *ids, *fds = Py_None;
    int detail;

    if (!PyArg_ParseTuple(a, "sOp|O", &proc, &ids, &detail, &fds))
        return NULL;
    if (strlen(proc) > PATH_MAX - 64) /* room for /<pid>/task/<tid> in every path */
        return PyErr_Format(PyExc_ValueError, "proc root too long: %.60s...", proc);
    PyObject *seq = PySequence_Fast(ids, "ids must be a sequence of (pid, tid)");
    if (!seq)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    long *pt = PyMem_RawMalloc(sizeof(long) * 2 * (size_t)(count ? count : 1));
    struct task_out *outs = PyMem_RawCalloc((size_t)(count ? count : 1), sizeof *outs);
    int *kept = PyMem_RawMalloc(sizeof(int) * NKEPT * (size_t)(count ? count : 1));
    unsigned char *changed = PyMem_RawCalloc((size_t)(count ? count : 1), 1);
    struct reader r = {.buf = malloc(4096), .cap = 4096};
    PyObject *list = NULL;
    if (!pt || !outs || !kept || !changed || !r.buf) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyArg_ParseTuple(item, "ll;ids must be (pid, tid) pairs", &pt[2 * i], &pt[2 * i + 1]))
            goto done;
    }
    if (take_fds(fds, count, kept) < 0)
        goto done;
    int rc = 0;
    Py_BEGIN_ALLOW_THREADS
    char shown[PATH_MAX];
    for (Py_ssize_t i = 0; i < count; i++) {
        struct task_files f = {.shown = shown, .dir = -1};
        snprintf(shown, sizeof shown, "%s/%ld/task/%ld", proc, pt[2 * i], pt[2 * i + 1]);
        memcpy(f.fd, &kept[i * NKEPT], sizeof f.fd);
        rc = read_one(&r, &f, detail, &outs[i]);
        for (int k = 0; rc == -1 && k < NKEPT; k++)
            if (f.fd[k] >= 0) { /* gone: none of its files will read again */
                close(f.fd[k]);
                f.fd[k] = FD_LATER;
                f.changed = 1;
            }
        memcpy(&kept[i * NKEPT], f.fd, sizeof f.fd);
        changed[i] = (unsigned char)f.changed;
        if (rc == -2)
            break;
        outs[i].gone = rc == -1;
    }
    Py_END_ALLOW_THREADS
    /* Even after an error: fds opened before it are the caller's to close. */
    if (fds != Py_None && give_fds(fds, count, kept, changed) < 0)
        goto done;
    if (rc == -2) {
        if (r.bad)
            PyErr_Format(PyExc_ValueError, "%s %s", r.path, r.bad);
        else {
            errno = r.err;
            PyErr_SetFromErrnoWithFilename(PyExc_OSError, r.path);
        }
        goto done;
    }
    list = PyList_New(count);
    if (!list)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *row;
        if (outs[i].gone) {
            row = Py_NewRef(Py_None);
        } else {
            row = PyTuple_New(NFIELDS);
            for (int f = 0; row && f < NFIELDS; f++) {
                PyObject *v = outs[i].have[f] ? PyLong_FromLongLong(outs[i].v[f]) : Py_NewRef(Py_None);
                if (!v) {
                    Py_CLEAR(row);
                    break;
                }
                PyTuple_SET_ITEM(row, f, v);
            }
        }
        if (!row) {
            Py_CLEAR(list);
            goto done;
        }
        PyList_SET_ITEM(list, i, row);
    }
done:
    free(r.buf);
    PyMem_RawFree(outs);
    PyMem_RawFree(pt);
    PyMem_RawFree(kept);
    PyMem_RawFree(changed);
    Py_DECREF(seq);
    return list;
}
