/* An end answers the monitor's request for its scheduler facts. */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include "native.h"

__attribute__((noinline, cold)) void ipctop_publish_stats(struct end_slot *s, uint32_t req)
{
    struct rusage ru;
    struct timespec ts;

    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return; /* cannot fail for RUSAGE_THREAD; leave the request unanswered */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    /* A seqlock of sorts: a reader that sees "busy", or a different ack after
     * reading the fields, knows it read a half-written answer and retries. */
    __atomic_store_n(&s->stats_ack, IPCTOP_STATS_BUSY, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    s->cpu = sched_getcpu();
    s->stats_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    s->nvcsw = (uint64_t)ru.ru_nvcsw;
    s->nivcsw = (uint64_t)ru.ru_nivcsw;
    __atomic_store_n(&s->stats_ack, req, __ATOMIC_RELEASE);
}
