/* Shared definitions of ipctop's native hot loops.
 *
 * Every end of a ping-pong pair owns one slot of the counter block. A slot is
 * padded to 128 bytes (two cache lines, so the adjacent-line prefetcher does
 * not pair it with a neighbour either): the end writes only its own slot and
 * the monitor only reads it, so measuring adds no contended line of its own.
 */
#ifndef IPCTOP_NATIVE_H
#define IPCTOP_NATIVE_H

#include <stdint.h>
#include <stddef.h>
#include <errno.h>
#include <time.h>

#define IPCTOP_SLOT_SIZE 128
#define IPCTOP_MAX_ARGS 8
#define IPCTOP_NOPS 6

enum end_state {
    ST_IDLE = 0,
    ST_RUNNING = 1,
    ST_DONE = 2,       /* stopped on request */
    ST_FAILED = 3,     /* a syscall failed: see last_errno */
    ST_REMOVED = 4,    /* its object vanished while no stop was requested */
};

struct end_slot {
    volatile uint64_t rounds;     /* completed rounds, written by the end */
    volatile uint64_t errors;     /* wrong messages seen and not counted */
    volatile int32_t tid;         /* kernel tid (pid in process mode) */
    volatile int32_t state;       /* enum end_state */
    volatile int32_t last_errno;
    volatile int32_t stop;        /* written once by the monitor */
    volatile int64_t bad_value;   /* last wrong pair id seen in a shared queue */
    volatile uint64_t ops[IPCTOP_NOPS]; /* per-operation counts (life-cycle loops) */
    volatile int32_t failed_op;   /* which call failed, a loop-specific index */
    /* The end's own scheduler facts, published when the monitor asks, so the
     * monitor need not open two /proc files per thread per sample (at 512
     * threads that was most of its CPU). Read only when stats_ack changed. */
    volatile uint32_t stats_req;  /* written by the monitor: publish once */
    volatile uint32_t stats_ack;  /* the request last answered, stored last */
    volatile int32_t cpu;         /* sched_getcpu() at that answer */
    volatile uint64_t stats_ns;   /* CLOCK_MONOTONIC at that answer */
    volatile uint64_t nvcsw;      /* getrusage(RUSAGE_THREAD) switch counts */
    volatile uint64_t nivcsw;
};

_Static_assert(sizeof(struct end_slot) == IPCTOP_SLOT_SIZE, "slot must be 128 bytes");

/* Per-round latency. The counter slot is full, so each end also owns one
 * area of a second MAP_SHARED block (same index as its slot). Buckets are
 * log-linear as in HdrHistogram: exact below 128 ns, then 64 per power of two,
 * so a bucket is at most 1/64 of its value wide and its midpoint is within
 * 0.8 % of any value in it; the top bucket holds everything from 2^36 ns (69 s). */
#define LAT_SUB 128
#define LAT_HALF 64
#define LAT_TOP_BIT 36
#define LAT_BUCKETS (LAT_SUB + (LAT_TOP_BIT - 7) * LAT_HALF)
#define IPCTOP_LAT_AREA 32768

#define LAT_USED_WORDS (LAT_BUCKETS / 64)

/* `used` has a bit per bucket that ever counted: the monitor reads only those
 * buckets (a few hundred of 1,984), not every word of every end's histograms.
 * Bits are only ever set, so a reader that misses one counts its bucket at the
 * next reading. */
struct lat_hist {
    volatile uint64_t sum_ns;
    volatile uint64_t b[LAT_BUCKETS];
    volatile uint64_t used[LAT_USED_WORDS];
};

_Static_assert(LAT_BUCKETS % 64 == 0, "the used bitmap covers whole words");

struct lat_area {
    volatile uint64_t stamp;  /* CLOCK_MONOTONIC just before this end's last timed post */
    char pad0[56];            /* the stamp alone on the line its peer reads */
    volatile uint32_t paused; /* written by the monitor: nonzero stops timing, not the loop */
    char pad1[60];
    struct lat_hist rtt;      /* own post to the next wake-up: the round trip */
    struct lat_hist oneway;   /* peer's stamp to this end's wake-up */
};

