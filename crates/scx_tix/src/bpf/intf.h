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
	/* The Race-Averse Scheduler (seed 002 §2): FIFO, slices by eq. 2-2. */
	TIX_POLICY_RAS = 2,
	/* Compensation rules of the lottery (scx_tix --compensation). */
	TIX_COMP_OFF = 0,
	TIX_COMP_WALDSPURGER = 1,
	TIX_COMP_ZEPP = 2,
	TIX_COMP_ZEPP_IO = 3,
	TIX_MAX_TASKS = 65536,
	/* The most scx_tix --wake-rate takes (own slices of wake lag per
	 * slice slept). */
	TIX_WAKE_RATE_MAX = 16,
	TIX_MAX_USERS = 4096,
	/* cgroups with the cpu controller, and (cgroup, user) groups. */
	TIX_MAX_CGROUPS = 16384,
	TIX_MAX_GROUPS = 16384,
	/* Currencies users create (tix mkcur), and how deep they may nest
	 * below a user's own currency. */
	TIX_MAX_CURRENCIES = 4096,
	TIX_CUR_DEPTH = 8,
	/* Tasks of the shared queue a CPU examines for one it may run. */
	TIX_SCAN_MAX = 64,
	/* The per-task starvation guard (main.bpf.c, aged_serve): tasks of
	 * a DSQ a CPU examines, how often per starve_ns each CPU looks, and
	 * the wait, in starve_ns, that makes a task aged. */
	TIX_AGE_SCAN = 256,
	TIX_AGE_CHECKS = 8,
	TIX_AGE_WAITS = 2,
	/* The shortest run a deferred wake-up cut leaves its winner
	 * (preempt.bpf.h, cut_for_waiter): a cut sooner costs a switch for
	 * a gap the tick would have erred by anyway. */
	TIX_WAKE_CUT_MIN_NS = 50000,
	/* Processes whose writes are traced at once (tix trace start). */
	TIX_MAX_TRACED = 1024,
	/* x86's page-fault error code: the access was a write. */
	TIX_PF_WRITE = 2,
	/* task_struct.flags: a kernel thread. */
	TIX_PF_KTHREAD = 0x00200000,
};

/*
 * The user kernel threads are valued as (tix_core::cgroup::KERNEL_UID):
 * (uid_t)-1, which no process can hold (setuid(-1) means "unchanged").
 */
#define TIX_KERNEL_UID 0xffffffffU

/*
 * Entries a full table could not take (counters nr_lost[]; the daemon logs
 * each rise). A process without a proc_state entry, or of a user without a
 * runnable sum in its cgroup (group), runs at value 1 (its tickets cannot
 * be counted, and a value computed without them would overstate it); a
 * task or user without a statistics entry runs normally but shows no
 * statistics; a cgroup without an entry counts as the root (its tasks are
 * valued as if they sat in the root cgroup).
 */
enum tix_lost {
	TIX_LOST_PROC_STATE = 0,
	TIX_LOST_GROUP = 1,
	TIX_LOST_TASK_STATS = 2,
	TIX_LOST_USER_STATS = 3,
	TIX_LOST_CGROUP = 4,
	TIX_LOST_WCOUNT = 5,
	TIX_NR_LOST = 6,
};

/* USER_HZ is 100 on every architecture Linux supports. */
#define TIX_NSEC_PER_TICK 10000000ULL

/*
 * Tickets of one process (map proc_tickets, key tgid). start is the
 * process's start in clock ticks after boot (/proc/PID/stat's starttime:
 * start_boottime / TIX_NSEC_PER_TICK), so an entry written for a process
 * never applies to a later one that reuses its pid. start 0: inherited at
 * fork, claimed by the child at its first draw (the kernel sets a child's
 * start time after the scheduler's init_task has run). currency: the
 * currency the tickets are denominated in (0: the owner's own, funded by
 * the user's base; else an id of map currencies).
 */
struct tix_proc_tickets {
	unsigned int tickets;
	unsigned int currency;
	unsigned long long start;
};

/*
 * A currency users create (map currencies, key its id >= 1; seed 001 §3.3,
 * written by the daemon): funded by amount tickets of parent (0: the
 * owner's own currency, funded by the owner's base). A tree: the daemon
 * refuses cycles, so a chain ends at 0 within TIX_CUR_DEPTH.
 */
struct tix_currency {
	unsigned int parent;
	unsigned int amount;
	unsigned int owner;		/* uid */
	unsigned int pad;
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
 * is gone, whichever thread exits first, so the amount counted in its
 * group's sum always leaves it.
 */
struct tix_proc_state {
	unsigned long long cgid;	/* the group its amount is counted in: cgroup */
	unsigned long long counted;	/* amount (tix_process_amount) in that sum */
	long long wsum;			/* nice weights of its runnable threads */
	unsigned int uid;		/* the group's user */
	unsigned int nr_runnable;	/* runnable threads */
	unsigned int nr_threads;	/* threads known to the scheduler */
	unsigned int cur;		/* the group's currency */
};

/*
 * One cgroup with the cpu controller (map cgroups, key its id): a currency
 * funded by tix_cgroup_funding(weight, idle) of its parent's while active
 * (counted: the funding now in the parent's active sum, 0 while inactive),
 * or, for a user's slice whose user has a base set, by that base.
 */
struct tix_cgroup {
	unsigned long long parent;	/* parent's id; 0 for the root */
	long long active;		/* funding of its active children and groups */
	unsigned long long counted;
	unsigned int weight;		/* cpu.weight */
	unsigned int idle;		/* cpu.idle */
	unsigned int level;
	unsigned int quota;		/* cpu.max set (not enforced; counted) */
	unsigned int slice_uid;		/* systemd's user-UID.slice: UID + 1, else 0 */
	unsigned int pad;
};

/* A currency's holders directly in one cgroup: cur 0 is Zepp's user
 * currency there (funded by the user's base), any other a currency of
 * that user's (uid is its owner), funded in its parent's group. */
struct tix_group_key {
	unsigned long long cgid;
	unsigned int uid;
	unsigned int cur;
};

struct tix_group {
	long long active;		/* amounts of its runnable processes and
					 * of its active child currencies */
	unsigned long long counted;	/* its funding now in its parent's sum
					 * (the user's base in the cgroup's, or
					 * the currency's amount) */
	unsigned int pcur;		/* the parent currency it is counted in */
	unsigned int pad;
};

/*
 * A traced process (map traced, key tgid; tix trace start): writes to
 * [lo, hi) by its threads are counted. start as in tix_proc_tickets, so
 * a later process on a reused pid is not traced.
 */
struct tix_trace {
	unsigned long long lo;
	unsigned long long hi;
	unsigned long long start;
};

/*
 * One traced thread (map wcounts, key tid): its write faults since tracing
 * began (seed 002's wcounts), and, under --policy ras, the race probability
 * and slice (eqs. 2-1, 2-2) it was last given (slice 0: none yet).
 */
struct tix_wcount {
	unsigned long long writes;
	unsigned long long slice_ns;
	unsigned int tgid;
	unsigned int race_prob;
};

#endif /* __TIX_INTF_H */
