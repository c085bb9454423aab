/* hackbench's fixed work, as rt-tests' hackbench runs it: the time G groups take.
 *
 * Header-only (static functions, no Python): the extension's hackbench_fixed.c
 * runs it in threads, launcher/hackbench_tasks.c runs it in processes.
 *
 * Per group, F receivers each own a channel (socketpair or pipe) and read
 * F*L messages of D bytes; F senders each write L messages to every receiver
 * of the group. Every task says "ready" on one pipe and waits in poll() on a
 * second one; the clock starts when all are ready and the parent writes the
 * wake-up byte, and stops when every task has ended. Nothing here touches
 * Python. In process mode the tasks are forked by the small launcher
 * executable, never by ipctop's own process: each task of a large process
 * gets a copy of its page tables and tears them down at exit, inside the
 * timed span, which a small hackbench binary never pays.
 *
 * If a task cannot be made, the parent closes the wake-up pipe without
 * writing: the tasks already made see POLLHUP and end without work, and the
 * call returns the errno once every one of them is reaped and every
 * descriptor closed.
 *
 * Each task also notes when it ended and the CPU it ended on, in a shared
 * mapping (a forked task's memory is its own): a group's time is its last
 * task's end, what a replay shows per group (hackbench_run(..., True)).
 */
#ifndef IPCTOP_HACKBENCH_CORE_H
#define IPCTOP_HACKBENCH_CORE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HB_STACK (256 * 1024)

/* Where and when one task ended (shared with forked tasks). */
struct hb_end {
    struct timespec at;
    int cpu;
};

struct hb_task {
    int in_fd;          /* receiver: its channel's read end; -1 for a sender */
    const int *out_fds; /* sender: the group's write ends */
    int nout;
    long messages;      /* receiver: messages to read; sender: loops */
    size_t size;
    int ready_fd, wake_fd;
    int err;            /* threads: the errno a task ended with */
    struct hb_end *end; /* its slot in the shared mapping */
    pthread_t thread;
    pid_t pid;
};

