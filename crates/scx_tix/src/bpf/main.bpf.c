/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_tix: lottery and stride scheduling of Linux tasks as a sched_ext
 * scheduler, with Zepp's two-level rights (seed 000 §3-4: per-user base
 * tickets, per-process tickets) and Waldspurger's compensation (seed 001 §3.4);
 * also the race-averse scheduler over write counts the kernel takes alone
 * (seed 002).
 *
 * The lottery is an exponential race (tix_core::race, rules.h): a runnable
 * task waits in a vtime-ordered DSQ under a key, the smallest key wins. A
 * winner's next key is its own key plus E*f/value, E ~ Exp(1) drawn when it
 * starts running and f the fraction of the slice it used (compensation: it
 * competes with value/f until it next wins; without compensation f = 1). By
 * memorylessness any decision among tasks at equal keys is a fresh lottery
 * with P(win) = v/V, in O(log n) through the kernel's rbtree. Stride is the
 * same machine with a deterministic cost: pass += used/value.
 *
 * Many CPUs: one shared virtual time (tix_core::vtime). Every task's key is
 * its own last key plus its cost, so each task's wins form a Poisson process
 * (stride: a lattice) of rate value in one virtual time that every CPU
 * reads; CPU time follows value across CPUs with no balancing step. A key
 * drawn from "now" instead (the per-CPU lottery this replaces) charged a
 * task that ran on one CPU for the time other CPUs advanced meanwhile, and
 * shares collapsed toward equal.
 *
 * Frames. "Now" (T, where floors are taken from) is the largest key a
 * decision started, kept per frame: the shared DSQ's T moves with decisions
 * for shared tasks, CPU c's T with every decision on c (its pinned tasks and
 * the shared tasks it ran, which won against them, so are in its frame). A
 * shared task's floor comes from the shared T, a pinned task's from its
 * CPU's. Runs on an idle CPU found at wake-up decide nothing and move no T:
 * with one T for all, a mostly idle CPU's wakers pushed it past a busy
 * CPU's pinned tasks and clamped them all to their lag floors, inverting
 * stride's order (host model: pinned_hogs_keep_their_order_...). Keys stay
 * comparable across frames because each task's key is its own service,
 * but a frame's T is only where its floors start: once every CPU's T has
 * passed the shared one (a pinned load on each), the shared T is lifted to
 * the least of them (lift_shared_time), or new and waking shared tasks
 * start behind every CPU's own tasks and hold them off for seconds. The
 * lift cannot act while some CPU stays idle, so each decision also weighs
 * a shared key no further behind the deciding CPU's T than its draw let
 * it lag the shared T, and a run it wins starts there (key_on_cpu; a hog
 * pinned beside an idle CPU got .0239 of the hogs' time, .3333 due, when
 * unpinned hogs started, until the guards served it). A
 * runnable task's own key may lag its T by TIX_LAG_SLICES of its own
 * slices: an infeasible weight (more than a CPU's worth) then keeps one
 * CPU, which is the water-filled ideal, and owed service is bounded. A
 * task whose slice ends with nothing waiting that could run on its CPU
 * lags by one of its runs at most (uncontested_key): it lost no decision,
 * so it is owed nothing, and tasks that each keep a CPU no longer drift
 * apart by their draws (a pinned task woken beside the one left behind
 * waited for it to catch up, up to 87 ms). A
 * waking task may lag T by one of its own slices per slice it slept, up
 * to wake_slices (default 4): a task below its share, sleeping between
 * short runs, is then ahead of the runners at its slice end instead of
 * level with them (with no credit it lost that decision about half the
 * time and waited a whole slice); it never gets more than that ahead of
 * what it is owed, and the credit does not count toward preempting a
 * runner (see preempt_for's caller). The credit is also capped at what the
 * frame's T gains in TIX_WAKE_FRAME_SLICES slices (wake_cap): counted in
 * own slices alone, 10^4 waking threads stood 2x10^4 slices of service
 * ahead of a task at T, and T, which moves only when a started key passes
 * it, stood still while they were served. Under the lottery a task
 * earns 4 own slices of credit per slice slept (the wake rate; stride 1,
 * --wake-rate sets it), up to the same wake_slices: a short sleeper's
 * woken key is its last start plus E * run / value, and a large E keys it
 * behind the runners unless the credit covers it (at rate 1 a 1 ms-every-
 * 10 ms task beside 4 hogs missed 2-3x the default's periods;
 * model_matches_core's short sleeper). A key's
 * lead over its frame's T is capped (about starve_ns of waiting), and a
 * waiting task moved to another DSQ is brought into the new frame the same
 * way, so no task waits on a frame that runs slower than the one its key
 * came from. Chosen over per-CPU queues with weight balancing
 * because keys stay comparable everywhere (one rule for pinned and free
 * tasks, no migration heuristics) at the cost of one shared DSQ
 * (contention grows with CPUs; named below).
 *
 * Queues. Tasks that may run on more than one CPU (all, or a subset) wait in
 * the shared DSQ; a CPU takes the first task there it may run (scanning at
 * most TIX_SCAN_MAX, then the kernel's own first-runnable search), so a task
 * with partial affinity is never stranded while one of its CPUs is free.
 * Tasks pinned to one CPU (per-CPU kthreads, pinned programs) wait in that
 * CPU's DSQ. CPU c, in ops.dispatch, compares up to three keys: its own
 * DSQ's head, the first shared task it may run and prev if prev's slice ran
 * out while still runnable (prev's next key is drawn here; ops.dispatch runs
 * before the expired task goes back through ops.enqueue, which reuses it).
 * The smallest key runs: compensation counts wherever a decision is made.
 * Each frame's least key is found first (c's own: prev if pinned to c and
 * c's DSQ's head; the shared one's), then the two are weighed, a woken
 * task only c may run one of its own full runs ahead of its key (the
 * pinned lead, lead_on_cpu; --pinned-lead): an unpinned task it passes
 * over keeps its key and is served in that key's turn by any CPU, while
 * the pinned one has c alone. With keys alone a pinned waker lost c to an
 * unpinned hog keyed a fraction of a run before it about 1 time in 9-17
 * beside 4 hogs and waited that hog's whole slice: the lottery's pinned
 * p99 was 1.6-1.9x the default's. An offset per wake-up, not a rate: each
 * task's keys, and its share, are its draws'.
 *
 * Wake-up preemption. A woken task's key is compared with where each running
 * task it may displace will stand when its slice ends (its key plus the
 * cost of a full slice, or of the time run so far if longer, E at its
 * mean): if the woken key is smaller it would win the decision that slice
 * end brings, so that decision is taken now, on the waking CPU if it
 * qualifies (see preempt_for), else on the CPU whose runner is furthest
 * ahead. When the decision on the woken task's own CPU could only choose
 * it (nothing waiting there or in the shared DSQ stands before it), it is
 * taken in ops.enqueue: the task goes to that CPU's local DSQ with
 * SCX_ENQ_PREEMPT, with no kick and no ops.dispatch (preempt_own_cpu;
 * wake-up to run about two thirds as long at the median under TCG). A
 * sync wake-up (WF_SYNC: the waker is about to sleep) kicks nothing; its
 * task waits for the next decision. The runner is charged
 * for what it used (compensation makes a cut slice whole), so this moves
 * service earlier without changing its amount. Comparing with the
 * runner's position so far instead made a task that sleeps briefly after
 * part of a slice wait out every runner's full slice: its compensation
 * then bought almost nothing (a 1 ms burst, 0.2 ms sleep task beside a
 * hog got .167 of the CPU with compensation, .155 without;
 * vm/tests/65-compensation.sh). With --wake-cut (off by default), a
 * decision that passes over a woken task for a winner keyed just before
 * it also cuts the winner when its position, E at its mean, reaches the
 * woken key (deferred cuts, preempt.bpf.h); measured, it did not lower
 * cyclictest's p99 consistently under TCG, so it stays an option.
 * With --wake-level (off by default), a woken task may also lag T as far
 * as the least key its frame's runners started at or its DSQ's head holds
 * (level_lag), and a runner is weighed for preemption as if it started no
 * earlier than its frame's T (cpu_position): aimed at runners that lag T
 * by several runs; over two boots beside 4 hogs it moved cyclictest's
 * p99 within the rounds' spread, so it stays an option too.
 *
 * Kernel threads. A woken kernel thread is keyed just ahead of the first
 * task waiting where it may run (kernel_wake), its jump a wake credit that
 * preempts nothing: the kworker that runs sched_ext's own watchdog must
 * not wait behind a herd of wakers.
 *
 * Rights (tix_core::cgroup, seed 001 §3.3 currencies, seed 000 §3.2 users).
 * The cgroup v2 tree (cpu controller) is a funding graph: each cgroup is a
 * currency funded by its cpu.weight (x10 base tickets, so a default cgroup
 * is worth a default user; cpu.idle: 3) in its parent's currency while
 * anything below it is runnable; the root's currency is the base currency.
 * Inside a cgroup each user with runnable processes directly in it is a
 * currency funded by the user's base (Zepp); below it, the currencies the
 * user made (tix mkcur/fund, map currencies: a tree, each funded by
 * tickets of its parent) hold their holders' amounts the same way, per
 * cgroup, so inflating one stays inside it; a process holds its tickets
 * times its runnable threads' mean nice weight (the kernel's table) in
 * it, and its threads split its value by nice weight. With every thread
 * at nice 0 and no cgroups this is Zepp's base * tickets / runnable
 * tickets of the user / runnable threads; with no tix settings it is the
 * default scheduler's nice and cpu.weight shares, except that users in
 * one cgroup are insulated from each other (on systemd each user has a
 * slice of their own, where that changes nothing). Kernel threads are a
 * user of their own (TIX_KERNEL_UID, see task_uid), not root's
 * processes. Active sums are kept in ops.runnable/quiescent and folded
 * up the tree (proc_sync, group_sync, cg_sync); a draw folds in what
 * changed in its process since (tickets, nice, a move), walks the
 * task's currencies and cgroups up to the root
 * (TIX_CG_DEPTH levels at most) and folds any level it finds stale there
 * (a base, funding or cpu.weight changed). cpu.max is counted, not
 * enforced.
 *
 * RAS (--policy ras, seed 002 §2) and write tracing (§1, tix trace): see
 * ras.bpf.h. RAS reuses this machine with one change of order: a queued
 * task's key is its arrival number (a FIFO), its slice follows eq. 2-2 and
 * a wake-up preempts nothing; the sums above are kept as for lottery.
 *
 * Accepted races and approximations (named):
 *  - runnable sums, the T's and vsum (the runnable value, used to cap leads) are
 *    updated with atomics or monotone stores and read without a lock: a key
 *    drawn while another CPU changes them may use the old values;
 *  - values are snapshotted at each draw: a ticket or base change takes
 *    effect at the task's next draw (at most one slice later for a hog);
 *  - a process's ticket change (or a renice, base or cpu.weight change)
 *    while it stays runnable is folded into the sums at its next draw;
 *    sums move by compare-and-swap on what each level counted, retried a
 *    bounded number of times: a level that loses every retry to other
 *    CPUs keeps a stale amount until its next change or the next draw
 *    of a task below it; a base or funding change reaches the sums at
 *    the next draw below it, and a draw that finds it values with the
 *    new funding over the old sums (once); a draw never lets a sum count
 *    less than its own task's part of it (value_of);
 *  - a process is counted in one (cgroup, user) group: threads of one
 *    process in different cgroups (threaded cgroups) are valued in the
 *    group of the thread that woke it, moving at each draw that differs;
 *  - a task's cgroups more than TIX_CG_DEPTH levels above its own are left
 *    out of its value, as if the tree were cut there;
 *  - a CPU's running-task record (for wake-up preemption) is read by other
 *    CPUs without a lock: a stale read kicks a CPU needlessly (it redecides
 *    and keeps its task) or misses a kick (the woken task waits for a slice
 *    end, as without preemption); the woken key a kick was for is read the
 *    same way: a stale one can make a cut prev yield to a task it would
 *    have beaten (one extra switch; its key stands);
 *  - the shared task peeked for the comparison may be taken by another CPU
 *    before this one moves it; this CPU then takes the next it may run; past
 *    TIX_SCAN_MAX tasks it may not run, a CPU takes the first it may run
 *    without comparing keys;
 *  - policy switches while attached convert lazily: queued keys keep the old
 *    policy's meaning until their task is next drawn (within one slice each);
 *  - starvation guard: a DSQ with queued tasks that no dispatch served for
 *    starve_ns (since it last served or was last empty) is served first,
 *    so pinned tasks and kthreads cannot stall whatever the draws (changes
 *    the odds only after starve_ns of neglect; the task served moves the
 *    times as if a decision had chosen it); and a task that has waited
 *    TIX_AGE_WAITS x starve_ns in a served DSQ is run by the next CPU
 *    that looks for one (aged_serve: every starve_ns/TIX_AGE_CHECKS per
 *    CPU, the last TIX_AGE_SCAN tasks of a DSQ), as a run that decides
 *    nothing;
 *  - an idle CPU found at wake-up runs the task at once (no lottery there;
 *    such runs are not counted as wins);
 *  - a key's lead over T is capped at about starve_ns of service (see
 *    draw_key): only tasks whose fair wait exceeds that are affected. The
 *    cap is taken against the load at the draw; a load that grows after
 *    it stretches the wait, which the per-task guard above then bounds;
 *  - a process that changes owner or cgroup while runnable moves its
 *    amount to the new group at its next draw (value_of, proc_move);
 *  - task_stats is keyed by pid: when the kernel reports a task's exit after
 *    its pid was reused, the new task's statistics restart;
 *  - rules.h's 128-bit divisions saturate in BPF when the dividend exceeds
 *    2^64, which no input formed here can reach (see tix_div128).
 */
#include <scx/common.bpf.h>
#include "intf.h"
#include "rules.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

const volatile u64 slice_ns = 4000000;
const volatile u64 starve_ns = 500000000;
const volatile u32 nr_cpus = 1;
/* Own slices of lag a waking task keeps (tix_core::vtime::wake_lag). */
const volatile u64 wake_slices = TIX_WAKE_SLICES;
/* Own slices of wake lag earned per slice slept, up to wake_slices:
 * scx_tix --wake-rate; 0 (not given) is the policy's own, 4 under the
 * lottery and 1 under stride (tix_wake_rate). */
const volatile u64 wake_rate = 0;
/* Own full runs a woken task only one CPU may run leads shared tasks by at
 * that CPU's decisions (lead_on_cpu): scx_tix --pinned-lead. */
const volatile u64 pinned_lead = TIX_PINNED_LEAD;
/* Deferred wake-up cuts (preempt.bpf.h): scx_tix --wake-cut, off by default. */
const volatile bool wake_cut = false;
/* Wake level (vtime.bpf.h's level_lag, preempt.bpf.h's cpu_position):
 * scx_tix --wake-level, off by default. */
const volatile bool wake_level = false;
/* The kernel's tick (1/HZ), read by the daemon from CLOCK_MONOTONIC_COARSE's
 * resolution: a slice ends at the first tick past it. */
const volatile u64 tick_ns = 4000000;

/* Written by the daemon while attached. */
volatile u32 policy = TIX_POLICY_LOTTERY;
volatile u32 compensate = TIX_COMP_WALDSPURGER;

u64 nr_decisions;
u64 nr_prev_kept;
u64 nr_starve_serves;	/* both guards' serves */
u64 nr_aged_serves;	/* of them, the per-task guard's (aged_serve) */
u64 nr_guard_scans;	/* the per-task guard's looks, and their time (ns): */
u64 guard_ns;		/* its price, per dispatch in vm/bench */
u64 nr_direct;
u64 nr_preempt_kicks;	/* wake-up preemptions: kicks (preempt_for), direct ones (preempt_own_cpu) and deferred cuts (cut_fire) */
u64 nr_lost[TIX_NR_LOST];
s64 nr_proc_states;	/* entries in proc_state, for leak checks and tix status */
s64 nr_cgroups;		/* entries in cgroups */
s64 nr_cg_quota;	/* cgroups with a cpu.max quota, which tix does not enforce */
/* Run time past the longest slice plus a tick (charge): time the host did
 * not run the vCPU, billed to the task on it (a busy host; TCG); and the
 * sum of each such stretch's square in us^2, from which a share measured
 * over a window gets its added variance (many short stretches average
 * out, one long one does not). */
u64 stalled_ns;
u64 stalled_sq_us2;

/* Each frame's virtual time (by DSQ id: CPU c's, then the shared one) and
 * the runnable tasks' summed value. */
u64 dom_vtime[TIX_NR_DOMS];
s64 vsum;
u64 dom_served[TIX_NR_DOMS];

/* What each CPU runs, for wake-up preemption (value 0: nothing of ours). */
u64 cpu_key[TIX_MAX_CPUS];
u64 cpu_value[TIX_MAX_CPUS];
u64 cpu_start[TIX_MAX_CPUS];
/* The key of the woken task a kick of this CPU was for (0: none). */
u64 cpu_kick_key[TIX_MAX_CPUS];
/* The woken key a CPU's last decision passed over (0: none), for the run
 * that decision started (cut_for_waiter). */
u64 cpu_waiter_key[TIX_MAX_CPUS];
/* When each CPU last looked for a task waiting past starve_ns (aged_serve). */
u64 cpu_aged_at[TIX_MAX_CPUS];

/* CPUs running a task of each frame, for the lead cap; cpu_dom[c] is the
 * frame c's record counts in, plus one (0: none). */
s64 dom_running[TIX_NR_DOMS];
u32 cpu_dom[TIX_MAX_CPUS];

struct task_ctx {
	u64 own;		/* key of its last win: where its next key starts */
	u64 pending;		/* cost of its runs since then */
	u64 e;			/* E ~ Exp(1) of its current run (lottery), Q16 */
	u64 key;		/* key while queued */
	u64 next_key;		/* key drawn in dispatch for an expired prev */
	u64 value;		/* value of its last draw: its runs are charged at it */
	u64 vcounted;		/* value counted in vsum while runnable (0: none) */
	u64 started_at;
	u64 exec_at;		/* p->se.sum_exec_runtime when last charged */
	u64 run_avg;		/* smoothed run length, ns (tix_run_avg) */
	u32 dom;		/* DSQ it waits in, or was keyed for */
	u32 next_dom;
	u32 next_ready;
	u32 queued;		/* waiting in a DSQ under key */
	u32 requeue;		/* left a CPU still runnable: may keep its lag */
	u32 direct;		/* runs without a decision (idle CPU at wake-up) */
	u32 sync_wake;		/* woken by a task about to sleep (WF_SYNC) */
	u32 woken;		/* waiting since a wake-up that may cut a runner */
	u64 wake_credit;	/* how far its wake lag moved its key back */
	u64 floor_lag;		/* lag its last draw allowed: key_on_cpu's */
	u64 slept_at;		/* when it last went to sleep (0: not asleep) */
	u64 queued_at;		/* when it began waiting in a DSQ */
	u64 cgid;		/* its cgroup (cpu controller) */
	u64 wcounted;		/* nice weight counted in its process (0: none) */
	u64 ras_counted;	/* its writes counted in ras_sum (ras.bpf.h) */
	u32 ras_in;		/* counted in ras_sum and ras_nr */
	u32 ras_sliced;		/* has had a RAS slice */
	u32 wins_unflushed;	/* wins not yet in the stats tables (stat_flush) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TIX_MAX_USERS);
	__type(key, u32);
	__type(value, u32);
} user_base SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TIX_MAX_TASKS);
	__type(key, u32);
	__type(value, struct tix_proc_tickets);
} proc_tickets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TIX_MAX_TASKS);
	__type(key, u32);
	__type(value, struct tix_proc_state);
} proc_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TIX_MAX_TASKS);
	__type(key, u32);
	__type(value, struct tix_task_stat);
} task_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TIX_MAX_USERS);
	__type(key, u32);
	__type(value, struct tix_user_stat);
} user_stats SEC(".maps");

/*
 * The 128-bit rules as global functions: the verifier checks each once on
 * its own instead of once per call site and path (inlined, they pushed the
 * program past the verifier's 1M-instruction budget).
 */
__noinline u64 tix_bpf_race_delta(u64 e_q16, u64 value, u64 used_ns, u64 slice,
				  u32 comp)
{
	return tix_race_delta(e_q16, value, used_ns, slice, comp);
}

__noinline u64 tix_bpf_race_cost(u64 e_q16, u64 value, u64 used_ns, u64 slice, u32 mode)
{
	return tix_race_cost(e_q16, value, used_ns, slice, mode);
}

__noinline u64 tix_bpf_neg_ln_q16(u32 u)
{
	return tix_neg_ln_q16(u);
}

__noinline u64 tix_bpf_group_part(u64 base, u64 tickets, u64 weight, u64 nr, u64 ga)
{
	return tix_group_part(base, tickets, weight, nr, ga);
}

__noinline u64 tix_bpf_level(u64 x, u64 funding, u64 active)
{
	return tix_level(x, funding, active);
}

__noinline u64 tix_bpf_process_amount(u64 tickets, u64 wsum, u64 nr)
{
	return tix_process_amount(tickets, wsum, nr);
}

__noinline u64 tix_bpf_pass_delta(u64 used_ns, u64 value)
{
	return tix_pass_delta(used_ns, value);
}

static struct task_ctx *lookup_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
}

/*
 * The user p is valued as. Kernel threads are a user of their own, not
 * root's processes: valued beside root's, a kworker's share shrank with
 * every process root ran (beside root's 100 sleeper processes it waited
 * for the 500 ms starvation guard at each run), and the kernel's work is
 * every user's. Root itself keeps no free pass (seed 000 §2.2); priority
 * for system tasks is what seed 000 §6 and §8 name as missing.
 */
static u32 task_uid(struct task_struct *p)
{
	if (p->flags & TIX_PF_KTHREAD)
		return TIX_KERNEL_UID;
	return BPF_CORE_READ(p, real_cred, uid.val);
}

/* The DSQ p waits in: its CPU's when it may run on one CPU only. */
static u32 dom_of(struct task_struct *p)
{
	s32 cpu;

	if (p->nr_cpus_allowed != 1)
		return TIX_GLOBAL_DSQ;
	cpu = bpf_cpumask_first(p->cpus_ptr);
	if (cpu < 0 || cpu >= TIX_MAX_CPUS || cpu >= nr_cpus)
		return TIX_GLOBAL_DSQ;
	return cpu;
}

static void lost(u32 table)
{
	if (table < TIX_NR_LOST)
		__sync_fetch_and_add(&nr_lost[table], 1);
}

static struct tix_proc_state *proc_state_get(u32 tgid)
{
	struct tix_proc_state zero = {}, *ps;

	ps = bpf_map_lookup_elem(&proc_state, &tgid);
	if (ps)
		return ps;
	if (!bpf_map_update_elem(&proc_state, &tgid, &zero, BPF_NOEXIST))
		__sync_fetch_and_add(&nr_proc_states, 1);
	return bpf_map_lookup_elem(&proc_state, &tgid);
}

#include "rights.bpf.h"

#include "ras.bpf.h"

#include "vtime.bpf.h"

/*
 * Into the stats tables: used ns in histogram bucket (TIX_HIST_BUCKETS:
 * none), and the wins counted since the last flush. A win is published
 * with its run's charge, not when it starts: one lookup of each table per
 * run instead of two (tix top's counts lag by at most the run in progress).
 */
static void stat_flush(struct task_struct *p, struct task_ctx *tctx, u64 used,
		       u64 bucket, u32 wins)
{
	struct tix_user_stat zero = {}, *us;
	struct tix_task_stat *st;
	u32 pid = p->pid, uid = task_uid(p);

	st = bpf_map_lookup_elem(&task_stats, &pid);
	if (st) {
		if (used)
			__sync_fetch_and_add(&st->runtime_ns, used);
		if (bucket < TIX_HIST_BUCKETS)
			__sync_fetch_and_add(&st->hist[bucket], 1);
		if (wins) {
			__sync_fetch_and_add(&st->wins, wins);
			st->value = tctx->value;
			st->uid = uid;
		}
	}
	us = bpf_map_lookup_elem(&user_stats, &uid);
	if (!us && wins) {
		bpf_map_update_elem(&user_stats, &uid, &zero, BPF_NOEXIST);
		us = bpf_map_lookup_elem(&user_stats, &uid);
		if (!us)
			lost(TIX_LOST_USER_STATS);
	}
	if (us) {
		if (used)
			__sync_fetch_and_add(&us->runtime_ns, used);
		if (wins)
			__sync_fetch_and_add(&us->wins, wins);
	}
}

/* Charge the time p ran since it was last charged: cost, then stats.
 * Global, as are start_run, look, aged_serve, kernel_wake, reframe and
 * the preemption helpers: see draw_key (vtime.bpf.h). */
__noinline int charge(struct task_struct *p __arg_trusted, struct task_ctx *tctx, u64 now)
{
	u64 used = 0, bucket = TIX_HIST_BUCKETS, max_run;
	u32 wins;

	if (!tctx)
		return 0;
	wins = tctx->wins_unflushed;

	/* Charge the kernel's own execution time (the clock schedstat and
	 * the slice use), not wall time: interrupts are not the task's. */
	u64 sum = p->se.sum_exec_runtime;

	if (tctx->started_at && sum > tctx->exec_at) {
		used = sum - tctx->exec_at;
		tctx->exec_at = sum;
		tctx->run_avg = tix_run_avg(tctx->run_avg, used);
		tctx->started_at = now;
		tctx->pending = tix_sat_add(tctx->pending,
					    run_cost(tctx->e, tctx->value, used));
		bucket = slice_ns ? used * TIX_HIST_BUCKETS / slice_ns : 0;
		if (bucket >= TIX_HIST_BUCKETS)
			bucket = TIX_HIST_BUCKETS - 1;
		/* A charge covers one slice at most (dispatch charges at each
		 * slice end), which the kernel ends at the first tick past it:
		 * anything longer is a stretch no scheduler granted, billed to
		 * whichever task ran, and a share measured over a window moves
		 * with it; tix status names it so tests and operators can
		 * tell. Named approximation: RAS slices are taken at their
		 * longest. */
		max_run = (policy == TIX_POLICY_RAS && TIX_RAS_MAX_SLICE_NS > slice_ns ?
			   TIX_RAS_MAX_SLICE_NS : slice_ns) + tick_ns;
		if (used > max_run) {
			u64 us = (used - max_run) / 1000;

			__sync_fetch_and_add(&stalled_ns, used - max_run);
			__sync_fetch_and_add(&stalled_sq_us2, us * us);
		}
	}
	if (!used && !wins)
		return 0;
	tctx->wins_unflushed = 0;
	stat_flush(p, tctx, used, bucket, wins);
	return 0;
}

static void count_win(struct task_ctx *tctx)
{
	__sync_fetch_and_add(&nr_decisions, 1);
	tctx->wins_unflushed++;
}

/* preempt.bpf.h: the run a decision started beats a woken task only by a
 * gap; cut it when it has run that gap. */
__noinline int cut_for_waiter(u32 c, u64 key, u64 value, u64 now);

/*
 * A task (tctx) starts a run on cpu with key: the key becomes its own, its
 * frame's T and cpu's move to it (if a decision chose it), the run's E is
 * drawn and the CPU's record is published for preemption.
 */
__noinline int start_run(struct task_ctx *tctx, s32 cpu, u64 key, u64 now)
{
	u32 c = cpu;

	if (!tctx)
		return 0;

	tctx->own = key;
	/* A run on an idle CPU found at wake-up decided nothing: it moves no
	 * time (see Frames in the header). */
	if (!tctx->direct) {
		advance_vtime(tctx->dom, key);
		advance_vtime(c, key);
	}
	tctx->e = policy == TIX_POLICY_STRIDE ? 1ULL << 16 :
		  tix_bpf_neg_ln_q16(bpf_get_prandom_u32());
	if (policy != TIX_POLICY_STRIDE && !compensate)
		tctx->pending = tix_sat_add(tctx->pending,
			tix_bpf_race_delta(tctx->e, tctx->value, 0, slice_ns, 0));
	set_serving(c, tctx->dom);
	if (c < TIX_MAX_CPUS) {
		/* A kick not yet decided on is moot once a new run starts. */
		cpu_kick_key[c] = 0;
		cpu_key[c] = key;
		cpu_start[c] = now;
		cpu_value[c] = tctx->value ? tctx->value : 1;
		if (cpu_waiter_key[c] && !tctx->direct)
			cut_for_waiter(c, key, cpu_value[c], now);
		cpu_waiter_key[c] = 0;
	}
	if (tctx->direct)
		tctx->direct = 0;
	else
		count_win(tctx);
	return 0;
}

static u64 head_key(u64 dsq, bool *found)
{
	struct task_struct *p = __COMPAT_scx_bpf_dsq_peek(dsq);

	*found = p != NULL;
	return p ? p->scx.dsq_vtime : 0;
}

/*
 * The key, as cpu weighs it (key_on_cpu), of the first task in the shared
 * DSQ that cpu may run, looking at no more than TIX_SCAN_MAX tasks. *any:
 * the DSQ held tasks at all.
 */
static u64 shared_key(s32 cpu, bool *found, bool *any)
{
	struct task_struct *p;
	u64 key = 0;
	u32 n = 0;

	*found = false;
	*any = false;
	/* The head first: nearly always it may run here, and a peek costs
	 * less than opening an iterator. */
	p = __COMPAT_scx_bpf_dsq_peek(TIX_GLOBAL_DSQ);
	if (!p)
		return 0;
	*any = true;
	if (bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
		*found = true;
		return key_on_cpu(lookup_ctx(p), p->scx.dsq_vtime, TIX_GLOBAL_DSQ, cpu);
	}
	bpf_for_each(scx_dsq, p, TIX_GLOBAL_DSQ, 0) {
		*any = true;
		if (bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
			key = key_on_cpu(lookup_ctx(p), p->scx.dsq_vtime, TIX_GLOBAL_DSQ, cpu);
			*found = true;
			break;
		}
		if (++n >= TIX_SCAN_MAX)
			break;
	}
	return key;
}

/*
 * DSQ dom has gone starve_ns without a serve (or since it was last empty).
 * Signed: another CPU may stamp it after this one read its clock, and an
 * unsigned difference then wrapped into a false neglect.
 */
static bool neglected(u32 dom, u64 now)
{
	return dom < TIX_NR_DOMS && (s64)(now - dom_served[dom]) > (s64)starve_ns;
}

/* What waits for a decision on a CPU: its own DSQ's head (local) and the
 * first shared task it may run (shared). */
struct waiting {
	u64 kl, kg;		/* their keys */
	u64 ll;			/* the local head's, with its pinned lead */
	bool hl, hg;		/* found */
	bool ag;		/* the shared DSQ holds any task */
};

__noinline int look(s32 cpu, struct waiting *w)
{
	struct task_struct *p;
	struct task_ctx *tctx;

	if (!w)
		return 0;
	p = __COMPAT_scx_bpf_dsq_peek(cpu);
	w->hl = p != NULL;
	w->kl = w->ll = p ? p->scx.dsq_vtime : 0;
	tctx = p ? lookup_ctx(p) : NULL;
	if (tctx)
		w->ll = lead_on_cpu(tctx, w->kl, cpu, cpu);
	w->kg = shared_key(cpu, &w->hg, &w->ag);
	return 0;
}

/*
 * The DSQ the starvation guard serves first on cpu: its own if neglected
 * and not empty, else the shared one if so; TIX_NR_DOMS: neither, keys
 * decide.
 */
static u32 starved(s32 cpu, struct waiting *w, u64 now)
{
	if (w->hl && neglected(cpu, now))
		return cpu;
	if (w->ag && neglected(TIX_GLOBAL_DSQ, now))
		return TIX_GLOBAL_DSQ;
	return TIX_NR_DOMS;
}

/*
 * The per-task guard. starved() serves a neglected DSQ's head, but a DSQ
 * that is served can still hold one task back for good: behind a stream
 * of smaller keys (fork children and wakers keyed at or below T) its own
 * key, capped at draw time against the load of that moment, waits for a
 * T that moves slowly once the load grows (a nice-5 kthread preempted
 * inside an RCU read-side section waited 21 s under stress-ng, and the
 * kernel's RCU stall check ejected the scheduler). Every
 * starve_ns/TIX_AGE_CHECKS each CPU looks at the last TIX_AGE_SCAN tasks
 * (the largest keys) of its own DSQ and of the shared one for the task
 * that has waited longest, if over TIX_AGE_WAITS x starve_ns, that it may
 * run, and runs it as a run without a decision (like an idle CPU's at
 * wake-up: it moves no T and counts no win), so no runnable task waits
 * much past that. Twice starve_ns: the lead cap holds a task of a tiny
 * share about starve_ns by design, and the guard is for the waits the
 * cap failed to bound (at starve_ns it served 531 tasks in 60 s of
 * stress-ng on 2 vCPUs). The longest waiter, not the first found: when
 * many look aged (a guest the host stalls), the order they waited in,
 * not their keys, decides. Named
 * approximation: a task with more than TIX_AGE_SCAN larger keys behind it
 * is not seen until they leave; it still has its key's turn and the lead
 * cap.
 */
/* Per-CPU scratch of aged_move, kept in memory: the verifier does not
 * track it, where a count in a register it tracks pass by pass (with one,
 * the program had not attached after 3 min under TCG). */
struct age_scan {
	u64 best_at;	/* queued_at of the longest waiter seen */
	u32 seen;
	s32 best_pid;
};
struct age_scan age_scans[TIX_MAX_CPUS];

static bool aged_move(s32 cpu, u64 dsq, u64 now)
{
	struct age_scan *a = ARRAY_ELEM_PTR(age_scans, cpu, TIX_MAX_CPUS);
	struct task_struct *p;
	struct task_ctx *tctx;

	if (!a)
		return false;
	a->seen = 0;
	a->best_pid = 0;
	a->best_at = now - TIX_AGE_WAITS * starve_ns;
	/* From the tail: a task held back has one of the largest keys (the
	 * tasks that pass it are keyed at or below T), and those at the head
	 * are served next anyway. */
	bpf_for_each(scx_dsq, p, dsq, SCX_DSQ_ITER_REV) {
		if (++a->seen > TIX_AGE_SCAN)
			break;
		tctx = lookup_ctx(p);
		if (tctx && (s64)(a->best_at - tctx->queued_at) > 0 &&
		    bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
			a->best_at = tctx->queued_at;
			a->best_pid = p->pid;
		}
	}
	if (!a->best_pid)
		return false;
	/* The longest waiter: a second pass to reach it with an iterator. */
	a->seen = 0;
	bpf_for_each(scx_dsq, p, dsq, SCX_DSQ_ITER_REV) {
		if (++a->seen > TIX_AGE_SCAN)
			break;
		if (p->pid != a->best_pid)
			continue;
		tctx = lookup_ctx(p);
		if (!tctx)
			break;
		tctx->direct = 1;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0)) {
			if (dsq < TIX_NR_DOMS)
				dom_served[dsq] = now;
			return true;
		}
		tctx->direct = 0;
		break;
	}
	return false;
}

