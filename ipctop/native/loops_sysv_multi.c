/* The two SysV workloads that are not ping-pongs.
 *
 * sysv-sem-multi (semop-multi): many threads lock and unlock random
 * semaphores of ONE shared array. sysv-lifecycle (msgbench): each thread runs
 * one phase per call over M queues and times each phase, which is where the
 * id allocation and lookup costs show.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <time.h>
#include <unistd.h>

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
enum { OP_MSGGET, OP_MSGSND, OP_IPC_STAT, OP_MSG_STAT, OP_IPC_RMID, NPHASES };

#define IDX_MASK_DEFAULT 0x7fff      /* IPCMNI 32768 */
#define IDX_MASK_EXTENDED 0xffffff   /* ipcmni_extend */

/* The shared area of a msgbench unit (Python reads it; layout in msgbench.py):
 * the repeats done, a ring of each repeat's phase times, the key bases Python
 * claimed for the unit (one session tag per 4096 queues), then one id per
 * queue (-1 when none). */
#define MB_RING 64
#define MB_KEYS_OFFSET 3072
#define MB_KEYS_PER_BASE 4096
#define MB_IDS_OFFSET 4096
#define MB_KEYS_PRIVATE 1 /* IPC_PRIVATE, in the thread's own IPC namespace */
#define MB_KEYS_TAGGED 2  /* keyed with the session's tags, in the host's */
struct mb_area {
    volatile uint64_t repeats;              /* completed repeats, stored last */
    volatile uint64_t keys;                 /* MB_KEYS_PRIVATE or MB_KEYS_TAGGED, set first */
    uint64_t pad[6];
    volatile uint64_t ns[MB_RING][NPHASES]; /* repeat r's phase times at r % MB_RING */
};
_Static_assert(sizeof(struct mb_area) <= MB_KEYS_OFFSET, "ring must fit before the keys");

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

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no system call */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Removes every queue still listed; returns the first error, else 0. */
static int remove_all(volatile int32_t *ids, long n, struct end_slot *s, uint64_t *ops, int count)
{
    int err = 0;
    for (long i = 0; i < n; i++) {
        if (ids[i] < 0)
            continue;
        if (msgctl(ids[i], IPC_RMID, NULL) < 0 && !err)
            err = errno;
        ids[i] = -1;
        if (count) {
            __atomic_store_n(&s->ops[OP_IPC_RMID], ++ops[OP_IPC_RMID], __ATOMIC_RELAXED);
            count_round(s, ops[OP_IPC_RMID]);
        }
    }
    return err;
}

/* One phase: `call` on every queue, timed; stops early (returns -1) on a stop
 * request, which the loop looks at every 256 calls. */
#define PHASE(op, call)                                                        \
    do {                                                                       \
        uint64_t t0 = now_ns();                                                \
        for (long i = 0; i < m; i++) {                                         \
            if ((i & 255) == 0 && stop_requested(s))                           \
                goto cleanup;                                                  \
            if ((call) < 0) {                                                  \
                err = fail(s, op, errno);                                      \
                goto cleanup;                                                  \
            }                                                                  \
            __atomic_store_n(&s->ops[op], ++ops[op], __ATOMIC_RELAXED);       \
        }                                                                      \
        phase_ns[op] = now_ns() - t0;                                          \
    } while (0)

/* Queue i's key, when the thread could not have an IPC namespace of its own:
 * ipctop's prefix and one of the unit's session tags. A SIGKILL that lands
 * while msgget runs kills the thread after the queue exists and before its id
 * is stored anywhere; an IPC_PRIVATE queue made then could be told from
 * nobody else's and would outlive the run. A keyed one carries the session's
 * tag, so the reaper's sweep and `ipctop clean` find it by key. The key costs
 * a hash lookup and insert per msgget and a removal per IPC_RMID
 * (bench/msgget_keys.py measures how much), which the seed did not pay. */
static inline key_t mb_key(const volatile uint32_t *base, long i)
{
    return (key_t)(base[i / MB_KEYS_PER_BASE] | (uint32_t)(i % MB_KEYS_PER_BASE));
}

static long read_long(const char *path)
{
    char buf[32];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return strtol(buf, NULL, 10);
}

/* msgbench's own way, IPC_PRIVATE keys, made safe: the calling thread moves to
 * an IPC namespace of its own (an unshare of a multi-threaded process moves
 * only the caller), so whatever it holds when it dies, SIGKILL included, the
 * kernel frees with the namespace. The host's msgmni, which the Python side
 * capped M by, is carried over. Needs CAP_SYS_ADMIN; 0 without it. */
