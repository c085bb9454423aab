/* FUTEX_WAIT / FUTEX_WAKE on one token word in shared memory.
 *
 * Word values: 0 = A's turn, 1 = B's turn, 2 = stopped. Ends move the token
 * with a compare-and-swap so that they never overwrite the stop value and
 * then sleep on a word nobody will change again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "native.h"

#define FUTEX_STOPPED 2

struct futex_area {
    int32_t word;
    char pad[60];      /* the token word alone on its cache line */
    int32_t creator;   /* pid of the monitor: same pid means threads mode */
};

static long futex(int32_t *addr, int op, int val)
{
    return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

static int futex_setup(struct end_ctx *c)
{
    int err = need_shm(c, sizeof(struct futex_area));
    if (err)
        return err;
    struct futex_area *f = (struct futex_area *)c->shm;
    f->creator = getpid();
    __atomic_store_n(&f->word, 0, __ATOMIC_SEQ_CST);
    return 0;
}

/* Both flavours of wake: the monitor cannot tell which one its ends wait with,
 * and a wake nobody waits for costs nothing. */
static int futex_wake(struct end_ctx *c)
{
    int err = need_shm(c, sizeof(struct futex_area));
    if (err)
        return err;
    struct futex_area *f = (struct futex_area *)c->shm;
    __atomic_store_n(&f->word, FUTEX_STOPPED, __ATOMIC_SEQ_CST);
    if (futex(&f->word, FUTEX_WAKE_PRIVATE, INT_MAX) < 0 || futex(&f->word, FUTEX_WAKE, INT_MAX) < 0)
        return errno;
    return 0;
}

static int futex_pingpong(struct end_ctx *c)
{
    struct end_slot *s = c->slot;
    int err = need_shm(c, sizeof(struct futex_area));
    if (err)
        return err;
    struct futex_area *f = (struct futex_area *)c->shm;
    /* Private futexes hash by address space: a forked child must use shared ones. */
    int priv = getpid() == f->creator ? FUTEX_PRIVATE_FLAG : 0;
    int32_t want = c->role ? 1 : 0, give = c->role ? 0 : 1;
    uint64_t n = 0;

    for (;;) {
        int32_t v = __atomic_load_n(&f->word, __ATOMIC_ACQUIRE);
        if (v == FUTEX_STOPPED || stop_requested(s))
            return 0;
        if (v != want) {
            if (futex(&f->word, FUTEX_WAIT | priv, v) < 0 && errno != EAGAIN && errno != EINTR)
                return errno;
            continue;
        }
        lat_woken(c);
        think(c);
        lat_post(c);
        if (!__atomic_compare_exchange_n(&f->word, &v, give, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            continue;
        if (futex(&f->word, FUTEX_WAKE | priv, 1) < 0)
            return errno;
        count_round(s, ++n);
    }
}

const struct workload_entry ipctop_futex_loops[] = {
    {"futex", futex_pingpong, futex_setup, futex_wake},
    {0, 0, 0, 0},
};
