/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * model_host.c - a host model of scx_tix on N CPUs, driven by tests with the
 * events main.bpf.c sees: a task wakes (ops.enqueue, its wake lag), a CPU's slice
 * ends with its task still runnable (ops.dispatch with prev: prev's next key
 * is drawn with lag and compared with the queue, prev winning ties), a task
 * leaves a CPU (ops.stopping: blocks, or is requeued with lag), an empty CPU
 * takes the smallest key it may run (equal keys in insertion order, as in a
 * vtime DSQ), a task woken onto an idle CPU runs there at once (decides
 * nothing). A task starting a run makes its key its own and draws its run's
 * E; a decision moves the frames' times to its key. Uses rules.h's functions
 * exactly as main.bpf.c does; one queue with affinity masks stands for the
 * shared and per-CPU DSQs (keys are comparable across them, which is the
 * point); floors and lead caps come from the frames main.bpf.c uses.
 */
#define TIX_RULES_BOUNDED 1
#include "rules.h"

#define TIX_M_MAX 64
#define TIX_M_CPUS 64

struct tix_model {
	u64 value[TIX_M_MAX];
	u64 own[TIX_M_MAX];
	u64 pending[TIX_M_MAX];
	u64 e[TIX_M_MAX];
	u64 run_avg[TIX_M_MAX];
	u64 key[TIX_M_MAX];
	u64 seq[TIX_M_MAX];
	u64 floor_lag[TIX_M_MAX];
	u64 cpus[TIX_M_MAX];
	int queued[TIX_M_MAX];
	int woken[TIX_M_MAX];
	int running[TIX_M_CPUS];
	int runnable[TIX_M_MAX];
	int kernel[TIX_M_MAX];
	u64 vt[TIX_M_CPUS + 1];
	u64 starve_ns;
	u64 seqno;
	u64 slice_ns;
	int stride;
	int compensate;
	int ncpus;
	int from_now;
	u64 wake_slices;
	u64 wake_rate;
	u64 slept_ns;
	int wake_frame;
	int uncontested;
	int floor;
	u64 pinned_lead;
	int wake_level;
	int keep_lag;
	u64 block_vt[TIX_M_MAX];
};

static struct tix_model M;

void tix_m_reset(int stride, u64 slice_ns, int compensate, int ncpus)
{
	int i;

	for (i = 0; i < TIX_M_MAX; i++) {
		M.value[i] = M.own[i] = M.pending[i] = M.e[i] = M.run_avg[i] = 0;
		M.key[i] = M.seq[i] = M.floor_lag[i] = 0;
		M.cpus[i] = ~0ULL;
		M.queued[i] = 0;
		M.woken[i] = 0;
		M.runnable[i] = 0;
		M.kernel[i] = 0;
	}
	for (i = 0; i < TIX_M_CPUS; i++)
		M.running[i] = -1;
	for (i = 0; i <= TIX_M_CPUS; i++)
		M.vt[i] = 0;
	M.seqno = 0;
	M.slice_ns = slice_ns;
	M.stride = stride;
	M.compensate = compensate;
	M.ncpus = ncpus < 1 ? 1 : ncpus > TIX_M_CPUS ? TIX_M_CPUS : ncpus;
	M.from_now = 0;
	M.starve_ns = 500000000;
	M.wake_slices = TIX_WAKE_SLICES;
	M.wake_rate = 0;
	M.slept_ns = 0;
	M.wake_frame = 1;
	M.uncontested = 1;
	M.floor = 1;
	M.pinned_lead = TIX_PINNED_LEAD;
	M.wake_level = 0;
	M.keep_lag = 0;
	for (i = 0; i < TIX_M_MAX; i++)
		M.block_vt[i] = 0;
}

/* scx_tix --wake-level: a woken task may lag T as far as the least key of
 * its frame's runners and its DSQ's head (vtime.bpf.h's level_lag). */
void tix_m_set_wake_level(int on) { M.wake_level = on; }
/* A rule main.bpf.c does not have, for a test to try: a waking task keeps
 * the lag it had when it blocked (its floor is its own key moved on by what
 * the frame's time gained while it slept, if that is lower than the time
 * less its wake credit; never below the bank). Lottery only. */
