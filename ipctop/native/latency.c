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

/* The buckets a walk visits: bit i of words[i / 64]. */
typedef uint64_t lat_bits[LAT_USED_WORDS];

#define FOR_EACH_BIT(bits, i, body)                                      \
    for (int w_ = 0; w_ < LAT_USED_WORDS; w_++) {                        \
        for (uint64_t m_ = (bits)[w_]; m_; m_ &= m_ - 1) {                \
            int i = w_ * 64 + __builtin_ctzll(m_);                       \
            body                                                         \
        }                                                                \
    }

static int parse_quantiles(PyObject *qs, double *q)
{
    PyObject *seq = PySequence_Fast(qs, "quantiles must be a sequence of floats");
    if (!seq)
        return -1;
    Py_ssize_t nq = PySequence_Fast_GET_SIZE(seq);
    if (nq > 16) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "at most 16 quantiles");
        return -1;
    }
    for (Py_ssize_t k = 0; k < nq; k++)
        q[k] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, k));
    Py_DECREF(seq);
    return PyErr_Occurred() ? -1 : (int)nq;
}

/* The walk of histogram w over the buckets in `visit` (every count outside
 * them is zero): its count, the highest bucket used in *top (-1: none), and
 * in at[k] the bucket of quantile q[k]: the first whose running count reaches
 * q * count. */
static uint64_t walk(const uint64_t *w, const uint64_t *visit, const double *q, int nq, int *top,
                     int *at)
{
    uint64_t total = 0, run = 0;
    int k = 0;
    *top = -1;
    FOR_EACH_BIT(visit, i, if (w[1 + i]) {
        total += w[1 + i];
        *top = i;
    })
    FOR_EACH_BIT(visit, i, {
        run += w[1 + i];
        /* quantiles come in rising order: each resumes where the last stopped */
        while (k < nq && (double)run >= (q[k] * (double)total < 1 ? 1 : q[k] * (double)total))
            at[k++] = i;
    })
    while (k < nq)
        at[k++] = *top; /* rounding left q * count a hair above the count */
    return total;
}

/* (count, sum_ns, (value_ns per quantile), max_ns) of histogram w (see walk);
 * a value is a bucket's midpoint, None when the histogram is empty. */
static PyObject *summary_of(const uint64_t *w, const uint64_t *visit, const double *q, int nq)
{
    int top, at[16];
    uint64_t total = walk(w, visit, q, nq, &top, at);
    PyObject *vals = PyTuple_New(nq);
    if (!vals)
        return NULL;
    for (int k = 0; k < nq; k++) {
        PyObject *v = total ? PyFloat_FromDouble(bucket_mid(at[k])) : Py_NewRef(Py_None);
        if (!v) {
            Py_DECREF(vals);
            return NULL;
        }
        PyTuple_SET_ITEM(vals, k, v);
    }
    PyObject *mx = top < 0 ? Py_NewRef(Py_None) : PyFloat_FromDouble(bucket_mid(top));
    if (!mx) {
        Py_DECREF(vals);
        return NULL;
    }
    return Py_BuildValue("(KKNN)", (unsigned long long)total, (unsigned long long)w[0], vals, mx);
}

/* lat_summary(acc, quantiles) -> (count, sum_ns, values_ns, max_ns) of one histogram. */
PyObject *ipctop_lat_summary(PyObject *self, PyObject *a)
{
    PyObject *acc, *qs;
    Py_buffer va;
    double q[16];
    lat_bits every;

    if (!PyArg_ParseTuple(a, "OO", &acc, &qs))
        return NULL;
    int nq = parse_quantiles(qs, q);
    if (nq < 0)
        return NULL;
    if (get_words(acc, &va, 0, 0, "acc") < 0)
        return NULL;
    memset(every, 0xff, sizeof every);
    PyObject *out = summary_of(va.buf, every, q, nq);
    PyBuffer_Release(&va);
    return out;
}

/* One end's histogram at `cur` since the snapshot `old`: each used bucket's
 * difference (clamped at zero: see the top) goes to `tmp` and `all`, its count to
 * `snap`, and a bucket that moved joins `visit`. Only those: at 1,024 pairs on
 * 2 CPUs an end had used 166 buckets (median) and moved 23 in half a second, and
 * the walks over every used bucket were a fifth of the reading. */
