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
	u64 start = cpu_start[c];

	return tix_sat_add(cpu_key[c], one_run(cpu_value[c], now > start ? now - start : 0));
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
		kc = key_on_cpu(tctx, key, dom, c);
		if (pos > kc && (s32)c == here)
			here_ok = true;
		if (pos > kc && pos - kc > gap) {
			gap = pos - kc;
			best = c;
		}
	}
	if (here_ok)
		best = here;
	if (best >= 0 && best < TIX_MAX_CPUS) {
		__sync_fetch_and_add(&nr_preempt_kicks, 1);
		cpu_kick_key[best] = key ? key : 1;
		scx_bpf_kick_cpu(best, SCX_KICK_PREEMPT);
	}
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
	if (cpu_position(tc, now) <= key_on_cpu(tctx, tix_sat_add(key, tctx->wake_credit), dom, tc))
		return false;
	/* What ops.dispatch on tc would weigh p against (tix_dispatch). */
	look(tc, &w);
	if (starved(tc, &w, now) < TIX_NR_DOMS)
		return false;
	if ((w.hl && w.kl < kc) || (w.hg && w.kg < kc))
		return false;
	__sync_fetch_and_add(&nr_preempt_kicks, 1);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, task_slice(p, tctx), enq_flags | SCX_ENQ_PREEMPT);
	return true;
}

#endif