static int private_namespace(void)
{
    long mni = read_long("/proc/sys/kernel/msgmni");
    if (unshare(CLONE_NEWIPC) < 0)
        return 0;
    if (mni > 0 && mni != read_long("/proc/sys/kernel/msgmni")) {
        /* /proc/sys/kernel resolves to the caller's namespace, now the new one */
        char buf[32];
        int len = snprintf(buf, sizeof(buf), "%ld\n", mni);
        int fd = open("/proc/sys/kernel/msgmni", O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (write(fd, buf, (size_t)len) != len) {
                /* the namespace's default stands; a msgget past it fails ENOSPC, named */
            }
            close(fd);
        }
    }
    return 1;
}

/* arg: queues M, prefilled queues P. msgbench's phases over M queues: msgget
 * of all, msgsnd to each, IPC_STAT of each, MSG_STAT of each, IPC_RMID of
 * each; repeated until stopped. P idle queues made first fill the id space
 * the phases allocate in and look up. A round is one queue's IPC_RMID (one
 * queue through all five calls). No queue outlives the loop: each id is
 * listed in the area from msgget to IPC_RMID, and the queues live in the
 * thread's own namespace (IPC_PRIVATE, as the seed) or carry a tag the reaper
 * sweeps. */
static int lifecycle(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    long m = c->arg[0], p = c->arg[1];
    uint64_t ops[NPHASES] = {0}, phase_ns[NPHASES];
    struct { long mtype; char text[8]; } msg = {1, {0}};
    struct msqid_ds ds;
    int mask = IDX_MASK_DEFAULT, err = 0;

    if (m < 1 || p < 0 || need_shm(c, MB_IDS_OFFSET + (size_t)(m + p) * sizeof(int32_t)))
        return EINVAL;
    struct mb_area *area = (struct mb_area *)c->shm;
    volatile int32_t *ids = (volatile int32_t *)(c->shm + MB_IDS_OFFSET), *idle = ids + m;
    const volatile uint32_t *nbases = (const volatile uint32_t *)(c->shm + MB_KEYS_OFFSET);
    const volatile uint32_t *base = nbases + 1;
    if ((long)*nbases * MB_KEYS_PER_BASE < m + p)
        return EINVAL; /* Python claims a tag per 4096 queues before the loop starts */
    for (long i = 0; i < m + p; i++)
        ids[i] = -1;
    int own = private_namespace();
    area->keys = own ? MB_KEYS_PRIVATE : MB_KEYS_TAGGED;
#define MB_KEY(i) (own ? IPC_PRIVATE : mb_key(base, (i)))
    for (long i = 0; i < p; i++) {
        if ((idle[i] = msgget(MB_KEY(m + i), IPC_CREAT | IPC_EXCL | 0600)) < 0) {
            err = fail(s, OP_MSGGET, errno);
            goto out;
        }
    }
    while (!stop_requested(s)) {
        PHASE(OP_MSGGET, ids[i] = msgget(MB_KEY(i), IPC_CREAT | IPC_EXCL | 0600));
        PHASE(OP_MSGSND, msgsnd(ids[i], &msg, sizeof(msg.text), IPC_NOWAIT));
        PHASE(OP_IPC_STAT, msgctl(ids[i], IPC_STAT, &ds));
        PHASE(OP_MSG_STAT, (errno = msg_stat(ids[i], &mask, &ds)) ? -1 : 0);
        uint64_t t0 = now_ns();
        if ((err = remove_all(ids, m, s, ops, 1))) {
            fail(s, OP_IPC_RMID, err);
            goto out;
        }
        phase_ns[OP_IPC_RMID] = now_ns() - t0;
        uint64_t r = area->repeats;
        for (int k = 0; k < NPHASES; k++)
            area->ns[r % MB_RING][k] = phase_ns[k];
        __atomic_store_n(&area->repeats, r + 1, __ATOMIC_RELEASE);
    }
cleanup:
    {
        int rm = remove_all(ids, m, s, ops, 0);
        if (!err && rm)
            err = fail(s, OP_IPC_RMID, rm);
    }
out:
    {
        int rm = remove_all(idle, p, s, ops, 0);
        if (!err && rm)
            err = fail(s, OP_IPC_RMID, rm);
    }
    return err;
#undef MB_KEY
}

const struct workload_entry ipctop_sysv_multi_loops[] = {
    {"sysv-sem-multi", sem_multi, 0, 0},
    {"sysv-lifecycle", lifecycle, 0, 0},
    {0, 0, 0, 0},
};