static void take_used(const volatile uint64_t *cur, uint64_t *snap, const uint64_t *old,
                      uint64_t *tmp, uint64_t *all, uint64_t *visit)
{
    const volatile uint64_t *used = cur + HIST_WORDS;
    uint64_t c = cur[0], d = c > old[0] ? c - old[0] : 0;
    snap[0] = c;
    tmp[0] += d;
    all[0] += d;
    lat_bits bits;
    for (int w = 0; w < LAT_USED_WORDS; w++)
        bits[w] = used[w];
    FOR_EACH_BIT(bits, i, {
        c = cur[1 + i];
        snap[1 + i] = c;
        if (c > old[1 + i]) {
            d = c - old[1 + i];
            tmp[1 + i] += d;
            all[1 + i] += d;
            visit[i >> 6] |= 1ULL << (i & 63);
        }
    })
}

static void zero_visited(uint64_t *tmp, const uint64_t *visit)
{
    tmp[0] = 0;
    FOR_EACH_BIT(visit, i, tmp[1 + i] = 0;)
}

/* What lat_pairs hands out instead of lat_read's tuples: latency.py's classes
 * and their fields' names, PairLatency (pair, rtt, oneway) and LatencySummary
 * (n, mean, one per quantile, max). */
struct made {
    PyObject *pair_cls, *pair_fields, *summary_cls, *summary_fields;
    PyObject *empty; /* () for object.__new__ */
};

/* cls(*vals) as its frozen dataclass __init__ makes it: object.__new__, then
 * object.__setattr__ per field (latency.py's classes have no __post_init__:
 * a test checks). */
static PyObject *frozen(PyObject *cls, PyObject *fields, PyObject *const *vals, PyObject *empty)
{
    PyObject *o = PyBaseObject_Type.tp_new((PyTypeObject *)cls, empty, NULL);
    if (!o)
        return NULL;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(fields); k++)
        if (PyObject_GenericSetAttr(o, PyTuple_GET_ITEM(fields, k), vals[k]) < 0) {
            Py_DECREF(o);
            return NULL;
        }
    return o;
}

/* sum / n as Python's int / int gives it: one rounding of the exact quotient,
 * which a double division matches while both are exact doubles. */
static PyObject *mean_of(uint64_t sum, uint64_t n)
{
    if (!n)
        return Py_NewRef(Py_None);
    if (sum <= (1ULL << 53) && n <= (1ULL << 53))
        return PyFloat_FromDouble((double)sum / (double)n);
    PyObject *a = PyLong_FromUnsignedLongLong(sum), *b = a ? PyLong_FromUnsignedLongLong(n) : NULL;
    PyObject *out = b ? PyNumber_TrueDivide(a, b) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    return out;
}

/* latency._summary(summary_of(...)), made here: a LatencySummary. */
static PyObject *summary_object(const uint64_t *w, const uint64_t *visit, const double *q, int nq,
                                const struct made *m)
{
    int top, at[16], nv = nq + 3;
    uint64_t total = walk(w, visit, q, nq, &top, at);
    PyObject *vals[16 + 3] = {NULL}, *o = NULL;
    if (!(vals[0] = PyLong_FromUnsignedLongLong(total)) || !(vals[1] = mean_of(w[0], total)))
        goto done;
    for (int k = 0; k < nq; k++)
        if (!(vals[2 + k] = total ? PyFloat_FromDouble(bucket_mid(at[k])) : Py_NewRef(Py_None)))
            goto done;
    if (!(vals[nv - 1] = top < 0 ? Py_NewRef(Py_None) : PyFloat_FromDouble(bucket_mid(top))))
        goto done;
    o = frozen(m->summary_cls, m->summary_fields, vals, m->empty);
done:
    for (int k = 0; k < nv; k++)
        Py_XDECREF(vals[k]);
    return o;
}

/* One pair's result: (rtt, oneway) summaries as tuples, or its PairLatency. */
static PyObject *pair_result(const uint64_t *rtt, const uint64_t *visit_rtt, const uint64_t *ow,
                             const uint64_t *visit_ow, const double *q, int nq, PyObject *index,
                             const struct made *m)
{
    PyObject *r, *o, *out = NULL;
    if (!m) {
        r = summary_of(rtt, visit_rtt, q, nq);
        o = r ? summary_of(ow, visit_ow, q, nq) : NULL;
        out = o ? PyTuple_Pack(2, r, o) : NULL;
    } else {
        r = summary_object(rtt, visit_rtt, q, nq, m);
        o = r ? summary_object(ow, visit_ow, q, nq, m) : NULL;
        PyObject *vals[3] = {index, r, o};
        out = o ? frozen(m->pair_cls, m->pair_fields, vals, m->empty) : NULL;
    }
    Py_XDECREF(r);
    Py_XDECREF(o);
    return out;
}

/* A slot read for another end than last time starts from zero: everything
 * since that end started (claimed: the tid each slot was last read for, -1:
 * never; tids: each listed slot's end now). */
