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

u64 tix_c_task_value(u64 base, u64 tickets, u64 urt, u64 prt)
{
	return tix_task_value(base, tickets, urt, prt);
}

u64 tix_c_pass_delta(u64 used, u64 value) { return tix_pass_delta(used, value); }

u64 tix_c_wake_pass(u64 pass, u64 vt) { return tix_wake_pass(pass, vt); }

u64 tix_c_sat_add(u64 a, u64 b) { return tix_sat_add(a, b); }
