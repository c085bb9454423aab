/* Byte and counter streams: pipe (perf bench sched pipe, ctxbench -p),
 * a unix socketpair (hackbench's transport) and eventfd.
 *
 * arg: fd this end reads, fd this end writes, bytes per message (1, or 8 for
 * eventfd). The end with role 0 writes first; a round is read then write.
 * The monitor wakes a blocked end by writing into its input (a "kick"), so
 * the descriptors stay open until every end has been joined.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "native.h"

static int put(int fd, size_t len)
{
    uint64_t one = 1; /* eventfd adds the 8-byte value; pipes send its first byte */
    while (write(fd, &one, len) < 0) {
        if (errno != EINTR)
            return errno;
    }
    return 0;
}

static int stream_pingpong(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    int in = (int)c->arg[0], out = (int)c->arg[1];
    size_t len = (size_t)c->arg[2];
    uint64_t buf, n = 0;
    int err;

    if (len < 1 || len > sizeof(buf))
        return EINVAL;
    if (c->role == 0) {
        lat_post(c);
        if ((err = put(out, len)))
            return err;
    }
    while (!stop_requested(s)) {
        ssize_t got = read(in, &buf, len);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (got == 0) /* every writer closed: only teardown does that */
            return stop_requested(s) ? 0 : EPIPE;
        if (stop_requested(s))
            break;
        lat_woken(c);
        think(c);
        lat_post(c);
        if ((err = put(out, len)))
            return err;
        count_round(s, ++n);
    }
    return 0;
}

const struct workload_entry ipctop_stream_loops[] = {
    {"pipe", stream_pingpong, 0, 0},
    {"socket", stream_pingpong, 0, 0},
    {"eventfd", stream_pingpong, 0, 0},
    {0, 0, 0, 0},
};
