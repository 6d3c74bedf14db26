/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rights.bpf.h - what a runnable task is worth (tix_core::cgroup; seed 001
 * §3.3 currencies, seed 000 §3.2-4 users and process tickets): the cgroup,
 * (cgroup, user, currency) and process sums kept as tasks become runnable
 * and quiescent, and the walk that values a task at its draw. Included by
 * main.bpf.c after its tables and helpers (task_ctx, proc_state, lost);
 * "Rights" and the accepted races in main.bpf.c's header say why.
 */
#ifndef __TIX_RIGHTS_BPF_H
#define __TIX_RIGHTS_BPF_H

/* cgroups as currencies (struct tix_cgroup), and each user's processes
 * directly in a cgroup (struct tix_group): see "Rights" in the header. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TIX_MAX_CGROUPS);
	__type(key, u64);
	__type(value, struct tix_cgroup);
} cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TIX_MAX_CURRENCIES);
	__type(key, u32);
	__type(value, struct tix_currency);
} currencies SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TIX_MAX_GROUPS);
	__type(key, struct tix_group_key);
	__type(value, struct tix_group);
} groups SEC(".maps");

/* SCHED_IDLE (uapi linux/sched.h; a define, so not in BTF). */
#define TIX_SCHED_IDLE 5

/* p's weight inside its process: the kernel's weight of its nice level. */
static u64 task_weight(struct task_struct *p)
{
	return tix_nice_weight((int)p->static_prio - 120, p->policy == TIX_SCHED_IDLE);
}

static u64 base_of(u32 uid)
{
	u32 *b = bpf_map_lookup_elem(&user_base, &uid);

	return b ? *b : TIX_DEFAULT_BASE;
}

static u64 cgroup_id(struct cgroup *cgrp)
{
	return BPF_CORE_READ(cgrp, kn, id);
}

/*
 * A cgroup's funding in its parent's currency: its cpu.weight (x10 base
 * tickets), except a user's slice (systemd's user-UID.slice, where all of
 * a user's sessions and services live) whose user has a base set (lsetbase,
 * tix.toml): the user's currency is then the slice, funded by the base, so
 * Zepp's bases decide between users on systemd too.
 */
__noinline u64 tix_bpf_cg_funding(u32 weight, u32 idle, u32 slice_uid)
{
	u32 uid = slice_uid - 1, *b;

	if (slice_uid && !idle) {
		b = bpf_map_lookup_elem(&user_base, &uid);
		if (b)
			return *b;
	}
	return tix_cgroup_funding(weight, idle);
}

/* A global function (verified once on its own): inlined in the walks up
 * the tree, the lookup's branches passed the verifier's budget. */
static u64 cg_funding(struct tix_cgroup *c)
{
	return tix_bpf_cg_funding(c->weight, c->idle, c->slice_uid);
}

/* UID + 1 if the cgroup is named user-UID.slice, else 0 (tix_slice_uid). */
static u32 slice_uid_of(struct cgroup *cgrp)
{
	char name[32] = {};
	const char *kn_name = BPF_CORE_READ(cgrp, kn, name);

	if (bpf_probe_read_kernel_str(name, sizeof(name), kn_name) < 0)
		return 0;
	return tix_slice_uid(name);
}

/*
 * Bring cgroup cgid's funding in its parent's active sum in line with its
 * own active sum (funded while anything below it is runnable), then the
 * parent's, up the tree while something changed. Compare-and-swap on the
 * counted funding makes each change apply once; a level is looked at again
 * after its own change, so a CPU that raced this one (activating while
 * this deactivated) leaves the level agreeing with its sum.
 *
 * This walk and group_sync are global functions (scalar arguments): the
 * verifier checks each once per program, where as static functions they
 * were checked again on every path that reached them (value_of reaches
 * group_sync three ways, each with cg_sync inside).
 */
