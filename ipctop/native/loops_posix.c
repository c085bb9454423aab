/* POSIX semaphores (unnamed sem_t in shared memory) and POSIX message queues. */
#define _GNU_SOURCE
#include <errno.h>
#include <mqueue.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "native.h"

/* Each sem_t on its own cache line so the two ends do not share one. */
#define PSEM_STRIDE 64
#define PSEM_SHM (2 * PSEM_STRIDE)

_Static_assert(sizeof(sem_t) <= PSEM_STRIDE, "sem_t must fit its cache line");

static sem_t *psem(struct end_ctx *c, int which)
{
    return (sem_t *)(c->shm + which * PSEM_STRIDE);
}

/* A's semaphore starts at 1 (A holds the token), B's at 0. */
static int psem_setup(struct end_ctx *c)
{
    int err = need_shm(c, PSEM_SHM);
    if (err)
        return err;
    if (sem_init(psem(c, 0), 1, 1) < 0 || sem_init(psem(c, 1), 1, 0) < 0)
        return errno;
    return 0;
}

static int psem_wake(struct end_ctx *c)
{
    int err = need_shm(c, PSEM_SHM);
    if (err)
        return err;
    return sem_post(psem(c, c->role)) < 0 ? errno : 0;
}

/* No arg: role r waits on sem r and posts sem 1-r, as sysv-sem does. */
static int psem_pingpong(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    uint64_t n = 0;
    int err = need_shm(c, PSEM_SHM);
    if (err)
        return err;
    sem_t *mine = psem(c, c->role), *peer = psem(c, !c->role);

    while (!stop_requested(s)) {
        if (sem_wait(mine) < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (stop_requested(s))
            break;
        lat_woken(c);
        lat_post(c);
        if (sem_post(peer) < 0)
            return errno;
        count_round(s, ++n);
    }
    return 0;
}

/* arg: queue this end receives on, queue it sends to (both mqd_t, O_RDWR),
 * message bytes (the queues' mq_msgsize). */
static int mq_pingpong(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    mqd_t mine = (mqd_t)c->arg[0], peer = (mqd_t)c->arg[1];
    size_t size = (size_t)c->arg[2];
    uint64_t n = 0;
    int err = 0;

    if (size < 1)
        return EINVAL;
    char *buf = calloc(1, size);
    if (!buf)
        return ENOMEM;
    if (c->role == 0) {
        lat_post(c);
        while (mq_send(peer, buf, size, 0) < 0) {
            if (errno != EINTR) {
                err = errno;
                goto out;
            }
        }
    }
    while (!stop_requested(s)) {
        if (mq_receive(mine, buf, size, NULL) < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        if (stop_requested(s))
            break;
        lat_woken(c);
        lat_post(c);
        while (mq_send(peer, buf, size, 0) < 0) {
            if (errno != EINTR) {
                err = errno;
                goto out;
            }
        }
        count_round(s, ++n);
    }
out:
    free(buf);
    return err;
}

/* Puts a one-byte kick on the queue end `role` receives from, without ever
 * blocking: a full queue already holds something for that end to receive. */
static int mq_wake(struct end_ctx *c)
{
    static const struct timespec past = {0, 0};
    char kick = 0;
    mqd_t q = (mqd_t)c->arg[0];

    if (mq_timedsend(q, &kick, 1, 0, &past) < 0 && errno != ETIMEDOUT && errno != EAGAIN)
        return errno;
    return 0;
}

const struct workload_entry ipctop_posix_loops[] = {
    {"posix-sem", psem_pingpong, psem_setup, psem_wake},
    {"posix-mq", mq_pingpong, 0, mq_wake},
    {0, 0, 0, 0},
};
