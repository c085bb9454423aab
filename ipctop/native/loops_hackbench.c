/* hackbench's continuous form: a group is F senders and F receivers.
 *
 * As rt-tests' hackbench and perf bench sched messaging define a group: every
 * receiver owns one channel (a socketpair or a pipe); every sender writes
 * D-byte messages to every receiver of its group, one write() per message per
 * receiver. The fixed-work form (L loops, then the time) is hackbench_fixed.c;
 * this one runs until stopped so its rate streams like any workload's.
 *
 * Roles 0..F-1 are the senders, F..2F-1 the receivers. A receiver counts the
 * messages it got whole as its rounds (the figure: messages delivered); a
 * sender keeps the messages it wrote in ops[0], so the ends' rounds sum to
 * messages, not to twice them.
 *
 * The group's area (Python writes it, engine/workloads/hackbench_groups.py):
 * int32 F, int32 D, then the F descriptors the senders write to.
 * arg: sender (F, D); receiver (descriptor it reads, D).
 *
 * Stopping: the monitor sets every stop flag, then shuts the sockets down
 * (readers see EOF, blocked writers EPIPE) or, for pipes, makes them
 * non-blocking, drains them and kicks each reader with a byte; a call that
 * returns with the stop flag set ends the loop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "native.h"

#define HB_AREA_FDS 8 /* byte offset of the senders' descriptors */
#define HB_MAX_FDS 1024
#define HB_MAX_SIZE (1 << 24)

/* The stats answer a receiver gives in count_round, for an end with no rounds. */
static inline void answer_stats(struct end_slot *s)
{
    uint32_t req = __atomic_load_n(&s->stats_req, __ATOMIC_RELAXED);
    if (__builtin_expect(req != s->stats_ack, 0))
        ipctop_publish_stats(s, req);
}

/* An error seen while stopping is the stop (-1), else the errno. */
static inline int stopped_or(struct end_slot *s, int err)
{
    return stop_requested(s) ? -1 : err;
}

/* One message, all of it: hackbench's `again:` loop around write(). */
static int send_one(struct end_slot *s, int fd, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, buf + done, len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return stopped_or(s, errno);
        }
        done += (size_t)n;
    }
    return 0;
}

static int hb_sender(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    long nfds = c->arg[0], len = c->arg[1];
    uint64_t n = 0;
    int err = 0;

    if (nfds < 1 || nfds > HB_MAX_FDS || len < 1 || len > HB_MAX_SIZE)
        return EINVAL;
    if ((err = need_shm(c, HB_AREA_FDS + (size_t)nfds * sizeof(int32_t))))
        return err;
    const int32_t *out = (const int32_t *)(c->shm + HB_AREA_FDS);
    char *buf = calloc(1, (size_t)len);
    if (!buf)
        return ENOMEM;
    while (!stop_requested(s)) {
        for (long j = 0; j < nfds; j++) {
            if ((err = send_one(s, out[j], buf, (size_t)len)))
                goto out;
            __atomic_store_n(&s->ops[0], ++n, __ATOMIC_RELAXED);
        }
        answer_stats(s);
    }
out:
    free(buf);
    return err < 0 ? 0 : err;
}

static int hb_receiver(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    int fd = (int)c->arg[0];
    long len = c->arg[1];
    uint64_t n = 0;
    int err = 0;

    if (len < 1 || len > HB_MAX_SIZE)
        return EINVAL;
    char *buf = malloc((size_t)len);
    if (!buf)
        return ENOMEM;
    while (!stop_requested(s)) {
        size_t done = 0;
        while (done < (size_t)len) {
            ssize_t got = read(fd, buf + done, (size_t)len - done);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) { /* EOF: only the shutdown at stop makes one */
                err = stopped_or(s, got < 0 ? errno : EPIPE);
                goto out;
            }
            if (stop_requested(s))
                goto out;
            done += (size_t)got;
        }
        count_round(s, ++n);
    }
out:
    free(buf);
    return err < 0 ? 0 : err;
}

/* The receivers are the roles from F on; F is in the group's area. */
static int hb_loop(struct end_ctx *c)
{
    if (need_shm(c, HB_AREA_FDS))
        return EINVAL;
    int32_t nfds = *(const int32_t *)c->shm;
    return c->role < nfds ? hb_sender(c) : hb_receiver(c);
}

const struct workload_entry ipctop_hackbench_loops[] = {
    {"hackbench", hb_loop, 0, 0},
    {0, 0, 0, 0},
};