__noinline int cg_sync(u64 cgid)
{
	struct tix_cgroup *c, *par;
	bool changed = false;
	u64 desired, old;
	u32 i;

	bpf_for(i, 0, 4 * TIX_CG_DEPTH) {
		c = bpf_map_lookup_elem(&cgroups, &cgid);
		if (!c || !c->parent)
			break;
		desired = *(volatile s64 *)&c->active > 0 ? cg_funding(c) : 0;
		old = *(volatile u64 *)&c->counted;
		if (old != desired) {
			if (__sync_bool_compare_and_swap(&c->counted, old, desired)) {
				par = bpf_map_lookup_elem(&cgroups, &c->parent);
				if (par)
					__sync_fetch_and_add(&par->active, (s64)desired - (s64)old);
				changed = true;
			}
			continue;
		}
		if (!changed)
			break;
		cgid = c->parent;
		changed = false;
	}
	return 0;
}

static struct tix_group *group_get(struct tix_group_key *k)
{
	struct tix_group zero = {}, *g;

	g = bpf_map_lookup_elem(&groups, k);
	if (g)
		return g;
	bpf_map_update_elem(&groups, k, &zero, BPF_NOEXIST);
	g = bpf_map_lookup_elem(&groups, k);
	if (!g)
		lost(TIX_LOST_GROUP);
	return g;
}

/* A group's funding: the user's base (its own currency), or the amount
 * its currency is funded with in the parent's amount units
 * (tix_currency_funding; 0 once unfunded or removed). */
static u64 group_funding(struct tix_group_key *k, u32 *parent)
{
	struct tix_currency *cd;

	*parent = 0;
	if (!k->cur)
		return base_of(k->uid);
	cd = bpf_map_lookup_elem(&currencies, &k->cur);
	if (!cd)
		return 0;
	*parent = cd->parent;
	return tix_currency_funding(cd->amount);
}

/* Add delta to the sum a group is counted in: its parent currency's
 * group, or the cgroup for a user's own currency. */
static void group_count(struct tix_group_key *k, u32 pcur, s64 delta)
{
	struct tix_group_key pk = { .cgid = k->cgid, .uid = k->uid, .cur = pcur };
	struct tix_cgroup *c;
	struct tix_group *pg;

	if (!k->cur) {
		c = bpf_map_lookup_elem(&cgroups, &k->cgid);
		if (c)
			__sync_fetch_and_add(&c->active, delta);
		return;
	}
	pg = group_get(&pk);
	if (pg)
		__sync_fetch_and_add(&pg->active, delta);
}

/*
 * A group's funding in its parent's sum while it is active (the same
 * compare-and-swap rule as cg_sync), then its parent currency's group, up
 * to the user's own currency, then the cgroups above. A currency funded
 * from another parent since (tix fund) first takes what it counted out of
 * the old parent's sum.
 */
__noinline int group_sync(u64 cgid, u32 uid, u32 cur)
{
	struct tix_group_key k = { .cgid = cgid, .uid = uid, .cur = cur };
	bool changed = false;
	u64 desired, old, fund;
	struct tix_group *g;
	u32 i, parent;

	bpf_for(i, 0, 4 * (TIX_CUR_DEPTH + 1)) {
		g = bpf_map_lookup_elem(&groups, &k);
		if (!g)
			break;
		fund = group_funding(&k, &parent);
		if (parent != g->pcur) {
			old = __sync_lock_test_and_set(&g->counted, 0);
			if (old)
				group_count(&k, g->pcur, -(s64)old);
			g->pcur = parent;
		}
		desired = *(volatile s64 *)&g->active > 0 ? fund : 0;
		old = *(volatile u64 *)&g->counted;
		if (old != desired) {
			if (__sync_bool_compare_and_swap(&g->counted, old, desired)) {
				group_count(&k, g->pcur, (s64)desired - (s64)old);
				changed = true;
			}
			continue;
		}
		if (!changed || !k.cur)
			break;
		k.cur = g->pcur;
		changed = false;
	}
	cg_sync(cgid);
	return 0;
}

/* The process's amount (tickets times its runnable threads' mean weight)
 * in its group's sum; true when this CPU's change took the group's sum
 * across zero, and so owes the walk up the group and the cgroups above:
 * what a level counts in its parent depends on its own sum only through
 * whether it is positive. A process waking beside others of its group
 * (the common case) then walks nothing. */
