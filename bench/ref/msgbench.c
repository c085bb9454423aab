/* msgbench as SEEDS.md describes it, for bench/msgbench_fidelity.py: M
 * IPC_PRIVATE queues, then one timed phase per operation over all of them
 * (msgget of all, msgsnd to each, IPC_STAT of each, MSG_STAT of each,
 * IPC_RMID of each), repeated. Written from the seed's description, not from
 * ipctop's loop: one process, no shared area, no stop flag, the ids in a
 * plain array. Prints one line per repeat: the five phase times in ns.
 *
 *     msgbench M REPEATS      (run it in a private IPC namespace: unshare -i)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <time.h>

static long long ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
    long m = argc > 1 ? atol(argv[1]) : 32768;
    long repeats = argc > 2 ? atol(argv[2]) : 10;
    int *ids = calloc((size_t)m, sizeof(int));
    struct { long mtype; char text[8]; } msg = {1, "msgbnch"};
    struct msqid_ds ds;
    if (!ids)
        return 1;
    for (long r = 0; r < repeats; r++) {
        long long t[6];
        t[0] = ns();
        for (long i = 0; i < m; i++)
            if ((ids[i] = msgget(IPC_PRIVATE, IPC_CREAT | 0600)) < 0) {
                perror("msgget");
                return 1;
            }
        t[1] = ns();
        for (long i = 0; i < m; i++)
            if (msgsnd(ids[i], &msg, sizeof(msg.text), IPC_NOWAIT) < 0) {
                perror("msgsnd");
                return 1;
            }
        t[2] = ns();
        for (long i = 0; i < m; i++)
            if (msgctl(ids[i], IPC_STAT, &ds) < 0) {
                perror("IPC_STAT");
                return 1;
            }
        t[3] = ns();
        /* MSG_STAT takes the kernel's slot index: the id's low 15 bits */
        for (long i = 0; i < m; i++)
            if (msgctl(ids[i] & 0x7fff, MSG_STAT, &ds) != ids[i]) {
                perror("MSG_STAT");
                return 1;
            }
        t[4] = ns();
        for (long i = 0; i < m; i++)
            if (msgctl(ids[i], IPC_RMID, NULL) < 0) {
                perror("IPC_RMID");
                return 1;
            }
        t[5] = ns();
        printf("%lld %lld %lld %lld %lld\n", t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3],
               t[5] - t[4]);
    }
    return 0;
}
