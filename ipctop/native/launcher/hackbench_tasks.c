/* The launcher of hackbench's fixed run in process mode: a small program, as
 * rt-tests' hackbench is, so that the tasks it forks carry its few page
 * tables and not those of ipctop's Python process (see hackbench_core.h).
 *
 *   hackbench_tasks PARENT GROUPS FDS LOOPS SIZE PIPES
 *
 * PARENT is the pid that started it: it dies with that process (and its
 * tasks with it, each by its own parent-death signal). On success it prints
 *   seconds S
 *   groups T1 T2 ...      (each group's seconds to its last task's end)
 *   cpus C1 C2 ...        (the CPU each task ended on)
 * and exits 0; on failure "error ERRNO" and exit 1; bad arguments exit 2.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/prctl.h>

#include "../hackbench_core.h"

static int number(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    long parent, groups, fds, loops, size, pipes;
    if (argc != 7 || number(argv[1], 1, INT32_MAX, &parent) ||
        number(argv[2], 1, 1 << 20, &groups) || number(argv[3], 1, 1 << 20, &fds) ||
        number(argv[4], 1, INT32_MAX, &loops) || number(argv[5], 1, 1 << 24, &size) ||
        number(argv[6], 0, 1, &pipes) || groups * fds > (1 << 20)) {
        fprintf(stderr, "usage: %s PARENT GROUPS FDS LOOPS SIZE PIPES(0|1)\n", argv[0]);
        return 2;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != (pid_t)parent)
        return 1; /* the parent was gone before the signal was set */
    signal(SIGPIPE, SIG_IGN);

    struct hb_run r;
    memset(&r, 0, sizeof(r));
    r.ready[0] = r.ready[1] = r.wake[0] = r.wake[1] = -1;
    r.groups = (int)groups;
    r.nfds = (int)fds;
    r.loops = loops;
    r.size = (size_t)size;
    r.pipes = (int)pipes;
    r.procs = 1;
    double seconds = 0.0;
    struct timespec t0 = {0};
    int err = hb_run(&r, &seconds, &t0);
    if (err) {
        printf("error %d\n", err);
        return 1;
    }
    size_t ntasks = (size_t)groups * 2 * (size_t)fds;
    double *times = malloc(sizeof(double) * (size_t)groups);
    int *where = malloc(sizeof(int) * ntasks);
    if (!times || !where) {
        printf("error %d\n", ENOMEM);
        return 1;
    }
    hb_group_times(&r, &t0, times, where);
    printf("seconds %.9f\ngroups", seconds);
    for (long g = 0; g < groups; g++)
        printf(" %.9f", times[g]);
    printf("\ncpus");
    for (size_t i = 0; i < ntasks; i++)
        printf(" %d", where[i]);
    printf("\n");
    return fflush(stdout) == 0 ? 0 : 1;
}
