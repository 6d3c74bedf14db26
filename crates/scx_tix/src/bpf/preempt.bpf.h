/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * preempt.bpf.h - wake-up preemption: where each runner will stand at its
 * slice end, and which CPU a woken task's key displaces (see Wake-up
 * preemption in main.bpf.c's header). Included by main.bpf.c.
 */
#ifndef __TIX_PREEMPT_BPF_H
#define __TIX_PREEMPT_BPF_H

/*
 * Where the task running on cpu will stand when its slice ends: its key
 * plus the expected cost (E at its mean) of a full slice, or of the time
 * run so far if longer (a late tick). Not its own draw: ranking victims
 * by it would cut short exactly the runs that drew a large E, and the cut
 * task would start again with a fresh one, escaping the draw (light tasks,
 * furthest ahead most often, gained that way on 4 vCPUs).
 */
static u64 cpu_position(u32 c, u64 now)
{
	u64 start = cpu_start[c], key = cpu_key[c], t;
	u32 d = cpu_dom[c];

	/* Wake level: a runner is weighed as if it started no earlier than
	 * its frame's T. A woken task keyed at T (its credit aside) then cuts
	 * a runner that lags T, which would otherwise keep the CPU to its
	 * slice end; the woken key, level with that runner (level_lag), wins
	 * the decision the cut brings. */
	if (wake_level && d && d <= TIX_NR_DOMS) {
		t = vtime_now(d - 1);
		if (t > key)
			key = t;
	}
	return tix_sat_add(key, one_run(cpu_value[c], now > start ? now - start : 0));
}

/* A woken key (p's, as c weighs it) as c's decision at its runner's slice
 * end would weigh it against the runner: with p's pinned lead if p is one
 * of c's own tasks and the runner is not. */
static u64 against_runner(struct task_ctx *tctx, u64 key, u32 dom, u32 c)
{
	if (c < TIX_MAX_CPUS && cpu_dom[c] == c + 1)
		return key;
	return lead_on_cpu(tctx, key, dom, c);
}

/* Preempt CPU c's runner for the woken key: c's next decision weighs the
 * cut runner behind it (tix_dispatch). */
static void kick_for(u32 c, u64 key)
{
	if (c >= TIX_MAX_CPUS)
		return;
	__sync_fetch_and_add(&nr_preempt_kicks, 1);
	cpu_kick_key[c] = key ? key : 1;
	scx_bpf_kick_cpu(c, SCX_KICK_PREEMPT);
}

/*
 * A woken p (key) with no idle CPU: kick the CPU it may use whose runner is
 * furthest ahead of it, if any is ahead — or this CPU, where the wake-up
 * runs, if its runner is ahead too: a local preemption needs no IPI, and
 * the waker's data is warm here (2 vCPUs, cyclictest beside 2 hogs:
 * lottery p99 1.75x the default's with the furthest CPU always, 1.38x so).
 * Sync wake-ups never get here (tix_enqueue). A shared key is weighed on
 * each CPU as that CPU's decision would weigh it (key_on_cpu).
 */
__noinline int preempt_for(struct task_struct *p __arg_trusted, u64 key, u32 dom)
{
	struct task_ctx *tctx = lookup_ctx(p);
	u64 now = bpf_ktime_get_ns(), gap = 0, pos, kc;
	s32 best = -1, here = bpf_get_smp_processor_id();
	bool here_ok = false;
	u32 c;

	bpf_for(c, 0, TIX_MAX_CPUS) {
		if (c >= nr_cpus)
			break;
		if (dom != TIX_GLOBAL_DSQ && c != dom)
			continue;
		if (!cpu_value[c] || !bpf_cpumask_test_cpu(c, p->cpus_ptr))
			continue;
		pos = cpu_position(c, now);
		kc = against_runner(tctx, key_on_cpu(tctx, key, dom, c), dom, c);
		if (pos > kc && (s32)c == here)
			here_ok = true;
		if (pos > kc && pos - kc > gap) {
			gap = pos - kc;
			best = c;
		}
	}
	if (here_ok)
		best = here;
	if (best >= 0 && best < TIX_MAX_CPUS)
		kick_for(best, key);
	return 0;
}

