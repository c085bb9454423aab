/* --think-ns: the spin count's calibration and its correction while the ends
 * run (see think() in native.h for why both). */

#include <stdlib.h>

#include "native.h"

_Static_assert(THINK_BATCH <= sizeof(((struct end_ctx *)0)->think_dt) / sizeof(uint32_t),
               "think_dt holds a batch");

/* What one read of each clock costs, taken off every timed think (set with per_ns). */
static uint64_t wall_read_ns, cpu_read_ns;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The typical read, not the fastest: a short think is charged what a read
 * usually costs. */
static uint64_t read_cost(uint64_t (*now)(void))
{
    uint64_t reads[63];
    for (int t = 0; t < 63; t++) {
        uint64_t t0 = now(), t1 = now();
        reads[t] = t1 - t0;
    }
    qsort(reads, 63, sizeof(reads[0]), cmp_u64);
    return reads[31];
}

static uint64_t wall_now(void)
{
    return lat_now();
}

static uint64_t cpu_now(void)
{
    return thread_cpu_now();
}

/* Spin iterations per ns, measured once: a warm-up first, so the vCPU is at
 * the speed the ends will run it at, then the fastest of several trials on
 * the thread's CPU clock. It is only the starting point: ipctop_think_timed
 * corrects it while the ends run. */
uint64_t ipctop_think_loops(uint64_t think_ns)
{
    static double per_ns;
    if (per_ns == 0.0) {
        const uint64_t n = 200000; /* ~70 us a trial: the clock reads are <1 % of it */
        uint64_t best = UINT64_MAX, t_end = lat_now() + 2000000;
        while (lat_now() < t_end)
            think_spin(n);
        for (int t = 0; t < 15; t++) {
            uint64_t t0 = thread_cpu_now();
            think_spin(n);
            uint64_t dt = thread_cpu_now() - t0;
            if (dt && dt < best)
                best = dt;
        }
        wall_read_ns = read_cost(wall_now);
        cpu_read_ns = read_cost(cpu_now);
        if (best != UINT64_MAX && best > cpu_read_ns)
            best -= cpu_read_ns;
        per_ns = (double)n / (double)(best == UINT64_MAX ? n : best);
    }
    uint64_t loops = (uint64_t)((double)think_ns * per_ns + 0.5);
    return loops ? loops : 1;
}

/* A timed think of `dt` ns: every THINK_BATCH of them, scale the spin count
 * so the batch's median would have taken think_ns. The median, not the
 * fastest: the cost asked for is the usual cost, and a spin's speed follows
 * what the host runs beside this vCPU. The step is bounded so one odd batch
 * cannot swing it far. */
void ipctop_think_timed(struct end_ctx *c, uint64_t dt)
{
    uint64_t read = c->think_ns >= THINK_CPU_CLOCK_NS ? cpu_read_ns : wall_read_ns;
    dt = dt > read ? dt - read : 1;
    c->think_dt[c->think_seen] = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
    if (++c->think_seen < THINK_BATCH)
        return;
    c->think_seen = 0;
    qsort(c->think_dt, THINK_BATCH, sizeof(c->think_dt[0]), cmp_u32);
    double median = 0.5 * ((double)c->think_dt[THINK_BATCH / 2 - 1] +
                           (double)c->think_dt[THINK_BATCH / 2]);
    double ratio = (double)c->think_ns / median;
    ratio = ratio > 2.0 ? 2.0 : ratio < 0.5 ? 0.5 : ratio;
    uint64_t loops = (uint64_t)((double)c->think_loops * ratio + 0.5);
    c->think_loops = loops ? loops : 1;
}
