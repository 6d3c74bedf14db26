/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroups.bpf.h - the cgroup callbacks (cgroup_init/exit/move,
 * set_weight/set_idle/set_bandwidth) that keep rights.bpf.h's cgroup
 * currencies in step with the cpu controller. Included by main.bpf.c.
 */
#ifndef __TIX_CGROUPS_BPF_H
#define __TIX_CGROUPS_BPF_H

/*
 * cgroups (cpu controller): each a currency funded by its cpu.weight (or
 * cpu.idle's weight) in its parent's. cpu.max is not enforced: the
 * cgroups that set it are counted (nr_cg_quota) and the daemon says so.
 */
s32 BPF_STRUCT_OPS(tix_cgroup_init, struct cgroup *cgrp, struct scx_cgroup_init_args *args)
{
	struct tix_cgroup c = {};
	struct cgroup *par;
	u64 id = cgroup_id(cgrp);

	c.weight = args->weight;
	c.level = cgrp->level;
	if (bpf_core_field_exists(args->sched_idle))
		c.idle = args->sched_idle;
	if (bpf_core_field_exists(args->bw_quota_us))
		c.quota = args->bw_quota_us != TIX_U64_MAX;
	/* A user's slice sits right below user.slice (level 2). */
	if (c.level == 2)
		c.slice_uid = slice_uid_of(cgrp);
	if (c.level > 0) {
		par = bpf_cgroup_ancestor(cgrp, c.level - 1);
		if (par) {
			c.parent = cgroup_id(par);
			bpf_cgroup_release(par);
		}
	}
	if (bpf_map_update_elem(&cgroups, &id, &c, BPF_NOEXIST)) {
		lost(TIX_LOST_CGROUP);
		return 0;
	}
	__sync_fetch_and_add(&nr_cgroups, 1);
	if (c.quota)
		__sync_fetch_and_add(&nr_cg_quota, 1);
	return 0;
}

/* Delete a dead cgroup's groups (their processes have all left it). */
static long drop_group(struct bpf_map *map, struct tix_group_key *k,
		       struct tix_group *g, u64 *cgid)
{
	if (k->cgid == *cgid)
		bpf_map_delete_elem(map, k);
	return 0;
}

void BPF_STRUCT_OPS(tix_cgroup_exit, struct cgroup *cgrp)
{
	u64 id = cgroup_id(cgrp);
	struct tix_cgroup *c = bpf_map_lookup_elem(&cgroups, &id);

	if (!c)
		return;
	if (c->quota)
		__sync_fetch_and_sub(&nr_cg_quota, 1);
	bpf_for_each_map_elem(&groups, drop_group, &id, 0);
	if (!bpf_map_delete_elem(&cgroups, &id))
		__sync_fetch_and_sub(&nr_cgroups, 1);
}

void BPF_STRUCT_OPS(tix_cgroup_move, struct task_struct *p, struct cgroup *from,
		    struct cgroup *to)
{
	struct task_ctx *tctx = lookup_ctx(p);

	/* Its process's amount follows at its next draw (value_of). */
	if (tctx)
		tctx->cgid = cgroup_id(to);
}

/* A cpu.weight or cpu.idle change: the cgroup's funding in its parent's
 * sum follows at once (cg_sync). */
static void cg_set(struct cgroup *cgrp, s64 weight, s32 idle)
{
	u64 id = cgroup_id(cgrp);
	struct tix_cgroup *c = bpf_map_lookup_elem(&cgroups, &id);

	if (!c)
		return;
	if (weight >= 0)
		c->weight = weight;
	if (idle >= 0)
		c->idle = idle;
	cg_sync(id);
}

void BPF_STRUCT_OPS(tix_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	cg_set(cgrp, weight, -1);
}

void BPF_STRUCT_OPS(tix_cgroup_set_idle, struct cgroup *cgrp, bool idle)
{
	cg_set(cgrp, -1, idle);
}

void BPF_STRUCT_OPS(tix_cgroup_set_bandwidth, struct cgroup *cgrp, u64 period_us,
		    u64 quota_us, u64 burst_us)
{
	u64 id = cgroup_id(cgrp);
	struct tix_cgroup *c = bpf_map_lookup_elem(&cgroups, &id);
	u32 q = quota_us != TIX_U64_MAX;

	if (!c || c->quota == q)
		return;
	c->quota = q;
	if (q)
		__sync_fetch_and_add(&nr_cg_quota, 1);
	else
		__sync_fetch_and_sub(&nr_cg_quota, 1);
}

#endif
