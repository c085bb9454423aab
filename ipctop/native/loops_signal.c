/* ctxbench's signal method: each end waits in sigwaitinfo() and passes the
 * token by sending a signal to its peer's thread (tgkill).
 *
 * The signal is SIGURG, whose default action is to ignore it: the ends block
 * it before anyone can learn their tid, so it is queued for sigwaitinfo, and
 * a stray one that reached any other thread (Python's main thread included)
 * would be dropped instead of killing the process or running a handler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "native.h"

#define TOKEN_SIGNAL SIGURG

/* Where each end says where it can be reached; 0 = not (or no longer) there. */
struct signal_area {
    int32_t tgid[2];
    int32_t tid[2];
};

static int send_token(struct signal_area *a, int to)
{
    int32_t tgid = __atomic_load_n(&a->tgid[to], __ATOMIC_SEQ_CST);
    int32_t tid = __atomic_load_n(&a->tid[to], __ATOMIC_SEQ_CST);
    if (!tid)
        return 0; /* already gone: nothing to wake */
    return syscall(SYS_tgkill, tgid, tid, TOKEN_SIGNAL) < 0 ? errno : 0;
}

static int signal_setup(struct end_ctx *c)
{
    int err = need_shm(c, sizeof(struct signal_area));
    if (err)
        return err;
    struct signal_area *a = (struct signal_area *)c->shm;
    for (int r = 0; r < 2; r++) {
        __atomic_store_n(&a->tgid[r], 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&a->tid[r], 0, __ATOMIC_SEQ_CST);
    }
    return 0;
}

static int signal_wake(struct end_ctx *c)
{
    int err = need_shm(c, sizeof(struct signal_area));
    if (err)
        return err;
    /* Orders the monitor's stop flag before the tid it reads (the end does the reverse). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    err = send_token((struct signal_area *)c->shm, c->role);
    return err == ESRCH ? 0 : err;
}

static int signal_loop(struct end_ctx *c, struct signal_area *a, const sigset_t *set)
{
    struct end_slot *s = c->slot;
    int peer = !c->role, err;
    uint64_t n = 0;

    /* The peer's tid is known only once it has started and blocked the signal. */
    while (!__atomic_load_n(&a->tid[peer], __ATOMIC_SEQ_CST)) {
        if (stop_requested(s))
            return 0;
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    if (c->role == 0) {
        lat_post(c);
        if ((err = send_token(a, peer)))
            return err;
    }
    while (!stop_requested(s)) {
        if (sigwaitinfo(set, NULL) < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (stop_requested(s))
            break;
        lat_woken(c);
        think(c);
        lat_post(c);
        if ((err = send_token(a, peer)))
            return err == ESRCH && stop_requested(s) ? 0 : err;
        count_round(s, ++n);
    }
    return 0;
}

static int signal_pingpong(struct end_ctx *c)
{
    int err = need_shm(c, sizeof(struct signal_area));
    if (err)
        return err;
    struct signal_area *a = (struct signal_area *)c->shm;
    sigset_t set, old;

    sigemptyset(&set);
    sigaddset(&set, TOKEN_SIGNAL);
    if ((err = pthread_sigmask(SIG_BLOCK, &set, &old)))
        return err;
    __atomic_store_n(&a->tgid[c->role], getpid(), __ATOMIC_SEQ_CST);
    __atomic_store_n(&a->tid[c->role], (int32_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
    /* Pairs with the fence in signal_wake: either it sees our tid or we see the stop flag. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    err = signal_loop(c, a, &set);
    __atomic_store_n(&a->tid[c->role], 0, __ATOMIC_SEQ_CST);
    /* Drop what is still queued (the last token, a wake-up) before unblocking. */
    struct timespec none = {0, 0};
    while (sigtimedwait(&set, NULL, &none) > 0)
        ;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

const struct workload_entry ipctop_signal_loops[] = {
    {"signal", signal_pingpong, signal_setup, signal_wake},
    {0, 0, 0, 0},
};
