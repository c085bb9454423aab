/* msgget and IPC_RMID of M new queues, IPC_PRIVATE against ipctop's keys.
 *
 * sysv-lifecycle keys its queues (ipctop's prefix and a session tag) so that
 * a killed run leaves none nobody can find; the kernel then looks the key up
 * (a miss) and inserts it in a hash table on msgget, and removes it on
 * IPC_RMID. This measures what that costs, in A B B A blocks so that a drift
 * of the box cancels: one line per block with both rates.
 *
 *     cc -O2 -o msgget_keys msgget_keys.c && ./msgget_keys [M] [blocks]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* One pass: msgget of m new queues, then IPC_RMID of each; rates per second. */
static void pass(int *ids, long m, int keyed, double *get, double *rmid)
{
    double t0 = now();
    for (long i = 0; i < m; i++) {
        key_t key = keyed ? (key_t)(0x1C000000u | (0xFFFu << 12) | (uint32_t)i) : IPC_PRIVATE;
        if ((ids[i] = msgget(key, IPC_CREAT | IPC_EXCL | 0600)) < 0) {
            perror("msgget (raise kernel.msgmni?)");
            for (long j = 0; j < i; j++)
                msgctl(ids[j], IPC_RMID, NULL);
            exit(3);
        }
    }
    double t1 = now();
    for (long i = 0; i < m; i++)
        msgctl(ids[i], IPC_RMID, NULL);
    double t2 = now();
    *get = m / (t1 - t0);
    *rmid = m / (t2 - t1);
}

int main(int argc, char **argv)
{
    long m = argc > 1 ? atol(argv[1]) : 4095;
    int blocks = argc > 2 ? atoi(argv[2]) : 8;
    int *ids = calloc((size_t)m, sizeof(int));
    static const int order[4] = {0, 1, 1, 0}; /* private, keyed, keyed, private */
    if (!ids || m < 1 || m > 4096) {
        fprintf(stderr, "M is 1..4096 (one session tag's keys)\n");
        return 2;
    }
    printf("block private_msgget keyed_msgget private_rmid keyed_rmid\n");
    for (int b = 0; b < blocks; b++) {
        double get[2] = {0}, rmid[2] = {0};
        for (int k = 0; k < 4; k++) {
            double g, r;
            pass(ids, m, order[k], &g, &r);
            get[order[k]] += g / 2;
            rmid[order[k]] += r / 2;
        }
        printf("%d %.0f %.0f %.0f %.0f\n", b, get[0], get[1], rmid[0], rmid[1]);
    }
    free(ids);
    return 0;
}