/*
 * A woken p (key, its queue key) whose own CPU (the one it is enqueued on)
 * runs a task that will stand behind it at its slice end, when nothing
 * waiting there or in the shared DSQ stands before it and neither DSQ is
 * neglected: the decision preempt_for's kick would bring can only choose p,
 * so p goes straight to that CPU's local DSQ with SCX_ENQ_PREEMPT, which
 * cuts the runner at once. That skips the kick's irq_work and an
 * ops.dispatch on the wake-up path; the runner is charged and requeued
 * through ops.stopping and ops.enqueue as at any cut. False: take the
 * queue and preempt_for. Accepted race: another CPU may go idle between
 * ops.select_cpu, which found none, and here; p then preempts instead of
 * taking it.
 */
__noinline bool preempt_own_cpu(struct task_struct *p __arg_trusted, struct task_ctx *tctx,
				u64 key, u32 dom, u64 enq_flags)
{
	s32 tc = scx_bpf_task_cpu(p);
	struct waiting w = {};
	u64 now, kc;

	if (!tctx || tc < 0 || tc >= TIX_MAX_CPUS || (u32)tc >= nr_cpus)
		return false;
	if (dom != TIX_GLOBAL_DSQ && dom != (u32)tc)
		return false;
	if (!cpu_value[tc] || !bpf_cpumask_test_cpu(tc, p->cpus_ptr))
		return false;
	now = bpf_ktime_get_ns();
	/* As in preempt_for, the wake credit orders p but does not cut; both
	 * as tc weighs them. */
	kc = key_on_cpu(tctx, key, dom, tc);
	if (cpu_position(tc, now) <=
	    against_runner(tctx, key_on_cpu(tctx, tix_sat_add(key, tctx->wake_credit), dom, tc),
			   dom, tc))
		return false;
	/* What ops.dispatch on tc would weigh p against (tix_dispatch): its
	 * own frame's head by keys, the other with the pinned lead. */
	look(tc, &w);
	if (starved(tc, &w, now) < TIX_NR_DOMS)
		return false;
	if (dom == (u32)tc ? (w.hl && w.kl < kc) || (w.hg && w.kg < lead_on_cpu(tctx, kc, dom, tc))
			   : (w.hl && w.ll < kc) || (w.hg && w.kg < kc))
		return false;
	__sync_fetch_and_add(&nr_preempt_kicks, 1);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, task_slice(p, tctx), enq_flags | SCX_ENQ_PREEMPT);
	return true;
}

/*
 * Deferred cuts (scx_tix --wake-cut, off by default). A decision that
 * passes over a woken task W for a winner that stands only a little
 * behind it would hand W the CPU at the winner's
 * slice end, and a slice ends at a tick: 4 ms at HZ=250 however small the
 * gap (a pinned cyclictest under the lottery lost CPU 0 to a hog by a
 * median 0.1 of a run and waited the whole slice; docs/kernel-results.md,
 * "A pinned waker's lost decisions"). So the winner's run is cut when its
 * position, E at its mean, reaches W's key without W's wake credit: the
 * kick preempt_for would have sent had W woken at that instant. The cut
 * time depends on the gap and the winner's value, never on its own draw,
 * so a run that drew a large E is not cut more often (the escape
 * cpu_position's comment names), and the winner is charged what it used:
 * shares stand. The decision that chose the winner stands too; the kick
 * brings a new one, weighed as any kicked decision (the cut runner behind
 * W), where W may still lose to a task keyed before it, which then gets a
 * cut of its own. Sync wakees and RAS's never cut (tix_enqueue's may_cut).
 * Approximation (named): the position is linear in the time run, exact
 * for stride and Waldspurger's compensation; under Zepp's rules and
 * without compensation the cut lands where the linear cost says.
 * Measured (two boots, multi-threaded TCG, 2 vCPUs, 2 hogs), it lowered
 * cyclictest's pinned p99 in one boot and raised it in the other under
 * both policies, and raised the unpinned p99 in 3 of 4 cases (stride's in
 * both boots): an option, not the rule.
 * Accepted race: W may be taken by another CPU before the timer fires;
 * the kick then makes the runner yield once to a task it would have beaten
 * (its key stands), as a stale kick does.
 */
