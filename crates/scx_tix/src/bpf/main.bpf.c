/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_tix: lottery and stride scheduling of Linux tasks as a sched_ext
 * scheduler, with Zepp's two-level rights (seed 000 §3-4: per-user base
 * tickets, per-process tickets) and Waldspurger's compensation (seed 001 §3.4).
 *
 * The lottery is an exponential race (tix_core::race, rules.h): a runnable
 * task waits in a vtime-ordered DSQ under the key T_dom + E/value, E ~ Exp(1);
 * the smallest key wins and T_dom moves to it. By memorylessness every
 * decision is a fresh lottery over the queued tasks: P(win) = v / V_dom, in
 * O(log n) through the kernel's rbtree, never a scan.
 *
 * Domains. One global DSQ holds tasks allowed on every CPU; DSQ c holds tasks
 * that cannot go everywhere (pinned, restricted affinity, per-CPU kthreads),
 * placed on one allowed CPU c. Each domain keeps its own virtual time T_dom and
 * V_dom, the sum of the values of its queued tasks (added at insert, the same
 * stored value subtracted at removal). CPU c, in ops.dispatch, has up to three
 * candidates: the head of DSQ c, the head of the global DSQ and prev if its
 * slice ran out while it is still runnable (prev is decided here, because
 * ops.dispatch runs before the expired task goes back through ops.enqueue;
 * its new key is drawn now and remembered so ops.enqueue does not redraw).
 * Lottery: a coin picks domain c with probability V_c / (V_c + V_g), prev's
 * value counted in its own domain, then the smallest key within it wins:
 * P(task) = V_dom/V * v/V_dom = v/V, an exact lottery over the union for
 * that CPU. Stride: the key is the pass; the smallest key over both domains
 * wins (no coin). Across CPUs this is one lottery per CPU over the tasks that
 * CPU may run, not a single global draw: two CPUs deciding at once may both
 * want the same global head, the loser takes the next one.
 *
 * Zepp's value of a runnable task: base(uid) * tickets(tgid) / runnable
 * tickets of the user / runnable threads of the process (threads of a process
 * split its value equally; at least 1). Maps user_base and proc_tickets are
 * written by the daemon; the runnable sums are kept in ops.runnable and
 * ops.quiescent.
 *
 * Accepted races and approximations (named):
 *  - runnable sums and V_dom are updated with atomics but read without a
 *    lock: a value drawn while another CPU changes a sum may use the old sum;
 *  - values are snapshotted into a task's key and into V_dom at insert: a
 *    ticket or base change takes effect at the task's next draw (at most one
 *    slice later for a running hog);
 *  - a process's ticket change while it stays runnable is folded into the
 *    user's runnable sum at its next draw (compare-and-swap on the counted
 *    value); it can race with the process going quiescent on another CPU;
 *  - the global head peeked for the coin may be taken by another CPU before
 *    this one moves it: this CPU then runs the next head of that domain;
 *  - policy switches while attached convert lazily: queued keys keep the old
 *    policy's meaning until their task is next drawn (within one slice each);
 *  - stride compares keys of two domains whose virtual times advance
 *    separately; a pinned task's pass is only comparable to global passes to
 *    within the drift between T_c and T_g;
 *  - starvation guard: a domain with queued tasks that no dispatch served
 *    for starve_ns is served first, so pinned tasks and kthreads cannot stall
 *    whatever the draws (changes the odds only after starve_ns of neglect);
 *  - an idle CPU found at wake-up runs the task at once (no contention there);
 *  - a key's lead over T_dom is capped at about starve_ns of the domain's
 *    service (see draw_key): only tasks whose fair wait exceeds that are
 *    affected, so no runnable task waits long enough for the watchdog;
 *  - a process that changes owner while runnable moves its tickets to the
 *    new user's runnable sum at its next draw (value_of);
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

/* Written by the daemon while attached. */
volatile u32 policy = TIX_POLICY_LOTTERY;
volatile u32 compensate = 1;