void tix_m_set_keep_lag(int on) { M.keep_lag = on; }

/* scx_tix --pinned-lead: own slices a woken task only one CPU may run leads
 * the shared tasks by at that CPU's decisions (0: keys alone, the rule
 * before). */
void tix_m_set_pinned_lead(u64 slices) { M.pinned_lead = slices; }

/* How long every waking task has slept (main.bpf.c measures it). */
void tix_m_set_slept(u64 ns) { M.slept_ns = ns; }

/* scx_tix --wake-lag: own slices of lag a waking task keeps. */
void tix_m_set_wake(u64 slices) { M.wake_slices = slices; }

/* scx_tix --wake-rate: own slices of it earned per slice slept (0, as
 * reset leaves it: the policy's own, tix_wake_rate). */
void tix_m_set_wake_rate(u64 rate) { M.wake_rate = rate; }

/* 0: an uncontested prev keeps the whole lag bank, the rule before
 * uncontested_key (for a test's comparison). */
void tix_m_set_uncontested(int on) { M.uncontested = on; }

/* 0: no wake_cap, the rule before it (for a test's comparison). */
void tix_m_set_wake_frame(int on) { M.wake_frame = on; }

void tix_m_set_starve(u64 ns) { M.starve_ns = ns; }

/* 0: a shared key is weighed as drawn on every CPU, the rule before
 * vtime.bpf.h's key_on_cpu; 2: floored by the lag bank whatever the draw,
 * its first form (for tests' comparisons). */
void tix_m_set_floor(int on) { M.floor = on; }

void tix_m_set_value(int i, u64 v) { M.value[i] = v; }
/* main.bpf.c's dom_of: one CPU's DSQ for a task allowed on one CPU, else
 * the shared one (index TIX_M_CPUS here). */
static int dom_of(int i)
{
	u64 m = M.cpus[i] & (M.ncpus >= 64 ? ~0ULL : (1ULL << M.ncpus) - 1);
	int c;

	if (m && !(m & (m - 1)))
		for (c = 0; c < M.ncpus; c++)
			if ((m >> c) & 1)
				return c;
	return TIX_M_CPUS;
}

/* The rule main.bpf.c had before its shared virtual time: every key drawn
 * from T (own = T, no lag). Kept so a test can show the checks tell the
 * two apart. */
void tix_m_set_from_now(int on) { M.from_now = on; }

/* main.bpf.c's init_task: a new task starts at the shared frame's present. */
void tix_m_spawn(int i) { M.own[i] = M.vt[TIX_M_CPUS]; }

/* main.bpf.c's one_run / run_cost / draw_key. one_run: what a run of
 * len ns costs task i, E at its mean, never less than a full slice. */
static u64 one_run(int i, u64 len)
{
	if (len < M.slice_ns)
		len = M.slice_ns;
	if (M.stride)
		return tix_pass_delta(len, M.value[i]);
	return tix_race_cost(1ULL << 16, M.value[i], len, M.slice_ns, M.compensate);
}

/* vtime.bpf.h's frame_load: the runnable value, and the CPUs running a
 * task of frame (dom_running). */
static void frame_load(int frame, u64 *vsum, u64 *serving)
{
	int j;

	*vsum = 0;
	*serving = 0;
	for (j = 0; j < TIX_M_MAX; j++)
		if (M.runnable[j])
			*vsum += M.value[j];
	for (j = 0; j < M.ncpus; j++)
		if (M.running[j] >= 0 && dom_of(M.running[j]) == frame)
			(*serving)++;
}

/* vtime.bpf.h's lead_cap_of: the lead cap of a frame's load. */
static u64 lead_cap_of(u64 vsum, u64 serving)
{
	return tix_lead_cap(M.stride, M.starve_ns, M.slice_ns, vsum, serving);
}

static u64 lead_cap(int frame)
{
	u64 vsum, serving;

	frame_load(frame, &vsum, &serving);
	return lead_cap_of(vsum, serving);
}

