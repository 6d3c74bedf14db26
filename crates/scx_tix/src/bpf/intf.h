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

/* Runnable state of one process (tgid), kept in ops.runnable/quiescent. */
struct tix_proc_state {
	unsigned int nr_runnable;	/* runnable threads */
	unsigned int counted;		/* tickets added to the user's runnable sum */
	unsigned int uid;		/* the user they were added to */
};

#endif /* __TIX_INTF_H */