_Static_assert(sizeof(struct lat_area) <= IPCTOP_LAT_AREA, "latency area too small");

struct end_ctx {
    struct end_slot *slot;
    int role;                       /* 0: the end that starts, 1: its peer */
    long arg[IPCTOP_MAX_ARGS];
    char *shm;                      /* optional shared area (futex words, sems, flags) */
    size_t shm_len;
    struct lat_area *lat;           /* NULL: rounds are not timed */
    const struct lat_area *peer_lat;
    uint64_t lat_posted;            /* when this end's pending timed post was stamped */
    uint64_t lat_seen;              /* the peer stamp last counted */
    uint64_t lat_woke;              /* the clock read at this round's wake-up, or 0 */
    uint32_t lat_every, lat_left;
    uint64_t think_loops;           /* --think-ns as calibrated spin iterations */
    uint64_t think_ns;              /* what was asked: the target of think_timed */
    uint32_t think_skip, think_seen;
    uint32_t think_dt[8];           /* the current batch's timed thinks, ns (THINK_BATCH) */
};

/* A loop returns 0 when it stopped on request, or the errno that ended it. */
typedef int (*loop_fn)(struct end_ctx *ctx);

/* Optional per-pair hooks, called from the monitor with slot == NULL:
 * setup prepares ctx->shm before the ends start (sem_init, futex words);
 * wake runs after the stop flags are set and must unblock end ctx->role. */
struct workload_entry {
    const char *name;
    loop_fn loop;
    loop_fn setup;
    loop_fn wake;
};

extern const struct workload_entry ipctop_sysv_loops[];
extern const struct workload_entry ipctop_stream_loops[];
extern const struct workload_entry ipctop_posix_loops[];
extern const struct workload_entry ipctop_futex_loops[];
extern const struct workload_entry ipctop_spin_loops[];
extern const struct workload_entry ipctop_signal_loops[];
extern const struct workload_entry ipctop_sysv_multi_loops[];
extern const struct workload_entry ipctop_hackbench_loops[];
extern const struct workload_entry ipctop_chat_loops[];

/* The shared area a hook or loop needs, or EINVAL when Python passed none. */
static inline int need_shm(const struct end_ctx *c, size_t len)
{
    return (c->shm && c->shm_len >= len) ? 0 : EINVAL;
}

static inline int stop_requested(const struct end_slot *s)
{
    return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
}

#define IPCTOP_STATS_BUSY 0xFFFFFFFFu /* stats_ack while the answer is written */

void ipctop_publish_stats(struct end_slot *s, uint32_t req);

/* One load and compare: the rare answer is out of line. Ends with no rounds
 * (senders, a chat server's) call it after their ops. */
static inline void answer_stats(struct end_slot *s)
{
    uint32_t req = __atomic_load_n(&s->stats_req, __ATOMIC_RELAXED);
    if (__builtin_expect(req != s->stats_ack, 0))
        ipctop_publish_stats(s, req);
}

static inline void count_round(struct end_slot *s, uint64_t n)
{
    __atomic_store_n(&s->rounds, n, __ATOMIC_RELAXED);
    answer_stats(s);
}

static inline uint64_t lat_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* vDSO: no syscall */
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline unsigned lat_bucket(uint64_t v)
{
    if (v < LAT_SUB)
        return (unsigned)v;
    int e = 63 - __builtin_clzll(v);
    if (e >= LAT_TOP_BIT)
        return LAT_BUCKETS - 1;
    return LAT_SUB + (unsigned)(e - 7) * LAT_HALF + (unsigned)((v >> (e - 6)) - LAT_HALF);
}

/* Single writer: plain increments, stored whole so a reader never sees half. */
static inline void lat_add(struct lat_hist *h, uint64_t v)
{
    unsigned i = lat_bucket(v);
    uint64_t bit = 1ULL << (i & 63);
    if (!(h->used[i >> 6] & bit))
        __atomic_store_n(&h->used[i >> 6], h->used[i >> 6] | bit, __ATOMIC_RELAXED);
    __atomic_store_n(&h->b[i], h->b[i] + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&h->sum_ns, h->sum_ns + v, __ATOMIC_RELAXED);
}

