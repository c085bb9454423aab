/* The two SysV workloads that are not ping-pongs.
 *
 * sysv-sem-multi (semop-multi): many threads lock and unlock random
 * semaphores of ONE shared array. sysv-lifecycle (msgbench): each thread
 * creates, uses, inspects and removes message queues as fast as it can,
 * which is where object lookup costs show.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>

#include "native.h"

/* xorshift64: per thread, so no shared random state adds a contended line. */
static inline uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static int semop1(int id, unsigned short num, short op)
{
    struct sembuf b = {num, op, 0};
    while (semop(id, &b, 1) < 0) {
        if (errno != EINTR)
            return errno;
    }
    return 0;
}

/* arg: semid, number of semaphores, random seed. A round is one lock (-1)
 * and unlock (+1) of a random semaphore; each starts at 1, so nothing waits
 * longer than another thread's critical section and no wake-up is needed. */
static int sem_multi(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    int id = (int)c->arg[0];
    uint64_t nsems = (uint64_t)c->arg[1], x = (uint64_t)c->arg[2] | 1, n = 0;
    int err;

    if (nsems < 1)
        return EINVAL;
    while (!stop_requested(s)) {
        unsigned short num = (unsigned short)(next_random(&x) % nsems);
        if ((err = semop1(id, num, -1)))
            return err;
        if ((err = semop1(id, num, 1)))
            return err;
        count_round(s, ++n);
    }
    return 0;
}

/* Which call of the life cycle an ops[] index and failed_op refer to. */
enum { OP_MSGGET, OP_MSGSND, OP_IPC_STAT, OP_MSG_STAT, OP_IPC_RMID };

#define IDX_MASK_DEFAULT 0x7fff      /* IPCMNI 32768 */
#define IDX_MASK_EXTENDED 0xffffff   /* ipcmni_extend */

static int fail(struct end_slot *s, int op, int err)
{
    __atomic_store_n(&s->failed_op, op, __ATOMIC_RELAXED);
    return err;
}

/* MSG_STAT takes the kernel's slot index, not the id; the index is the id's
 * low bits, 15 of them unless the kernel was booted with ipcmni_extend. */
static int msg_stat(int id, int *mask, struct msqid_ds *ds)
{
    for (int tries = 0; tries < 2; tries++) {
        int got = msgctl(id & *mask, MSG_STAT, ds);
        if (got == id)
            return 0;
        if (got < 0 && errno != EINVAL)
            return errno;
        if (*mask == IDX_MASK_EXTENDED)
            break;
        *mask = IDX_MASK_EXTENDED;
    }
    return EINVAL;
}

/* arg: key prefix (ipctop's), key mask of the random part, random seed.
 * Every cycle ends with IPC_RMID, even when a call in it fails, and the stop
 * flag is looked at only between cycles: no queue outlives its thread. */
static int lifecycle(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    key_t prefix = (key_t)c->arg[0];
    uint64_t keymask = (uint64_t)c->arg[1], x = (uint64_t)c->arg[2] | 1, n = 0;
    uint64_t ops[5] = {0};
    struct { long mtype; char text[16]; } m = {1, {0}};
    struct msqid_ds ds;
    int mask = IDX_MASK_DEFAULT, err = 0;

    while (!stop_requested(s)) {
        uint64_t r = next_random(&x) & keymask;
        key_t key = prefix | (key_t)(r ? r : 1); /* IPC_PRIVATE is 0: never ask for it */
        int id = msgget(key, IPC_CREAT | IPC_EXCL | 0600);
        if (id < 0) {
            if (errno == EEXIST || errno == EINTR)
                continue;
            return fail(s, OP_MSGGET, errno);
        }
        __atomic_store_n(&s->ops[OP_MSGGET], ++ops[OP_MSGGET], __ATOMIC_RELAXED);
        int op = OP_MSGSND;
        if (msgsnd(id, &m, sizeof(m.text), IPC_NOWAIT) < 0) {
            err = errno;
            goto remove;
        }
        __atomic_store_n(&s->ops[OP_MSGSND], ++ops[OP_MSGSND], __ATOMIC_RELAXED);
        op = OP_IPC_STAT;
        if (msgctl(id, IPC_STAT, &ds) < 0) {
            err = errno;
            goto remove;
        }
        __atomic_store_n(&s->ops[OP_IPC_STAT], ++ops[OP_IPC_STAT], __ATOMIC_RELAXED);
        op = OP_MSG_STAT;
        if ((err = msg_stat(id, &mask, &ds)))
            goto remove;
        __atomic_store_n(&s->ops[OP_MSG_STAT], ++ops[OP_MSG_STAT], __ATOMIC_RELAXED);
    remove:
        if (msgctl(id, IPC_RMID, NULL) < 0 && !err) {
            err = errno;
            op = OP_IPC_RMID;
        }
        if (err)
            return fail(s, op, err);
        __atomic_store_n(&s->ops[OP_IPC_RMID], ++ops[OP_IPC_RMID], __ATOMIC_RELAXED);
        count_round(s, ++n);
    }
    return 0;
}

const struct workload_entry ipctop_sysv_multi_loops[] = {
    {"sysv-sem-multi", sem_multi, 0, 0},
    {"sysv-lifecycle", lifecycle, 0, 0},
    {0, 0, 0, 0},
};
