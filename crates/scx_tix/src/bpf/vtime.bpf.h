/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vtime.bpf.h - keys and frames (tix_core::vtime, tix_core::race): what a
 * run costs under the policy and compensation rule, each frame's virtual
 * time and the CPUs serving it, and a task's next key with its lag and lead
 * bounds. Included by main.bpf.c after its maps; see Frames in its header.
 */
#ifndef __TIX_VTIME_BPF_H
#define __TIX_VTIME_BPF_H

/* What a run of len ns costs a task of this value, in keys, E at its mean,
 * never less than a full slice: one of its runs for the lag bank (len its
 * mean run), or a runner's cost at its slice end for preemption. */
static u64 one_run(u64 value, u64 len)
{
	if (len < slice_ns)
		len = slice_ns;
	if (policy == TIX_POLICY_STRIDE)
		return tix_bpf_pass_delta(len, value);
	return tix_bpf_race_cost(1ULL << 16, value, len, slice_ns, compensate);
}

/* The cost of running used ns at value with the run's E. */
static u64 run_cost(u64 e, u64 value, u64 used)
{
	if (policy == TIX_POLICY_STRIDE)
		return tix_bpf_pass_delta(used, value);
	if (!compensate)
		/* Charged whole at the win (start_run): every run costs a slice. */
		return 0;
	return tix_bpf_race_cost(e, value, used, slice_ns, compensate);
}

/* ARRAY_ELEM_PTR: in a global function (draw_key) dom is any u32, and
 * clang checks the bound on a copy of the index it does not then use. */
static u64 vtime_now(u32 dom)
{
	u64 *t = ARRAY_ELEM_PTR(dom_vtime, dom, TIX_NR_DOMS);

	return t ? *(volatile u64 *)t : 0;
}

static void advance_vtime(u32 dom, u64 key)
{
	u64 *t = ARRAY_ELEM_PTR(dom_vtime, dom, TIX_NR_DOMS);

	/* Plain store, monotone check: two CPUs racing leave the larger or the
	 * smaller of two nearby keys; either is a valid "now". */
	if (t && (s64)(key - *(volatile u64 *)t) > 0)
		*t = key;
}

/*
 * Draw p's next key (tix_core::vtime::next_key). requeue: p left a CPU
 * still runnable and may keep up to TIX_LAG_SLICES of lag; a waking task
 * up to wake_slices of its own slices (tix_core::vtime::wake_lag) and no
 * more than the frame's time gains in TIX_WAKE_FRAME_SLICES slices
 * (wake_cap). The
 * lead over T is capped at what T gains in about starve_ns of one CPU's
 * service (tix_lead_cap), so a task whose fair wait would
 * exceed starve_ns (a share below slice/starve_ns) waits about that long
 * instead and the watchdog never sees it stall. Only draws beyond the cap
 * are affected (named approximation); a capped task forgets its excess.
 */
/* The runnable value (at least value's) and the CPUs serving frame dom:
 * what the frame's time advances by, for the lead and wake caps. */
static void frame_load(u64 value, u32 dom, u64 *v, u64 *n)
{
	s64 vs = *(volatile s64 *)&vsum, cnt = 0, *c;

	*v = vs > (s64)value ? (u64)vs : value;
	/* ARRAY_ELEM_PTR: the bound check clang would move off the index. */
	c = ARRAY_ELEM_PTR(dom_running, dom, TIX_NR_DOMS);
	if (c)
		cnt = *(volatile s64 *)c;
	*n = cnt > 0 ? (u64)cnt : 0;
}

static u64 lead_cap_of(u64 v, u64 n)
{
	return tix_lead_cap(policy == TIX_POLICY_STRIDE, starve_ns, slice_ns, v, n);
}

static u64 lead_cap_now(u64 value, u32 dom)
{
	u64 v, n;

	frame_load(value, dom, &v, &n);
	return lead_cap_of(v, n);
}

/* Count cpu's run in frame dom (TIX_NR_DOMS: cpu runs nothing of ours).
 * Only cpu itself writes its record; the counts are atomics. */
static void set_serving(u32 c, u32 dom)
{
	s64 *cnt;
	u32 old;

	if (c >= TIX_MAX_CPUS)
		return;
	old = cpu_dom[c];
	if (old == dom + 1)
		return;
	cnt = old ? ARRAY_ELEM_PTR(dom_running, old - 1, TIX_NR_DOMS) : NULL;
	if (cnt)
		__sync_fetch_and_sub(cnt, 1);
	cnt = ARRAY_ELEM_PTR(dom_running, dom, TIX_NR_DOMS);
	if (cnt) {
		__sync_fetch_and_add(cnt, 1);
		cpu_dom[c] = dom + 1;
	} else {
		cpu_dom[c] = 0;
	}
}