/* Call just before the call that wakes the peer. Without --think-ns the loops
 * post right after they wake, with nothing in between but a few stores, so the
 * clock read at the wake-up is this stamp too: one read per end per round, not
 * two. With a think in between, that read is the think's length too early:
 * the stamp is read anew, or every one-way latency would carry the sender's
 * think (and the round trip the end's own). */
static inline void lat_post(struct end_ctx *c)
{
    if (!c->lat)
        return;
    uint64_t woke = c->lat_woke;
    c->lat_woke = 0;
    if (c->lat_left > 1) {
        c->lat_left--;
        return;
    }
    if (__atomic_load_n(&c->lat->paused, __ATOMIC_RELAXED))
        return;
    c->lat_left = c->lat_every;
    c->lat_posted = (woke && !c->think_loops) ? woke : lat_now();
    __atomic_store_n(&c->lat->stamp, c->lat_posted, __ATOMIC_RELEASE);
}

/* Call when the call that waited for the peer returns with its token. A
 * stamp not seen before is the peer's post that woke us (the ping-pong lets
 * neither end post twice in a row); a round not timed costs one load. */
static inline void lat_woken(struct end_ctx *c)
{
    if (!c->lat)
        return;
    uint64_t s = __atomic_load_n(&c->peer_lat->stamp, __ATOMIC_ACQUIRE);
    if (s == c->lat_seen && !c->lat_posted)
        return;
    if (__atomic_load_n(&c->lat->paused, __ATOMIC_RELAXED)) {
        /* consumed, not counted: a stamp from before a pause never counts later */
        c->lat_seen = s;
        c->lat_posted = 0;
        return;
    }
    uint64_t t = lat_now();
    c->lat_woke = t;
    if (s != c->lat_seen) {
        c->lat_seen = s;
        if (t >= s)
            lat_add(&c->lat->oneway, t - s);
    }
    if (c->lat_posted) {
        lat_add(&c->lat->rtt, t - c->lat_posted);
        c->lat_posted = 0;
    }
}

/* --think-ns: a server's work per message, between the receive and the send
 * of every ping-pong loop. It is a fixed amount of CPU work (spin iterations),
 * not a wall-clock wait: a preempted end resumes its work where it left off,
 * as real work would, so a loaded box does not shorten it. 0 costs one branch.
 *
 * One calibration at start is not enough: it ran on a vCPU that had been idle
 * and came out ~30 % short once the ends had the CPU at full speed, and on a
 * shared host a spin's speed moves by 2x with what runs beside the vCPU. So
 * one think in THINK_EVERY is timed, and every THINK_BATCH timed ones rescale
 * the count to their median (think.c). Short thinks are timed with the vDSO
 * clock (20 ns; the median ignores the rare preempted one); from
 * THINK_CPU_CLOCK_NS on, a think is long enough to be preempted often and is
 * timed on the thread's CPU clock (a syscall, ~0.7 us in a VM, small beside it). */
#define THINK_EVERY 8
#define THINK_BATCH 8
#define THINK_CPU_CLOCK_NS 20000u

static inline uint64_t thread_cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline uint64_t think_clock(const struct end_ctx *c)
{
    return c->think_ns >= THINK_CPU_CLOCK_NS ? thread_cpu_now() : lat_now();
}

static inline void think_spin(uint64_t loops)
{
    for (uint64_t i = loops; i; i--)
        __asm__ __volatile__("" ::: "memory");
}

void ipctop_think_timed(struct end_ctx *c, uint64_t dt); /* think.c */

static inline void think(struct end_ctx *c)
{
    if (!c->think_loops)
        return;
    if (--c->think_skip) {
        think_spin(c->think_loops);
        return;
    }
    c->think_skip = THINK_EVERY;
    uint64_t t0 = think_clock(c);
    think_spin(c->think_loops);
    ipctop_think_timed(c, think_clock(c) - t0);
}

uint64_t ipctop_think_loops(uint64_t think_ns);

/* gate.c: 1 when the end was stopped while the bulk start's gate held it. */
int ipctop_gate_wait(const struct end_slot *s, uint32_t *gate, uint32_t id);

#endif