/*
 * The shared frame's T is lifted to the least of the CPUs' Ts when every
 * CPU's frame has moved past it. Why: CPU frames move with their pinned
 * tasks' keys while the shared T moves only with shared tasks' decisions;
 * after 8 s of a hog pinned to each of 2 CPUs (cyclictest and a shell
 * beside, unpinned) the shared T stood behind both CPUs' by about half of
 * what they had moved in those 8 s. Shared tasks keyed from there (new
 * processes, wakers floored at T) then won every decision on both CPUs
 * until they caught up, and the CPUs' own tasks waited for the starvation
 * guards: 7-15 guard serves and cyclictest's longest wait 0.85-1.07 s in
 * the 8 s after (2 and 4 vCPUs, ten runs; vm/tests/61-frames.sh). With
 * the lift: no serve, 18-129 ms. Only when every CPU is ahead: a CPU that
 * starts a shared key moves the shared T as far, so while any CPU runs
 * only shared work the least T is at or below the shared one and nothing
 * moves. Run at each CPU's periodic guard look (O(CPUs) every
 * starve_ns/TIX_AGE_CHECKS), so the shared T trails by that much at most.
 * Named approximation: the Ts are read without a lock, and a CPU that
 * stopped deciding (idle) holds the lift back at its last T.
 */