static bool proc_count(struct tix_proc_state *ps, struct tix_group *g, u64 tickets)
{
	bool crossed = false;
	u64 desired, old;
	s64 ws, before, d;
	u32 i;

	bpf_for(i, 0, 4) {
		ws = *(volatile s64 *)&ps->wsum;
		desired = tix_bpf_process_amount(tickets, ws > 0 ? ws : 0,
						 *(volatile u32 *)&ps->nr_runnable);
		old = *(volatile u64 *)&ps->counted;
		if (old == desired)
			break;
		if (__sync_bool_compare_and_swap(&ps->counted, old, desired) && g) {
			d = (s64)desired - (s64)old;
			before = __sync_fetch_and_add(&g->active, d);
			if ((before > 0) != (before + d > 0))
				crossed = true;
		}
	}
	return crossed;
}

/* proc_count, then the walk when the group's sum crossed zero, or always
 * (a process's last thread leaving). A draw finds other changes on its
 * own way up (value_of). */
static void proc_sync(struct tix_proc_state *ps, u64 tickets, bool always)
{
	struct tix_group_key k = { .cgid = ps->cgid, .uid = ps->uid, .cur = ps->cur };

	if (proc_count(ps, group_get(&k), tickets) || always)
		group_sync(k.cgid, k.uid, k.cur);
}

/* A runnable process whose cgroup, owner or currency changed (cgroup
 * migration, su, setuid, tix mktkt): its amount leaves the old group and
 * enters the new one. */