u64 nr_decisions;
u64 nr_prev_kept;
u64 nr_starve_serves;
u64 nr_direct;

u64 dom_vtime[TIX_NR_DOMS];
s64 dom_value[TIX_NR_DOMS];
u64 dom_served[TIX_NR_DOMS];

struct task_ctx {
	u64 key;		/* key while queued (race key or pass) */
	u64 next_key;		/* key drawn in dispatch for an expired prev */
	u64 value;		/* value snapshot counted in V_dom */
	u64 pass;		/* stride pass */
	u64 started_at;
	u64 exec_at;		/* p->se.sum_exec_runtime when last charged */
	u64 last_used;
	u32 dom;
	u32 next_dom;
	u32 queued;
	u32 next_ready;
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
	__uint(max_entries, TIX_MAX_USERS);
	__type(key, u32);
	__type(value, s64);
} user_rt SEC(".maps");

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

__noinline u64 tix_bpf_neg_ln_q16(u32 u)
{
	return tix_neg_ln_q16(u);
}

__noinline u64 tix_bpf_task_value(u64 base, u64 tickets, u64 urt, u64 prt)
{
	return tix_task_value(base, tickets, urt, prt);
}

__noinline u64 tix_bpf_pass_delta(u64 used_ns, u64 value)
{
	return tix_pass_delta(used_ns, value);
}

static struct task_ctx *lookup_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
}

static u32 task_uid(struct task_struct *p)
{
	return BPF_CORE_READ(p, real_cred, uid.val);
}

