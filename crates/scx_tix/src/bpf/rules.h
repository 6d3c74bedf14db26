/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rules.h - the integer rules of tix's lottery (exponential race), stride and
 * Zepp's ticket conversion, written once for the BPF scheduler and for the
 * host test that compares them with tix_core::race / zepp (seed 001 §2.2,
 * §3.4; seed 000 §4.2). Pure functions: no globals, no helpers, no __int128
 * (the BPF backend has no 128-bit division), so a small 128-bit type is
 * built from two u64 halves. Loops are branch-free (masks, borrows) so the
 * verifier walks each iteration once instead of every path through them.
 */
#ifndef __TIX_RULES_H
#define __TIX_RULES_H

#if !defined(__bpf__) && !defined(__BPF__)
#include <stdint.h>
typedef uint64_t u64;
typedef uint32_t u32;
#endif
#include "intf.h"

#define TIX_RACE_SHIFT 20
#define TIX_LN2_Q16 45426ULL
#define TIX_U64_MAX (~0ULL)
#define TIX_F_MAX_Q10 (1ULL << 40)

struct tix_u128 {
	u64 hi;
	u64 lo;
};

/* a * b as 128 bits, by 32-bit limbs. */
static inline struct tix_u128 tix_mul64(u64 a, u64 b)
{
	u64 a0 = a & 0xffffffffULL, a1 = a >> 32;
	u64 b0 = b & 0xffffffffULL, b1 = b >> 32;
	u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	u64 mid = (p00 >> 32) + (p01 & 0xffffffffULL) + (p10 & 0xffffffffULL);
	struct tix_u128 r;

	r.lo = (p00 & 0xffffffffULL) | (mid << 32);
	r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
	return r;
}

/*
 * n / d (d >= 1) as a 128-bit quotient. The high half divides natively; the
 * low half is restoring long division over a remainder < d, 64 fixed steps
 * with masks instead of branches.
 */
static inline struct tix_u128 tix_div128(struct tix_u128 n, u64 d)
{
	struct tix_u128 q;
#if defined(__bpf__) || defined(TIX_RULES_BOUNDED)
	/*
	 * BPF: every dividend the scheduler forms fits 64 bits (E < 2^21 so
	 * E << 20 < 2^41; base, tickets <= 10^4; used < 2^48 ns; slice <= 1 s),
	 * and the verifier cannot afford the 64-step division below (clang
	 * turns its masks back into branches: 2^64 paths). A dividend above
	 * 2^64 saturates here instead; tests check this bounded variant equals
	 * tix-core on the bounded domain and saturates outside it.
	 */
	if (n.hi) {
		q.hi = TIX_U64_MAX;
		q.lo = TIX_U64_MAX;
		return q;
	}
	q.hi = 0;
	q.lo = n.lo / d;
	return q;
#else
	u64 rem, lo = n.lo, ql = 0, carry, take;
	int i;

	q.hi = n.hi / d;
	rem = n.hi % d;
	if (rem == 0) {
		q.lo = lo / d;
		return q;
	}
	for (i = 0; i < 64; i++) {
		carry = rem >> 63;
		rem = (rem << 1) | (lo >> 63);
		lo <<= 1;
		take = carry | (u64)(rem >= d);
		rem -= d & (0 - take);
		ql = (ql << 1) | take;
	}
	q.lo = ql;
	return q;
#endif
}

static inline u64 tix_sat64(struct tix_u128 v)
{
	return v.hi ? TIX_U64_MAX : v.lo;
}

/* -ln(u / 2^32) in Q16: an Exp(1) sample for a uniform 32-bit u. */
static inline u64 tix_neg_ln_q16(u32 u)
{
	u64 x, t, s, c, frac = 0, log2, msb = 0;
	int i;

	if (u < 1)
		u = 1;
	/* msb = floor(log2 u) by halving steps; (K - t) >> 63 is t > K. */
	t = u;
	s = ((0xffffULL - t) >> 63) << 4; t >>= s; msb |= s;
	s = ((0xffULL - t) >> 63) << 3; t >>= s; msb |= s;
	s = ((0xfULL - t) >> 63) << 2; t >>= s; msb |= s;
	s = ((0x3ULL - t) >> 63) << 1; t >>= s; msb |= s;
	msb |= t >> 1;
	x = (u64)u << (31 - msb);
	for (i = 0; i < 16; i++) {
		x = (x * x) >> 31;
		/* x < 2^33 here: bit 32 is the next fraction bit of log2 */
		c = x >> 32;
		x >>= c;
		frac |= c << (15 - i);
	}
	log2 = (msb << 16) | frac;
	return (((32ULL << 16) - log2) * TIX_LN2_Q16) >> 16;
}