static void proc_move(struct tix_proc_state *ps, struct tix_group_key *to, u64 tickets)
{
	struct tix_group_key old = { .cgid = ps->cgid, .uid = ps->uid, .cur = ps->cur };
	struct tix_group *g;
	u64 taken;

	taken = __sync_lock_test_and_set(&ps->counted, 0);
	g = bpf_map_lookup_elem(&groups, &old);
	if (g && taken)
		__sync_fetch_and_sub(&g->active, (s64)taken);
	group_sync(old.cgid, old.uid, old.cur);
	ps->cgid = to->cgid;
	ps->uid = to->uid;
	ps->cur = to->cur;
	proc_sync(ps, tickets, true);
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

/* p's tickets, and the group that holds them: its cgroup, and its
 * currency with that currency's owner (its own user's when it holds none,
 * or when the currency is gone). */
static u64 holding(struct task_struct *p, struct task_ctx *tctx, struct tix_group_key *k)
{
	struct tix_proc_tickets *t = proc_tickets_of(p);
	struct tix_currency *cd = NULL;
	u32 cur = t ? t->currency : 0;

	if (cur)
		cd = bpf_map_lookup_elem(&currencies, &cur);
	k->cgid = tctx->cgid;
	k->uid = cd ? cd->owner : task_uid(p);
	k->cur = cd ? cur : 0;
	return t ? t->tickets : TIX_DEFAULT_TICKETS;
}

/*
 * A level of the walk disagrees with what its parent's sum counts for it:
 * its funding (a base, a currency's amount, a cpu.weight) changed since,
 * its sum crossed zero without the fold reaching it, or (a currency) it
 * was funded from another parent since. The sync walks fix exactly this.
 */
static bool stale(u64 counted, s64 active, u64 fund)
{
	return counted != (active > 0 ? fund : 0);
}

/*
 * p's value in base tickets (tix_core::cgroup::thread_value): its part of
 * its user's currency in its cgroup, then funding / active of each cgroup
 * up to the root's child. Changes to its own process (tickets, nice, a
 * move) are folded into the sums first; a level found stale on the way up
 * (a base, funding or cpu.weight changed since) is folded after the walk,
 * from that level up, and counts from the next draw on. This replaced a
 * fold walk before every draw, which looked the same levels up twice to
 * find, nearly always, nothing to fold. A global function for the reason
 * draw_key is one (its walks' many exits end in one return).
 */
__noinline u64 value_of(struct task_struct *p __arg_trusted, struct task_ctx *tctx)
{
	u32 tgid = p->tgid, i, parent;
	u64 tickets, weight, x, nr, ga, below, cur, fund, act, resync = 0;
	struct tix_group_key k, want, ks;
	struct tix_proc_state *ps;
	bool gstale = false, moved, crossed;
	struct tix_cgroup *c;
	struct tix_group *g;

	if (!tctx)
		return 1;
	ps = bpf_map_lookup_elem(&proc_state, &tgid);
	if (!ps)
		/* Table full (counted in nr_lost): its tickets are in no sum, and
		 * a value computed without them would overstate it, up to the
		 * whole base for each such process. The least value is the safe
		 * side. */
		return 1;
	tickets = holding(p, tctx, &want);
	weight = task_weight(p);
	if (tctx->wcounted && tctx->wcounted != weight) {
		/* renice while runnable */
		__sync_fetch_and_add(&ps->wsum, (s64)weight - (s64)tctx->wcounted);
		tctx->wcounted = weight;
	}
	moved = ps->nr_runnable &&
		(ps->cgid != want.cgid || ps->uid != want.uid || ps->cur != want.cur);
	if (moved)
		proc_move(ps, &want, tickets);
	k.cgid = ps->cgid;
	k.uid = ps->uid;
	k.cur = ps->cur;
	/* One lookup for the fold and the walk (proc_sync's, with its walk
	 * after this one's). */
	g = group_get(&k);
	crossed = !moved && proc_count(ps, g, tickets);
	ks = k;
	if (!g)
		/* The group table is full: as a process without state. */
		return 1;
	nr = ps->nr_runnable ? ps->nr_runnable : 1;
	/* Sums read while other CPUs change them may lag: never let a sum be
	 * smaller than the part of it this task's own path puts there, so
	 * no value exceeds what its funding allows (a user's base, a
	 * currency's funding, a cgroup's share of its parent). */
	fund = group_funding(&k, &parent);
	if (crossed || parent != g->pcur || stale(g->counted, g->active, fund))
		gstale = true;
	ga = *(volatile s64 *)&g->active > 0 ? (u64)g->active : 0;
	below = tix_bpf_process_amount(tickets, weight, nr);
	x = tix_bpf_group_part(fund, tickets, weight, nr, ga > below ? ga : below);
	below = fund;
	/* Up the currencies to the user's own, then the cgroups. */
	bpf_for(i, 0, TIX_CUR_DEPTH) {
		if (!k.cur)
			break;
		k.cur = g->pcur;
		g = bpf_map_lookup_elem(&groups, &k);
		if (!g)
			break;
		fund = group_funding(&k, &parent);
		if (!gstale && (parent != g->pcur || stale(g->counted, g->active, fund))) {
			gstale = true;
			ks = k;
		}
		act = *(volatile s64 *)&g->active > 0 ? (u64)g->active : 0;
		x = tix_bpf_level(x, fund, act > below ? act : below);
		below = fund;
	}
	cur = k.cgid;
	bpf_for(i, 0, TIX_CG_DEPTH) {
		c = bpf_map_lookup_elem(&cgroups, &cur);
		if (!c || !c->parent)
			break;
		fund = cg_funding(c);
		/* A funding that changed without a callback (a user's base
		 * funding the user's slice) is folded in after the walk (one
		 * walk up from the lowest such level; called here, the walk in
		 * the walk passed the verifier's budget). */
		if (!resync && stale(c->counted, c->active, fund))
			resync = cur;
		act = *(volatile s64 *)&c->active > 0 ? (u64)c->active : 0;
		x = tix_bpf_level(x, fund, act > below ? act : below);
		below = fund;
		cur = c->parent;
	}
	/* One fold walk, from the lowest stale level (the process's group
	 * when its sum crossed zero; a stale level above that is found by a
	 * later draw). group_sync ends with the cgroups from the process's
	 * own up, stopping at the first level that agrees: a stale one above
	 * it needs its own walk. */
	if (gstale)
		group_sync(ks.cgid, ks.uid, ks.cur);
	if (resync)
		cg_sync(resync);
	return tix_value_of_part(x);
}

#endif /* __TIX_RIGHTS_BPF_H */
