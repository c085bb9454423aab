/* chat: a C reference of the chat-room benchmark that stood in for VolanoMark.
 *
 * Written from the description (issue 25), not from ipctop's loop: a room is
 * 20 users; each user has one connection to the server and four threads: on
 * the client side one sends 100-byte messages and one receives; on the
 * server side one receives the user's messages and passes each on to the
 * other 19 members, and one writes what was passed to its member back down
 * the connection. The figure is messages delivered to clients per second.
 *
 *   gcc -O2 -pthread -o chat chat.c     (or: make, which builds bin/chat)
 *   ./chat --rooms 2 --transport tcp --cpus 0,1 --seconds 5 --warmup 1
 *
 * Output: one JSON line. Threads are allowed on --cpus (an affinity mask,
 * not one CPU each). Exit: 0 ok, 1 a call failed, 2 usage, 3 out of a limit.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define USERS 20
#define BACKLOG 32 /* messages a member may have waiting for its writer */

struct mailbox {
    pthread_mutex_t lock;
    pthread_cond_t more, room;
    int waiting;
};

struct user {
    int client, server;            /* the two ends of its connection */
    struct mailbox box;
    volatile uint64_t delivered;   /* messages its client thread read */
};

static volatile int stopping;
static size_t msg_size = 100;
static int nrooms = 1;
static struct user *users;        /* nrooms * USERS */

struct job {
    struct user *room;
    int me, kind;
};

static int fill(int fd, char *buf, size_t len, int reading)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = reading ? read(fd, buf + done, len - done) : write(fd, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

static void *run(void *arg)
{
    struct job *j = arg;
    struct user *u = &j->room[j->me];
    char *buf = calloc(1, msg_size);
    if (!buf)
        return NULL;
    while (!stopping) {
        if (j->kind == 0) { /* client: send */
            if (fill(u->client, buf, msg_size, 0))
                break;
        } else if (j->kind == 1) { /* client: receive */
            if (fill(u->client, buf, msg_size, 1))
                break;
            __atomic_add_fetch(&u->delivered, 1, __ATOMIC_RELAXED);
        } else if (j->kind == 2) { /* server: receive, pass on to the 19 others */
            if (fill(u->server, buf, msg_size, 1))
                break;
            for (int v = 0; v < USERS && !stopping; v++) {
                if (v == j->me)
                    continue;
                struct mailbox *b = &j->room[v].box;
                pthread_mutex_lock(&b->lock);
                while (b->waiting >= BACKLOG && !stopping)
                    pthread_cond_wait(&b->room, &b->lock);
                b->waiting++;
                pthread_cond_signal(&b->more);
                pthread_mutex_unlock(&b->lock);
            }
        } else { /* server: write what was passed to this member */
            struct mailbox *b = &u->box;
            pthread_mutex_lock(&b->lock);
            while (b->waiting == 0 && !stopping)
                pthread_cond_wait(&b->more, &b->lock);
            if (stopping) {
                pthread_mutex_unlock(&b->lock);
                break;
            }
            b->waiting--;
            pthread_cond_broadcast(&b->room);
            pthread_mutex_unlock(&b->lock);
            if (fill(u->server, buf, msg_size, 0))
                break;
        }
    }
    free(buf);
    return NULL;
}

static int connect_user(struct user *u, int tcp, int listener, struct sockaddr_in *addr)
{
    int one = 1, fds[2];
    if (!tcp) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0)
            return -1;
        u->client = fds[0];
        u->server = fds[1];
        return 0;
    }
    u->client = socket(AF_INET, SOCK_STREAM, 0);
    if (u->client < 0 || connect(u->client, (struct sockaddr *)addr, sizeof(*addr)) < 0)
        return -1;
    u->server = accept(listener, NULL, NULL);
    if (u->server < 0)
        return -1;
    setsockopt(u->client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(u->server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return 0;
}

static uint64_t delivered(void)
{
    uint64_t n = 0;
    for (int i = 0; i < nrooms * USERS; i++)
        n += __atomic_load_n(&users[i].delivered, __ATOMIC_RELAXED);
    return n;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t) < 0 && errno == EINTR)
        ;
}

static int parse_cpus(const char *text, cpu_set_t *set)
{
    CPU_ZERO(set);
    char *copy = strdup(text), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int a, b;
        if (sscanf(tok, "%d-%d", &a, &b) == 2) {
        } else if (sscanf(tok, "%d", &a) == 1)
            b = a;
        else {
            free(copy);
            return -1;
        }
        for (int c = a; c <= b; c++)
            CPU_SET(c, set);
    }
    free(copy);
    return CPU_COUNT(set) ? 0 : -1;
}

