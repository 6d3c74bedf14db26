/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * model_host.c - a host model of one scx_tix domain, driven by tests with
 * the same events as tix-core's schedulers: tasks wake (ops.enqueue: key =
 * max(pass, T) for stride, T + race delta for lottery), the smallest key is
 * dispatched (T moves to it; equal keys leave in insertion order, as in a
 * vtime DSQ), the runner is charged (ops.stopping: pass += used/value) and
 * re-enqueued or blocks. Uses rules.h exactly as main.bpf.c does.
 */
#define TIX_RULES_BOUNDED 1
#include "rules.h"

#define TIX_M_MAX 64

struct tix_model {
	u64 value[TIX_M_MAX];
	u64 pass[TIX_M_MAX];
	u64 key[TIX_M_MAX];
	u64 seq[TIX_M_MAX];
	u64 last_used[TIX_M_MAX];
	int queued[TIX_M_MAX];
	u64 vt;
	u64 seqno;
	u64 slice_ns;
	int stride;
	int compensate;
};

static struct tix_model M;

void tix_m_reset(int stride, u64 slice_ns, int compensate)
{
	int i;

	for (i = 0; i < TIX_M_MAX; i++) {
		M.value[i] = M.pass[i] = M.key[i] = M.seq[i] = 0;
		M.last_used[i] = slice_ns;
		M.queued[i] = 0;
	}
	M.vt = M.seqno = 0;
	M.slice_ns = slice_ns;
	M.stride = stride;
	M.compensate = compensate;
}

void tix_m_set_value(int i, u64 v) { M.value[i] = v; }

/* ops.enqueue of task i; rnd is bpf_get_prandom_u32()'s draw (lottery). */
void tix_m_enqueue(int i, u32 rnd)
{
	if (M.stride) {
		M.pass[i] = tix_wake_pass(M.pass[i], M.vt);
		M.key[i] = M.pass[i];
	} else {
		M.key[i] = tix_sat_add(M.vt, tix_race_delta(tix_neg_ln_q16(rnd),
				M.value[i], M.last_used[i], M.slice_ns, M.compensate));
	}
	M.seq[i] = M.seqno++;
	M.queued[i] = 1;
}

/* ops.dispatch: the head of the DSQ; -1 when empty. */
int tix_m_dispatch(void)
{
	int i, best = -1;

	for (i = 0; i < TIX_M_MAX; i++) {
		if (!M.queued[i])
			continue;
		if (best < 0 || M.key[i] < M.key[best] ||
		    (M.key[i] == M.key[best] && M.seq[i] < M.seq[best]))
			best = i;
	}
	if (best >= 0) {
		M.queued[best] = 0;
		if (M.key[best] > M.vt)
			M.vt = M.key[best];
	}
	return best;
}

/* ops.stopping: charge the runner. */
void tix_m_charge(int i, u64 used)
{
	M.last_used[i] = used;
	M.pass[i] = tix_sat_add(M.pass[i], tix_pass_delta(used, M.value[i]));
}

u64 tix_m_pass(int i) { return M.pass[i]; }
u64 tix_m_vt(void) { return M.vt; }