static u32 dom_of(struct task_struct *p)
{
	s32 cpu;

	if (p->nr_cpus_allowed >= nr_cpus)
		return TIX_GLOBAL_DSQ;
	/* Stay where the task is when allowed: keeps caches and is cheap. */
	cpu = scx_bpf_task_cpu(p);
	if (cpu < 0 || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		cpu = bpf_cpumask_any_distribute(p->cpus_ptr);
	if (cpu < 0 || cpu >= TIX_MAX_CPUS || cpu >= nr_cpus)
		return TIX_GLOBAL_DSQ;
	return cpu;
}

static struct tix_proc_state *proc_state_get(u32 tgid)
{
	struct tix_proc_state zero = {}, *ps;

	ps = bpf_map_lookup_elem(&proc_state, &tgid);
	if (ps)
		return ps;
	bpf_map_update_elem(&proc_state, &tgid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&proc_state, &tgid);
}

static s64 *user_rt_get(u32 uid)
{
	s64 zero = 0, *v;

	v = bpf_map_lookup_elem(&user_rt, &uid);
	if (v)
		return v;
	bpf_map_update_elem(&user_rt, &uid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&user_rt, &uid);
}

/* /proc/PID/stat's starttime of p's process, the daemon's key for it. */
static u64 proc_start(struct task_struct *p)
{
	return p->group_leader->start_boottime / TIX_NSEC_PER_TICK;
}

/*
 * p's process's ticket entry, or NULL when it has none of its own: an entry
 * whose start differs was written for an earlier process with the same pid
 * and is ignored (the daemon prunes it). An inherited entry (start 0) is
 * claimed here; the compare-and-swap keeps a concurrent daemon write.
 */
static struct tix_proc_tickets *proc_tickets_of(struct task_struct *p)
{
	u32 tgid = p->tgid;
	struct tix_proc_tickets *t = bpf_map_lookup_elem(&proc_tickets, &tgid);
	u64 start;

	if (!t)
		return NULL;
	start = proc_start(p);
	if (t->start == 0)
		__sync_val_compare_and_swap(&t->start, 0, start);
	return t->start == start ? t : NULL;
}

static u32 tickets_of(struct task_struct *p)
{
	struct tix_proc_tickets *t = proc_tickets_of(p);

	return t ? t->tickets : TIX_DEFAULT_TICKETS;
}

/* Zepp's v = b * p / t, split among the process's runnable threads. */
static u64 value_of(struct task_struct *p)
{
	u32 uid = task_uid(p), tgid = p->tgid, tickets, old, *b;
	u64 base = TIX_DEFAULT_BASE, prt = 1, urt = 0;
	struct tix_proc_state *ps;
	s64 *rt;

	b = bpf_map_lookup_elem(&user_base, &uid);
	if (b)
		base = *b;
	tickets = tickets_of(p);
	ps = proc_state_get(tgid);
	if (ps) {
		u32 ouid = ps->uid;

		prt = ps->nr_runnable;
		/* A process that changed owner while runnable (su, setuid: the
		 * hog that never sleeps again) moves its tickets to the new
		 * user's sum at its next draw. */
		if (prt > 0 && ouid != uid &&
		    __sync_bool_compare_and_swap(&ps->uid, ouid, uid)) {
			rt = bpf_map_lookup_elem(&user_rt, &ouid);
			if (rt)
				__sync_fetch_and_sub(rt, (s64)ps->counted);
			rt = user_rt_get(uid);
			if (rt)
				__sync_fetch_and_add(rt, (s64)ps->counted);
		}
		old = ps->counted;
		/* Fold a ticket change of a still-runnable process into the sum. */
		if (prt > 0 && old != tickets &&
		    __sync_bool_compare_and_swap(&ps->counted, old, tickets)) {
			rt = user_rt_get(ps->uid);
			if (rt)
				__sync_fetch_and_add(rt, (s64)tickets - (s64)old);
		}
	}
	rt = bpf_map_lookup_elem(&user_rt, &uid);
	if (rt && *rt > 0)
		urt = *rt;
	if (urt < tickets)
		/* The sum lags (race above): never worth more than the base. */
		urt = tickets;
	return tix_bpf_task_value(base, tickets, urt, prt);
}

/*
 * Draw the key of p for a queue in domain dom. The lead over T_dom is capped
 * at what the domain's virtual time gains in about starve_ns of service
 * (stride: starve_ns << 16 / V; lottery: starve_ns/slice draws of mean
 * 2^36 / V each), so a task whose fair wait would exceed starve_ns (a share
 * below slice/starve_ns, or a stride debt from a long run) waits about that
 * long instead and the watchdog never sees it stall. Only such tasks are
 * affected (named approximation); a capped stride task forgets its excess.
 */
static u64 draw_key(struct task_struct *p, struct task_ctx *tctx, u32 dom, u64 value)
{
	u64 t = 0, lead, cap, v = value;
	s64 vd = 0;

	if (dom < TIX_NR_DOMS) {
		t = dom_vtime[dom];
		vd = dom_value[dom];
	}
	if (vd > 0)
		v += vd;
	if (v < 1)
		v = 1;
	if (policy == TIX_POLICY_STRIDE) {
		tctx->pass = tix_wake_pass(tctx->pass, t);
		cap = (starve_ns << 16) / v;
		if (tctx->pass - t > cap)
			tctx->pass = t + cap;
		return tctx->pass;
	}
	lead = tix_bpf_race_delta(tix_bpf_neg_ln_q16(bpf_get_prandom_u32()),
				  value, tctx->last_used, slice_ns, compensate);
	cap = ((starve_ns / (slice_ns ? slice_ns : 1)) << 36) / v;
	if (lead > cap)
		lead = cap;
	return tix_sat_add(t, lead);
}

static void advance_vtime(u32 dom, u64 key)
{
	if (dom >= TIX_NR_DOMS)
		return;
	/* Plain store, monotone check: two CPUs racing leave the larger or the
	 * smaller of two nearby keys; either is a valid "now" for the race. */
	if ((s64)(key - dom_vtime[dom]) > 0)
		dom_vtime[dom] = key;
}

/* Remove p's value from its domain once, whoever gets here first. */
static void unqueue(struct task_ctx *tctx)
{
	u32 dom = tctx->dom;

	if (!__sync_bool_compare_and_swap(&tctx->queued, 1, 0))
		return;
	if (dom < TIX_NR_DOMS)
		__sync_fetch_and_sub(&dom_value[dom], (s64)tctx->value);
}

/* Charge the time p ran since started_at: stats, histogram, stride pass. */
static void charge(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	struct tix_task_stat *st;
	struct tix_user_stat *us;
	u32 pid = p->pid, uid = task_uid(p);
	u64 used, bucket;

	/* Charge the kernel's own execution time (the clock schedstat and
	 * the slice use), not wall time: interrupts are not the task's. */
	u64 sum = p->se.sum_exec_runtime;

	if (!tctx->started_at || sum <= tctx->exec_at)
		return;
	used = sum - tctx->exec_at;
	tctx->exec_at = sum;
	tctx->started_at = now;
	tctx->last_used = used;
	tctx->pass = tix_sat_add(tctx->pass, tix_bpf_pass_delta(used, tctx->value));
	bucket = slice_ns ? used * TIX_HIST_BUCKETS / slice_ns : 0;
	if (bucket >= TIX_HIST_BUCKETS)
		bucket = TIX_HIST_BUCKETS - 1;
	st = bpf_map_lookup_elem(&task_stats, &pid);
	if (st) {
		__sync_fetch_and_add(&st->runtime_ns, used);
		if (bucket < TIX_HIST_BUCKETS)
			__sync_fetch_and_add(&st->hist[bucket], 1);
	}
	us = bpf_map_lookup_elem(&user_stats, &uid);
	if (us)
		__sync_fetch_and_add(&us->runtime_ns, used);
}

static void count_win(struct task_struct *p, u64 value)
{
	struct tix_user_stat zero = {}, *us;
	struct tix_task_stat *st;
	u32 pid = p->pid, uid = task_uid(p);

	__sync_fetch_and_add(&nr_decisions, 1);
	st = bpf_map_lookup_elem(&task_stats, &pid);
	if (st) {
		__sync_fetch_and_add(&st->wins, 1);
		st->value = value;
		st->uid = uid;
	}
	us = bpf_map_lookup_elem(&user_stats, &uid);
	if (!us) {
		bpf_map_update_elem(&user_stats, &uid, &zero, BPF_NOEXIST);
		us = bpf_map_lookup_elem(&user_stats, &uid);
	}
	if (us)
		__sync_fetch_and_add(&us->wins, 1);
}

s32 BPF_STRUCT_OPS(tix_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (is_idle) {
		struct task_ctx *tctx = lookup_ctx(p);

		/* No draw on an idle CPU, but its run is charged at this value. */
		if (tctx)
			tctx->value = value_of(p);
		__sync_fetch_and_add(&nr_direct, 1);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	}
	return cpu;
}

void BPF_STRUCT_OPS(tix_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_ctx(p);
	u32 dom = dom_of(p);
	u64 value, key;
	s32 cpu;

	if (!tctx) {
		scx_bpf_dsq_insert(p, TIX_GLOBAL_DSQ, slice_ns, enq_flags);
		return;
	}
	if (dom >= TIX_NR_DOMS)
		dom = TIX_GLOBAL_DSQ;
	if (tctx->next_ready && tctx->next_dom == dom) {
		/* prev lost in dispatch: its key is already drawn (and charged). */
		value = tctx->value;
		key = tctx->next_key;
	} else {
		value = value_of(p);
		key = draw_key(p, tctx, dom, value);
	}
	tctx->next_ready = 0;
	tctx->key = key;
	tctx->value = value;
	tctx->dom = dom;
	__sync_fetch_and_add(&dom_value[dom], (s64)value);
	tctx->queued = 1;
	scx_bpf_dsq_insert_vtime(p, dom, slice_ns, key, enq_flags);

	if (dom != TIX_GLOBAL_DSQ) {
		/* Only CPU dom drains this DSQ: make sure it looks. */
		scx_bpf_kick_cpu(dom, SCX_KICK_IDLE);
	} else {
		cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
		if (cpu >= 0)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	}
}

void BPF_STRUCT_OPS(tix_dequeue, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = lookup_ctx(p);

	if (tctx)
		unqueue(tctx);
}

static u64 head_key(u64 dsq, bool *found)
{
	struct task_struct *p = __COMPAT_scx_bpf_dsq_peek(dsq);

	*found = p != NULL;
	return p ? p->scx.dsq_vtime : 0;
}

static bool take(u32 dom, u64 key, u64 now)
{
	if (!scx_bpf_dsq_move_to_local(dom, 0))
		return false;
	advance_vtime(dom, key);
	if (dom < TIX_NR_DOMS)
		dom_served[dom] = now;
	return true;
}

void BPF_STRUCT_OPS(tix_dispatch, s32 cpu, struct task_struct *prev)
{
	u64 now = bpf_ktime_get_ns(), kc = 0, kg = 0, kp = 0, vp = 0, r;
	s64 vc = 0, vg = 0;
	struct task_ctx *pctx = NULL;
	bool hc = false, hg = false, pc = false, pg = false, pick_c, p_first, h_first;
	u32 cdom = cpu, pdom = TIX_GLOBAL_DSQ, first, second;
	u64 kf, ks;

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
		vp = value_of(prev);
		pctx->value = vp;
		kp = draw_key(prev, pctx, pdom, vp);
		pctx->next_key = kp;
		pctx->next_dom = pdom;
		pctx->next_ready = 1;
		pc = pdom == cdom;
		pg = pdom == TIX_GLOBAL_DSQ;
	}

	kc = head_key(cdom, &hc);
	kg = head_key(TIX_GLOBAL_DSQ, &hg);
	vc = dom_value[cdom & (TIX_MAX_CPUS - 1)] + (pc ? (s64)vp : 0);
	vg = dom_value[TIX_GLOBAL_DSQ] + (pg ? (s64)vp : 0);
	if (vc < 1)
		vc = 1;
	if (vg < 1)
		vg = 1;

	if (!hc && !hg && !pc && !pg)
		return;

	/* Neglected domain first: pinned tasks and kthreads never stall. */
	if (hc && now - dom_served[cdom & (TIX_MAX_CPUS - 1)] > starve_ns &&
	    take(cdom, kc, now)) {
		__sync_fetch_and_add(&nr_starve_serves, 1);
		return;
	}
	if (hg && now - dom_served[TIX_GLOBAL_DSQ] > starve_ns &&
	    take(TIX_GLOBAL_DSQ, kg, now)) {
		__sync_fetch_and_add(&nr_starve_serves, 1);
		return;
	}

	if ((hc || pc) && (hg || pg)) {
		if (policy == TIX_POLICY_STRIDE) {
			u64 mc = hc ? kc : kp, mg = hg ? kg : kp;

			if (pc && kp < mc)
				mc = kp;
			if (pg && kp < mg)
				mg = kp;
			pick_c = mc <= mg;
		} else {
			r = ((u64)bpf_get_prandom_u32() << 32) | bpf_get_prandom_u32();
			pick_c = r % (u64)(vc + vg) < (u64)vc;
		}
	} else {
		pick_c = hc || pc;
	}

	/* The chosen domain first, then the other one if its head vanished. */
	first = pick_c ? cdom : TIX_GLOBAL_DSQ;
	second = pick_c ? TIX_GLOBAL_DSQ : cdom;
	kf = pick_c ? kc : kg;
	ks = pick_c ? kg : kc;
	p_first = pick_c ? pc : pg;
	h_first = pick_c ? hc : hg;
	if (p_first && (!h_first || kp <= kf))
		goto keep_prev;
	if (take(first, kf, now))
		return;
	/* The chosen head vanished (another CPU took it): prev, if runnable,
	 * keeps the CPU without comparing it with the other domain's head. */
	if (pctx || !take(second, ks, now))
		goto keep_prev;
	return;
keep_prev:
	if (!pctx)
		return;
	/* prev wins: it keeps the CPU with a fresh slice; no enqueue follows. */
	pctx->next_ready = 0;
	advance_vtime(pdom, kp);
	if (pdom < TIX_NR_DOMS)
		dom_served[pdom] = now;
	scx_bpf_task_set_slice(prev, slice_ns);
	__sync_fetch_and_add(&nr_prev_kept, 1);
	count_win(prev, vp);
}

