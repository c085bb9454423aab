/* SysV ping-pong loops with the semantics of pmsg, psem and pmsg-shared. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>

#include "native.h"

struct ping {
    long mtype;
    int64_t pair;   /* pmsg-shared checks this on every receive */
    int64_t seq;    /* pads the payload to the originals' 16 bytes */
};

#define PAYLOAD 16

static int snd(int id, struct ping *m)
{
    while (msgsnd(id, m, PAYLOAD, 0) < 0) {
        if (errno != EINTR)
            return errno;
    }
    return 0;
}

/* arg: msqid, my type, peer type, pair id, check pair id (0/1).
 * The end with role 0 sends first; each round is msgrcv(mine) then msgsnd(peer). */
static int msg_pingpong(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    int id = (int)c->arg[0];
    long mine = c->arg[1], peer = c->arg[2];
    int64_t pair = c->arg[3];
    int check = (int)c->arg[4];
    struct ping m = {peer, pair, 0};
    uint64_t n = 0;
    int err;

    if (c->role == 0) {
        lat_post(c);
        if ((err = snd(id, &m)))
            return err;
    }
    while (!stop_requested(s)) {
        if (msgrcv(id, &m, PAYLOAD, mine, 0) < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (check && m.pair != pair) {
            /* A stop marker (-1) only wakes us; anything else is a wrong message. */
            if (m.pair == -1 && stop_requested(s))
                break;
            __atomic_store_n(&s->bad_value, m.pair, __ATOMIC_RELAXED);
            __atomic_store_n(&s->errors, s->errors + 1, __ATOMIC_RELAXED);
            continue;
        }
        lat_woken(c);
        think(c);
        m.mtype = peer;
        m.pair = pair;
        lat_post(c);
        if ((err = snd(id, &m)))
            return err;
        count_round(s, ++n);
    }
    return 0;
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
        think(c);
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
