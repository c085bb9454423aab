/* Reading the per-round latency histograms from the monitor (see native.h).
 *
 * The ends never stop: a reading copies counts that may move while it runs,
 * so a difference is clamped at zero, and a total is whatever the buckets
 * held as they were passed (off by at most the rounds of that instant).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "native.h"

#define HIST_WORDS (1 + LAT_BUCKETS)

static int get_words(PyObject *o, Py_buffer *v, int writable, Py_ssize_t offset, const char *what)
{
    if (PyObject_GetBuffer(o, v, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0)
        return -1;
    if (offset < 0 || offset % 8 || offset + (Py_ssize_t)(HIST_WORDS * 8) > v->len) {
        PyBuffer_Release(v);
        PyErr_Format(PyExc_ValueError, "%s is too short for a histogram", what);
        return -1;
    }
    return 0;
}

/* lat_take(src, offset, prev, acc): acc += src[offset:] - prev; prev = src[offset:].
 * One pass over the live histogram, with no copy of it. */
PyObject *ipctop_lat_take(PyObject *self, PyObject *a)
{
    PyObject *src, *prev, *acc;
    Py_ssize_t offset;
    Py_buffer vs, vp, va;

    if (!PyArg_ParseTuple(a, "OnOO", &src, &offset, &prev, &acc))
        return NULL;
    if (get_words(src, &vs, 0, offset, "the source") < 0)
        return NULL;
    if (get_words(prev, &vp, 1, 0, "prev") < 0) {
        PyBuffer_Release(&vs);
        return NULL;
    }
    if (get_words(acc, &va, 1, 0, "acc") < 0) {
        PyBuffer_Release(&vs);
        PyBuffer_Release(&vp);
        return NULL;
    }
    const volatile uint64_t *cur = (const volatile uint64_t *)((char *)vs.buf + offset);
    uint64_t *p = vp.buf, *sum = va.buf;
    for (int i = 0; i < HIST_WORDS; i++) {
        uint64_t c = cur[i];
        if (c > p[i])
            sum[i] += c - p[i];
        p[i] = c;
    }
    PyBuffer_Release(&vs);
    PyBuffer_Release(&vp);
    PyBuffer_Release(&va);
    Py_RETURN_NONE;
}

/* lat_add(acc, h, ...): acc += each histogram, word by word. The sampler sums
 * every pair's histograms into the all-pairs figure as it reads them, instead
 * of zeroing a `prev` and taking each one again (3 % of a CPU at 256 pairs). */
PyObject *ipctop_lat_add(PyObject *self, PyObject *a)
{
    Py_ssize_t n = PyTuple_GET_SIZE(a);
    Py_buffer va, vh;

    if (n < 1) {
        PyErr_SetString(PyExc_TypeError, "lat_add(acc, h, ...) needs acc");
        return NULL;
    }
    if (get_words(PyTuple_GET_ITEM(a, 0), &va, 1, 0, "acc") < 0)
        return NULL;
    uint64_t *sum = va.buf;
    for (Py_ssize_t k = 1; k < n; k++) {
        if (get_words(PyTuple_GET_ITEM(a, k), &vh, 0, 0, "a histogram") < 0) {
            PyBuffer_Release(&va);
            return NULL;
        }
        const uint64_t *h = vh.buf;
        for (int i = 0; i < HIST_WORDS; i++)
            sum[i] += h[i];
        PyBuffer_Release(&vh);
    }
    PyBuffer_Release(&va);
    Py_RETURN_NONE;
}

/* Lower bound and width of bucket i (the inverse of lat_bucket). */
static void bucket_range(int i, double *low, double *width)
{
    if (i < LAT_SUB) {
        *low = i;
        *width = 1;
        return;
    }
    int e = 7 + (i - LAT_SUB) / LAT_HALF;
    int top = LAT_HALF + (i - LAT_SUB) % LAT_HALF;
    *width = (double)(1ULL << (e - 6));
    *low = top * *width;
}

static double bucket_mid(int i)
{
    double low, width;
    bucket_range(i, &low, &width);
    return width > 1 ? low + width / 2 : low;
}

/* lat_summary(acc, quantiles) -> (count, sum_ns, (value_ns per quantile), max_ns).
 * A quantile is the midpoint of the first bucket whose running count reaches
 * q * count; max is the midpoint of the highest bucket used. Values are None
 * when the histogram is empty. */
PyObject *ipctop_lat_summary(PyObject *self, PyObject *a)
{
    PyObject *acc, *qs;
    Py_buffer va;
    double q[16];

    if (!PyArg_ParseTuple(a, "OO", &acc, &qs))
        return NULL;
    PyObject *seq = PySequence_Fast(qs, "quantiles must be a sequence of floats");
    if (!seq)
        return NULL;
    Py_ssize_t nq = PySequence_Fast_GET_SIZE(seq);
    if (nq > 16) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "at most 16 quantiles");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < nq; k++)
        q[k] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, k));
    Py_DECREF(seq);
    if (PyErr_Occurred())
        return NULL;
    if (get_words(acc, &va, 0, 0, "acc") < 0)
        return NULL;
    const uint64_t *w = va.buf;
    uint64_t total = 0;
    int top = -1;
    for (int i = 0; i < LAT_BUCKETS; i++)
        if (w[1 + i]) {
            total += w[1 + i];
            top = i;
        }
    uint64_t sum = w[0];
    PyObject *vals = PyTuple_New(nq);
    if (!vals) {
        PyBuffer_Release(&va);
        return NULL;
    }
    uint64_t run = 0;
    int i = 0;
    for (Py_ssize_t k = 0; k < nq; k++) {
        PyObject *v;
        if (total == 0) {
            v = Py_NewRef(Py_None);
        } else {
            double want = q[k] * (double)total;
            if (want < 1)
                want = 1;
            /* quantiles come in rising order: the walk resumes where it was */
            while (i < LAT_BUCKETS && (double)(run + w[1 + i]) < want)
                run += w[1 + i++];
            v = PyFloat_FromDouble(bucket_mid(i < LAT_BUCKETS ? i : top));
        }
        if (!v) {
            Py_DECREF(vals);
            PyBuffer_Release(&va);
            return NULL;
        }
        PyTuple_SET_ITEM(vals, k, v);
    }
    PyBuffer_Release(&va);
    PyObject *mx = top < 0 ? Py_NewRef(Py_None) : PyFloat_FromDouble(bucket_mid(top));
    return Py_BuildValue("(KKNN)", (unsigned long long)total, (unsigned long long)sum, vals, mx);
}

/* lat_bucket(ns) -> the bucket the ends count ns in: lets tests check the
 * Python mirror of the layout against the C one. */
PyObject *ipctop_lat_bucket(PyObject *self, PyObject *a)
{
    unsigned long long v;
    if (!PyArg_ParseTuple(a, "K", &v))
        return NULL;
    return PyLong_FromUnsignedLong(lat_bucket(v));
}