/*
 * Increment of a key in the race: E/value in Q(16+20); with compensation a
 * task that used a fraction f of its slice competes with value/f, f in Q10
 * clamped to [1/1024, 2^30] (f > 1: an overrun, charged in full; see
 * tix_core::race::race_delta for why no smaller cap).
 */
static inline u64 tix_race_delta(u64 e_q16, u64 value, u64 used_ns,
				 u64 slice_ns, int compensate)
{
	struct tix_u128 d, t;
	u64 f;

	if (value < 1)
		value = 1;
	/* (e << 20) as 128 bits, then / value */
	t.hi = e_q16 >> (64 - TIX_RACE_SHIFT);
	t.lo = e_q16 << TIX_RACE_SHIFT;
	d = tix_div128(t, value);
	if (compensate && slice_ns > 0 && used_ns != slice_ns) {
		f = tix_sat64(tix_div128(tix_mul64(used_ns, 1024), slice_ns));
		if (f < 1)
			f = 1;
		if (f > TIX_F_MAX_Q10)
			f = TIX_F_MAX_Q10;
		/* d < 2^84 and f <= 2^40: d * f fits 128 bits */
		t = tix_mul64(d.lo, f);
		t.hi += d.hi * f;
		/* >> 10 */
		d.lo = (t.lo >> 10) | (t.hi << 54);
		d.hi = t.hi >> 10;
	}
	return tix_sat64(d);
}

/* Zepp's slice in ticks (LOTTERY_SLICE; tix_core::compensation::ZEPP_SLICE_TICKS). */
#define TIX_ZEPP_TICKS 6

/*
 * Zepp's compensation tickets for a task worth value that ran used_ns of a
 * slice_ns slice measured in TIX_ZEPP_TICKS ticks (seed 000 §4.2-4.3,
 * tix_core::compensation::zepp after ticks_left): c ticks left gives
 * v*T/(T-c) - v, 59v for c = T, 0 for c = 0; io adds 5^(c+1) for every c.
 * value <= 2^40 (TIX_VALUE_MAX) keeps every product in 64 bits.
 */
static inline u64 tix_zepp_comp(u64 value, u64 used_ns, u64 slice_ns, int io)
{
	u64 tick = slice_ns / TIX_ZEPP_TICKS, used, c, comp, bonus = 5;
	int i;

	if (tick < 1)
		tick = 1;
	used = used_ns / tick;
	if (used > TIX_ZEPP_TICKS)
		used = TIX_ZEPP_TICKS;
	c = TIX_ZEPP_TICKS - used;
	if (c == 0)
		comp = 0;
	else if (c == TIX_ZEPP_TICKS)
		comp = 59 * value;
	else
		comp = value * TIX_ZEPP_TICKS / (TIX_ZEPP_TICKS - c) - value;
	if (io) {
		for (i = 0; i < TIX_ZEPP_TICKS; i++)
			if ((u64)i < c)
				bonus *= 5;
		comp += bonus;
	}
	return comp;
}

/*
 * A lottery winner's key increment under compensation rule mode
 * (TIX_COMP_*; tix_core::race::race_cost): none and Waldspurger's through
 * tix_race_delta; Zepp's as value plus his compensation tickets, an
 * overrun (no tick left) charged for its length as Waldspurger's is.
 */