void BPF_STRUCT_OPS(tix_running, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_ctx(p);

	if (!tctx)
		return;
	unqueue(tctx);
	tctx->started_at = bpf_ktime_get_ns();
	tctx->exec_at = p->se.sum_exec_runtime;
	count_win(p, tctx->value);
}

void BPF_STRUCT_OPS(tix_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup_ctx(p);

	if (tctx)
		charge(p, tctx, bpf_ktime_get_ns());
}

void BPF_STRUCT_OPS(tix_runnable, struct task_struct *p, u64 enq_flags)
{
	u32 tgid = p->tgid;
	struct tix_proc_state *ps = proc_state_get(tgid);
	u32 tickets;
	s64 *rt;

	if (!ps)
		return;
	if (__sync_fetch_and_add(&ps->nr_runnable, 1) == 0) {
		/* First runnable thread: the process enters the user's sum. */
		tickets = tickets_of(p);
		ps->counted = tickets;
		ps->uid = task_uid(p);
		rt = user_rt_get(ps->uid);
		if (rt)
			__sync_fetch_and_add(rt, (s64)tickets);
	}
}

void BPF_STRUCT_OPS(tix_quiescent, struct task_struct *p, u64 deq_flags)
{
	u32 tgid = p->tgid, uid;
	struct tix_proc_state *ps = bpf_map_lookup_elem(&proc_state, &tgid);
	struct task_ctx *tctx = lookup_ctx(p);
	s64 *rt;

	if (tctx)
		tctx->next_ready = 0;
	if (!ps || !ps->nr_runnable)
		return;
	if (__sync_fetch_and_sub(&ps->nr_runnable, 1) == 1) {
		uid = ps->uid;
		rt = bpf_map_lookup_elem(&user_rt, &uid);
		if (rt)
			__sync_fetch_and_sub(rt, (s64)ps->counted);
	}
}

