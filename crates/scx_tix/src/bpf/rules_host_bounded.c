/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rules_host_bounded.c - rules.h exactly as the BPF program compiles it
 * (dividends above 2^64 saturate), for the host tests.
 */
#define TIX_RULES_BOUNDED 1
#include "rules.h"

u64 tix_cb_neg_ln_q16(u32 u) { return tix_neg_ln_q16(u); }

u64 tix_cb_race_delta(u64 e, u64 v, u64 used, u64 slice, int comp)
{
	return tix_race_delta(e, v, used, slice, comp);
}

u64 tix_cb_task_value(u64 base, u64 tickets, u64 urt, u64 prt)
{
	return tix_task_value(base, tickets, urt, prt);
}

u64 tix_cb_pass_delta(u64 used, u64 value) { return tix_pass_delta(used, value); }

u64 tix_cb_ras_race_prob(u64 wcounts, u64 sum, u64 nr) { return tix_ras_race_prob(wcounts, sum, nr); }