static void claim(int64_t *claimed, const int32_t *sl, const int64_t *tids, Py_ssize_t n,
                  uint64_t *snap, uint64_t *old, Py_ssize_t per_slot)
{
    for (Py_ssize_t e = 0; e < n; e++)
        if (claimed[sl[e]] != tids[e]) {
            memset(snap + sl[e] * per_slot, 0, (size_t)per_slot * 8);
            memset(old + sl[e] * per_slot, 0, (size_t)per_slot * 8);
            claimed[sl[e]] = tids[e];
        }
}

/* The pass of lat_read and lat_pairs. slots holds (A, B) counter slots per
 * pair (int32); snap and old are the tracker's two snapshots, each holding per
 * slot the round-trip then the one-way histogram as last read (old: the
 * reading before, which snap is written over). Only buckets an end ever used
 * are read, and each pair's summaries come from one scratch histogram. With
 * `m`, claims come first (claimed, tids: see claim) and each pair is made a
 * PairLatency of its index in `indexes`. */
static PyObject *read_pairs(PyObject *src, PyObject *snap, PyObject *old, PyObject *slots,
                            PyObject *all_rtt, PyObject *all_ow, PyObject *qs, PyObject *claimed,
                            PyObject *tids, PyObject *indexes, const struct made *m)
{
    double q[16];
    int nq = parse_quantiles(qs, q);
    if (nq < 0)
        return NULL;
    Py_buffer vs = {0}, vn = {0}, vo = {0}, vl = {0}, vr = {0}, vw = {0}, vc = {0}, vt = {0};
    PyObject *out = NULL;
    uint64_t *tmp_rtt = NULL;
    if (PyObject_GetBuffer(src, &vs, PyBUF_SIMPLE) < 0 ||
        PyObject_GetBuffer(snap, &vn, PyBUF_WRITABLE) < 0 ||
        PyObject_GetBuffer(old, &vo, m ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0 ||
        PyObject_GetBuffer(slots, &vl, PyBUF_SIMPLE) < 0 ||
        get_words(all_rtt, &vr, 1, 0, "all_rtt") < 0 || get_words(all_ow, &vw, 1, 0, "all_oneway") < 0 ||
        (m && (PyObject_GetBuffer(claimed, &vc, PyBUF_WRITABLE) < 0 ||
               PyObject_GetBuffer(tids, &vt, PyBUF_SIMPLE) < 0)))
        goto done;
    Py_ssize_t areas = vs.len / IPCTOP_LAT_AREA, per_slot = 2 * HIST_WORDS;
    if (vn.len != vo.len || vn.len < areas * per_slot * 8 || vl.len % 8) {
        PyErr_SetString(PyExc_ValueError, "lat_read: snapshots or slots of the wrong size");
        goto done;
    }
    const int32_t *sl = vl.buf;
    Py_ssize_t npairs = vl.len / 8;
    for (Py_ssize_t p = 0; p < 2 * npairs; p++)
        if (sl[p] < 0 || sl[p] >= areas) {
            PyErr_Format(PyExc_ValueError, "lat_read: slot %d outside the block", sl[p]);
            goto done;
        }
    if (m) {
        if (vc.len < areas * 8 || vt.len != 2 * npairs * 8 || !PyList_Check(indexes) ||
            PyList_GET_SIZE(indexes) != npairs) {
            PyErr_SetString(PyExc_ValueError, "lat_pairs: claimed needs an int64 per slot, tids "
                                              "one per end, indexes a list of one per pair");
            goto done;
        }
        claim(vc.buf, sl, vt.buf, 2 * npairs, vn.buf, vo.buf, per_slot);
    }
    if (!(out = PyList_New(npairs)))
        goto done;
    /* The scratch histograms, zero between pairs: a call's own, not static, as
     * making a pair's objects may run a collection whose finalizers let another
     * thread read its own tracker meanwhile. */
    if (!(tmp_rtt = PyMem_Calloc(2 * HIST_WORDS, sizeof *tmp_rtt))) {
        PyErr_NoMemory();
        Py_CLEAR(out);
        goto done;
    }
    uint64_t *tmp_ow = tmp_rtt + HIST_WORDS;
    for (Py_ssize_t p = 0; p < npairs; p++) {
        const char *area_a = (const char *)vs.buf + (Py_ssize_t)sl[2 * p] * IPCTOP_LAT_AREA;
        const char *area_b = (const char *)vs.buf + (Py_ssize_t)sl[2 * p + 1] * IPCTOP_LAT_AREA;
        uint64_t *snap_a = (uint64_t *)vn.buf + sl[2 * p] * per_slot;
        uint64_t *snap_b = (uint64_t *)vn.buf + sl[2 * p + 1] * per_slot;
        const uint64_t *old_a = (const uint64_t *)vo.buf + sl[2 * p] * per_slot;
        const uint64_t *old_b = (const uint64_t *)vo.buf + sl[2 * p + 1] * per_slot;
        lat_bits visit_rtt = {0}, visit_ow = {0};
        const struct lat_area *la = (const struct lat_area *)area_a;
        const struct lat_area *lb = (const struct lat_area *)area_b;
        take_used((const volatile uint64_t *)&la->rtt, snap_a, old_a, tmp_rtt, vr.buf, visit_rtt);
        take_used((const volatile uint64_t *)&la->oneway, snap_a + HIST_WORDS, old_a + HIST_WORDS,
                  tmp_ow, vw.buf, visit_ow);
        take_used((const volatile uint64_t *)&lb->oneway, snap_b + HIST_WORDS, old_b + HIST_WORDS,
                  tmp_ow, vw.buf, visit_ow);
        PyObject *one = pair_result(tmp_rtt, visit_rtt, tmp_ow, visit_ow, q, nq,
                                    m ? PyList_GET_ITEM(indexes, p) : NULL, m);
        zero_visited(tmp_rtt, visit_rtt);
        zero_visited(tmp_ow, visit_ow);
        if (!one) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, p, one);
    }
done:
    PyMem_Free(tmp_rtt);
    /* PyBuffer_Release does nothing for a view never filled (its obj is NULL). */
    {
        Py_buffer *views[] = {&vs, &vn, &vo, &vl, &vr, &vw, &vc, &vt};
        for (size_t k = 0; k < sizeof views / sizeof views[0]; k++)
            PyBuffer_Release(views[k]);
    }
    return out;
}

