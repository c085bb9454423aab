/* The start gate of a bulk start (engine.py, Engine.add_pairs).
 *
 * Ends launched in bulk would start their rounds the moment each is launched,
 * and on a small box the thread launching the rest of the batch then waits for
 * CPU behind them (a chat room is 80 ends). So a gated end publishes its start
 * and then sleeps on one word in the counter block's control area until the
 * engine opens the gate. The word is in the MAP_SHARED block every end maps,
 * threads and forked children alike, so the futex is a shared one (no
 * FUTEX_PRIVATE_FLAG). It holds the id of the batch it holds back, or 0: an
 * end of an earlier batch that reaches it late is not held by a later one.
 */
#define _GNU_SOURCE
#include <Python.h>

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "native.h"

/* The timeout bounds how late an end stopped while gated sees its stop flag. */
#define GATE_POLL_NS (50 * 1000 * 1000)

int ipctop_gate_wait(const struct end_slot *s, uint32_t *gate, uint32_t id)
{
    while (!stop_requested(s)) {
        if (__atomic_load_n(gate, __ATOMIC_ACQUIRE) != id)
            return 0;
        struct timespec t = {0, GATE_POLL_NS};
        syscall(SYS_futex, gate, FUTEX_WAIT, id, &t, NULL, 0);
    }
    return 1;
}

/* gate_set(counters, offset, value): store the word and wake every end on it. */
PyObject *ipctop_gate_set(PyObject *self, PyObject *a)
{
    Py_buffer buf;
    Py_ssize_t off;
    unsigned int value;

    if (!PyArg_ParseTuple(a, "w*nI", &buf, &off, &value))
        return NULL;
    if (off < 0 || off % 4 || off + 4 > buf.len) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_IndexError, "gate word outside the counter block");
        return NULL;
    }
    uint32_t *gate = (uint32_t *)((char *)buf.buf + off);
    __atomic_store_n(gate, (uint32_t)value, __ATOMIC_RELEASE);
    long woken = syscall(SYS_futex, gate, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    PyBuffer_Release(&buf);
    if (woken < 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    return PyLong_FromLong(woken);
}
