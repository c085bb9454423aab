/* SysV ping-pong loops with the semantics of pmsg, psem and pmsg-shared. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>

#include "native.h"

/* A message of `size` payload bytes; the first 8 (or fewer) carry the pair id,
 * which pmsg-shared checks on every receive. */
struct ping {
    long mtype;
    char text[];
};

static int snd(int id, struct ping *m, size_t size)
{
    while (msgsnd(id, m, size, 0) < 0) {
        if (errno != EINTR)
            return errno;
    }
    return 0;
}

static void put_pair(struct ping *m, size_t size, int64_t pair)
{
    memcpy(m->text, &pair, size < sizeof(pair) ? size : sizeof(pair));
}

static int64_t get_pair(const struct ping *m)
{
    int64_t pair;
    memcpy(&pair, m->text, sizeof(pair));
    return pair;
}

/* arg: msqid, my type, peer type, pair id, check pair id (0/1), payload bytes.
 * The end with role 0 sends first; each round is msgrcv(mine) then msgsnd(peer).
 * A checking end needs at least 8 bytes (Python refuses less). */
static int msg_pingpong(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    int id = (int)c->arg[0];
    long mine = c->arg[1], peer = c->arg[2];
    int64_t pair = c->arg[3];
    int check = (int)c->arg[4];
    size_t size = (size_t)c->arg[5];
    uint64_t n = 0;
    int err = 0;

    if (size < 1 || (check && size < sizeof(int64_t)))
        return EINVAL;
    struct ping *m = calloc(1, sizeof(*m) + size);
    if (!m)
        return ENOMEM;
    m->mtype = peer;
    put_pair(m, size, pair);
    if (c->role == 0) {
        lat_post(c);
        if ((err = snd(id, m, size)))
            goto out;
    }
    while (!stop_requested(s)) {
        if (msgrcv(id, m, size, mine, 0) < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            goto out;
        }
        if (check && get_pair(m) != pair) {
            /* A stop marker (-1) only wakes us; anything else is a wrong message. */
            if (get_pair(m) == -1 && stop_requested(s))
                break;
            __atomic_store_n(&s->bad_value, get_pair(m), __ATOMIC_RELAXED);
            __atomic_store_n(&s->errors, s->errors + 1, __ATOMIC_RELAXED);
            continue;
        }
        lat_woken(c);
        m->mtype = peer;
        put_pair(m, size, pair);
        lat_post(c);
        if ((err = snd(id, m, size)))
            goto out;
        count_round(s, ++n);
    }
out:
    free(m);
    return err;
}

/* arg: semid of an array of two, my sem, peer sem. Token passing as psem. */
static int sem_pingpong(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    int id = (int)c->arg[0];
    struct sembuf down = {(unsigned short)c->arg[1], -1, 0};
    struct sembuf up = {(unsigned short)c->arg[2], 1, 0};
    uint64_t n = 0;

    while (!stop_requested(s)) {
        if (semop(id, &down, 1) < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        lat_woken(c);
        lat_post(c);
        while (semop(id, &up, 1) < 0) {
            if (errno != EINTR)
                return errno;
        }
        count_round(s, ++n);
    }
    return 0;
}

const struct workload_entry ipctop_sysv_loops[] = {
    {"sysv-msg", msg_pingpong},
    {"sysv-sem", sem_pingpong},
    {"sysv-msg-shared", msg_pingpong},
    {0, 0},
};
