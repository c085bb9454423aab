/* A whole message over a pipe or socket, which may move it in parts: the
 * stream, hackbench and chat ends' reads and writes. */
#ifndef IPCTOP_WHOLE_IO_H
#define IPCTOP_WHOLE_IO_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#include "native.h"

/* Writes all `len` bytes: 0 or the errno. */
static inline int write_whole(int fd, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, buf + done, len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        done += (size_t)n;
    }
    return 0;
}

/* Reads one message of `len` bytes: 0, or -1 once the stop flag is seen (a kick
 * may be shorter than a message; teardown's EOF), or the errno (EPIPE for an EOF
 * before the stop). One read() when it all came. */
static inline int read_whole(const struct end_slot *s, int fd, char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = read(fd, buf + done, len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0) /* every writer closed: only teardown does that */
            return stop_requested(s) ? -1 : EPIPE;
        if (stop_requested(s))
            return -1;
        done += (size_t)n;
    }
    return 0;
}

/* An error seen while stopping is the stop (-1): Python shuts the sockets down
 * then, so the ends' reads see EOF and their writes EPIPE. */
static inline int stopped_or(const struct end_slot *s, int err)
{
    return err && stop_requested(s) ? -1 : err;
}

#endif
