/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rules_host.c - rules.h compiled for the host, so the test suite runs the
 * very C the BPF program runs and compares it with tix_core.
 */
#include "rules.h"

u64 tix_c_neg_ln_q16(u32 u) { return tix_neg_ln_q16(u); }

u64 tix_c_race_delta(u64 e, u64 v, u64 used, u64 slice, int comp)
{
	return tix_race_delta(e, v, used, slice, comp);
}

u64 tix_c_race_cost(u64 e, u64 v, u64 used, u64 slice, int mode)
{
	return tix_race_cost(e, v, used, slice, mode);
}

u64 tix_c_zepp_comp(u64 v, u64 used, u64 slice, int io) { return tix_zepp_comp(v, used, slice, io); }

u64 tix_c_task_value(u64 base, u64 tickets, u64 urt, u64 prt)
{
	return tix_task_value(base, tickets, urt, prt);
}

u64 tix_c_pass_delta(u64 used, u64 value) { return tix_pass_delta(used, value); }

u64 tix_c_wake_pass(u64 pass, u64 vt) { return tix_wake_pass(pass, vt); }

u64 tix_c_sat_add(u64 a, u64 b) { return tix_sat_add(a, b); }

u64 tix_c_lag_bound(u64 one_run) { return tix_lag_bound(one_run); }
u64 tix_c_run_avg(u64 avg, u64 used) { return tix_run_avg(avg, used); }
u64 tix_c_wake_lag(u64 one, u64 slices, u64 slept, u64 slice)
{
	return tix_wake_lag(one, slices, slept, slice);
}
u64 tix_c_wake_slices(void) { return TIX_WAKE_SLICES; }
u64 tix_c_wake_rate(int stride, u64 chosen) { return tix_wake_rate(stride, chosen); }
u64 tix_c_rated_sleep(u64 slept, u64 rate) { return tix_rated_sleep(slept, rate); }
u64 tix_c_wake_rate_max(void) { return TIX_WAKE_RATE_MAX; }
u64 tix_c_level_lag(u64 vt, u64 least) { return tix_level_lag(vt, least); }

u64 tix_c_next_key(u64 own, u64 vt, u64 lag, u64 pending)
{
	return tix_next_key(own, vt, lag, pending);
}

u64 tix_c_next_pass(u64 own, u64 vt, u64 lag, u64 pending)
{
	return tix_next_pass(own, vt, lag, pending);
}

u64 tix_c_wake_cap(int stride, u64 slice, u64 vsum, u64 serving)
{
	return tix_wake_cap(stride, slice, vsum, serving);
}

u64 tix_c_lead_cap(int stride, u64 starve, u64 slice, u64 vsum, u64 serving)
{
	return tix_lead_cap(stride, starve, slice, vsum, serving);
}

u64 tix_c_cap_lead(u64 key, u64 reference, u64 cap) { return tix_cap_lead(key, reference, cap); }
u64 tix_c_kernel_wake_key(u64 key, u64 head, int has_head)
{
	return tix_kernel_wake_key(key, head, has_head);
}

u64 tix_c_lead_key(u64 key, u64 one_run, u64 slices) { return tix_lead_key(key, one_run, slices); }
u64 tix_c_pinned_lead(void) { return TIX_PINNED_LEAD; }
u64 tix_c_pinned_lead_max(void) { return TIX_PINNED_LEAD_MAX; }

u64 tix_c_nice_weight(int nice, int idle) { return tix_nice_weight(nice, idle); }
u64 tix_c_cgroup_funding(u64 w, int idle) { return tix_cgroup_funding(w, idle); }
u64 tix_c_process_amount(u64 t, u64 ws, u64 nr) { return tix_process_amount(t, ws, nr); }
u64 tix_c_currency_funding(u64 a) { return tix_currency_funding(a); }

/* The BPF value walk, levels bottom-up as main.bpf.c takes them. */
u64 tix_c_thread_value(u64 base, u64 tickets, u64 weight, u64 nr, u64 group_active,
		       const u64 *funding, const u64 *active, int n)
{
	u64 x = tix_group_part(base, tickets, weight, nr, group_active);
	int i;

	for (i = 0; i < n && i < TIX_CG_DEPTH; i++)
		x = tix_level(x, funding[i], active[i]);
	return tix_value_of_part(x);
}

u32 tix_c_slice_uid(const char *name32) { return tix_slice_uid(name32); }

u64 tix_c_ras_race_prob(u64 wcounts, u64 sum, u64 nr) { return tix_ras_race_prob(wcounts, sum, nr); }
u64 tix_c_ras_slice_ns(u64 race_prob) { return tix_ras_slice_ns(race_prob); }
