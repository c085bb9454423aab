/*
 * pingpong: hand-written C reference for ipctop's ping-pong numbers.
 *
 * Standalone on purpose (no ipctop headers) so that a kernel engineer can
 * check ipctop against a loop they can read in one sitting.
 *
 *   gcc -O2 -pthread -o pingpong pingpong.c
 *   ./pingpong --workload sysv-sem --pairs 2 --cpus 0,1 --placement same \
 *              --mode threads --seconds 5 [--warmup 1]
 *
 * Prints one JSON line. Exit codes: 0 ok, 1 syscall/runtime failure,
 * 2 usage error, 3 out of a kernel resource (names the sysctl), 4 not
 * implemented by this kernel, 128+sig when stopped by SIGINT/SIGTERM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_NORES 3
#define EXIT_NOSYS 4

#define MAX_ENDS 8192
#define SLOT_ALIGN 128
#define MQ_MAXMSG 4 /* token + stop kick must both fit */
#define MQ_MSGSIZE 16

enum workload {
	W_SYSV_MSG,
	W_SYSV_SEM,
	W_SYSV_MSG_SHARED,
	W_PIPE,
	W_SOCKET,
	W_POSIX_SEM,
	W_POSIX_MQ,
	W_FUTEX,
	W_EVENTFD,
	W_SIGNAL,
	W_SPIN,
	W_SPIN_YIELD,
	W_SYSV_SEM_MULTI,
	W_COUNT
};

static const char *const workload_names[W_COUNT] = {
	"sysv-msg", "sysv-sem", "sysv-msg-shared", "pipe",	"socket",
	"posix-sem", "posix-mq", "futex",	   "eventfd", "signal",
	"spin",	     "spin-yield", "sysv-sem-multi",
};

enum placement { P_SAME, P_CROSS, P_FREE };
static const char *const placement_names[] = { "same", "cross", "free" };

/* Control words shared by every end; each on its own line so that the
 * stop/start polls do not bounce the counters' lines. */
struct control {
	_Alignas(SLOT_ALIGN) _Atomic int start;
	_Alignas(SLOT_ALIGN) _Atomic int stop;
	_Alignas(SLOT_ALIGN) _Atomic int ready;
	_Atomic int failed;
	_Atomic int child_died;
	char errmsg[256];
};

struct slot {
	_Alignas(SLOT_ALIGN) _Atomic uint64_t rounds;
	_Atomic int tid;
	_Atomic int last_cpu;
};

struct pair_word {
	_Alignas(SLOT_ALIGN) _Atomic int w;
};

struct pair_psem {
	_Alignas(SLOT_ALIGN) sem_t s[2];
};

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

struct msg16 {
	long mtype;
	int64_t pair;
	int64_t seq;
};

struct end {
	int idx;  /* slot index */
	int pair; /* pair index, or thread index for sysv-sem-multi */
	int role; /* 0 = A, 1 = B, 2 = T */
	int cpu;  /* -1 = not pinned */
	pthread_t thread;
	pid_t pid;
	int started;
};

/* Options */
static enum workload opt_workload = W_COUNT;
static int opt_pairs = 1;
static int opt_cpus[CPU_SETSIZE];
static int opt_ncpus;
static enum placement opt_placement = P_SAME;
static int opt_processes;
static double opt_seconds = 5.0;
static double opt_warmup = 0.5;
static int opt_threads = -1;
static int opt_sems = 128;

/* Shared state (MAP_SHARED so that processes mode sees it too) */
static struct control *ctl;
static struct slot *slots;
static struct pair_word *words;
static struct pair_psem *psems;
static size_t shm_size;
static void *shm_base;

static struct end ends[MAX_ENDS];
static int nends;

/* Objects, tracked so that every exit path removes them. Ids are reset to -1
 * once removed: an id is a recyclable number, not a handle we own forever. */
static int msq_ids[MAX_ENDS];
static int sem_ids[MAX_ENDS];
static int nsysv;
static int shared_msq = -1;
static int multi_sem = -1;
static int fds[MAX_ENDS * 2]; /* pipes, sockets, eventfds: 4 or 2 per pair */
static int nfds;
static mqd_t mqds[MAX_ENDS];	  /* per pair: a, b (blocking, used by ends) */
static mqd_t mq_kick[MAX_ENDS]; /* per pair: a, b (O_NONBLOCK, used by main) */
static char mq_names[MAX_ENDS][64];
static int mq_linked[MAX_ENDS];
static int nmq;
static int npsem_init;
static int is_child;

