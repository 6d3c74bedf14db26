/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ras.bpf.h - memory write tracing done by the kernel alone (seed 002 §1,
 * "MAT", whose author asked for exactly this) and the Race-Averse Scheduler
 * (§2, scx_tix --policy ras) that feeds on its counts.
 *
 * Tracing. The daemon write-protects a traced process's pages through
 * soft-dirty (writing 4 to /proc/PID/clear_refs) once per period; the first
 * write to each page after that faults, and x86's page_fault_user tracepoint
 * counts it here for the writing thread when its process is traced and the
 * address lies in the traced range. A count is therefore a write per page
 * per period, not per store: the seed's application-side mprotect before
 * every store counted each store, at the price of a fault, a signal and two
 * system calls each. Write faults the process would take anyway (first
 * touch, copy-on-write) are writes too and count.
 *
 * RAS. One FIFO, as the seed's list: a task's key is the next number of a
 * global counter, taken whenever it is queued (woken, or its slice over), so
 * the per-CPU and shared DSQs, ordered by key, are together that list; no
 * wake-up preemption (a woken task joins the tail). A slice (eq. 2-2) is
 * computed from the task's writes and the runnable tasks' (ras_sum, ras_nr)
 * when its last slice has run out; a woken task with slice left keeps it,
 * as the seed's time_slice did.
 *
 * Approximations (named): Σ runs over every runnable task of scx_tix on all
 * CPUs (the seed's ran over one CPU's queue, which it never balanced); a
 * task's count enters the sum when it becomes runnable and leaves it when it
 * sleeps, and a write it makes while runnable is added at once; a traced
 * process stopped while its threads are runnable leaves their counts in the
 * sum until they sleep.
 */
#ifndef __TIX_RAS_BPF_H
#define __TIX_RAS_BPF_H

/* Runnable tasks, and the writes they had counted when they became runnable
 * plus those made since. */
s64 ras_sum;
s64 ras_nr;
/* The FIFO's last position. */
u64 ras_tail;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TIX_MAX_TRACED);
	__type(key, u32);
	__type(value, struct tix_trace);
} traced SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TIX_MAX_TASKS);
	__type(key, u32);
	__type(value, struct tix_wcount);
} wcounts SEC(".maps");

/* p's count record, if its process is the one the record was made for (a
 * tid reused by another process starts from nothing). */
static struct tix_wcount *wcount_of(struct task_struct *p)
{
	u32 pid = p->pid;
	struct tix_wcount *c = bpf_map_lookup_elem(&wcounts, &pid);

	return c && c->tgid == (u32)p->tgid ? c : NULL;
}

static u64 leader_start(struct task_struct *p)
{
	return BPF_CORE_READ(p, group_leader, start_boottime) / TIX_NSEC_PER_TICK;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(tix_write_fault, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	struct task_struct *p;
	struct tix_wcount fresh = {}, *c;
	struct tix_trace *t;
	struct task_ctx *tctx;
	u32 tgid, pid;

	if (!(error_code & TIX_PF_WRITE))
		return 0;
	p = bpf_get_current_task_btf();
	tgid = p->tgid;
	t = bpf_map_lookup_elem(&traced, &tgid);
	if (!t || address < t->lo || address >= t->hi)
		return 0;
	if (t->start && leader_start(p) != t->start)
		return 0;
	c = wcount_of(p);
	if (!c) {
		pid = p->pid;
		fresh.tgid = tgid;
		if (bpf_map_update_elem(&wcounts, &pid, &fresh, BPF_ANY)) {
			lost(TIX_LOST_WCOUNT);
			return 0;
		}
		c = bpf_map_lookup_elem(&wcounts, &pid);
		if (!c)
			return 0;
	}
	__sync_fetch_and_add(&c->writes, 1);
	/* The writer runs, so it is runnable: its sum share grows with it. */
	tctx = lookup_ctx(p);
	if (tctx && tctx->ras_in) {
		tctx->ras_counted++;
		__sync_fetch_and_add(&ras_sum, 1);
	}
	return 0;
}

/* ops.runnable / ops.quiescent: p's writes in the queue's sum. */
static void ras_enter(struct task_struct *p, struct task_ctx *tctx)
{
	struct tix_wcount *c;

	if (tctx->ras_in)
		return;
	c = wcount_of(p);
	tctx->ras_counted = c ? c->writes : 0;
	tctx->ras_in = 1;
	__sync_fetch_and_add(&ras_sum, (s64)tctx->ras_counted);
	__sync_fetch_and_add(&ras_nr, 1);
}

static void ras_leave(struct task_ctx *tctx)
{
	if (!tctx->ras_in)
		return;
	tctx->ras_in = 0;
	__sync_fetch_and_sub(&ras_sum, (s64)tctx->ras_counted);
	__sync_fetch_and_sub(&ras_nr, 1);
	tctx->ras_counted = 0;
}

/* The tail of the FIFO. */
static u64 ras_key(void)
{
	return __sync_fetch_and_add(&ras_tail, 1) + 1;
}

/* A fresh slice by eqs. 2-1 and 2-2, recorded for tix trace get. A task not
 * yet counted as runnable (select_cpu runs before ops.runnable) is counted
 * here as it will be. */
static u64 ras_new_slice(struct task_struct *p, struct task_ctx *tctx)
{
	struct tix_wcount *c = wcount_of(p);
	s64 sum = ras_sum, nr = ras_nr;
	u64 wc = c ? c->writes : 0, prob, slice;

	if (!tctx->ras_in) {
		sum += wc;
		nr += 1;
	}
	prob = tix_ras_race_prob(wc, sum > 0 ? sum : 0, nr > 0 ? nr : 0);
	slice = tix_ras_slice_ns(prob);
	if (c) {
		c->race_prob = prob;
		c->slice_ns = slice;
	}
	tctx->ras_sliced = 1;
	return slice;
}

/* The slice p is queued with: the policy's fixed one, or under RAS what is
 * left of its slice (a wake-up) or a fresh one (its slice ran out). */
static u64 task_slice(struct task_struct *p, struct task_ctx *tctx)
{
	if (policy != TIX_POLICY_RAS || !tctx)
		return slice_ns;
	if (tctx->ras_sliced && p->scx.slice && p->scx.slice <= TIX_RAS_MAX_SLICE_NS)
		return p->scx.slice;
	return ras_new_slice(p, tctx);
}

#endif
