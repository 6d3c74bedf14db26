/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_wvtime: the smallest weighted virtual-time scheduler, the peer that
 * vm/bench measures scx_tix's callback costs and latencies against.
 *
 * One shared DSQ ordered by virtual time. A task's virtual time grows by the
 * time it ran scaled by 100/weight (p->scx.weight carries nice); a waking
 * task starts no more than one slice behind the latest virtual time a CPU
 * started, so sleeping earns at most a slice. An idle CPU found at wake-up
 * runs the task at once. Nothing else: no users, processes, tickets,
 * compensation, affinity-aware queues or preemption.
 *
 * Approximations (named): a task cut short by a preemption has its slice
 * zeroed by the kernel and is charged a full slice; the latest virtual time
 * is a plain global written by every CPU (a racing CPU may leave the smaller
 * of two nearby values).
 */
#include <scx/common.bpf.h>

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#define WVT_DSQ 0

const volatile u64 slice_ns = 3500000;

static u64 vtime_now;

static bool before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

s32 BPF_STRUCT_OPS(wvt_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool idle = false;
	s32 cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &idle);

	if (idle)
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	return cpu;
}

void BPF_STRUCT_OPS(wvt_enqueue, struct task_struct *p, u64 enq_flags)
{
	u64 vt = p->scx.dsq_vtime, floor = vtime_now - slice_ns;

	if (before(vt, floor))
		vt = floor;
	scx_bpf_dsq_insert_vtime(p, WVT_DSQ, slice_ns, vt, enq_flags);
}

void BPF_STRUCT_OPS(wvt_dispatch, s32 cpu, struct task_struct *prev)
{
	scx_bpf_dsq_move_to_local(WVT_DSQ, 0);
}

void BPF_STRUCT_OPS(wvt_running, struct task_struct *p)
{
	if (before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
}

void BPF_STRUCT_OPS(wvt_stopping, struct task_struct *p, bool runnable)
{
	u64 used = slice_ns - (p->scx.slice < slice_ns ? p->scx.slice : slice_ns);

	p->scx.dsq_vtime += used * 100 / (p->scx.weight ? p->scx.weight : 1);
}

void BPF_STRUCT_OPS(wvt_enable, struct task_struct *p)
{
	p->scx.dsq_vtime = vtime_now;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(wvt_init)
{
	return scx_bpf_create_dsq(WVT_DSQ, -1);
}

void BPF_STRUCT_OPS(wvt_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(wvt_ops,
	       .select_cpu	= (void *)wvt_select_cpu,
	       .enqueue		= (void *)wvt_enqueue,
	       .dispatch	= (void *)wvt_dispatch,
	       .running		= (void *)wvt_running,
	       .stopping	= (void *)wvt_stopping,
	       .enable		= (void *)wvt_enable,
	       .init		= (void *)wvt_init,
	       .exit		= (void *)wvt_exit,
	       .name		= "wvtime");