static inline u64 tix_race_cost(u64 e_q16, u64 value, u64 used_ns, u64 slice_ns,
				int mode)
{
	if (mode == TIX_COMP_ZEPP || mode == TIX_COMP_ZEPP_IO)
		return tix_race_delta(e_q16,
				      value + tix_zepp_comp(value, used_ns, slice_ns,
							    mode == TIX_COMP_ZEPP_IO),
				      used_ns, slice_ns, used_ns > slice_ns);
	return tix_race_delta(e_q16, value, used_ns, slice_ns, mode != TIX_COMP_OFF);
}

/*
 * Zepp's v = base * tickets / user_runnable_tickets, split among the
 * process's runnable threads; floors in that order, at least 1.
 */
static inline u64 tix_task_value(u64 base, u64 tickets, u64 urt, u64 prt)
{
	struct tix_u128 v;

	if (urt < 1)
		urt = 1;
	if (prt < 1)
		prt = 1;
	v = tix_div128(tix_div128(tix_mul64(base, tickets), urt), prt);
	if (v.hi == 0 && v.lo < 1)
		return 1;
	return tix_sat64(v);
}

/* Stride: pass advances by used / value in Q16, saturating. */
static inline u64 tix_pass_delta(u64 used_ns, u64 value)
{
	struct tix_u128 t;

	if (value < 1)
		value = 1;
	t.hi = used_ns >> 48;
	t.lo = used_ns << 16;
	return tix_sat64(tix_div128(t, value));
}

/* Keys and passes saturate instead of wrapping (as tix-core does). */
static inline u64 tix_sat_add(u64 a, u64 b)
{
	return a + b < a ? TIX_U64_MAX : a + b;
}

/* A waking task's pass is never behind its domain's virtual time. */
static inline u64 tix_wake_pass(u64 pass, u64 dom_vtime)
{
	return pass > dom_vtime ? pass : dom_vtime;
}

/*
 * One virtual time for N CPUs (tix_core::vtime): a task's next key is its
 * own last key, held at most lag behind the virtual time, plus the cost of
 * its last run. lag is TIX_LAG_SLICES of the task's own full slices for a
 * task that stays runnable, 0 for one that wakes (sleep earns no credit).
 */
#define TIX_LAG_SLICES 32ULL

static inline u64 tix_lag_bound(u64 one_run)
{
	return one_run > TIX_U64_MAX / TIX_LAG_SLICES ? TIX_U64_MAX
						       : one_run * TIX_LAG_SLICES;
}

/* The lag a waking task may keep (tix_core::vtime::wake_lag): one of its
 * own slices (one_slice) per slice it slept, up to slices (at most 64) of
 * them; slices 0 is the seeds' rule, no credit for sleeping. The fraction
 * slept is taken in Q16 first so no product needs 128-bit division. */
#define TIX_WAKE_SLICES 4ULL
#define TIX_WAKE_SLICES_MAX 64ULL

static inline u64 tix_wake_lag(u64 one_slice, u64 slices, u64 slept_ns, u64 slice_ns)
{
	struct tix_u128 full, lag;
	u64 frac;

	if (!slice_ns || !slices)
		return 0;
	if (slices > TIX_WAKE_SLICES_MAX)
		slices = TIX_WAKE_SLICES_MAX;
	full = tix_mul64(slice_ns, slices);
	if (!full.hi && slept_ns > full.lo)
		slept_ns = full.lo;
	/* slept_ns <= 64 slices of at most 2^64/64 ns: the shift may still
	 * overflow for slices above ~2^42 ns (73 min); saturate there. */
	if (slept_ns >> 48)
		frac = TIX_U64_MAX / slice_ns;
	else
		frac = (slept_ns << 16) / slice_ns;
	lag = tix_mul64(one_slice, frac);
	if (lag.hi >> 16)
		return TIX_U64_MAX;
	return (lag.hi << 48) | (lag.lo >> 16);
}

/* The wake level (tix_core::vtime::level_lag): how far the frame's time
 * stands ahead of least, the least key its runners started at or its
 * DSQ's head holds. */
static inline u64 tix_level_lag(u64 vtime, u64 least)
{
	return vtime > least ? vtime - least : 0;
}