static void lift_shared_time(void)
{
	u64 lo = 0, t;
	u32 c;

	bpf_for(c, 0, TIX_MAX_CPUS) {
		if (c >= nr_cpus)
			break;
		t = vtime_now(c);
		if (c == 0 || (s64)(t - lo) < 0)
			lo = t;
	}
	if (lo)
		advance_vtime(TIX_GLOBAL_DSQ, lo);
}

__noinline bool aged_serve(s32 cpu, u64 now)
{
	u32 c = cpu;

	u64 t0;
	bool served;

	if (c >= TIX_MAX_CPUS ||
	    (s64)(now - cpu_aged_at[c]) < (s64)(starve_ns / TIX_AGE_CHECKS))
		return false;
	cpu_aged_at[c] = now;
	/* Timed on its own (two clock reads per look, a look per CPU every
	 * starve_ns/TIX_AGE_CHECKS): BPF statistics count only whole
	 * programs, and the guard lives inside dispatch. */
	t0 = bpf_ktime_get_ns();
	lift_shared_time();
	served = aged_move(cpu, c, now) || aged_move(cpu, TIX_GLOBAL_DSQ, now);
	__sync_fetch_and_add(&guard_ns, bpf_ktime_get_ns() - t0);
	__sync_fetch_and_add(&nr_guard_scans, 1);
	return served;
}