/* lat_read(src, snap, old, slots, all_rtt, all_oneway, quantiles)
 *   -> [((rtt summary), (one-way summary)), ...], one per pair (see read_pairs):
 * the reading before lat_pairs, each summary a tuple for Python to make objects
 * of; kept as the reference the tests and bench/latency_read.py hold lat_pairs to. */
PyObject *ipctop_lat_read(PyObject *self, PyObject *a)
{
    PyObject *src, *snap, *old, *slots, *all_rtt, *all_ow, *qs;

    if (!PyArg_ParseTuple(a, "OOOOOOO", &src, &snap, &old, &slots, &all_rtt, &all_ow, &qs))
        return NULL;
    return read_pairs(src, snap, old, slots, all_rtt, all_ow, qs, NULL, NULL, NULL, NULL);
}

/* lat_pairs(src, snap, old, claimed, slots, tids, all_rtt, all_oneway, quantiles,
 *           indexes, (PairLatency, its fields, LatencySummary, its fields))
 *   -> [PairLatency, ...], one per pair.
 * Tracker.read whole: the slots claimed for their ends (the tracker's dict of
 * tids was a Python step per end), then lat_read's pass, each pair's figures
 * made into its objects here: the per-pair Python around lat_read cost 14 us
 * a pair (0.89 ms a sample at 64 pairs). */
PyObject *ipctop_lat_pairs(PyObject *self, PyObject *a)
{
    PyObject *src, *snap, *old, *claimed, *slots, *tids, *all_rtt, *all_ow, *qs, *indexes, *classes;
    struct made m;

    if (!PyArg_ParseTuple(a, "OOOOOOOOOOO!", &src, &snap, &old, &claimed, &slots, &tids, &all_rtt,
                          &all_ow, &qs, &indexes, &PyTuple_Type, &classes))
        return NULL;
    if (!PyArg_ParseTuple(classes, "O!O!O!O!", &PyType_Type, &m.pair_cls, &PyTuple_Type,
                          &m.pair_fields, &PyType_Type, &m.summary_cls, &PyTuple_Type,
                          &m.summary_fields))
        return NULL;
    Py_ssize_t nq = PySequence_Size(qs);
    if (nq < 0)
        return NULL;
    if (PyTuple_GET_SIZE(m.pair_fields) != 3 || PyTuple_GET_SIZE(m.summary_fields) != nq + 3) {
        PyErr_SetString(PyExc_ValueError, "lat_pairs: a pair has 3 fields, a summary n, mean, "
                                          "one per quantile and max");
        return NULL;
    }
    for (int t = 0; t < 2; t++) {
        PyObject *fields = t ? m.summary_fields : m.pair_fields;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(fields); k++)
            if (!PyUnicode_Check(PyTuple_GET_ITEM(fields, k))) {
                PyErr_SetString(PyExc_TypeError, "lat_pairs: field names are str");
                return NULL;
            }
    }
    if (!(m.empty = PyTuple_New(0)))
        return NULL;
    PyObject *out =
        read_pairs(src, snap, old, slots, all_rtt, all_ow, qs, claimed, tids, indexes, &m);
    Py_DECREF(m.empty);
    return out;
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