struct cut_timer {
	struct bpf_timer t;
	u64 start;		/* cpu_start of the run it cuts */
	u64 wkey;		/* the woken key it cuts for */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TIX_MAX_CPUS);
	__type(key, u32);
	__type(value, struct cut_timer);
} cut_timers SEC(".maps");

#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC 1
#endif

static int cut_fire(void *map, int *key, struct cut_timer *ct)
{
	u32 c = *key;

	if (c >= TIX_MAX_CPUS || c >= nr_cpus)
		return 0;
	/* That run has ended: its decision is made. */
	if (cpu_start[c] != ct->start || !cpu_value[c])
		return 0;
	kick_for(c, ct->wkey);
	return 0;
}

static int cut_timer_init(u32 c)
{
	struct cut_timer *ct = bpf_map_lookup_elem(&cut_timers, &c);
	int err;

	if (!ct)
		return -ENOENT;
	err = bpf_timer_init(&ct->t, &cut_timers, CLOCK_MONOTONIC);
	if (err)
		return err;
	return bpf_timer_set_callback(&ct->t, cut_fire);
}

/*
 * The run (key, value) that cpu c's last decision started passed over the
 * woken key cpu_waiter_key[c]: arm c's timer for the time the run's
 * position, E at its mean, takes to reach it, if that is within a slice.
 */
__noinline int cut_for_waiter(u32 c, u64 key, u64 value, u64 now)
{
	struct cut_timer *ct;
	u64 w, full, delay;

	if (c >= TIX_MAX_CPUS || !wake_cut)
		return 0;
	w = cpu_waiter_key[c];
	if (w <= key)
		return 0;
	full = one_run(value, 0);
	if (!full || w - key >= full)
		return 0;
	delay = tix_sat64(tix_div128(tix_mul64(w - key, slice_ns), full));
	if (delay < TIX_WAKE_CUT_MIN_NS)
		delay = TIX_WAKE_CUT_MIN_NS;
	ct = bpf_map_lookup_elem(&cut_timers, &c);
	if (!ct)
		return 0;
	ct->start = now;
	ct->wkey = w;
	bpf_timer_start(&ct->t, delay, 0);
	return 0;
}

/* The woken key, as cpu weighs it and without its wake credit, of the head
 * of one DSQ that cpu's decision did not pick (0: not a woken task). */
static u64 woken_head(s32 cpu, u64 dsq)
{
	struct task_struct *p = __COMPAT_scx_bpf_dsq_peek(dsq);
	struct task_ctx *tctx;

	if (!p || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		return 0;
	tctx = lookup_ctx(p);
	if (!tctx || !tctx->woken)
		return 0;
	return key_on_cpu(tctx, tix_sat_add(p->scx.dsq_vtime, tctx->wake_credit),
			  dsq == TIX_GLOBAL_DSQ ? TIX_GLOBAL_DSQ : (u32)cpu, cpu);
}

/* ops.dispatch on cpu picked pick (0 prev, 1 its DSQ's head, 2 the shared
 * one): note the least woken key it passed over for the run it starts. */
static void note_waiter(u32 cpu, int pick, struct waiting *w)
{
	u64 k = 0, kg = 0;

	if (cpu >= TIX_MAX_CPUS)
		return;
	cpu_waiter_key[cpu] = 0;
	if (!wake_cut || policy == TIX_POLICY_RAS || pick < 0)
		return;
	if (pick != 1 && w->hl)
		k = woken_head(cpu, cpu);
	if (pick != 2 && w->hg)
		kg = woken_head(cpu, TIX_GLOBAL_DSQ);
	if (kg && (!k || kg < k))
		k = kg;
	cpu_waiter_key[cpu] = k;
}

#endif