/* Own slices of wake credit per slice slept (tix_core::vtime::wake_rate):
 * chosen (scx_tix --wake-rate, at most TIX_WAKE_RATE_MAX) or, when 0, the
 * policy's own. The lottery's is 4: its woken key carries the last run's
 * draw, which a credit earned at 1 often did not cover, nor at 2 for a
 * sleep well under a slice (cyclictest); stride's has no draw. */
#define TIX_WAKE_RATE_LOTTERY 4ULL
#define TIX_WAKE_RATE_STRIDE 1ULL

static inline u64 tix_wake_rate(int stride, u64 chosen)
{
	if (!chosen)
		return stride ? TIX_WAKE_RATE_STRIDE : TIX_WAKE_RATE_LOTTERY;
	return chosen > TIX_WAKE_RATE_MAX ? TIX_WAKE_RATE_MAX : chosen;
}

/* The sleep tix_wake_lag is given (tix_core::vtime::rated_sleep): slept_ns
 * counted rate times over. A sleep of 2^59 ns (18 years) or more counts as
 * forever, so the product of the rest fits (rate <= 16): no loop, and no
 * overflow test, which clang turns into a 128-bit multiply BPF cannot
 * call. */
#define TIX_RATED_SLEEP_SHIFT 59

static inline u64 tix_rated_sleep(u64 slept_ns, u64 rate)
{
	if (rate < 1)
		rate = 1;
	if (rate > TIX_WAKE_RATE_MAX)
		rate = TIX_WAKE_RATE_MAX;
	return slept_ns >> TIX_RATED_SLEEP_SHIFT ? TIX_U64_MAX : slept_ns * rate;
}

/* A task's smoothed run length (tix_core::vtime::run_avg): the lag bank is
 * counted in runs, which is what the walk it absorbs moves by. */
static inline u64 tix_run_avg(u64 avg, u64 used)
{
	return avg - avg / 8 + used / 8;
}

/* Lottery: floor, then the random cost (a fresh exponential from the floor). */
static inline u64 tix_next_key(u64 own, u64 vtime, u64 lag, u64 pending)
{
	u64 floor = vtime > lag ? vtime - lag : 0;

	return tix_sat_add(own > floor ? own : floor, pending);
}

/* Stride: the pass (own + cost), then the floor; lag 0 is tix_wake_pass. */
static inline u64 tix_next_pass(u64 own, u64 vtime, u64 lag, u64 pending)
{
	u64 floor = vtime > lag ? vtime - lag : 0;

	return tix_wake_pass(tix_sat_add(own, pending), floor);
}

/*
 * The lead a key may take over its frame's virtual time: what that time
 * gains in about starve_ns with serving CPUs (1..TIX_LEAD_SERVING_MAX) on
 * the frame at runnable value vsum (tix_core::vtime::lead_cap, which says
 * why the CPUs count), and the clamp (cap_lead), which only pulls a key
 * down to reference + cap, never below reference.
 */
#define TIX_LEAD_SERVING_MAX 8ULL

static inline u64 tix_lead_cap(int stride, u64 starve_ns, u64 slice_ns, u64 vsum, u64 serving)
{
	u64 v = vsum ? vsum : 1, n, one, cap, i;

	if (stride) {
		one = (starve_ns > TIX_U64_MAX >> 16 ? TIX_U64_MAX : starve_ns << 16) / v;
	} else {
		n = starve_ns / (slice_ns ? slice_ns : 1);
		one = (n > TIX_U64_MAX >> 36 ? TIX_U64_MAX : n << 36) / v;
	}
	/* one * clamp(serving, 1, 8), saturating, by adds: clang turns a
	 * division-guarded product into a 128-bit multiply BPF cannot call. */
	cap = one;
	for (i = 1; i < TIX_LEAD_SERVING_MAX; i++)
		if (i < serving)
			cap = tix_sat_add(cap, one);
	return cap;
}

/* The most wake lag a task keeps in its frame (tix_core::vtime::wake_cap,
 * which says why): what the frame's time gains in TIX_WAKE_FRAME_SLICES
 * slices, so that many waking tasks together hold a task at the time back
 * by that many slices per serving CPU, not by theirs times their number. */
#define TIX_WAKE_FRAME_SLICES 16ULL

