/* The Python face of hackbench_core.h: the fixed run in threads (process mode
 * goes through the launcher executable, engine/workloads/hackbench_launch.py). */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>

#include "hackbench_core.h"

/* Per group, the seconds to its last task's end; per task, the CPU it ended on. */
static PyObject *per_group(const struct hb_run *r, const struct timespec *t0, double seconds)
{
    size_t ntasks = (size_t)r->groups * 2 * (size_t)r->nfds;
    double *times = malloc(sizeof(double) * (size_t)r->groups);
    int *where = malloc(sizeof(int) * ntasks);
    PyObject *tl = NULL, *cl = NULL;
    if (!times || !where) {
        PyErr_NoMemory();
        goto fail;
    }
    hb_group_times(r, t0, times, where);
    tl = PyList_New(r->groups);
    cl = PyList_New((Py_ssize_t)ntasks);
    if (!tl || !cl)
        goto fail;
    for (int g = 0; g < r->groups; g++) {
        PyObject *f = PyFloat_FromDouble(times[g]);
        if (!f)
            goto fail;
        PyList_SET_ITEM(tl, g, f);
    }
    for (size_t i = 0; i < ntasks; i++) {
        PyObject *c = PyLong_FromLong(where[i]);
        if (!c)
            goto fail;
        PyList_SET_ITEM(cl, (Py_ssize_t)i, c);
    }
    free(times);
    free(where);
    return Py_BuildValue("(dNN)", seconds, tl, cl);
fail:
    free(times);
    free(where);
    Py_XDECREF(tl);
    Py_XDECREF(cl);
    return NULL;
}

/* hackbench_run(groups, fds, loops, size, pipes, processes, groups_too=False) -> seconds,
 * or (seconds, [seconds per group], [CPU per task]) with groups_too; OSError on failure. */
PyObject *ipctop_hackbench_run(PyObject *self, PyObject *a)
{
    struct hb_run r;
    Py_ssize_t size;
    int err, groups_too = 0;
    double seconds = 0.0;
    struct timespec t0 = {0};

    memset(&r, 0, sizeof(r));
    r.ready[0] = r.ready[1] = r.wake[0] = r.wake[1] = -1;
    if (!PyArg_ParseTuple(a, "iilnpp|p", &r.groups, &r.nfds, &r.loops, &size, &r.pipes, &r.procs,
                          &groups_too))
        return NULL;
    if (r.groups < 1 || r.nfds < 1 || r.loops < 1 || size < 1 || size > (1 << 24) ||
        (size_t)r.groups * (size_t)r.nfds > (1u << 20)) {
        PyErr_SetString(PyExc_ValueError, "groups, fds, loops and size must be positive");
        return NULL;
    }
    r.size = (size_t)size;
    Py_BEGIN_ALLOW_THREADS
    err = hb_run(&r, &seconds, &t0);
    Py_END_ALLOW_THREADS
    size_t n = (size_t)r.groups * 2 * (size_t)r.nfds;
    PyObject *out = NULL;
    if (err) {
        errno = err;
        PyErr_SetFromErrno(PyExc_OSError);
    } else if (!groups_too)
        out = PyFloat_FromDouble(seconds);
    else
        out = per_group(&r, &t0, seconds);
    if (r.ends)
        munmap(r.ends, n * sizeof(*r.ends));
    return out;
}