static u64 draw(int i, int requeue)
{
	u64 lag = requeue ? tix_lag_bound(one_run(i, M.run_avg[i]))
			  : tix_wake_lag(one_run(i, 0), M.wake_slices,
					 tix_rated_sleep(M.slept_ns, tix_wake_rate(M.stride, M.wake_rate)),
					 M.slice_ns), k;
	u64 vt = M.vt[dom_of(i)], cap, vsum, serving;

	/* One snapshot of the frame's load for both caps, as draw_key takes. */
	frame_load(dom_of(i), &vsum, &serving);
	if (!requeue && M.wake_level) {
		u64 least = vt, level;
		int c, j;

		for (c = 0; c < M.ncpus; c++) {
			j = M.running[c];
			if (j >= 0 && dom_of(j) == dom_of(i) && M.own[j] < least)
				least = M.own[j];
		}
		/* The head of its DSQ (a vtime DSQ's least key). */
		for (j = 0; j < TIX_M_MAX; j++)
			if (M.queued[j] && j != i && dom_of(j) == dom_of(i) && M.key[j] < least)
				least = M.key[j];
		level = tix_level_lag(vt, least);
		if (level > lag)
			lag = level;
	}
	/* The wake cap; M.wake_frame 0: uncapped, the rule before it. */
	if (!requeue && M.wake_frame) {
		cap = tix_wake_cap(M.stride, M.slice_ns, vsum, serving);
		if (lag > cap)
			lag = cap;
	}

	if (M.from_now) {
		M.own[i] = vt;
		lag = 0;
	}
	/* draw_key's floor_lag, which on_cpu floors a shared key by. */
	M.floor_lag[i] = !requeue && (M.kernel[i] || M.floor == 2) ?
			 tix_lag_bound(one_run(i, M.run_avg[i])) : lag;

	if (!requeue && M.keep_lag && !M.stride) {
		/* tix_m_set_keep_lag: own + what T gained while it slept. */
		u64 dt = vt > M.block_vt[i] ? vt - M.block_vt[i] : 0;
		u64 keep = M.own[i] + dt, fl = vt > lag ? vt - lag : 0;
		u64 bank = tix_lag_bound(one_run(i, M.run_avg[i]));
		u64 lo = vt > bank ? vt - bank : 0;

		if (keep < fl)
			fl = keep;
		if (fl < lo)
			fl = lo;
		/* fl <= vt: the lower of two floors at or below it, or lo. */
		lag = vt - fl;
	}
	if (M.stride)
		k = tix_next_pass(M.own[i], vt, lag, M.pending[i]);
	else
		k = tix_next_key(M.own[i], vt, lag, M.pending[i]);
	M.pending[i] = 0;
	if (M.from_now)
		return k;
	return tix_cap_lead(k, vt, lead_cap_of(vsum, serving));
}

/*
 * Affinity change. A queued task whose DSQ changes keeps its key but is
 * brought into the new frame: no more than the lag behind its T, no more
 * than the lead cap ahead (main.bpf.c's reframe).
 */
void tix_m_set_cpus(int i, u64 mask)
{
	int was = dom_of(i);
	u64 t, lag;

	M.cpus[i] = mask;
	if (!M.queued[i] || dom_of(i) == was)
		return;
	t = M.vt[dom_of(i)];
	lag = tix_lag_bound(one_run(i, M.run_avg[i]));
	M.key[i] = tix_cap_lead(tix_next_key(M.key[i], t, lag, 0), t, lead_cap(dom_of(i)));
}

static void queue(int i, u64 key)
{
	M.key[i] = key;
	M.seq[i] = M.seqno++;
	M.queued[i] = 1;
}

static void advance(int frame, u64 key)
{
	if (key > M.vt[frame])
		M.vt[frame] = key;
}

/* main.bpf.c's lift_shared_time (each CPU's periodic guard look): the
 * shared time is lifted to the least CPU time once every CPU's has passed
 * it. */
void tix_m_lift(void)
{
	u64 lo = 0;
	int c;

	for (c = 0; c < M.ncpus; c++)
		if (c == 0 || M.vt[c] < lo)
			lo = M.vt[c];
	if (lo)
		advance(TIX_M_CPUS, lo);
}

/* vtime.bpf.h's lead_on_cpu: key of task i (pinned or not) as a decision
 * on its CPU weighs it against the other frame's tasks: a woken task only
 * one CPU may run pinned_lead of its own full runs early. */
