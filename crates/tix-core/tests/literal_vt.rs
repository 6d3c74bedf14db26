//! EEVDF and WF2Q+ against literal models of their rules as tix-core
//! states them (eevdf.rs: Linux's EEVDF; wf2q.rs: Bennett & Zhang's WF2Q
//! with Stoica's "+" virtual time, as GR3 §3 cites it), sharing no code
//! with the library; exact fractions, pick for pick on random share sets.
//!
//! EEVDF: a client's virtual runtime after n_A quanta is n_A/S_A; the
//! average V = Σ S·v / Σ S = Σ n / Σ S; a client is eligible when v ≤ V;
//! its deadline is v + 1/S (slice = one quantum, refreshed at every run);
//! the eligible client with the earliest deadline runs.
//! WF2Q+: a client's virtual start S_A and finish F_A = S_A + 1/share; the
//! system virtual time V grows by 1/Σ share per quantum and is raised to
//! the smallest start when nobody is eligible (S_A ≤ V); the eligible
//! client with the smallest finish runs, and its start becomes its finish.
//! Ties (neither rule names one): join order, the library's choice.
//! The library's virtual times are fixed point (2^-20 ns per unit of
//! share), exact when every share divides the quantum times 2^20 — and,
//! for WF2Q+'s V, when the sum of shares does too: EEVDF's shares (odd
//! part dividing 45,045) are exact at a 720,720 ns quantum; WF2Q+ runs
//! each set at the least quantum all its shares and their sum divide.
//! Scope: static sets, all clients joined before the first pick.

mod literal;

use proptest::prelude::*;
use tix_core::ClientId;

/// a/b < c/d for positive denominators.
fn lt(a: u128, b: u128, c: u128, d: u128) -> bool {
    a * d < c * b
}

fn eevdf_paper(shares: &[u64], n: usize) -> Vec<ClientId> {
    let w: Vec<u128> = shares.iter().map(|&s| s as u128).collect();
    let total: u128 = w.iter().sum();
    let mut runs = vec![0u128; w.len()];
    (0..n)
        .map(|_| {
            let sum_runs: u128 = runs.iter().sum();
            let mut best: Option<usize> = None;
            for a in 0..w.len() {
                // Eligible: runs_a / w_a ≤ Σ runs / Σ w.
                if runs[a] * total > sum_runs * w[a] {
                    continue;
                }
                // Deadline (runs_a + 1) / w_a, earliest first, then join order.
                if best.is_none_or(|b| lt(runs[a] + 1, w[a], runs[b] + 1, w[b])) {
                    best = Some(a);
                }
            }
            let a = best.expect("some client is always eligible (v ≤ the average for one)");
            runs[a] += 1;
            a
        })
        .collect()
}

fn gcd128(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd128(b, a % b)
    }
}

fn wf2q_paper(shares: &[u64], n: usize) -> Vec<ClientId> {
    let w: Vec<u128> = shares.iter().map(|&s| s as u128).collect();
    let total: u128 = w.iter().sum();
    let mut runs = vec![0u128; w.len()];
    // V = vp / vq, an exact fraction.
    let (mut vp, mut vq) = (0u128, 1u128);
    (0..n)
        .map(|_| {
            // Eligible: S_A = runs_A / w_A ≤ V.
            let eligible = |a: usize, vp: u128, vq: u128| runs[a] * vq <= vp * w[a];
            if !(0..w.len()).any(|a| eligible(a, vp, vq)) {
                // Raise V to the smallest start.
                let a = (0..w.len())
                    .min_by(|&a, &b| (runs[a] * w[b]).cmp(&(runs[b] * w[a])))
                    .unwrap();
                (vp, vq) = (runs[a], w[a]);
            }
            let mut best: Option<usize> = None;
            for a in 0..w.len() {
                if eligible(a, vp, vq)
                    && best.is_none_or(|b| lt(runs[a] + 1, w[a], runs[b] + 1, w[b]))
                {
                    best = Some(a);
                }
            }
            let a = best.unwrap();
            runs[a] += 1;
            // V += 1 / Σ share.
            (vp, vq) = (vp * total + vq, vq * total);
            let g = gcd128(vp, vq).max(1);
            (vp, vq) = (vp / g, vq / g);
            a
        })
        .collect()
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The least quantum every share and their sum divide: the library's
/// fixed point is then exact for WF2Q+'s V as well.
fn exact_quantum(shares: &[u64]) -> u64 {
    let sum: u64 = shares.iter().sum();
    shares
        .iter()
        .chain([&sum])
        .fold(1, |l, &x| l / gcd(l, x) * x)
}

/// WF2Q+'s sets: small shares (few clients, so the least common quantum
/// stays small) or one large share among ones.
fn wf2q_shares() -> impl Strategy<Value = Vec<u64>> {
    prop_oneof![
        prop::collection::vec(1u64..=16, 1..=6),
        (
            prop::collection::vec(1u64..=2, 1..=12),
            1u64..=300,
            0usize..=12
        )
            .prop_map(|(mut v, big, at)| {
                let at = at % (v.len() + 1);
                v.insert(at, big);
                v
            }),
    ]
}

proptest! {
    #![proptest_config(literal::config())]

    #[test]
    fn eevdf_follows_the_model(shares in literal::exact_shares()) {
        let n = literal::two_cycles(&shares);
        prop_assert_eq!(literal::library("eevdf", &shares, n, literal::EXACT_Q), eevdf_paper(&shares, n), "shares {:?}", shares);
    }

    #[test]
    fn wf2q_follows_the_model(shares in wf2q_shares()) {
        let q = exact_quantum(&shares);
        prop_assume!(q < 1 << 36);
        let n = literal::two_cycles(&shares);
        prop_assert_eq!(literal::library("wf2q", &shares, n, q), wf2q_paper(&shares, n), "shares {:?}", shares);
    }
}