static inline u64 tix_wake_cap(int stride, u64 slice_ns, u64 vsum, u64 serving)
{
	u64 span = slice_ns > TIX_U64_MAX / TIX_WAKE_FRAME_SLICES ? TIX_U64_MAX
								 : slice_ns * TIX_WAKE_FRAME_SLICES;

	return tix_lead_cap(stride, span, slice_ns, vsum, serving);
}

static inline u64 tix_cap_lead(u64 key, u64 reference, u64 cap)
{
	if (key > reference && key - reference > cap)
		return tix_sat_add(reference, cap);
	return key;
}

/* A woken kernel thread's key (tix_core::vtime::kernel_wake_key): just
 * ahead of the smallest key waiting where it may run (has_head), else its
 * own. */
static inline u64 tix_kernel_wake_key(u64 key, u64 head, int has_head)
{
	if (has_head && key >= head)
		return head ? head - 1 : 0;
	return key;
}

/* The key a task only one CPU may run is weighed at against shared tasks
 * at that CPU's decisions (tix_core::vtime::lead_key): slices (at most
 * TIX_PINNED_LEAD_MAX) of its own full runs ahead of its queue key. */
#define TIX_PINNED_LEAD 1ULL
#define TIX_PINNED_LEAD_MAX 4ULL

static inline u64 tix_lead_key(u64 key, u64 one_run, u64 slices)
{
	u64 m = 0, i;

	/* Added, not multiplied: clang turns a checked product into a 128-bit
	 * multiply, which BPF lacks. */
	for (i = 0; i < TIX_PINNED_LEAD_MAX; i++)
		if (i < slices)
			m = tix_sat_add(m, one_run);
	return key > m ? key - m : 0;
}

/*
 * Linux's rights as currencies (tix_core::cgroup): a cgroup funded by its
 * cpu.weight in its parent's currency, a user's base inside each cgroup, a
 * process's tickets times its runnable threads' mean nice weight, a thread
 * its nice weight's part. Same integer steps as the core, same saturation.
 */
#define TIX_NICE_0_WEIGHT 1024ULL
#define TIX_IDLE_WEIGHT 3ULL
#define TIX_CPU_WEIGHT_MAX 10000ULL
#define TIX_BASE_PER_WEIGHT 10ULL
#define TIX_IDLE_FUNDING 3ULL
#define TIX_VALUE_FRAC 16
#define TIX_AMOUNT_SHIFT 4
#define TIX_TICKET_UNIT (TIX_NICE_0_WEIGHT >> TIX_AMOUNT_SHIFT)
#define TIX_VALUE_MAX (1ULL << 40)
#define TIX_CG_DEPTH 16

/* The kernel's sched_prio_to_weight, nice -20..19. */
static const u64 tix_nice_weights[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
	110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
};

static inline u64 tix_nice_weight(int nice, int idle)
{
	if (idle)
		return TIX_IDLE_WEIGHT;
	if (nice < -20)
		nice = -20;
	if (nice > 19)
		nice = 19;
	return tix_nice_weights[(nice + 20) & 63];
}

static inline u64 tix_cgroup_funding(u64 cpu_weight, int idle)
{
	if (idle)
		return TIX_IDLE_FUNDING;
	if (cpu_weight < 1)
		cpu_weight = 1;
	if (cpu_weight > TIX_CPU_WEIGHT_MAX)
		cpu_weight = TIX_CPU_WEIGHT_MAX;
	return cpu_weight * TIX_BASE_PER_WEIGHT;
}

/* a * b / c, saturating when the product needs more than 64 bits. */
static inline u64 tix_mul_div(u64 a, u64 b, u64 c)
{
	struct tix_u128 p = tix_mul64(a, b);

	if (p.hi)
		return TIX_U64_MAX;
	return p.lo / (c ? c : 1);
}

static inline u64 tix_sat_mul(u64 a, u64 b)
{
	struct tix_u128 p = tix_mul64(a, b);

	return p.hi ? TIX_U64_MAX : p.lo;
}

static inline u64 tix_process_amount(u64 tickets, u64 weight_sum, u64 nr)
{
	return nr ? tix_mul_div(tickets, weight_sum, nr) >> TIX_AMOUNT_SHIFT : 0;
}

