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
#include "whole_io.h"

#define HB_AREA_FDS 8 /* byte offset of the senders' descriptors */
#define HB_MAX_FDS 1024
#define HB_MAX_SIZE (1 << 24)

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
            /* one message, all of it: hackbench's `again:` loop around write() */
            if ((err = stopped_or(s, write_whole(out[j], buf, (size_t)len))))
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
        if ((err = stopped_or(s, read_whole(s, fd, buf, (size_t)len))))
            break;
        count_round(s, ++n);
    }
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