static u64 lead(int i, u64 key)
{
	if (dom_of(i) == TIX_M_CPUS || !M.woken[i])
		return key;
	return tix_lead_key(key, one_run(i, 0), M.pinned_lead);
}

static void start_run(int i, int cpu, u64 key, u32 rnd, int decided)
{
	M.own[i] = key;
	M.woken[i] = 0;
	if (decided) {
		advance(dom_of(i), key);
		advance(cpu, key);
	}
	M.e[i] = M.stride ? 1ULL << 16 : tix_neg_ln_q16(rnd);
	if (!M.stride && !M.compensate)
		M.pending[i] = tix_sat_add(M.pending[i],
			tix_race_delta(M.e[i], M.value[i], 0, M.slice_ns, 0));
	M.running[cpu] = i;
}

/* vtime.bpf.h's key_on_cpu: a shared task i's key as cpu weighs it, no
 * further behind cpu's T than its last draw let it lag the shared T. */
static u64 on_cpu(int i, u64 key, int cpu)
{
	if (!M.floor || dom_of(i) != TIX_M_CPUS)
		return key;
	return tix_next_key(key, M.vt[cpu], M.floor_lag[i], 0);
}

static int before(int i, int j)
{
	return j < 0 || M.key[i] < M.key[j] || (M.key[i] == M.key[j] && M.seq[i] < M.seq[j]);
}

/* What a decision on cpu weighs (main.bpf.c's look): the head of cpu's own
 * DSQ and the first shared task cpu may run, by their queue keys, the
 * shared one as cpu weighs it (*ko, *ks: their keys so; -1: none). */
static void heads(int cpu, int *own, u64 *ko, int *shared, u64 *ks)
{
	int i;

	*own = *shared = -1;
	for (i = 0; i < TIX_M_MAX; i++) {
		if (!M.queued[i] || !((M.cpus[i] >> cpu) & 1))
			continue;
		if (dom_of(i) == TIX_M_CPUS) {
			if (before(i, *shared))
				*shared = i;
		} else if (before(i, *own)) {
			*own = i;
		}
	}
	*ko = *own >= 0 ? M.key[*own] : 0;
	*ks = *shared >= 0 ? on_cpu(*shared, M.key[*shared], cpu) : 0;
}

/* main.bpf.c's pick between cpu's own best and the shared best, each the
 * least key of its frame: the own one with its pinned lead. Ties: the
 * own one, or (tie_own 0) the shared one. */
static int own_wins(int own, u64 ko, int shared, u64 ks, int tie_own)
{
	u64 lo;

	if (own < 0)
		return 0;
	if (shared < 0)
		return 1;
	lo = lead(own, ko);
	return lo < ks || (lo == ks && tie_own);
}

/* The winner of a decision on cpu among the queued tasks (*key: its key,
 * as cpu weighs it). */
static int head_for(int cpu, u64 *key)
{
	int own, shared, w;
	u64 ko, ks;

	heads(cpu, &own, &ko, &shared, &ks);
	w = own_wins(own, ko, shared, ks, own >= 0 && shared >= 0 && M.seq[own] < M.seq[shared]);
	*key = w ? ko : ks;
	return w ? own : shared;
}

/* Any task waiting in cpu's own DSQ or the shared one (main.bpf.c's
 * w.hl || w.ag: a shared task counts whatever its affinity). */
static int queued_for(int cpu)
{
	int i, d;

	for (i = 0; i < TIX_M_MAX; i++) {
		if (!M.queued[i])
			continue;
		d = dom_of(i);
		if (d == cpu || d == TIX_M_CPUS)
			return 1;
	}
	return 0;
}

/* i is a kernel thread (main.bpf.c: PF_KTHREAD). */
void tix_m_set_kernel(int i, int on) { M.kernel[i] = on; }

/* ops.enqueue of a waking task i. */
void tix_m_wake(int i)
{
	u64 key = draw(i, 0), head = 0;
	int j, d = dom_of(i), has = 0;

	M.runnable[i] = 1;
	/* main.bpf.c's kernel_wake: ahead of its DSQ's head and the shared
	 * DSQ's. */
	if (M.kernel[i]) {
		for (j = 0; j < TIX_M_MAX; j++) {
			if (!M.queued[j] || (dom_of(j) != d && dom_of(j) != TIX_M_CPUS))
				continue;
			if (!has || M.key[j] < head)
				head = M.key[j];
			has = 1;
		}
		key = tix_kernel_wake_key(key, head, has);
	}
	queue(i, key);
	M.woken[i] = 1;
}

