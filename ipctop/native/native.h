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

struct end_ctx {
    struct end_slot *slot;
    int role;                       /* 0: the end that starts, 1: its peer */
    long arg[IPCTOP_MAX_ARGS];
    char *shm;                      /* optional shared area (futex words, sems, flags) */
    size_t shm_len;
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

/* One load and compare per round: the rare answer is out of line. */
static inline void count_round(struct end_slot *s, uint64_t n)
{
    uint32_t req;

    __atomic_store_n(&s->rounds, n, __ATOMIC_RELAXED);
    req = __atomic_load_n(&s->stats_req, __ATOMIC_RELAXED);
    if (__builtin_expect(req != s->stats_ack, 0))
        ipctop_publish_stats(s, req);
}

#endif