static volatile sig_atomic_t got_signal;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long futex(_Atomic int *addr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, (int *)addr, op, val, ts, NULL, 0);
}

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void cleanup(void)
{
	if (is_child)
		return;
	for (int i = 0; i < nsysv; i++) {
		if (msq_ids[i] >= 0 && msgctl(msq_ids[i], IPC_RMID, NULL) == 0)
			msq_ids[i] = -1;
		if (sem_ids[i] >= 0 && semctl(sem_ids[i], 0, IPC_RMID) == 0)
			sem_ids[i] = -1;
	}
	if (shared_msq >= 0 && msgctl(shared_msq, IPC_RMID, NULL) == 0)
		shared_msq = -1;
	if (multi_sem >= 0 && semctl(multi_sem, 0, IPC_RMID) == 0)
		multi_sem = -1;
	for (int i = 0; i < nmq; i++) {
		if (mq_linked[i] && mq_unlink(mq_names[i]) == 0)
			mq_linked[i] = 0;
		if (mqds[i] != (mqd_t)-1) {
			mq_close(mqds[i]);
			mqds[i] = (mqd_t)-1;
		}
		if (mq_kick[i] != (mqd_t)-1) {
			mq_close(mq_kick[i]);
			mq_kick[i] = (mqd_t)-1;
		}
	}
	for (int i = 0; i < nfds; i++) {
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
	}
	for (int i = 0; i < npsem_init; i++) {
		sem_destroy(&psems[i].s[0]);
		sem_destroy(&psems[i].s[1]);
	}
	npsem_init = 0;
}

static void die_code(int code, const char *fmt, ...)
{
	va_list ap;
	fputs("pingpong: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup();
	exit(code);
}

/* Map errno of a failed setup call to an exit code and a hint; stress-ng
 * style: "no resources" gets its own code and the knob to turn. */
static void die_setup(const char *what, const char *sysctl_hint)
{
	int e = errno;
	if (e == ENOSYS)
		die_code(EXIT_NOSYS, "%s: %s (not implemented by this kernel)", what,
			 strerror(e));
	if (e == ENOSPC || e == EMFILE || e == ENFILE || e == ENOMEM)
		die_code(EXIT_NORES, "%s: %s (raise %s)", what, strerror(e),
			 sysctl_hint ? sysctl_hint : "the limit");
	die_code(EXIT_RUNTIME, "%s: %s", what, strerror(e));
}

static void usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("pingpong: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nusage: pingpong --workload W [--pairs N] [--cpus 0,1] "
	      "[--placement same|cross|free] [--mode threads|processes] "
	      "[--seconds S] [--warmup W] [--threads T] [--sems M]\n",
	      stderr);
	exit(EXIT_USAGE);
}

static int stopping(void)
{
	return atomic_load_explicit(&ctl->stop, memory_order_relaxed);
}

static void request_stop(void)
{
	atomic_store(&ctl->stop, 1);
	futex(&ctl->stop, FUTEX_WAKE, INT_MAX, NULL);
}

/* First failing end wins the message; main prints it after teardown. */
static void end_fail(const struct end *e, const char *what, int err)
{
	int zero = 0;
	static const char roles[] = "ABT";
	if (atomic_compare_exchange_strong(&ctl->failed, &zero, 1)) {
		snprintf(ctl->errmsg, sizeof(ctl->errmsg), "%s (pair %d end %c): %s", what,
			 e->pair, roles[e->role], err ? strerror(err) : "failed");
	}
	request_stop();
}

/* A failed call after stop is the teardown waking us (EIDRM/EINVAL from a
 * removed SysV object), not an error. */
static int end_check(const struct end *e, long rc, const char *what)
{
	if (rc >= 0)
		return 0;
	if (stopping())
		return 1;
	end_fail(e, what, errno);
	return 1;
}

static int fd_of(int pair, int k)
{
	return fds[pair * 4 + k];
}

/* ---- per-workload loops: return when stop is seen or on failure ---- */

static void count(struct slot *s, uint64_t *r)
{
	++*r;
	atomic_store_explicit(&s->rounds, *r, memory_order_relaxed);
}

static void loop_sysv_msg(const struct end *e, struct slot *s, int shared)
{
	int q = shared ? shared_msq : msq_ids[e->pair];
	long mine, peer;
	struct msg16 m;
	uint64_t r = 0;

	if (shared) {
		mine = 3L * e->pair + 6 + e->role;
		peer = 3L * e->pair + 6 + !e->role;
	} else {
		mine = e->role ? 2 : 1;
		peer = e->role ? 1 : 2;
	}
	m.pair = e->pair;
	m.seq = 0;
	if (e->role == 0) {
		m.mtype = peer;
		while (msgsnd(q, &m, sizeof(m) - sizeof(long), 0) < 0) {
			if (errno == EINTR)
				continue;
			end_check(e, -1, "msgsnd");
			return;
		}
	}
	while (!stopping()) {
		long rc = msgrcv(q, &m, sizeof(m) - sizeof(long), mine, 0);
		if (rc < 0 && errno == EINTR)
			continue;
		if (end_check(e, rc, "msgrcv"))
			return;
		if (shared && m.pair != e->pair) {
			char what[96];
			snprintf(what, sizeof(what),
				 "msgrcv type %ld got pair id %lld, expected %d", mine,
				 (long long)m.pair, e->pair);
			end_fail(e, what, 0);
			return;
		}
		if (stopping())
			return;
		m.mtype = peer;
		m.pair = e->pair;
		m.seq = (int64_t)r;
		do
			rc = msgsnd(q, &m, sizeof(m) - sizeof(long), 0);
		while (rc < 0 && errno == EINTR);
		if (end_check(e, rc, "msgsnd"))
			return;
		count(s, &r);
	}
}

