/*
 * tix_lock.h: a lottery-scheduled mutex (Waldspurger & Weihl §6.1) for C.
 *
 * Waiters sleep on futexes; tix_lock_unlock draws the next holder among
 * them, each with probability funding / (all waiters' funding), and hands
 * the lock to it. With tix_lock_lending() on, a waiter also lends its
 * funding (tickets of its process) to the holder's process through the
 * tix daemon while it waits, so the holder runs on its own tickets plus its
 * waiters' (the cure for priority inversion).
 *
 * A zeroed tix_lock_t is a free lock. In a MAP_SHARED mapping it is shared
 * between processes. Link with -ltix_lock (static: also -lpthread -ldl -lm).
 * Returns: 0, or an errno value: EPERM (unlock by a non-holder), EDEADLK
 * (lock by the holder), EINVAL (NULL, or funding above 10000), EBUSY.
 */
#ifndef TIX_LOCK_H
#define TIX_LOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIX_LOCK_SIZE 1064

typedef struct tix_lock {
	_Alignas(8) unsigned char opaque[TIX_LOCK_SIZE];
} tix_lock_t;

/* What a release's draw did (tid 0: no waiter, the lock is free). */
struct tix_handoff {
	uint32_t tid;		/* the new holder's thread id */
	uint32_t funding;	/* its funding */
	uint64_t total;		/* every waiter's funding, its own included */
	uint32_t waiters;	/* waiters in the draw */
};

int tix_lock_init(tix_lock_t *lock, uint64_t seed);
int tix_lock_lock(tix_lock_t *lock, uint32_t funding);
int tix_lock_trylock(tix_lock_t *lock);
int tix_lock_unlock(tix_lock_t *lock, struct tix_handoff *out);
uint32_t tix_lock_waiters(const tix_lock_t *lock);
int tix_lock_lending(const char *socket);
void tix_lock_lending_counts(uint64_t *lent, uint64_t *refused);

#ifdef __cplusplus
}
#endif
#endif