/*
 * A woken kernel thread's key: ahead of the smallest key waiting in its DSQ
 * and the shared one (tix_core::vtime::kernel_wake_key). The jump joins its
 * wake credit, so it orders the queue and cuts no runner short. Why: 10^4
 * threads woken at once (a condition variable's broadcast), each keyed up
 * to its wake cap below T, held the kworker that runs sched_ext's own
 * watchdog (keyed about T) behind all of them, and the kernel ejected the
 * scheduler ("watchdog failed to check in for 10.008s"; the per-task
 * guard scans only the DSQ's tail). A kthread that stays runnable is keyed
 * by its cost as any task; only waking moves it up.
 */
__noinline u64 kernel_wake(struct task_ctx *tctx, u32 dom, u64 key)
{
	bool hl = false, hg = false;
	u64 kl, kg = 0, nk;

	if (!tctx)
		return key;
	kl = head_key(dom, &hl);

	if (dom != TIX_GLOBAL_DSQ)
		kg = head_key(TIX_GLOBAL_DSQ, &hg);
	if (!hl || (hg && kg < kl))
		kl = kg;
	nk = tix_kernel_wake_key(key, kl, hl || hg);
	tctx->wake_credit = tix_sat_add(tctx->wake_credit, key - nk);
	return nk;
}