/*
 * Wake level (scx_tix --wake-level): how far frame dom's T (t) stands
 * ahead of the least key a run in that frame started at. A woken task may
 * lag T by that much (up to the wake cap), level with the runner furthest
 * behind, as well as by its own wake credit. Why: runners that kept a CPU
 * while others' draws moved T on lag it by several of their runs (traced:
 * 2.7-4.8 behind at un-kicked wake-ups of cyclictest beside hogs), and a
 * waker floored near T lost the slice ends of such a runner one after
 * another. Read: each CPU's runner (one word per CPU) and the head of
 * the DSQ the task joins (a peek); a task waiting in another DSQ is passed
 * over (named approximation: a shared waker is not weighed against a CPU's
 * pinned tasks). The waker still never stands ahead of its own key, its
 * service, so it gains an earlier turn, not more CPU time.
 */
static u64 level_lag(u32 dom, u64 t)
{
	struct task_struct *h = __COMPAT_scx_bpf_dsq_peek(dom);
	u64 least = t;
	u32 c;

	/* The head of the DSQ the task joins: the least key waiting there. */
	if (h && h->scx.dsq_vtime < least)
		least = h->scx.dsq_vtime;

	bpf_for(c, 0, TIX_MAX_CPUS) {
		if (c >= nr_cpus)
			break;
		if (cpu_dom[c] != dom + 1 || !cpu_value[c])
			continue;
		if (cpu_key[c] < least)
			least = cpu_key[c];
	}
	return tix_level_lag(t, least);
}

/* A global function: the verifier checks it once per program and its
 * caller goes on from one return, where a static draw_key's every exit
 * path (value_of's walks have many) was carried into the rest of the
 * caller. Its pointer arguments may be NULL to the verifier. */
__noinline u64 draw_key(struct task_struct *p __arg_trusted, struct task_ctx *tctx, u32 dom,
			bool requeue)
{
	u64 value, t = vtime_now(dom), lag = 0, cap, key, plain, v, n, slept, level;

	if (!tctx)
		return t;
	value = value_of(p, tctx);

	if (tctx->vcounted) {
		__sync_fetch_and_add(&vsum, (s64)value - (s64)tctx->vcounted);
		tctx->vcounted = value;
	}
	/* One snapshot of the frame's load for both caps below. */
	frame_load(value, dom, &v, &n);
	if (requeue)
		lag = tix_lag_bound(one_run(value, tctx->run_avg));
	else {
		/* The wake rate R counts a sleep R times over: the credit
		 * reaches its cap (wake_slices) R times sooner; tix_wake_lag
		 * clamps the sleep to the cap's span. Read per draw, so it
		 * follows the policy when tix policy switches it. */
		slept = tctx->slept_at ? bpf_ktime_get_ns() - tctx->slept_at : 0;
		slept = tix_rated_sleep(slept,
					tix_wake_rate(policy == TIX_POLICY_STRIDE, wake_rate));
		lag = tix_wake_lag(one_run(value, 0), wake_slices, slept, slice_ns);
		if (wake_level && dom < TIX_NR_DOMS) {
			level = level_lag(dom, t);
			if (level > lag)
				lag = level;
		}
		/* tix_core::vtime::wake_cap: the most wake lag in frame dom now. */
		cap = tix_wake_cap(policy == TIX_POLICY_STRIDE, slice_ns, v, n);
		if (lag > cap)
			lag = cap;
	}
	tctx->slept_at = 0;
	/* What key_on_cpu lets the key lag a deciding CPU's T by: the lag
	 * this draw allowed against the shared T, or the bank for a kernel
	 * thread (kernel_wake moves a woken one ahead of the queue's heads,
	 * which a floor at the wake lag would undo). */
	tctx->floor_lag = !requeue && (p->flags & TIX_PF_KTHREAD) ?
			  tix_lag_bound(one_run(value, tctx->run_avg)) : lag;
	if (policy == TIX_POLICY_STRIDE) {
		key = tix_next_pass(tctx->own, t, lag, tctx->pending);
		plain = tix_next_pass(tctx->own, t, 0, tctx->pending);
	} else {
		key = tix_next_key(tctx->own, t, lag, tctx->pending);
		plain = tix_next_key(tctx->own, t, 0, tctx->pending);
	}
	/* What the wake lag moved the key by: not counted for preemption. */
	tctx->wake_credit = !requeue && plain > key ? plain - key : 0;
	tctx->pending = 0;
	tctx->value = value;
	/* RAS keeps the sums above but orders by arrival: the FIFO's tail. */
	if (policy == TIX_POLICY_RAS)
		return ras_key();
	return tix_cap_lead(key, t, lead_cap_of(v, n));
}