static int semop1(int id, unsigned short num, short op)
{
	struct sembuf b = { .sem_num = num, .sem_op = op, .sem_flg = 0 };
	int rc;
	do
		rc = semop(id, &b, 1);
	while (rc < 0 && errno == EINTR);
	return rc;
}

static void loop_sysv_sem(const struct end *e, struct slot *s)
{
	int id = sem_ids[e->pair];
	unsigned short mine = e->role ? 1 : 0, peer = e->role ? 0 : 1;
	uint64_t r = 0;

	while (!stopping()) {
		if (end_check(e, semop1(id, mine, -1), "semop(-1)"))
			return;
		if (stopping())
			return;
		if (end_check(e, semop1(id, peer, +1), "semop(+1)"))
			return;
		count(s, &r);
	}
}

static void loop_sysv_sem_multi(const struct end *e, struct slot *s)
{
	uint64_t x = 0x9E3779B97F4A7C15ULL * (uint64_t)(e->pair + 1);
	uint64_t r = 0;

	while (!stopping()) {
		/* xorshift64: cheap, per-thread, no shared RNG state */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned short n = (unsigned short)(x % (uint64_t)opt_sems);
		if (end_check(e, semop1(multi_sem, n, -1), "semop(-1)"))
			return;
		if (end_check(e, semop1(multi_sem, n, +1), "semop(+1)"))
			return;
		count(s, &r);
	}
}

/* Byte/counter streams: pipe, socket, eventfd. Each end reads its own fd
 * and writes the peer's. */
static void loop_stream(const struct end *e, struct slot *s, int in, int out, size_t len)
{
	uint64_t buf = 1;
	uint64_t r = 0;
	ssize_t rc;

	if (e->role == 0) {
		do
			rc = write(out, &buf, len);
		while (rc < 0 && errno == EINTR);
		if (end_check(e, rc, "write"))
			return;
	}
	while (!stopping()) {
		do
			rc = read(in, &buf, len);
		while (rc < 0 && errno == EINTR);
		if (end_check(e, rc, "read"))
			return;
		if (rc == 0) {
			if (!stopping())
				end_fail(e, "read: unexpected end of file", 0);
			return;
		}
		if (stopping())
			return;
		buf = 1;
		do
			rc = write(out, &buf, len);
		while (rc < 0 && errno == EINTR);
		if (end_check(e, rc, "write"))
			return;
		count(s, &r);
	}
}

static void loop_posix_sem(const struct end *e, struct slot *s)
{
	sem_t *mine = &psems[e->pair].s[e->role], *peer = &psems[e->pair].s[!e->role];
	uint64_t r = 0;
	int rc;

	while (!stopping()) {
		do
			rc = sem_wait(mine);
		while (rc < 0 && errno == EINTR);
		if (end_check(e, rc, "sem_wait"))
			return;
		if (stopping())
			return;
		if (end_check(e, sem_post(peer), "sem_post"))
			return;
		count(s, &r);
	}
}

static void loop_posix_mq(const struct end *e, struct slot *s)
{
	mqd_t mine = mqds[e->pair * 2 + e->role], peer = mqds[e->pair * 2 + !e->role];
	char buf[MQ_MSGSIZE] = { 0 };
	uint64_t r = 0;
	ssize_t rc;

	if (e->role == 0) {
		do
			rc = mq_send(peer, buf, sizeof(buf), 0);
		while (rc < 0 && errno == EINTR);
		if (end_check(e, rc, "mq_send"))
			return;
	}
	while (!stopping()) {
		do
			rc = mq_receive(mine, buf, sizeof(buf), NULL);
		while (rc < 0 && errno == EINTR);
		if (end_check(e, rc, "mq_receive"))
			return;
		if (stopping())
			return;
		do
			rc = mq_send(peer, buf, sizeof(buf), 0);
		while (rc < 0 && errno == EINTR);
		if (end_check(e, rc, "mq_send"))
			return;
		count(s, &r);
	}
}

/* Word values: 0 = A's turn, 1 = B's turn, 2 = stopped (set by main with
 * an exchange). Ends move the token with a CAS so that they can never
 * overwrite the stop value and then sleep on a word nobody will change. */