#include "preempt.bpf.h"

s32 BPF_STRUCT_OPS(tix_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = lookup_ctx(p);
	bool is_idle = false;
	s32 cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (tctx)
		tctx->sync_wake = !!(wake_flags & SCX_WAKE_SYNC);
	if (is_idle) {
		/* No decision on an idle CPU; the run is keyed and charged as
		 * if it had won at T. */
		if (tctx) {
			tctx->dom = dom_of(p);
			tctx->key = draw_key(p, tctx, tctx->dom, false);
			tctx->direct = 1;
			tctx->queued = 0;
		}
		__sync_fetch_and_add(&nr_direct, 1);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, task_slice(p, tctx), 0);
	}
	return cpu;
}

void BPF_STRUCT_OPS(tix_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_ctx(p);
	u32 dom = dom_of(p);
	bool kicked = false, may_cut;
	u64 key;
	s32 cpu;

	if (!tctx) {
		scx_bpf_dsq_insert(p, TIX_GLOBAL_DSQ, slice_ns, enq_flags);
		return;
	}
	if (dom >= TIX_NR_DOMS)
		dom = TIX_GLOBAL_DSQ;
	if (tctx->next_ready) {
		/* prev lost in dispatch: its key is already drawn (and charged). */
		key = tctx->next_key;
		if (tctx->next_dom != dom)
			key = reframe(tctx, key, dom);
	} else if (tctx->queued) {
		/* Re-enqueued while waiting (affinity, nice, cgroup change): it
		 * keeps its place, in its new frame if its DSQ changed. */
		key = tctx->key;
		if (tctx->dom != dom)
			key = reframe(tctx, key, dom);
	} else {
		key = draw_key(p, tctx, dom, tctx->requeue);
	}
	if (!tctx->queued)
		tctx->queued_at = bpf_ktime_get_ns();
	tctx->next_ready = 0;
	tctx->requeue = 0;
	tctx->direct = 0;
	tctx->key = key;
	tctx->dom = dom;
	tctx->queued = 1;
	/* Whether this wake-up may cut a runner short, here or by a kick.
	 * The wake credit orders the queue but does not by itself cut a
	 * runner short: counted, it sent an IPI at most wake-ups of pipe and
	 * socket workers and made perf bench sched messaging 1.25x slower.
	 * A sync waker (pipe and socket writers) is about to sleep or yield
	 * its CPU, and its wakee is decided on at that CPU's next decision or
	 * any other's: kicking a CPU for it (the waker's or a remote one)
	 * switched tasks 4x as often as scx_wvtime under multi-threaded TCG
	 * (hackbench 1.50x the default's time, 1.02x without; 23,084 kicks
	 * over 3 messaging and 2 hackbench runs, 554 without;
	 * docs/kernel-results.md). RAS: a woken task joins the tail and
	 * waits (seed 002 §2.5). */
	may_cut = (enq_flags & SCX_ENQ_WAKEUP) && policy != TIX_POLICY_RAS && !tctx->sync_wake;
	/* Set by select_cpu for this wake-up only (pinned tasks skip it). */
	tctx->sync_wake = 0;
	if (enq_flags & SCX_ENQ_WAKEUP)
		tctx->woken = may_cut;
	if (may_cut && preempt_own_cpu(p, tctx, key, dom, enq_flags))
		return;
	if ((enq_flags & SCX_ENQ_WAKEUP) && (p->flags & TIX_PF_KTHREAD) &&
	    policy != TIX_POLICY_RAS)
		tctx->key = key = kernel_wake(tctx, dom, key);
	/* Neglect (the starvation guard) counts from when a DSQ last served
	 * or last held nothing: a kthread arriving in its CPU's empty DSQ
	 * after a quiet second is not neglected, and was served ahead of
	 * every draw (296 such serves over 3 messaging and 2 hackbench runs;
	 * docs/kernel-results.md). */
	if (dom < TIX_NR_DOMS && !scx_bpf_dsq_nr_queued(dom))
		dom_served[dom] = bpf_ktime_get_ns();
	scx_bpf_dsq_insert_vtime(p, dom, task_slice(p, tctx), key, enq_flags);

	if (dom != TIX_GLOBAL_DSQ) {
		/* Only CPU dom drains this DSQ: make sure it looks. */
		kicked = scx_bpf_test_and_clear_cpu_idle(dom);
		if (kicked)
			scx_bpf_kick_cpu(dom, SCX_KICK_IDLE);
	} else {
		cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
		if (cpu >= 0) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			kicked = true;
		}
	}
	if (!kicked && may_cut)
		preempt_for(p, tix_sat_add(key, tctx->wake_credit), dom);
}