s32 BPF_STRUCT_OPS(tix_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct tix_task_stat st = {};
	struct tix_proc_tickets *t;
	struct task_ctx *tctx;
	u32 pid = p->pid, tgid = p->tgid;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	st.tgid = tgid;
	st.uid = task_uid(p);
	bpf_map_update_elem(&task_stats, &pid, &st, BPF_ANY);

	/* A new process (not a thread) inherits its parent's tickets. At fork
	 * time the parent is the current task. */
	if (args->fork && cur->tgid != tgid) {
		t = proc_tickets_of(cur);
		if (t) {
			struct tix_proc_tickets v = { .tickets = t->tickets };

			bpf_map_update_elem(&proc_tickets, &tgid, &v, BPF_ANY);
		}
	}
	return 0;
}

void BPF_STRUCT_OPS(tix_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	u32 pid = p->pid, tgid = p->tgid;

	bpf_map_delete_elem(&task_stats, &pid);
	if (pid == tgid) {
		/* The leader exits: the pid may be reused by another process. */
		bpf_map_delete_elem(&proc_tickets, &tgid);
		bpf_map_delete_elem(&proc_state, &tgid);
	}
}

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
	       .dequeue		= (void *)tix_dequeue,
	       .dispatch	= (void *)tix_dispatch,
	       .runnable	= (void *)tix_runnable,
	       .running		= (void *)tix_running,
	       .stopping	= (void *)tix_stopping,
	       .quiescent	= (void *)tix_quiescent,
	       .init_task	= (void *)tix_init_task,
	       .exit_task	= (void *)tix_exit_task,
	       .init		= (void *)tix_init,
	       .exit		= (void *)tix_exit,
	       .timeout_ms	= 10000,
	       .name		= "tix");