/* 1 once the wake-up byte came, 0 when the parent gave up (POLLHUP), or -errno. */
static int await_start(struct hb_task *t)
{
    struct pollfd p = {.fd = t->wake_fd, .events = POLLIN};
    char c = 'r';
    if (write(t->ready_fd, &c, 1) != 1)
        return -errno;
    for (;;) {
        int r = poll(&p, 1, -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        return (p.revents & POLLIN) ? 1 : 0;
    }
}

static int hb_work(struct hb_task *t)
{
    int go = await_start(t);
    if (go <= 0)
        return -go;
    char *buf = calloc(1, t->size);
    if (!buf)
        return ENOMEM;
    int err = 0;
    if (t->in_fd >= 0) {
        for (long i = 0; i < t->messages && !err; i++) {
            size_t done = 0;
            while (done < t->size) {
                ssize_t n = read(t->in_fd, buf + done, t->size - done);
                if (n < 0 && errno == EINTR)
                    continue;
                if (n <= 0) {
                    err = n < 0 ? errno : EPIPE;
                    break;
                }
                done += (size_t)n;
            }
        }
    } else {
        for (long i = 0; i < t->messages && !err; i++)
            for (int j = 0; j < t->nout && !err; j++) {
                size_t done = 0;
                while (done < t->size) {
                    ssize_t n = write(t->out_fds[j], buf + done, t->size - done);
                    if (n < 0 && errno == EINTR)
                        continue;
                    if (n < 0) {
                        err = errno;
                        break;
                    }
                    done += (size_t)n;
                }
            }
    }
    free(buf);
    return err;
}

/* The work, then when and where it ended: outside the timed loop. */
static int hb_work_noted(struct hb_task *t)
{
    int err = hb_work(t);
    clock_gettime(CLOCK_MONOTONIC, &t->end->at);
    t->end->cpu = sched_getcpu();
    return err;
}

static void *hb_thread(void *arg)
{
    struct hb_task *t = arg;
    t->err = hb_work_noted(t);
    return NULL;
}

struct hb_run {
    int groups, nfds, procs, pipes;
    long loops;
    size_t size;
    struct hb_task *tasks;
    struct hb_end *ends; /* one per task, MAP_SHARED */
    int ntasks;
    int *fds;   /* per group and receiver: read end, write end (-1 once closed) */
    int ready[2], wake[2];
    pthread_attr_t attr;
};

/* A forked receiver closes the write ends it inherited (its own and its group's
 * earlier ones, as hackbench's receiver closes in_fds[1]): once every sender
 * is gone it then sees EOF instead of waiting for ever. */
static void close_inherited(const int *gfds, int upto)
{
    for (int k = 0; k <= upto; k++)
        if (gfds[2 * k + 1] >= 0)
            close(gfds[2 * k + 1]);
}

static int start_task(struct hb_run *r, struct hb_task *t, const int *gfds, int receiver)
{
    if (!r->procs) {
        int err = pthread_create(&t->thread, &r->attr, hb_thread, t);
        if (!err)
            r->ntasks++;
        return err;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return errno;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGPIPE, SIG_IGN);
        close(r->wake[1]); /* or the parent's giving up would not show as POLLHUP */
        close(r->ready[0]);
        if (receiver >= 0)
            close_inherited(gfds, receiver);
        _exit(hb_work_noted(t) ? 1 : 0);
    }
    t->pid = pid;
    r->ntasks++;
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

/* Reap every task made; returns the first error one of them reported, a task
 * killed by a signal (EINTR) before all else: the receivers' EOF that follows
 * from it is its consequence, not the cause. */
static int reap(struct hb_run *r)
{
    int first = 0, killed = 0;
    for (int i = 0; i < r->ntasks; i++) {
        struct hb_task *t = &r->tasks[i];
        if (!r->procs) {
            pthread_join(t->thread, NULL);
            if (t->err && !first)
                first = t->err;
            continue;
        }
        int status;
        while (waitpid(t->pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (WIFSIGNALED(status))
            killed = 1;
        else if (!first && WEXITSTATUS(status))
            first = EIO;
    }
    return killed ? EINTR : first;
}

static int make_groups(struct hb_run *r)
{
    int per = 2 * r->nfds;
    for (int g = 0; g < r->groups; g++) {
        int *gfds = r->fds + (size_t)g * per; /* pairs: read end, write end */
        int *outs = malloc(sizeof(int) * (size_t)r->nfds);
        if (!outs)
            return ENOMEM;
        /* One array per group the senders share; freed with the run. */
        r->tasks[(size_t)g * per].out_fds = outs;
        for (int i = 0; i < r->nfds; i++) {
            int ch[2];
            int err = r->pipes ? pipe(ch) : socketpair(AF_UNIX, SOCK_STREAM, 0, ch);
            if (err < 0)
                return errno;
            gfds[2 * i] = ch[0];
            gfds[2 * i + 1] = ch[1];
            outs[i] = ch[1];
            struct hb_task *t = &r->tasks[(size_t)g * per + i];
            t->in_fd = ch[0];
            t->messages = (long)r->nfds * r->loops;
            if ((err = start_task(r, t, gfds, i)))
                return err;
            if (r->procs)
                close_fd(&gfds[2 * i]); /* the receiver holds it now */
        }
        for (int i = 0; i < r->nfds; i++) {
            struct hb_task *t = &r->tasks[(size_t)g * per + r->nfds + i];
            t->in_fd = -1;
            t->out_fds = outs;
            t->nout = r->nfds;
            t->messages = r->loops;
            int err = start_task(r, t, gfds, -1);
            if (err)
                return err;
        }
        if (r->procs)
            for (int i = 0; i < r->nfds; i++)
                close_fd(&gfds[2 * i + 1]);
    }
    return 0;
}

/* 1 if a forked task has already ended (it is left for reap() to collect). */
static int a_task_ended(const struct hb_run *r)
{
    for (int i = 0; i < r->ntasks; i++) {
        siginfo_t info = {0};
        if (waitid(P_PID, (id_t)r->tasks[i].pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid != 0)
            return 1;
    }
    return 0;
}

/* Every task made says ready once, started or not. A forked task killed
 * before it said so never will, and the parent's own copy of the ready pipe's
 * write end means no EOF either: so in process mode the wait looks, every
 * 200 ms, for a task that has ended, and gives up with EINTR (a task killed). */
static int await_ready(struct hb_run *r)
{
    struct pollfd p = {.fd = r->ready[0], .events = POLLIN};
    for (int k = 0; k < r->ntasks;) {
        if (r->procs) {
            int n = poll(&p, 1, 200);
            if (n < 0 && errno != EINTR)
                return errno;
            if (n <= 0) {
                if (n == 0 && a_task_ended(r))
                    return EINTR;
                continue;
            }
        }
        char c;
        ssize_t got = read(r->ready[0], &c, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got != 1)
            return got < 0 ? errno : EPIPE;
        k++;
    }
    return 0;
}

static double since(const struct timespec *t0, const struct timespec *t1)
{
    return (double)(t1->tv_sec - t0->tv_sec) + (double)(t1->tv_nsec - t0->tv_nsec) / 1e9;
}

/* Runs the whole benchmark; *seconds is the time from the wake-up to the last task's end,
 * *start the wake-up's time (r->ends say when each task ended). */
static int hb_run(struct hb_run *r, double *seconds, struct timespec *start)
{
    size_t n = (size_t)r->groups * 2 * (size_t)r->nfds;
    int err = 0, started = 0;
    struct timespec t0, t1;

    r->tasks = calloc(n, sizeof(*r->tasks));
    r->fds = malloc(n * sizeof(int));
    r->ends = mmap(NULL, n * sizeof(*r->ends), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (r->ends == MAP_FAILED) {
        r->ends = NULL;
        err = ENOMEM;
    }
    if (!r->tasks || !r->fds)
        err = ENOMEM;
    else {
        for (size_t i = 0; i < n; i++)
            r->fds[i] = -1;
        if (pipe(r->ready) < 0 || pipe(r->wake) < 0)
            err = errno;
    }
    if (!err) {
        pthread_attr_init(&r->attr);
        pthread_attr_setstacksize(&r->attr, HB_STACK);
        for (size_t i = 0; i < n; i++) {
            r->tasks[i].size = r->size;
            r->tasks[i].ready_fd = r->ready[1];
            r->tasks[i].wake_fd = r->wake[0];
            r->tasks[i].end = &r->ends[i];
        }
        err = make_groups(r);
        int waited = await_ready(r);
        if (!err)
            err = waited;
        if (!err) {
            clock_gettime(CLOCK_MONOTONIC, &t0);
            char c = 'w';
            if (write(r->wake[1], &c, 1) == 1)
                started = 1;
            else
                err = errno;
        }
        close_fd(&r->wake[1]); /* after the byte: a task that has not polled yet still sees it */
        int failed = reap(r);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (!err && started)
            err = failed;
        pthread_attr_destroy(&r->attr);
    }
    if (r->fds)
        for (size_t i = 0; i < n; i++)
            close_fd(&r->fds[i]);
    if (r->tasks)
        for (int g = 0; g < r->groups; g++)
            free((void *)r->tasks[(size_t)g * 2 * r->nfds].out_fds);
    for (int i = 0; i < 2; i++) {
        if (r->ready[i] >= 0)
            close(r->ready[i]);
        if (r->wake[i] >= 0)
            close(r->wake[i]);
    }
    free(r->tasks);
    free(r->fds);
    if (!err) {
        *seconds = since(&t0, &t1);
        *start = t0;
    }
    return err;
}

/* Per group, the seconds from the wake-up to its last task's end; per task,
 * the CPU it ended on. times: r->groups entries, cpus: one per task. */
static void hb_group_times(const struct hb_run *r, const struct timespec *t0, double *times,
                           int *cpus)
{
    int per = 2 * r->nfds;
    for (int g = 0; g < r->groups; g++) {
        double last = 0.0;
        for (int i = 0; i < per; i++) {
            const struct hb_end *e = &r->ends[(size_t)g * per + i];
            double s = since(t0, &e->at);
            if (s > last)
                last = s;
            cpus[(size_t)g * per + i] = e->cpu;
        }
        times[g] = last;
    }
}

#endif
