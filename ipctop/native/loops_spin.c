/* ctxbench -L / -Y: the token is a flag in shared memory, passed with no
 * syscall at all; spin-yield calls sched_yield() while it waits. Nothing ever
 * blocks in the kernel, so the stop flag alone ends the loop. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>

#include "native.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* The flag is at offset 0 of the pair's own mapping: a cache line nobody else touches. */
static int spin_setup(struct end_ctx *c)
{
    int err = need_shm(c, sizeof(int32_t));
    if (err)
        return err;
    __atomic_store_n((int32_t *)c->shm, 0, __ATOMIC_SEQ_CST);
    return 0;
}

static int spin_loop(struct end_ctx *c, int yield)
{
    struct end_slot *s = c->slot;
    int err = need_shm(c, sizeof(int32_t));
    if (err)
        return err;
    int32_t *flag = (int32_t *)c->shm;
    int32_t want = c->role ? 1 : 0, give = c->role ? 0 : 1;
    uint64_t n = 0;

    for (;;) {
        while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != want) {
            if (stop_requested(s))
                return 0;
            if (yield)
                sched_yield();
            else
                cpu_relax();
        }
        lat_woken(c);
        think(c);
        lat_post(c);
        __atomic_store_n(flag, give, __ATOMIC_RELEASE);
        count_round(s, ++n);
    }
}

static int spin_pingpong(struct end_ctx *c)
{
    return spin_loop(c, 0);
}

static int spin_yield_pingpong(struct end_ctx *c)
{
    return spin_loop(c, 1);
}

const struct workload_entry ipctop_spin_loops[] = {
    {"spin", spin_pingpong, spin_setup, 0},
    {"spin-yield", spin_yield_pingpong, spin_setup, 0},
    {0, 0, 0, 0},
};