static bool take(u32 dom, u64 now)
{
	if (!scx_bpf_dsq_move_to_local(dom, 0))
		return false;
	if (dom < TIX_NR_DOMS)
		dom_served[dom] = now;
	return true;
}

void BPF_STRUCT_OPS(tix_dispatch, s32 cpu, struct task_struct *prev)
{
	u64 now = bpf_ktime_get_ns(), kp = 0;
	struct task_ctx *pctx = NULL;
	u32 cdom = cpu, pdom = TIX_GLOBAL_DSQ, sd;
	int pick, po, ps; /* 0 prev, 1 local, 2 shared; -1 none */
	u64 ko = 0, ks = 0, lo;
	struct waiting w = {};
	u64 kick = 0, kpc, kpf = 0;
	bool hp = false;

	if (cdom >= TIX_MAX_CPUS)
		return;

	if (prev && (prev->scx.flags & SCX_TASK_QUEUED))
		pctx = lookup_ctx(prev);
	if (pctx) {
		/* Its slice ran out while runnable: charge it and draw now. */
		charge(prev, pctx, now);
		pdom = dom_of(prev);
		if (pdom >= TIX_NR_DOMS)
			pdom = TIX_GLOBAL_DSQ;
		kp = draw_key(prev, pctx, pdom, true);
		pctx->next_key = kp;
		pctx->next_dom = pdom;
		pctx->next_ready = 1;
		/* Weighed here as this CPU weighs any shared key; queued, it
		 * keeps kp for whichever CPU takes it. */
		kpf = key_on_cpu(pctx, kp, pdom, cdom);
		hp = true;
	}

	look(cpu, &w);
	/* Neglected DSQ first: pinned tasks and kthreads never stall. If its
	 * head left meanwhile (a dequeue), keys decide this time; a shared
	 * DSQ neglected too is served at the next decision. */
	sd = starved(cpu, &w, now);
	if (sd < TIX_NR_DOMS && take(sd, now)) {
		__sync_fetch_and_add(&nr_starve_serves, 1);
		return;
	}
	if (aged_serve(cpu, now)) {
		__sync_fetch_and_add(&nr_starve_serves, 1);
		__sync_fetch_and_add(&nr_aged_serves, 1);
		return;
	}

	/*
	 * The smallest key runs; prev wins ties (no needless switch). A prev
	 * cut short by a wake-up kick competes here as if behind the woken
	 * key: cut early, its run cost little, and its small increment would
	 * win back the CPU most of the time (a prev 0.2 ms into its slice
	 * beats a woken task that used 1 ms with odds 5:1), undoing every
	 * preemption. Its own next key is unchanged for later decisions.
	 */
	if (cdom < TIX_MAX_CPUS) {
		kick = cpu_kick_key[cdom];
		cpu_kick_key[cdom] = 0;
	}
	kpc = hp && kick && kpf <= kick ? tix_sat_add(kick, 1) : kpf;
	/*
	 * Each frame's least key first, prev in its own and winning ties
	 * there: c's own (prev if pinned here, its DSQ's head) and the shared
	 * one (prev if shared, the first shared task c may run). Then the two,
	 * the own one with its pinned lead (lead_on_cpu; prev has none, it was
	 * not woken), prev winning a tie, else the own one. With no lead this
	 * is the least of the three keys, prev winning ties, then c's own head.
	 */
	po = ps = -1;
	if (hp && pdom == cdom) {
		po = 0;
		ko = kpc;
	} else if (hp) {
		ps = 0;
		ks = kpc;
	}
	if (w.hl && (po < 0 || w.kl < ko)) {
		po = 1;
		ko = w.kl;
	}
	if (w.hg && (ps < 0 || w.kg < ks)) {
		ps = 2;
		ks = w.kg;
	}
	lo = po == 1 ? w.ll : ko;
	if (po < 0)
		pick = ps;
	else if (ps < 0)
		pick = po;
	else
		pick = lo < ks || (lo == ks && ps != 0) ? po : ps;
	note_waiter(cdom, pick, &w);

	if (pick == 1 && take(cdom, now))
		return;
	if (pick == 2 && take(TIX_GLOBAL_DSQ, now))
		return;
	if (pick > 0 && !hp) {
		/* The chosen head vanished (another CPU took it): anything else. */
		if (take(cdom, now) || take(TIX_GLOBAL_DSQ, now))
			return;
	}
	if (pick < 0 && w.ag && take(TIX_GLOBAL_DSQ, now))
		/* Nothing seen in the scan window: the kernel's first-runnable. */
		return;
	if (!hp)
		return;

	/* prev keeps the CPU with a fresh slice; no enqueue follows. */
	pctx->next_ready = 0;
	if (pdom < TIX_NR_DOMS)
		dom_served[pdom] = now;
	scx_bpf_task_set_slice(prev, policy == TIX_POLICY_RAS ?
				     ras_new_slice(prev, pctx) : slice_ns);
	__sync_fetch_and_add(&nr_prev_kept, 1);
	pctx->dom = pdom;
	if (!w.hl && !w.ag)
		kpf = uncontested_key(pctx, kpf, pdom);
	start_run(pctx, cpu, kpf, now);
}