/* ops.select_cpu found cpu idle for a waking i: it runs there at once. */
void tix_m_wake_direct(int i, int cpu, u32 rnd)
{
	M.runnable[i] = 1;
	start_run(i, cpu, draw(i, 0), rnd, 0);
}

/* Charge the task running on cpu for used ns (ops.stopping's charge). */
static void charge(int cpu, u64 used)
{
	int i = M.running[cpu];
	u64 c;

	if (i < 0)
		return;
	M.run_avg[i] = tix_run_avg(M.run_avg[i], used);
	if (M.stride)
		c = tix_pass_delta(used, M.value[i]);
	else if (!M.compensate)
		c = 0;
	else
		c = tix_race_cost(M.e[i], M.value[i], used, M.slice_ns, M.compensate);
	M.pending[i] = tix_sat_add(M.pending[i], c);
}

/* The task on cpu leaves it after used ns: blocks, or is requeued. */
void tix_m_stop(int cpu, u64 used, int runnable)
{
	int i = M.running[cpu];

	if (i < 0)
		return;
	charge(cpu, used);
	M.running[cpu] = -1;
	M.runnable[i] = runnable;
	if (!runnable)
		M.block_vt[i] = M.vt[dom_of(i)];
	if (runnable)
		queue(i, draw(i, 1));
}

/* An empty cpu takes the smallest key it may run; -1 when none. */
int tix_m_dispatch(int cpu, u32 rnd)
{
	u64 k;
	int best = head_for(cpu, &k);

	if (best >= 0) {
		M.queued[best] = 0;
		start_run(best, cpu, k, rnd, 1);
	}
	return best;
}

/* cpu's slice ends after used ns with its task still runnable: the task on
 * cpu now (prev kept on ties), or -1 if the CPU was empty. */
int tix_m_expire(int cpu, u64 used, u32 rnd)
{
	int prev = M.running[cpu], best, own, shared, win;
	u64 kp, kpf, kb, ko, ks;

	if (prev < 0)
		return tix_m_dispatch(cpu, rnd);
	charge(cpu, used);
	kp = draw(prev, 1);
	/* Weighed as cpu weighs it; queued, prev keeps kp. */
	kpf = on_cpu(prev, kp, cpu);
	/* main.bpf.c's uncontested_key: nothing waits that could run here (the
	 * shared DSQ and cpu's own are empty): one of prev's runs of lag, not
	 * the bank. */
	if (M.uncontested && !queued_for(cpu)) {
		u64 t = M.vt[dom_of(prev)], lag = one_run(prev, M.run_avg[prev]);

		kpf = M.stride ? tix_next_pass(kpf, t, lag, 0) : tix_next_key(kpf, t, lag, 0);
	}
	/* main.bpf.c's tix_dispatch: the least key of cpu's own frame and of
	 * the shared one, prev in its own and winning ties there, then the
	 * two with the pinned lead, prev winning a tie. */
	heads(cpu, &own, &ko, &shared, &ks);
	if (dom_of(prev) == TIX_M_CPUS) {
		if (shared < 0 || kpf <= ks) {
			shared = prev;
			ks = kpf;
		}
	} else if (own < 0 || kpf <= ko) {
		own = prev;
		ko = kpf;
	}
	win = own_wins(own, ko, shared, ks, shared != prev);
	best = win ? own : shared;
	kb = win ? ko : ks;
	if (best == prev) {
		start_run(prev, cpu, kpf, rnd, 1);
		return prev;
	}
	M.queued[best] = 0;
	start_run(best, cpu, kb, rnd, 1);
	queue(prev, kp);
	return best;
}

/* Stride's pass: the key while queued, else its own key plus its cost. */
u64 tix_m_pass(int i)
{
	return M.queued[i] ? M.key[i] : tix_sat_add(M.own[i], M.pending[i]);
}
/* The virtual time of the DSQ an unrestricted task waits in. */
u64 tix_m_vt(void) { return M.vt[M.ncpus == 1 ? 0 : TIX_M_CPUS]; }
