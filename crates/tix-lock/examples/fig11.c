/*
 * Waldspurger & Weihl's Fig. 11 on real threads, through the C interface:
 * eight threads in groups A and B funded 2:1 each take one lottery lock,
 * hold it HOLD_MS (computing), release it and compute COMPUTE_MS, for SECS.
 *
 * usage: fig11 [SECS [HOLD_MS [COMPUTE_MS]]]   (default 10 50 50, as the seed)
 * Checks first that misuse is refused (exit 1 otherwise).
 * prints, per group, acquisitions and mean wait; then the releases' draws:
 * how many A won, and the number expected from the waiters' funding at
 * each draw with its standard deviation (a sum of Bernoulli trials).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tix_lock.h"

#define A_FUNDING 200
#define B_FUNDING 100

static tix_lock_t lock;
static atomic_int stop;
static double hold_s, compute_s;
static pthread_mutex_t stats_mu = PTHREAD_MUTEX_INITIALIZER;
static long acq[2], a_won, draws;
static double wait_sum[2], p_sum, var_sum;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Compute for s seconds of this thread's CPU time. */
static void work(double s)
{
	double end = cpu_now() + s;

	while (cpu_now() < end)
		;
}

static void *client(void *arg)
{
	int group = (int)(long)arg;
	uint32_t funding = group ? B_FUNDING : A_FUNDING;
	struct tix_handoff h;

	while (!atomic_load(&stop)) {
		double t0 = now();

		if (tix_lock_lock(&lock, funding)) {
			fprintf(stderr, "fig11: lock failed\n");
			exit(1);
		}
		double waited = now() - t0;

		work(hold_s);
		if (tix_lock_unlock(&lock, &h)) {
			fprintf(stderr, "fig11: unlock failed\n");
			exit(1);
		}
		pthread_mutex_lock(&stats_mu);
		acq[group]++;
		wait_sum[group] += waited;
		if (h.tid) {
			/* total = 200 a + 100 b, a + b = waiters */
			double a = (double)(h.total - (uint64_t)B_FUNDING * h.waiters) /
				   (A_FUNDING - B_FUNDING);
			double p = A_FUNDING * a / (double)h.total;

			draws++;
			a_won += h.funding == A_FUNDING;
			p_sum += p;
			var_sum += p * (1 - p);
		}
		pthread_mutex_unlock(&stats_mu);
		work(compute_s);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	pthread_t t[8];
	int i;

	hold_s = (argc > 2 ? atof(argv[2]) : 50) / 1e3;
	compute_s = (argc > 3 ? atof(argv[3]) : 50) / 1e3;
	if (secs <= 0 || hold_s < 0 || compute_s < 0) {
		fprintf(stderr, "usage: fig11 [SECS [HOLD_MS [COMPUTE_MS]]]\n");
		return 2;
	}
	tix_lock_init(&lock, 1);
	/* Misuse is refused and leaves the lock free. */
	if (tix_lock_unlock(&lock, NULL) != EPERM || tix_lock_lock(&lock, 10001) != EINVAL ||
	    tix_lock_trylock(&lock) != 0 || tix_lock_lock(&lock, 1) != EDEADLK ||
	    tix_lock_unlock(&lock, NULL) != 0) {
		fprintf(stderr, "fig11: a misuse was not refused as documented\n");
		return 1;
	}
	printf("misuse refused: unlock by a non-holder EPERM, funding 10001 EINVAL, relock EDEADLK\n");
	for (i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, client, (void *)(long)(i >= 4));
	struct timespec d = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	nanosleep(&d, NULL);
	atomic_store(&stop, 1);
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	printf("A acquisitions %ld mean wait %.1f ms\n", acq[0],
	       acq[0] ? 1e3 * wait_sum[0] / acq[0] : 0);
	printf("B acquisitions %ld mean wait %.1f ms\n", acq[1],
	       acq[1] ? 1e3 * wait_sum[1] / acq[1] : 0);
	printf("draws %ld A won %ld expected %.1f sd %.2f\n", draws, a_won, p_sum,
	       var_sum > 0 ? __builtin_sqrt(var_sum) : 0);
	return 0;
}