static void loop_futex(const struct end *e, struct slot *s)
{
	_Atomic int *w = &words[e->pair].w;
	int want = e->role ? 1 : 0, give = e->role ? 0 : 1;
	int priv = opt_processes ? 0 : FUTEX_PRIVATE_FLAG;
	uint64_t r = 0;

	for (;;) {
		int v = atomic_load(w);
		if (v == 2)
			return;
		if (v != want) {
			if (futex(w, FUTEX_WAIT | priv, v, NULL) < 0 && errno != EAGAIN &&
			    errno != EINTR) {
				end_fail(e, "futex(FUTEX_WAIT)", errno);
				return;
			}
			continue;
		}
		if (!atomic_compare_exchange_strong(w, &v, give))
			continue;
		if (futex(w, FUTEX_WAKE | priv, 1, NULL) < 0) {
			end_fail(e, "futex(FUTEX_WAKE)", errno);
			return;
		}
		count(s, &r);
	}
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void loop_spin(const struct end *e, struct slot *s, int yield)
{
	_Atomic int *w = &words[e->pair].w;
	int want = e->role ? 1 : 0, give = e->role ? 0 : 1;
	uint64_t r = 0;

	for (;;) {
		while (atomic_load_explicit(w, memory_order_acquire) != want) {
			if (stopping())
				return;
			if (yield)
				sched_yield();
			else
				cpu_relax();
		}
		atomic_store_explicit(w, give, memory_order_release);
		count(s, &r);
	}
}

static pid_t peer_tid(const struct end *e)
{
	return atomic_load(&slots[e->pair * 2 + !e->role].tid);
}

static int send_sig(pid_t tid)
{
	if (opt_processes)
		return kill(tid, SIGUSR1);
	return (int)syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
}

static void loop_signal(const struct end *e, struct slot *s)
{
	sigset_t set;
	pid_t peer = peer_tid(e);
	uint64_t r = 0;
	int rc;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (e->role == 0 && end_check(e, send_sig(peer), "send SIGUSR1"))
		return;
	while (!stopping()) {
		do
			rc = sigwaitinfo(&set, NULL);
		while (rc < 0 && errno == EINTR);
		if (end_check(e, rc, "sigwaitinfo"))
			return;
		if (stopping())
			return;
		if (end_check(e, send_sig(peer), "send SIGUSR1"))
			return;
		count(s, &r);
	}
}

static void block_end_signals(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	/* main alone handles SIGINT/SIGTERM and does the cleanup */
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static int run_end(struct end *e)
{
	struct slot *s = &slots[e->idx];

	block_end_signals();
	atomic_store(&s->tid, my_tid());
	if (e->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(e->cpu, &set);
		/* pid 0 = the calling thread only */
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			char what[64];
			snprintf(what, sizeof(what), "sched_setaffinity(cpu %d)", e->cpu);
			end_fail(e, what, errno);
			atomic_fetch_add(&ctl->ready, 1);
			return 1;
		}
	}
	atomic_fetch_add(&ctl->ready, 1);
	while (!atomic_load(&ctl->start))
		futex(&ctl->start, FUTEX_WAIT, 0, NULL);

	if (!stopping()) {
		switch (opt_workload) {
		case W_SYSV_MSG:
			loop_sysv_msg(e, s, 0);
			break;
		case W_SYSV_MSG_SHARED:
			loop_sysv_msg(e, s, 1);
			break;
		case W_SYSV_SEM:
			loop_sysv_sem(e, s);
			break;
		case W_SYSV_SEM_MULTI:
			loop_sysv_sem_multi(e, s);
			break;
		case W_PIPE:
			/* fds: [0]=A's read, [1]=write to A, [2]=B's read, [3]=write to B */
			loop_stream(e, s, fd_of(e->pair, e->role ? 2 : 0),
				    fd_of(e->pair, e->role ? 1 : 3), 1);
			break;
		case W_SOCKET:
			/* fds: [0]=A's socket, [1]=B's socket */
			loop_stream(e, s, fd_of(e->pair, e->role), fd_of(e->pair, e->role), 1);
			break;
		case W_EVENTFD:
			/* fds: [0]=A's eventfd, [1]=B's eventfd */
			loop_stream(e, s, fd_of(e->pair, e->role), fd_of(e->pair, !e->role), 8);
			break;
		case W_POSIX_SEM:
			loop_posix_sem(e, s);
			break;
		case W_POSIX_MQ:
			loop_posix_mq(e, s);
			break;
		case W_FUTEX:
			loop_futex(e, s);
			break;
		case W_SIGNAL:
			loop_signal(e, s);
			break;
		case W_SPIN:
			loop_spin(e, s, 0);
			break;
		case W_SPIN_YIELD:
			loop_spin(e, s, 1);
			break;
		case W_COUNT:
			break;
		}
	}
	atomic_store(&s->last_cpu, sched_getcpu());
	return atomic_load(&ctl->failed) ? 1 : 0;
}

static void *end_thread(void *arg)
{
	run_end(arg);
	return NULL;
}

/* ---- setup ---- */

static void map_shared(int npairs)
{
	size_t off_slots = (sizeof(struct control) + SLOT_ALIGN - 1) & ~(size_t)(SLOT_ALIGN - 1);
	size_t off_words = off_slots + sizeof(struct slot) * (size_t)nends;
	size_t off_psems = off_words + sizeof(struct pair_word) * (size_t)npairs;
	shm_size = off_psems + sizeof(struct pair_psem) * (size_t)npairs;
	shm_base = mmap(NULL, shm_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm_base == MAP_FAILED)
		die_setup("mmap(MAP_SHARED)", "memory");
	ctl = shm_base;
	slots = (struct slot *)((char *)shm_base + off_slots);
	words = (struct pair_word *)((char *)shm_base + off_words);
	psems = (struct pair_psem *)((char *)shm_base + off_psems);
}

static void add_fd(int fd)
{
	fds[nfds++] = fd;
}

static void create_objects(int npairs)
{
	for (int i = 0; i < MAX_ENDS; i++) {
		msq_ids[i] = sem_ids[i] = -1;
		mqds[i] = mq_kick[i] = (mqd_t)-1;
	}
	switch (opt_workload) {
	case W_SYSV_MSG:
		for (int p = 0; p < npairs; p++) {
			nsysv = p + 1;
			msq_ids[p] = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
			if (msq_ids[p] < 0)
				die_setup("msgget", "kernel.msgmni");
		}
		break;
	case W_SYSV_MSG_SHARED:
		shared_msq = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
		if (shared_msq < 0)
			die_setup("msgget", "kernel.msgmni");
		break;
	case W_SYSV_SEM:
		for (int p = 0; p < npairs; p++) {
			unsigned short init[2] = { 1, 0 };
			nsysv = p + 1;
			sem_ids[p] = semget(IPC_PRIVATE, 2, IPC_CREAT | 0600);
			if (sem_ids[p] < 0)
				die_setup("semget", "kernel.sem (SEMMNI, SEMMNS)");
			if (semctl(sem_ids[p], 0, SETALL, (union semun){ .array = init }) < 0)
				die_setup("semctl(SETALL)", NULL);
		}
		break;
	case W_SYSV_SEM_MULTI: {
		unsigned short *init = calloc((size_t)opt_sems, sizeof(*init));
		if (!init)
			die_setup("calloc", "memory");
		for (int i = 0; i < opt_sems; i++)
			init[i] = 1;
		multi_sem = semget(IPC_PRIVATE, opt_sems, IPC_CREAT | 0600);
		if (multi_sem < 0)
			die_setup("semget", "kernel.sem (SEMMSL, SEMMNS)");
		if (semctl(multi_sem, 0, SETALL, (union semun){ .array = init }) < 0)
			die_setup("semctl(SETALL)", NULL);
		free(init);
		break;
	}
	case W_PIPE:
		for (int p = 0; p < npairs; p++) {
			int a[2], b[2];
			if (pipe(a) < 0)
				die_setup("pipe", "ulimit -n");
			add_fd(a[0]);
			add_fd(a[1]);
			if (pipe(b) < 0)
				die_setup("pipe", "ulimit -n");
			add_fd(b[0]);
			add_fd(b[1]);
		}
		break;
	case W_SOCKET:
		for (int p = 0; p < npairs; p++) {
			int sv[2];
			if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
				die_setup("socketpair", "ulimit -n");
			add_fd(sv[0]);
			add_fd(sv[1]);
			nfds += 2; /* keep 4 slots per pair so fd_of() indexes alike */
			fds[nfds - 1] = fds[nfds - 2] = -1;
		}
		break;
	case W_EVENTFD:
		for (int p = 0; p < npairs; p++) {
			for (int k = 0; k < 2; k++) {
				int fd = eventfd(0, 0);
				if (fd < 0)
					die_setup("eventfd", "ulimit -n");
				add_fd(fd);
			}
			nfds += 2;
			fds[nfds - 1] = fds[nfds - 2] = -1;
		}
		break;
	case W_POSIX_SEM:
		for (int p = 0; p < npairs; p++) {
			if (sem_init(&psems[p].s[0], 1, 1) < 0)
				die_setup("sem_init", NULL);
			if (sem_init(&psems[p].s[1], 1, 0) < 0) {
				sem_destroy(&psems[p].s[0]);
				die_setup("sem_init", NULL);
			}
			npsem_init = p + 1;
		}
		break;
	case W_POSIX_MQ:
		for (int p = 0; p < npairs; p++) {
			for (int k = 0; k < 2; k++) {
				int i = p * 2 + k;
				struct mq_attr attr = { .mq_maxmsg = MQ_MAXMSG,
							.mq_msgsize = MQ_MSGSIZE };
				snprintf(mq_names[i], sizeof(mq_names[i]), "/ipctop-ref-%d-%d-%c",
					 (int)getpid(), p, k ? 'b' : 'a');
				nmq = i + 1;
				mqds[i] = mq_open(mq_names[i], O_RDWR | O_CREAT | O_EXCL, 0600,
						  &attr);
				if (mqds[i] == (mqd_t)-1)
					die_setup("mq_open",
						  "fs.mqueue.queues_max / msg_max, ulimit -q");
				mq_linked[i] = 1;
				/* a non-blocking handle lets main kick a full queue */
				mq_kick[i] = mq_open(mq_names[i], O_WRONLY | O_NONBLOCK);
				if (mq_kick[i] == (mqd_t)-1)
					die_setup("mq_open(O_NONBLOCK)", NULL);
				/* every end shares these descriptors (threads, or fork), so
				 * the names can go now and nothing is left behind on a crash */
				if (mq_unlink(mq_names[i]) < 0)
					die_setup("mq_unlink", NULL);
				mq_linked[i] = 0;
			}
		}
		break;
	case W_FUTEX:
	case W_SPIN:
	case W_SPIN_YIELD:
		for (int p = 0; p < npairs; p++)
			atomic_store(&words[p].w, 0);
		break;
	case W_SIGNAL:
	case W_COUNT:
		break;
	}
}

/* After stop: wake every end that may be blocked. SysV objects are removed
 * (blocked callers get EIDRM); the rest get one more token. */
static void wake_ends(int npairs)
{
	uint64_t one = 1;
	char buf[MQ_MSGSIZE] = { 0 };

	switch (opt_workload) {
	case W_SYSV_MSG:
	case W_SYSV_SEM:
	case W_SYSV_MSG_SHARED:
	case W_SYSV_SEM_MULTI:
		cleanup();
		break;
	case W_PIPE:
		for (int p = 0; p < npairs; p++) {
			if (write(fd_of(p, 1), "x", 1) < 0 || write(fd_of(p, 3), "x", 1) < 0)
				perror("pingpong: write (stop kick)");
		}
		break;
	case W_SOCKET:
		for (int p = 0; p < npairs; p++) {
			if (write(fd_of(p, 0), "x", 1) < 0 || write(fd_of(p, 1), "x", 1) < 0)
				perror("pingpong: write (stop kick)");
		}
		break;
	case W_EVENTFD:
		for (int p = 0; p < npairs; p++) {
			if (write(fd_of(p, 0), &one, 8) < 0 || write(fd_of(p, 1), &one, 8) < 0)
				perror("pingpong: write (stop kick)");
		}
		break;
	case W_POSIX_SEM:
		for (int p = 0; p < npairs; p++) {
			sem_post(&psems[p].s[0]);
			sem_post(&psems[p].s[1]);
		}
		break;
	case W_POSIX_MQ:
		/* EAGAIN: the queue is full, so its reader has something to read */
		for (int i = 0; i < nmq; i++) {
			if (mq_send(mq_kick[i], buf, sizeof(buf), 0) < 0 && errno != EAGAIN)
				perror("pingpong: mq_send (stop kick)");
		}
		break;
	case W_FUTEX:
		for (int p = 0; p < npairs; p++) {
			atomic_exchange(&words[p].w, 2);
			/* a private waiter is only found by a private wake */
			futex(&words[p].w, FUTEX_WAKE | (opt_processes ? 0 : FUTEX_PRIVATE_FLAG),
			      INT_MAX, NULL);
		}
		break;
	case W_SIGNAL:
		for (int i = 0; i < nends; i++) {
			if (!ends[i].started)
				continue;
			pid_t t = atomic_load(&slots[i].tid);
			if (t > 0 && send_sig(t) < 0 && errno != ESRCH)
				perror("pingpong: send SIGUSR1 (stop kick)");
		}
		break;
	case W_SPIN:
	case W_SPIN_YIELD:
	case W_COUNT:
		break;
	}
}

/* ---- argument parsing ---- */

static void parse_cpus(const char *arg)
{
	const char *p = arg;
	opt_ncpus = 0;
	while (*p) {
		char *endp;
		long a = strtol(p, &endp, 10), b;
		if (endp == p || a < 0 || a >= CPU_SETSIZE)
			usage_error("bad --cpus '%s'", arg);
		b = a;
		p = endp;
		if (*p == '-') {
			b = strtol(p + 1, &endp, 10);
			if (endp == p + 1 || b < a || b >= CPU_SETSIZE)
				usage_error("bad --cpus '%s'", arg);
			p = endp;
		}
		for (long c = a; c <= b; c++) {
			if (opt_ncpus >= CPU_SETSIZE)
				usage_error("too many cpus in '%s'", arg);
			opt_cpus[opt_ncpus++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p)
			usage_error("bad --cpus '%s'", arg);
	}
	if (opt_ncpus == 0)
		usage_error("empty --cpus");
}

static void default_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		die_setup("sched_getaffinity", NULL);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			opt_cpus[opt_ncpus++] = c;
}

static double parse_seconds(const char *name, const char *arg)
{
	char *endp;
	double v = strtod(arg, &endp);
	if (endp == arg || *endp || v < 0 || v > 1e6)
		usage_error("bad %s '%s'", name, arg);
	return v;
}

static long parse_int(const char *name, const char *arg, long lo, long hi)
{
	char *endp;
	long v = strtol(arg, &endp, 10);
	if (endp == arg || *endp || v < lo || v > hi)
		usage_error("bad %s '%s' (want %ld..%ld)", name, arg, lo, hi);
	return v;
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "workload", required_argument, NULL, 'w' },
		{ "pairs", required_argument, NULL, 'n' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "placement", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "seconds", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "threads", required_argument, NULL, 't' },
		{ "sems", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			for (int i = 0; i < W_COUNT; i++)
				if (!strcmp(optarg, workload_names[i]))
					opt_workload = (enum workload)i;
			if (!strcmp(optarg, "semop-multi"))
				opt_workload = W_SYSV_SEM_MULTI;
			if (opt_workload == W_COUNT)
				usage_error("unknown workload '%s'", optarg);
			break;
		case 'n':
			opt_pairs = (int)parse_int("--pairs", optarg, 1, MAX_ENDS / 2);
			break;
		case 'c':
			parse_cpus(optarg);
			break;
		case 'p':
			if (!strcmp(optarg, "same"))
				opt_placement = P_SAME;
			else if (!strcmp(optarg, "cross"))
				opt_placement = P_CROSS;
			else if (!strcmp(optarg, "free"))
				opt_placement = P_FREE;
			else
				usage_error("unknown placement '%s'", optarg);
			break;
		case 'm':
			if (!strcmp(optarg, "threads"))
				opt_processes = 0;
			else if (!strcmp(optarg, "processes"))
				opt_processes = 1;
			else
				usage_error("unknown mode '%s'", optarg);
			break;
		case 's':
			opt_seconds = parse_seconds("--seconds", optarg);
			break;
		case 'W':
			opt_warmup = parse_seconds("--warmup", optarg);
			break;
		case 't':
			opt_threads = (int)parse_int("--threads", optarg, 1, MAX_ENDS);
			break;
		case 'M':
			opt_sems = (int)parse_int("--sems", optarg, 1, 32000);
			break;
		case 'h':
			usage_error("help");
			break;
		default:
			usage_error("bad option");
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (opt_workload == W_COUNT)
		usage_error("--workload is required");
	if (opt_seconds <= 0)
		usage_error("--seconds must be > 0");
	if (opt_ncpus == 0)
		default_cpus();
	if (opt_workload != W_SYSV_SEM_MULTI && opt_placement == P_CROSS && opt_ncpus < 2)
		usage_error("--placement cross needs at least 2 cpus in --cpus");
	if (opt_workload == W_SPIN && opt_placement == P_SAME) {
		fputs("pingpong: spin refuses --placement same: two spinners on one CPU "
		      "only make progress at each scheduler tick (use spin-yield)\n",
		      stderr);
		exit(EXIT_USAGE);
	}
	if (opt_threads < 0)
		opt_threads = 4 * opt_ncpus;
	if (opt_threads > MAX_ENDS)
		opt_threads = MAX_ENDS;
}

/* ---- main ---- */

static void on_stop_signal(int sig)
{
	got_signal = sig;
	if (ctl)
		atomic_store(&ctl->stop, 1);
}

static void on_sigchld(int sig)
{
	(void)sig;
	/* an end leaving before stop is a failure; after stop it is the join */
	if (ctl && !atomic_load(&ctl->stop)) {
		atomic_store(&ctl->child_died, 1);
		atomic_store(&ctl->stop, 1);
	}
}

static void install_handlers(void)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal; /* no SA_RESTART: the futex wait must see EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	if (opt_processes) {
		sa.sa_handler = on_sigchld;
		sa.sa_flags = SA_NOCLDSTOP;
		sigaction(SIGCHLD, &sa, NULL);
	}
	/* blocked before any end exists so that no thread ever takes it by default */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* Sleep until the deadline, returning early once stop is set (by a failing
 * end, a dead child or SIGINT/SIGTERM). */
static void wait_until(double deadline)
{
	for (;;) {
		double left = deadline - now_s();
		if (left <= 0 || atomic_load(&ctl->stop))
			return;
		struct timespec ts = { .tv_sec = (time_t)left,
				       .tv_nsec = (long)((left - (double)(time_t)left) * 1e9) };
		futex(&ctl->stop, FUTEX_WAIT, 0, &ts);
	}
}

static void assign_ends(int npairs)
{
	if (opt_workload == W_SYSV_SEM_MULTI) {
		nends = opt_threads;
		for (int i = 0; i < nends; i++) {
			ends[i] = (struct end){ .idx = i, .pair = i, .role = 2, .cpu = -1 };
			if (opt_placement != P_FREE)
				ends[i].cpu = opt_cpus[i % opt_ncpus];
		}
		return;
	}
	nends = npairs * 2;
	for (int p = 0; p < npairs; p++) {
		struct end *a = &ends[p * 2], *b = &ends[p * 2 + 1];
		*a = (struct end){ .idx = p * 2, .pair = p, .role = 0, .cpu = -1 };
		*b = (struct end){ .idx = p * 2 + 1, .pair = p, .role = 1, .cpu = -1 };
		if (opt_placement == P_SAME) {
			a->cpu = b->cpu = opt_cpus[p % opt_ncpus];
		} else if (opt_placement == P_CROSS) {
			a->cpu = opt_cpus[p % opt_ncpus];
			b->cpu = opt_cpus[(p + 1) % opt_ncpus];
		}
	}
}

static void start_ends(void)
{
	pid_t parent = getpid();

	for (int i = 0; i < nends; i++) {
		struct end *e = &ends[i];
		if (opt_processes) {
			pid_t pid = fork();
			if (pid < 0) {
				end_fail(e, "fork", errno);
				return;
			}
			if (pid == 0) {
				is_child = 1;
				/* a parent killed with SIGKILL must not leave ends blocked forever */
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (getppid() != parent)
					_exit(EXIT_RUNTIME);
				signal(SIGINT, SIG_IGN);
				signal(SIGTERM, SIG_IGN);
				signal(SIGCHLD, SIG_DFL);
				_exit(run_end(e));
			}
			e->pid = pid;
		} else {
			int rc = pthread_create(&e->thread, NULL, end_thread, e);
			if (rc != 0) {
				end_fail(e, "pthread_create", rc);
				return;
			}
		}
		e->started = 1;
	}
}

/* Join with a deadline: an end that does not stop is a bug worth a loud
 * failure, not a hang. */
static int join_ends(void)
{
	double deadline = now_s() + 5.0;
	struct timespec abs_rt;
	int stuck = 0;

	clock_gettime(CLOCK_REALTIME, &abs_rt);
	abs_rt.tv_sec += 5;
	for (int i = 0; i < nends; i++) {
		struct end *e = &ends[i];
		if (!e->started)
			continue;
		if (opt_processes) {
			int status;
			for (;;) {
				pid_t r = waitpid(e->pid, &status, WNOHANG);
				if (r == e->pid || (r < 0 && errno != EINTR))
					break;
				if (now_s() > deadline) {
					kill(e->pid, SIGKILL);
					waitpid(e->pid, &status, 0);
					stuck++;
					break;
				}
				usleep(1000);
			}
		} else if (pthread_timedjoin_np(e->thread, NULL, &abs_rt) != 0) {
			stuck++;
		}
		e->started = 0;
	}
	return stuck;
}

static void teardown(int npairs)
{
	atomic_store(&ctl->stop, 1);
	wake_ends(npairs);
	int stuck = join_ends();
	cleanup();
	if (stuck)
		die_code(EXIT_RUNTIME, "%d end(s) did not stop after the stop flag", stuck);
}

int main(int argc, char **argv)
{
	int npairs;
	uint64_t *c0, *c1;
	double t0, t1;

	parse_args(argc, argv);
	npairs = opt_workload == W_SYSV_SEM_MULTI ? 0 : opt_pairs;
	assign_ends(npairs);
	map_shared(npairs);
	atexit(cleanup);
	install_handlers();
	create_objects(npairs);

	start_ends();
	while (atomic_load(&ctl->ready) < nends && !atomic_load(&ctl->stop))
		usleep(1000);
	atomic_store(&ctl->start, 1);
	futex(&ctl->start, FUTEX_WAKE, INT_MAX, NULL);

	c0 = calloc((size_t)nends, sizeof(*c0));
	c1 = calloc((size_t)nends, sizeof(*c1));
	if (!c0 || !c1) {
		teardown(npairs);
		die_code(EXIT_RUNTIME, "calloc: out of memory");
	}
	/* Timestamps bracket each counter sweep and the midpoint is used: an
	 * unpinned main thread can be preempted mid-sweep by busy ends. */
	wait_until(now_s() + opt_warmup);
	t0 = now_s();
	for (int i = 0; i < nends; i++)
		c0[i] = atomic_load_explicit(&slots[i].rounds, memory_order_relaxed);
	t0 = (t0 + now_s()) / 2;
	wait_until(t0 + opt_seconds);
	t1 = now_s();
	for (int i = 0; i < nends; i++)
		c1[i] = atomic_load_explicit(&slots[i].rounds, memory_order_relaxed);
	t1 = (t1 + now_s()) / 2;

	teardown(npairs);
	if (got_signal)
		die_code(128 + got_signal, "stopped by signal %d", (int)got_signal);
	if (atomic_load(&ctl->failed))
		die_code(EXIT_RUNTIME, "%s", ctl->errmsg);
	if (atomic_load(&ctl->child_died))
		die_code(EXIT_RUNTIME, "an end process exited before the stop flag");

	double secs = t1 - t0, total = 0;
	static const char *const roles[] = { "A", "B", "T" };
	printf("{\"workload\": \"%s\", \"pairs\": %d, \"placement\": \"%s\", \"mode\": \"%s\", "
	       "\"cpus\": [",
	       workload_names[opt_workload], opt_pairs, placement_names[opt_placement],
	       opt_processes ? "processes" : "threads");
	for (int i = 0; i < opt_ncpus; i++)
		printf("%s%d", i ? ", " : "", opt_cpus[i]);
	printf("], ");
	if (opt_workload == W_SYSV_SEM_MULTI)
		printf("\"nthreads\": %d, \"sems\": %d, ", opt_threads, opt_sems);
	for (int i = 0; i < nends; i++)
		total += (double)(c1[i] - c0[i]) / secs;
	printf("\"seconds\": %.6f, \"total_ops_per_s\": %.1f, \"threads\": [", secs, total);
	for (int i = 0; i < nends; i++) {
		uint64_t r = c1[i] - c0[i];
		printf("%s{\"pair\": %d, \"role\": \"%s\", \"cpu\": %d, \"last_cpu\": %d, "
		       "\"rounds\": %llu, \"ops_per_s\": %.1f}",
		       i ? ", " : "", ends[i].pair, roles[ends[i].role], ends[i].cpu,
		       atomic_load(&slots[i].last_cpu), (unsigned long long)r, (double)r / secs);
	}
	printf("]}\n");
	free(c0);
	free(c1);
	return fflush(stdout) == 0 ? 0 : EXIT_RUNTIME;
}
