/* chat: the chat-room benchmark that stood in for VolanoMark.
 *
 * A room is U users (20). Each user has one connection (loopback TCP, or a
 * unix socketpair) and four ends: on the client side a sender that writes
 * D-byte messages (100) and a receiver that reads what the room sends it; on
 * the server side a receiver that reads the user's messages and hands each to
 * the other U-1 members, and a sender that writes the messages handed to its
 * member back down the connection. 4U ends, 80 threads a room.
 *
 * Between the server's receivers and senders each member has a bounded queue
 * (a count under a process-shared mutex, two condition variables): a full
 * queue makes the receiver wait, which backs up into the socket and the
 * client, as a real server's flow control does. That queue is where the
 * seeds' futex contention lived.
 *
 * Roles: kind = role / U (0 client sender, 1 client receiver, 2 server
 * receiver, 3 server sender), member = role % U. Client receivers count the
 * messages delivered to them as rounds (the figure); the other ends keep
 * their messages in ops[0].
 *
 * arg: descriptor (the user's client or server socket), U, D.
 * Stopping: the wake hook sets the room's stop word and wakes every waiter;
 * Python then shuts every socket down (readers see EOF, writers EPIPE).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "native.h"
#include "whole_io.h"

#define CHAT_MAX_USERS 64
#define CHAT_QUEUE 32 /* messages a member's queue holds before its senders wait */
#define CHAT_MAX_SIZE (1 << 20)

struct chat_member {
    pthread_mutex_t lock;
    pthread_cond_t nonempty;
    pthread_cond_t nonfull;
    uint32_t pending;
} __attribute__((aligned(64)));

struct chat_room {
    volatile int32_t stop;
    int32_t users;
    char pad[56];
    struct chat_member member[];
};

enum { CLIENT_SEND, CLIENT_RECV, SERVER_RECV, SERVER_SEND };

static size_t room_bytes(long users)
{
    return sizeof(struct chat_room) + (size_t)users * sizeof(struct chat_member);
}

static inline int room_stopped(const struct chat_room *r)
{
    return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}


static inline void count_op(struct end_slot *s, uint64_t n)
{
    __atomic_store_n(&s->ops[0], n, __ATOMIC_RELAXED);
    answer_stats(s);
}

/* 0, -1 once stopping, or the errno. */
static int put(const struct end_slot *s, int fd, const char *buf, size_t len)
{
    return stopped_or(s, write_whole(fd, buf, len));
}

static int get(const struct end_slot *s, int fd, char *buf, size_t len)
{
    return stopped_or(s, read_whole(s, fd, buf, len));
}

/* Hand one message to member v: wait while its queue is full. -1 once stopping. */
static int hand_to(struct chat_room *r, int v)
{
    struct chat_member *m = &r->member[v];
    pthread_mutex_lock(&m->lock);
    while (m->pending >= CHAT_QUEUE && !room_stopped(r))
        pthread_cond_wait(&m->nonfull, &m->lock);
    int stopped = room_stopped(r);
    if (!stopped && m->pending++ == 0)
        pthread_cond_signal(&m->nonempty);
    pthread_mutex_unlock(&m->lock);
    return stopped ? -1 : 0;
}

/* Take one message from member v's queue: wait while it is empty. */
static int take_from(struct chat_room *r, int v)
{
    struct chat_member *m = &r->member[v];
    pthread_mutex_lock(&m->lock);
    while (m->pending == 0 && !room_stopped(r))
        pthread_cond_wait(&m->nonempty, &m->lock);
    int stopped = room_stopped(r);
    if (!stopped && m->pending-- == CHAT_QUEUE)
        pthread_cond_broadcast(&m->nonfull); /* every receiver may wait on a full member */
    pthread_mutex_unlock(&m->lock);
    return stopped ? -1 : 0;
}

static int chat_loop(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    int fd = (int)c->arg[0];
    long users = c->arg[1], len = c->arg[2];
    uint64_t n = 0;
    int err = 0;

    if (users < 2 || users > CHAT_MAX_USERS || len < 1 || len > CHAT_MAX_SIZE)
        return EINVAL;
    if ((err = need_shm(c, room_bytes(users))))
        return err;
    struct chat_room *r = (struct chat_room *)c->shm;
    int kind = c->role / (int)users, me = c->role % (int)users;
    char *buf = calloc(1, (size_t)len);
    if (!buf)
        return ENOMEM;
    while (!stop_requested(s) && !err) {
        switch (kind) {
        case CLIENT_SEND:
            if (!(err = put(s, fd, buf, (size_t)len)))
                count_op(s, ++n);
            break;
        case CLIENT_RECV:
            if (!(err = get(s, fd, buf, (size_t)len)))
                count_round(s, ++n);
            break;
        case SERVER_RECV:
            if ((err = get(s, fd, buf, (size_t)len)))
                break;
            for (int v = 0; v < users && !err; v++)
                if (v != me)
                    err = hand_to(r, v);
            if (!err)
                count_op(s, ++n);
            break;
        case SERVER_SEND:
            if (!(err = take_from(r, me)) && !(err = put(s, fd, buf, (size_t)len)))
                count_op(s, ++n);
            break;
        default:
            err = EINVAL;
        }
    }
    free(buf);
    return err < 0 ? 0 : err;
}

/* Before any end starts: process-shared locks, so forked ends share them too. */
static int chat_setup(struct end_ctx *c)
{
    long users = c->arg[1];
    if (users < 2 || users > CHAT_MAX_USERS || need_shm(c, room_bytes(users)))
        return EINVAL;
    struct chat_room *r = (struct chat_room *)c->shm;
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    memset(r, 0, room_bytes(users));
    r->users = (int32_t)users;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_condattr_init(&ca);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    for (long v = 0; v < users; v++) {
        pthread_mutex_init(&r->member[v].lock, &ma);
        pthread_cond_init(&r->member[v].nonempty, &ca);
        pthread_cond_init(&r->member[v].nonfull, &ca);
    }
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_destroy(&ca);
    return 0;
}

/* After the stop flags: the room's stop word, then every waiter woken under its lock. */
static int chat_wake(struct end_ctx *c)
{
    long users = c->arg[1];
    if (users < 2 || users > CHAT_MAX_USERS || need_shm(c, room_bytes(users)))
        return EINVAL;
    struct chat_room *r = (struct chat_room *)c->shm;
    __atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
    for (long v = 0; v < users; v++) {
        struct chat_member *m = &r->member[v];
        pthread_mutex_lock(&m->lock);
        pthread_cond_broadcast(&m->nonempty);
        pthread_cond_broadcast(&m->nonfull);
        pthread_mutex_unlock(&m->lock);
    }
    return 0;
}

const struct workload_entry ipctop_chat_loops[] = {
    {"chat", chat_loop, chat_setup, chat_wake},
    {0, 0, 0, 0},
};