void BPF_STRUCT_OPS(tix_running, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_ctx(p);
	u64 now = bpf_ktime_get_ns(), key;
	s32 c;

	if (!tctx)
		return;
	tctx->queued = 0;
	tctx->next_ready = 0;
	tctx->woken = 0;
	tctx->started_at = now;
	tctx->exec_at = p->se.sum_exec_runtime;
	c = scx_bpf_task_cpu(p);
	/* A decision on c chose it by its key as c weighs it: it starts there. */
	key = tctx->direct ? tctx->key : key_on_cpu(tctx, tctx->key, tctx->dom, c);
	start_run(tctx, c, key, now);
}

void BPF_STRUCT_OPS(tix_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup_ctx(p);
	u32 c = scx_bpf_task_cpu(p);

	if (c < TIX_MAX_CPUS)
		cpu_value[c] = 0;
	set_serving(c, TIX_NR_DOMS);
	if (!tctx)
		return;
	charge(p, tctx, bpf_ktime_get_ns());
	if (runnable)
		tctx->requeue = 1;
}

void BPF_STRUCT_OPS(tix_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_ctx(p);
	u32 tgid = p->tgid;
	/* Looked up, not created: only init_task creates (and counts threads
	 * in) an entry, so a process that found the table full stays out. */
	struct tix_proc_state *ps = bpf_map_lookup_elem(&proc_state, &tgid);
	struct tix_group_key k;
	u64 w, tickets;

	if (!tctx)
		return;
	ras_enter(p, tctx);
	if (!tctx->vcounted) {
		/* Counted at its last value until its next draw refreshes it. */
		tctx->vcounted = tctx->value ? tctx->value : 1;
		__sync_fetch_and_add(&vsum, (s64)tctx->vcounted);
	}
	if (!ps || tctx->wcounted)
		return;
	w = task_weight(p);
	tctx->wcounted = w;
	__sync_fetch_and_add(&ps->wsum, (s64)w);
	tickets = holding(p, tctx, &k);
	if (__sync_fetch_and_add(&ps->nr_runnable, 1) == 0) {
		/* First runnable thread: the process enters its group's sum
		 * (nothing of it is counted anywhere now). */
		ps->cgid = k.cgid;
		ps->uid = k.uid;
		ps->cur = k.cur;
	}
	/* A thread beside runnable ones of the same weight leaves the amount
	 * as it was: no walk on this path then. */
	proc_sync(ps, tickets, false);
}