static inline u64 tix_currency_funding(u64 amount)
{
	return tix_sat_mul(amount, TIX_TICKET_UNIT);
}

/* The thread's own part (tix_core::cgroup::thread_value before the levels),
 * in VALUE_FRAC fraction bits. */
static inline u64 tix_group_part(u64 base, u64 tickets, u64 weight, u64 nr, u64 group_active)
{
	u64 den = tix_sat_mul(group_active ? group_active : 1, nr ? nr : 1);

	return tix_mul_div(base << TIX_VALUE_FRAC,
			   tix_sat_mul(tickets, weight) >> TIX_AMOUNT_SHIFT, den);
}

/* One cgroup level up: times funding / active. */
static inline u64 tix_level(u64 x, u64 funding, u64 active)
{
	return tix_mul_div(x, funding, active);
}

static inline u64 tix_value_of_part(u64 x)
{
	x >>= TIX_VALUE_FRAC;
	if (x < 1)
		return 1;
	return x > TIX_VALUE_MAX ? TIX_VALUE_MAX : x;
}

/*
 * The Race-Averse Scheduler (tix_core::ras, seed 002 eqs. 2-1, 2-2): a task's
 * race probability from its traced writes and the run queue's, and its slice.
 * Alone, no writes counted, or the only writer: race_prob 0.
 */
#define TIX_RAS_MAX_SLICE_NS 100000000ULL
#define TIX_RAS_MIN_SLICE_NS 10000000ULL
#define TIX_RAS_MAX_PROB 9ULL

static inline u64 tix_ras_race_prob(u64 wcounts, u64 sum, u64 nr_running)
{
	u64 p;

	if (nr_running <= 1 || sum == 0 || wcounts >= sum)
		return 0;
	p = tix_sat64(tix_div128(tix_mul64(wcounts, 10), sum));
	return p > TIX_RAS_MAX_PROB ? TIX_RAS_MAX_PROB : p;
}

static inline u64 tix_ras_slice_ns(u64 race_prob)
{
	if (race_prob > TIX_RAS_MAX_PROB)
		race_prob = TIX_RAS_MAX_PROB;
	return TIX_RAS_MAX_SLICE_NS -
	       (TIX_RAS_MAX_SLICE_NS - TIX_RAS_MIN_SLICE_NS) / TIX_RAS_MAX_PROB * race_prob;
}

/*
 * systemd's user slice: UID + 1 if name (32 bytes, NUL-terminated) is
 * user-UID.slice with UID < 2^32 - 1 (tix_core::cgroup::slice_uid), else 0.
 * The digits are taken branch-free (masks): a loop that stopped at the
 * first non-digit gave the verifier a path per digit count, past its budget.
 */
static inline u32 tix_slice_uid(const char *name)
{
	u64 uid = 0, n = 0, stop = 0, d, isd, m;
	u32 i;

	if (name[0] != 'u' || name[1] != 's' || name[2] != 'e' || name[3] != 'r' ||
	    name[4] != '-')
		return 0;
#ifdef __clang__
	/* The host's gcc builds of this file (rules_host.c) need no unrolling. */
#pragma unroll
#endif
	for (i = 0; i < 10; i++) {
		d = (u64)(unsigned char)name[5 + i] - '0';
		/* 0 <= d < 10 (a char below '0' wraps d past 2^63), and no
		 * non-digit before */
		isd = ((d - 10) >> 63) & ((~d) >> 63) & (1 - stop);
		stop |= 1 - isd;
		m = 0 - isd;
		uid = ((uid * 10 + d) & m) | (uid & ~m);
		n += isd;
	}
	if (!n || uid >= 0xffffffffULL)
		return 0;
	i = 5 + n;
	if (name[i & 31] != '.' || name[(i + 1) & 31] != 's' || name[(i + 2) & 31] != 'l' ||
	    name[(i + 3) & 31] != 'i' || name[(i + 4) & 31] != 'c' || name[(i + 5) & 31] != 'e' ||
	    name[(i + 6) & 31] != 0)
		return 0;
	return uid + 1;
}

#endif /* __TIX_RULES_H */
