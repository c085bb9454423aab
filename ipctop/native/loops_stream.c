/* Byte and counter streams: pipe (perf bench sched pipe, ctxbench -p),
 * a unix socketpair (hackbench's transport) and eventfd.
 *
 * arg: fd this end reads, fd this end writes, bytes per message (--size for
 * pipe and socket, 8 for eventfd's counter). The end with role 0 writes first; a round is read then write.
 * The monitor wakes a blocked end by writing into its input (a "kick"), so
 * the descriptors stay open until every end has been joined.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "native.h"
#include "whole_io.h"

static int stream_pingpong(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    int in = (int)c->arg[0], out = (int)c->arg[1];
    size_t len = (size_t)c->arg[2];
    uint64_t small[1] = {1}, n = 0; /* eventfd adds the 8-byte value 1 */
    int err = 0;

    if (len < 1 || len > (1u << 24))
        return EINVAL;
    char *buf = len <= sizeof(small) ? (char *)small : calloc(1, len);
    if (!buf)
        return ENOMEM;
    if (c->role == 0) {
        lat_post(c);
        if ((err = write_whole(out, buf, len)))
            goto out;
    }
    while (!stop_requested(s)) {
        if ((err = read_whole(s, in, buf, len))) {
            if (err < 0)
                err = 0;
            break;
        }
        lat_woken(c);
        think(c);
        if (len == sizeof(small))
            small[0] = 1;
        lat_post(c);
        if ((err = write_whole(out, buf, len)))
            break;
        count_round(s, ++n);
    }
out:
    if (buf != (char *)small)
        free(buf);
    return err;
}

const struct workload_entry ipctop_stream_loops[] = {
    {"pipe", stream_pingpong, 0, 0},
    {"socket", stream_pingpong, 0, 0},
    {"eventfd", stream_pingpong, 0, 0},
    {0, 0, 0, 0},
};