static int usage(const char *why)
{
    fprintf(stderr, "chat: %s (usage: chat [--rooms R] [--transport tcp|unix] [--size B] "
                    "[--cpus LIST] [--seconds S] [--warmup W])\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    int tcp = 1, listener = -1;
    double seconds = 5, warmup = 0.5;
    const char *cpus = NULL;
    struct sockaddr_in addr = {.sin_family = AF_INET};

    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage("an option needs a value");
        if (!strcmp(argv[i], "--rooms"))
            nrooms = atoi(v);
        else if (!strcmp(argv[i], "--transport"))
            tcp = !strcmp(v, "tcp") ? 1 : !strcmp(v, "unix") ? 0 : -1;
        else if (!strcmp(argv[i], "--size"))
            msg_size = (size_t)atol(v);
        else if (!strcmp(argv[i], "--cpus"))
            cpus = v;
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(v);
        else if (!strcmp(argv[i], "--warmup"))
            warmup = atof(v);
        else
            return usage("unknown option");
        i++;
    }
    if (nrooms < 1 || tcp < 0 || msg_size < 1 || seconds <= 0 || warmup < 0)
        return usage("bad value");
    if (cpus) {
        cpu_set_t set;
        if (parse_cpus(cpus, &set) < 0)
            return usage("bad --cpus");
        if (sched_setaffinity(0, sizeof(set), &set) < 0) {
            fprintf(stderr, "chat: sched_setaffinity: %s\n", strerror(errno));
            return 1;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    int n = nrooms * USERS, status = 0;
    users = calloc((size_t)n, sizeof(*users));
    struct job *jobs = calloc((size_t)n * 4, sizeof(*jobs));
    pthread_t *threads = calloc((size_t)n * 4, sizeof(*threads));
    int made = 0, connected = 0;
    if (!users || !jobs || !threads)
        return 3;
    if (tcp) {
        socklen_t len = sizeof(addr);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        listener = socket(AF_INET, SOCK_STREAM, 0);
        if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
            listen(listener, USERS) < 0 ||
            getsockname(listener, (struct sockaddr *)&addr, &len) < 0) {
            fprintf(stderr, "chat: listen: %s\n", strerror(errno));
            return 1;
        }
    }
    for (int i = 0; i < n; i++) {
        users[i].client = users[i].server = -1;
        pthread_mutex_init(&users[i].box.lock, NULL);
        pthread_cond_init(&users[i].box.more, NULL);
        pthread_cond_init(&users[i].box.room, NULL);
    }
    for (; connected < n; connected++)
        if (connect_user(&users[connected], tcp, listener, &addr) < 0) {
            fprintf(stderr, "chat: connection %d: %s\n", connected, strerror(errno));
            status = errno == EMFILE || errno == ENFILE ? 3 : 1;
            break;
        }
    for (int i = 0; !status && i < n * 4; i++) {
        int user = i / 4;
        jobs[i] = (struct job){&users[(user / USERS) * USERS], user % USERS, i % 4};
        int err = pthread_create(&threads[i], NULL, run, &jobs[i]);
        if (err) {
            fprintf(stderr, "chat: thread %d: %s\n", i, strerror(err));
            status = err == EAGAIN ? 3 : 1;
            break;
        }
        made++;
    }
    double t0 = 0, t1 = 0;
    uint64_t d0 = 0, d1 = 0;
    if (!status) {
        sleep_s(warmup);
        t0 = now();
        d0 = delivered();
        sleep_s(seconds);
        d1 = delivered();
        t1 = now();
    }
    /* Stop: the flag, every socket shut down, every waiter woken, every thread joined. */
    stopping = 1;
    for (int i = 0; i < n; i++) {
        if (users[i].client >= 0)
            shutdown(users[i].client, SHUT_RDWR);
        if (users[i].server >= 0)
            shutdown(users[i].server, SHUT_RDWR);
        pthread_mutex_lock(&users[i].box.lock);
        pthread_cond_broadcast(&users[i].box.more);
        pthread_cond_broadcast(&users[i].box.room);
        pthread_mutex_unlock(&users[i].box.lock);
    }
    for (int i = 0; i < made; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < n; i++) {
        if (users[i].client >= 0)
            close(users[i].client);
        if (users[i].server >= 0)
            close(users[i].server);
    }
    if (listener >= 0)
        close(listener);
    if (!status)
        printf("{\"workload\": \"chat\", \"rooms\": %d, \"users_per_room\": %d, \"threads\": %d, "
               "\"transport\": \"%s\", \"size\": %zu, \"seconds\": %.6f, "
               "\"delivered_per_s\": %.1f}\n",
               nrooms, USERS, made, tcp ? "tcp" : "unix", msg_size, t1 - t0,
               (double)(d1 - d0) / (t1 - t0));
    free(users);
    free(jobs);
    free(threads);
    return status;
}