/*
 * prev's next key when its slice ended with nothing waiting that could run
 * on its CPU: no decision was made, so the key may lag the frame's time by
 * one of its runs, not by the bank of TIX_LAG_SLICES. Why: tasks that each
 * keep a CPU uncontested (2 hogs on 2 CPUs) draw E apart in a random walk
 * though they get the same CPU time; one fell ~16 of its slices behind a
 * task woken on its CPU (keyed near the time), which then lost every
 * decision there for up to 87 ms (pinned 1 ms-every-10 ms task,
 * multi-threaded TCG, sched_switch and key traces). The bank is for tasks
 * that lose decisions (an infeasible weight beside others waiting); here
 * none is lost, so none is owed.
 */
static u64 uncontested_key(struct task_ctx *tctx, u64 key, u32 dom)
{
	u64 t = vtime_now(dom), lag = one_run(tctx->value, tctx->run_avg);

	if (policy == TIX_POLICY_RAS)
		return key;
	if (policy == TIX_POLICY_STRIDE)
		return tix_next_pass(key, t, lag, 0);
	return tix_next_key(key, t, lag, 0);
}

/*
 * A key drawn in one frame, kept while its task moves to another DSQ
 * (affinity change while waiting): held within the new frame's lag and lead
 * cap. Frames' times drift apart (a CPU of light tasks runs its time fast);
 * a key kept as is could wait for a slow frame to catch up, past the
 * watchdog (stress-ng's affinity workers were stalled 11.7 s so), or
 * monopolise a CPU whose time is far ahead.
 */
__noinline u64 reframe(struct task_ctx *tctx, u64 key, u32 dom)
{
	u64 t = vtime_now(dom);

	if (!tctx)
		return key;

	key = tix_next_key(key, t, tix_lag_bound(one_run(tctx->value, tctx->run_avg)), 0);
	return tix_cap_lead(key, t, lead_cap_now(tctx->value, dom));
}

/*
 * A shared task's key as CPU c weighs it (model_host.c's on_cpu): no
 * further behind c's T than its last draw let it lag the shared T
 * (floor_lag: the bank of TIX_LAG_SLICES of its runs for a task that
 * stayed runnable, its wake lag for one that woke), and a run c starts
 * for it starts there. Why: a shared key is drawn from the shared T,
 * which moves only with shared decisions; a CPU whose own tasks ran while
 * the shared frame stood still (a hog pinned to CPU 0 alone, CPU 1 idle,
 * for 16 s) has a T far ahead of it, and shared tasks keyed there won
 * every decision on that CPU until they caught up: the pinned hog got
 * .0239 (stride) and .1419 (lottery) of the hogs' time over 4 s beside two
 * new unpinned hogs, .3333 due, and ran at the starvation guards' serves.
 * The lift (lift_shared_time) covers that only once every CPU's T has
 * passed the shared one, and even then trails by a guard look (62.5 ms):
 * a waker pinned to a CPU beside its hog (cyclictest) waited 20-40 ms
 * behind each short-lived process a shell forked, 30 times in 8 s, when
 * the floor was the bank for every task. The wake lag is what a waking
 * task may keep against any frame, so a waker pinned to c and a shared
 * one weighed on c compete as equals. Where every CPU runs shared work,
 * c's T is at or below the shared T and the floor rarely binds. Named
 * approximation: the shared DSQ is ordered by raw keys, so the shared task
 * c weighs is the first it may run there, not the least of the floored
 * keys. A key of a CPU's own DSQ (dom) is c's already: returned as is.
 */
static u64 key_on_cpu(struct task_ctx *tctx, u64 key, u32 dom, u32 c)
{
	if (!tctx || dom != TIX_GLOBAL_DSQ || policy == TIX_POLICY_RAS || c >= TIX_MAX_CPUS ||
	    c >= nr_cpus)
		return key;
	return tix_next_key(key, vtime_now(c), tctx->floor_lag, 0);
}

/*
 * The pinned lead (tix_core::vtime::lead_key, scx_tix --pinned-lead): at
 * CPU c's decisions a task waiting since a wake-up (woken) that only c may
 * run (frame dom == c) is weighed against shared tasks at its key less
 * pinned_lead of its own full runs. The shared task it passes over keeps
 * its key and its turn on any CPU; the pinned one has only c. Among c's
 * own tasks keys alone decide (tix_dispatch weighs each frame's least key
 * first). Woken tasks only: a pinned hog led at every slice end moved c's
 * T a lead ahead of the order it won in, the shared keys floored there
 * followed, and it kept c (host model). A fixed offset per wake-up, not a
 * rate: shares stand (model_matches_core's a_pinned_lead_keeps_every_share).
 */
static u64 lead_on_cpu(struct task_ctx *tctx, u64 key, u32 dom, u32 c)
{
	if (!tctx || !tctx->woken || dom != c || !pinned_lead || policy == TIX_POLICY_RAS)
		return key;
	return tix_lead_key(key, one_run(tctx->value ? tctx->value : 1, 0), pinned_lead);
}

#endif
