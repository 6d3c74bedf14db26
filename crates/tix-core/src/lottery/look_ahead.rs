//! The O(1) draw's look-ahead: lotteries planned a few picks before they
//! are held, so the members they read are already in cache.

use super::*;

/// Runnable clients from which the O(1) draw plans its lotteries ahead
/// ([`LookAhead`]): 2^16 members are 512 KB, the size of L2 here. Measured
/// (alternated six times) at 7·10^4 and 10^5 clients, planning took a pick
/// from 19.2 / 19.9 ns to 15.4 / 16.0 (medians); when plans cost four
/// xoshiro words (before wyrand and the cached group order) it made 10^5
/// dearer (19 against 15 ns), hence 2^18 then.
pub(super) const O1_PREFETCH_MIN: usize = 1 << 16;

/// Lotteries planned ahead: at ~20 ns a pick, 8 give a prefetch ~160 ns
/// to land, more than one miss to DRAM through a nested page walk in this
/// VM (a chained random read over 8 MB: 50–140 ns). Measured at 10^6
/// clients: 4 were too few (23–25 ns against 19 ns), 16 no better than 8.
pub(super) const O1_LOOKAHEAD: usize = 8;

/// Mixed into the policy's seed for the look-ahead's generators, so that
/// their words are not those of another generator from the same seed.
pub(super) const WORDS_SEED: u64 = 0x2545_f491_4f6c_dd1d;
pub(super) const RETRY_SEED: u64 = 0x6c07_8965_d5a6_2c1d;

/// Candidates in a planned lottery's first round. A round fails when all
/// reject, with probability E[(1 − value/2^(k+1))^c] ≤ 2^-c (weights
/// uniform in an octave: 1/12 for 2, 1/32 for 3), and a failed round goes
/// on from the retry generator, its lines prefetched only when it falls
/// in the group of the last failure; each candidate is one more line to
/// fetch per pick. Drawn two to a word ([`pair_below`]). Measured in
/// criterion, alternated four times: 2 against 3 took pick + charge from
/// 18.0 to 15.1 ns at 10^5 clients and from 21.9 to 19.7 at 10^6 (medians).
pub(super) const O1_CANDIDATES: usize = 2;

/// A plan's `k` when its ticket word was rejected: the whole lottery is
/// drawn from the retry generator.
pub(super) const PLAN_NONE: usize = 128;

/// Added to a plan's `k` when its group is known but its candidates are
/// not (a rejected candidate word, or a group of values ≥ 2^32): the
/// lottery goes on from the retry generator in that group.
pub(super) const PLAN_GROUP_ONLY: usize = 64;

/// A lottery planned [`O1_LOOKAHEAD`] picks before it is held: the group
/// and candidates its words named, as of the members' `version`. The
/// words themselves are not kept: a plan gone stale is dropped and its
/// lottery drawn afresh from the retry generator — whether a plan goes
/// stale depends on the callers' changes, never on the plan's words, so
/// dropping it biases nothing. So is a plan made before the clients last
/// fell below the threshold: any leave or block since bumped `version`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    pub(super) version: u64,
    /// The group, below 64 when `cands` hold the first round; else
    /// [`PLAN_GROUP_ONLY`] + the group, or [`PLAN_NONE`].
    pub(super) k: usize,
    pub(super) cands: [u64; O1_CANDIDATES],
}

/// The groups in the look-ahead's order ([`O1Draw::order`]): `first`, the
/// two heaviest, take tickets below `cut[0]` and `cut[1]`; the groups of
/// `rest` follow from the top down.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Order {
    pub(super) first: [usize; 2],
    pub(super) cut: [u64; 2],
    pub(super) rest: u64,
}

/// No plan: the lottery is drawn from the retry generator.
pub(super) const UNPLANNED: Plan = Plan {
    version: 0,
    k: PLAN_NONE,
    cands: [0; O1_CANDIDATES],
};

/// The O(1) draw's look-ahead: the next [`O1_LOOKAHEAD`] lotteries, each
/// planned (its words drawn, its first members prefetched) when the one
/// that many picks earlier is held. A lottery's words are fixed when it
/// is planned, so the members it loads first are known — and in cache —
/// by the time it is held; anything else it needs comes from `retry`.
/// Its own generators, not the policy's: wyrand's words cost half the
/// instructions of xoshiro256**'s (with three words a plan, cachegrind
/// counted ~30 fewer a pick), and a lottery's law does not depend on
/// which generator its words come from.
#[derive(Debug, Clone)]
pub(super) struct LookAhead {
    pub(super) plans: [Plan; O1_LOOKAHEAD],
    /// The plan of the next lottery.
    pub(super) next: usize,
    /// The plans' words.
    pub(super) words: WyRand,
    /// Whatever a plan cannot settle.
    pub(super) retry: WyRand,
    /// [`O1Draw::order`] as of the members' version `order_version`.
    pub(super) order: Order,
    pub(super) order_version: u64,
}

impl LookAhead {
    pub(super) fn new(seed: u64) -> Box<LookAhead> {
        Box::new(LookAhead {
            plans: [UNPLANNED; O1_LOOKAHEAD],
            next: 0,
            words: WyRand::new(seed ^ WORDS_SEED),
            retry: WyRand::new(seed ^ RETRY_SEED),
            order: Order::default(),
            // No version of the members reaches this (2^64 − 1 changes).
            order_version: u64::MAX,
        })
    }
}