void BPF_STRUCT_OPS(tix_quiescent, struct task_struct *p, u64 deq_flags)
{
	u32 tgid = p->tgid;
	struct tix_proc_state *ps = bpf_map_lookup_elem(&proc_state, &tgid);
	struct task_ctx *tctx = lookup_ctx(p);

	if (!tctx)
		return;
	/* queued stays: a waiting task dequeued for a property change
	 * (affinity, nice, cgroup) keeps its key at its next enqueue. */
	tctx->next_ready = 0;
	tctx->requeue = 0;
	if (deq_flags & SCX_DEQ_SLEEP)
		tctx->slept_at = bpf_ktime_get_ns();
	ras_leave(tctx);
	if (tctx->vcounted) {
		__sync_fetch_and_sub(&vsum, (s64)tctx->vcounted);
		tctx->vcounted = 0;
	}
	if (!ps || !tctx->wcounted)
		return;
	__sync_fetch_and_sub(&ps->wsum, (s64)tctx->wcounted);
	tctx->wcounted = 0;
	__sync_fetch_and_sub(&ps->nr_runnable, 1);
	proc_sync(ps, tickets_of(p), false);
}

s32 BPF_STRUCT_OPS(tix_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct tix_task_stat st = {};
	struct tix_proc_tickets *t;
	struct tix_proc_state *ps;
	struct task_ctx *tctx;
	u32 pid = p->pid, tgid = p->tgid;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	/* A new task starts at the present, not at the beginning of time. */
	tctx->own = vtime_now(TIX_GLOBAL_DSQ);
	if (bpf_core_field_exists(args->cgroup) && args->cgroup)
		tctx->cgid = cgroup_id(args->cgroup);
	st.tgid = tgid;
	st.uid = task_uid(p);
	if (bpf_map_update_elem(&task_stats, &pid, &st, BPF_ANY))
		lost(TIX_LOST_TASK_STATS);

	/* A new process (not a thread) inherits its parent's tickets. At fork
	 * time the parent is the current task. */
	if (args->fork && cur->tgid != tgid) {
		t = proc_tickets_of(cur);
		if (t) {
			struct tix_proc_tickets v = { .tickets = t->tickets,
						      .currency = t->currency };

			bpf_map_update_elem(&proc_tickets, &tgid, &v, BPF_ANY);
		}
	}
	ps = proc_state_get(tgid);
	if (ps)
		__sync_fetch_and_add(&ps->nr_threads, 1);
	else
		lost(TIX_LOST_PROC_STATE);
	return 0;
}

void BPF_STRUCT_OPS(tix_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	u32 pid = p->pid, tgid = p->tgid;
	struct tix_proc_state *ps;

	bpf_map_delete_elem(&task_stats, &pid);
	ps = bpf_map_lookup_elem(&proc_state, &tgid);
	/* wcounts stays: a thread's writes count until tracing stops. */
	if (!ps || __sync_fetch_and_sub(&ps->nr_threads, 1) != 1)
		return;
	/* The process's last thread: its tgid may now be reused, and
	 * whatever it still counts leaves its group. */
	ps->nr_runnable = 0;
	ps->wsum = 0;
	proc_sync(ps, 0, true);
	if (!bpf_map_delete_elem(&proc_state, &tgid))
		__sync_fetch_and_sub(&nr_proc_states, 1);
	bpf_map_delete_elem(&proc_tickets, &tgid);
}

#include "cgroups.bpf.h"

s32 BPF_STRUCT_OPS_SLEEPABLE(tix_init)
{
	s32 i, err;

	err = scx_bpf_create_dsq(TIX_GLOBAL_DSQ, -1);
	if (err)
		return err;
	bpf_for(i, 0, TIX_MAX_CPUS) {
		if (i >= nr_cpus)
			break;
		err = scx_bpf_create_dsq(i, -1);
		if (err)
			return err;
		if (wake_cut) {
			err = cut_timer_init(i);
			if (err)
				return err;
		}
	}
	return 0;
}

void BPF_STRUCT_OPS(tix_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(tix_ops,
	       .select_cpu	= (void *)tix_select_cpu,
	       .enqueue		= (void *)tix_enqueue,
	       .dispatch	= (void *)tix_dispatch,
	       .runnable	= (void *)tix_runnable,
	       .running		= (void *)tix_running,
	       .stopping	= (void *)tix_stopping,
	       .quiescent	= (void *)tix_quiescent,
	       .init_task	= (void *)tix_init_task,
	       .exit_task	= (void *)tix_exit_task,
	       .cgroup_init	= (void *)tix_cgroup_init,
	       .cgroup_exit	= (void *)tix_cgroup_exit,
	       .cgroup_move	= (void *)tix_cgroup_move,
	       .cgroup_set_weight = (void *)tix_cgroup_set_weight,
	       .cgroup_set_idle	= (void *)tix_cgroup_set_idle,
	       .cgroup_set_bandwidth = (void *)tix_cgroup_set_bandwidth,
	       .init		= (void *)tix_init,
	       .exit		= (void *)tix_exit,
	       .timeout_ms	= 10000,
	       .name		= "tix");
