/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * intf.h - types and constants shared by the scx_tix BPF program and its
 * Rust daemon (through bindgen): ticket tables, statistics records, limits.
 */
#ifndef __TIX_INTF_H
#define __TIX_INTF_H

/* Plain C types: bindgen reads this file without vmlinux.h. */

enum tix_consts {
	TIX_MAX_CPUS = 512,
	/* DSQ ids 0..TIX_MAX_CPUS-1 are the per-CPU domains. */
	TIX_GLOBAL_DSQ = TIX_MAX_CPUS,
	TIX_NR_DOMS = TIX_MAX_CPUS + 1,
	TIX_HIST_BUCKETS = 10,
	TIX_DEFAULT_BASE = 1000,
	TIX_DEFAULT_TICKETS = 100,
	TIX_POLICY_LOTTERY = 0,
	TIX_POLICY_STRIDE = 1,
	TIX_MAX_TASKS = 65536,
	TIX_MAX_USERS = 4096,
	/* Tasks of the shared queue a CPU examines for one it may run. */
	TIX_SCAN_MAX = 64,
};

/*
 * Entries a full table could not take (counters nr_lost[]; the daemon logs
 * each rise). A process without a proc_state entry, or of a user without a
 * runnable sum, runs at value 1 (its tickets cannot be counted, and a value
 * computed without them would overstate it); a task or user without a
 * statistics entry runs normally but shows no statistics.
 */
enum tix_lost {
	TIX_LOST_PROC_STATE = 0,
	TIX_LOST_USER_RT = 1,
	TIX_LOST_TASK_STATS = 2,
	TIX_LOST_USER_STATS = 3,
	TIX_NR_LOST = 4,
};

/* USER_HZ is 100 on every architecture Linux supports. */
#define TIX_NSEC_PER_TICK 10000000ULL

/*
 * Tickets of one process (map proc_tickets, key tgid). start is the
 * process's start in clock ticks after boot (/proc/PID/stat's starttime:
 * start_boottime / TIX_NSEC_PER_TICK), so an entry written for a process
 * never applies to a later one that reuses its pid. start 0: inherited at
 * fork, claimed by the child at its first draw (the kernel sets a child's
 * start time after the scheduler's init_task has run).
 */
struct tix_proc_tickets {
	unsigned int tickets;
	unsigned int pad;
	unsigned long long start;
};

/* Statistics of one task (Zepp's get_lott_wins / get_counter_info). */
struct tix_task_stat {
	unsigned long long wins;		/* times it was chosen to run */
	unsigned long long runtime_ns;		/* CPU time while under scx_tix */
	unsigned long long hist[TIX_HIST_BUCKETS]; /* slices by tenth of the slice used */
	unsigned long long value;		/* base-ticket value at its last draw */
	unsigned int tgid;
	unsigned int uid;
};

/* Per-user totals. */
struct tix_user_stat {
	unsigned long long wins;
	unsigned long long runtime_ns;
};

/*
 * One process (tgid): runnable threads (ops.runnable/quiescent) and live
 * threads (ops.init_task/exit_task). The entry lives until the last thread
 * is gone, whichever thread exits first, so the tickets counted in the
 * user's runnable sum always leave it.
 */
struct tix_proc_state {
	unsigned int nr_runnable;	/* runnable threads */
	unsigned int counted;		/* tickets added to the user's runnable sum */
	unsigned int uid;		/* the user they were added to */
	unsigned int nr_threads;	/* threads known to the scheduler */
};

#endif /* __TIX_INTF_H */