/// Ask for the cache line at `p` without waiting for it (a hint: no
/// fault, whatever the address).
#[inline(always)]
pub(super) fn prefetch_line<T>(p: *const T) {
    // SAFETY: the intrinsic needs SSE, which every x86_64 target has, and
    // a prefetch never dereferences: any address, even a dangling one, is
    // allowed. Measured: planning ahead takes two thirds off a pick at
    // 10^6 clients.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    //! The O(1) draw's look-ahead (planned lotteries, retry generator),
    //! reached with a few dozen clients by lowering its threshold.
    use super::super::*;
    use crate::rng::SplitMix64;
    use crate::Scheduler;

    const Q: u64 = 1_000_000;

    /// Chi-square of the wins of a look-ahead lottery over `values`, while
    /// every `every` picks one client is reweighted (so planned lotteries
    /// go stale) and one is blocked and woken; twice the clients fall
    /// below the threshold and come back (plans dropped and remade). The
    /// expected wins of a client are the sum over picks of its share of
    /// the runnable value at that pick.
    fn chi2(values: &[u64], seed: u64, picks: usize, every: usize) -> (f64, Lottery) {
        let opts = PolicyOptions {
            quantum_ns: Q,
            seed,
        };
        let mut l = Lottery::new(&opts, Draw::O1);
        l.look_ahead_from = values.len() - 2;
        let ids: Vec<ClientId> = values.iter().map(|&v| l.join(v).unwrap()).collect();
        let mut w = values.to_vec();
        let mut up = vec![true; w.len()];
        let mut g = SplitMix64::new(seed ^ 0xabc);
        let (mut won, mut expected) = (vec![0f64; w.len()], vec![0f64; w.len()]);
        for p in 0..picks {
            if p % every == every - 1 {
                let i = (g.next_u64() % w.len() as u64) as usize;
                let j = (g.next_u64() % w.len() as u64) as usize;
                // A reweight inside or across groups, within 2^32.
                w[i] = (values[j] >> (g.next_u64() % 3)).max(1);
                l.set_weight(ids[i], w[i]).unwrap();
                if up[j] {
                    l.block(ids[j]).unwrap();
                    l.wake(ids[j]).unwrap();
                }
            }
            if p == picks / 3 || p == 2 * picks / 3 {
                // Three down, below the threshold, then back up.
                for i in 0..3 {
                    l.block(ids[i]).unwrap();
                    up[i] = false;
                }
                for _ in 0..50 {
                    let c = l.pick().unwrap();
                    l.charge(c, Q).unwrap();
                }
                for i in 0..3 {
                    l.wake(ids[i]).unwrap();
                    up[i] = true;
                }
            }
            let total: u64 = (0..w.len()).filter(|&i| up[i]).map(|i| w[i]).sum();
            for i in (0..w.len()).filter(|&i| up[i]) {
                expected[i] += w[i] as f64 / total as f64;
            }
            let c = l.pick().unwrap();
            won[c] += 1.0;
            l.charge(c, Q).unwrap();
        }
        let x = (0..w.len())
            .map(|i| (won[i] - expected[i]).powi(2) / expected[i])
            .sum();
        (x, l)
    }

    // Bound: the chi-square 0.999 quantile at df = n − 1 (expected wins
    // are sums of Bernoulli probabilities whose variance is below their
    // mean, so the statistic runs a little under chi-square(df)).
    // df = 23 → 49.73; df = 11 → 31.26.

    #[test]
    fn look_ahead_draws_in_proportion_to_value() {
        // 24 clients in 4 groups, from 2^k (a candidate accepted half the
        // time, so first rounds fail and the retry generator serves) to
        // 2^(k+1) − 1; the smallest expects ≥ 200000·256/Σ ≈ 4400 wins.
        let values: Vec<u64> = (0..24u64)
            .map(|i| {
                let k = 8 + i % 4;
                (1 << k) + (i * 97 % (1 << k))
            })
            .collect();
        for seed in [1, 2] {
            let (x, l) = chi2(&values, seed, 200_000, 7);
            assert!(x < 49.73, "seed {seed}: chi-square {x:.1} at df 23");
            let fresh = WyRand::new(seed ^ RETRY_SEED);
            assert_ne!(l.ahead.unwrap().retry, fresh, "no first round failed");
        }
    }

    #[test]
    fn look_ahead_serves_groups_it_cannot_plan() {
        // Values of 2^31.. and 2^32 (the group a plan leaves to `retry`).
        let values: Vec<u64> = (0..12u64)
            .map(|i| match i % 3 {
                0 => 1 << 32,
                1 => (1 << 31) + i * 12_345_678,
                _ => (1 << 30) + i,
            })
            .collect();
        let (x, _) = chi2(&values, 3, 100_000, 5);
        assert!(x < 31.26, "chi-square {x:.1} at df 11");
    }

    #[test]
    fn look_ahead_is_deterministic() {
        let values: Vec<u64> = (1..=30).map(|i| i * i * 37).collect();
        let run = || {
            let (_, mut l) = chi2(&values, 9, 5_000, 3);
            (0..100)
                .map(|_| {
                    let c = l.pick().unwrap();
                    l.charge(c, Q).unwrap();
                    c
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
