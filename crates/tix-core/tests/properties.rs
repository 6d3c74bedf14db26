//! Property tests over random share sets and random join/leave/reweight/
//! block/wake sequences (proptest, fixed case counts, deterministic runner).

use proptest::prelude::*;
use tix_core::gr3::Gr3;
use tix_core::metrics::{pairwise_error, ServiceTracker};
use tix_core::{registry, ClientId, Error, PolicyOptions, Scheduler};

const Q: u64 = 1_000_000;

fn opts() -> PolicyOptions {
    PolicyOptions {
        quantum_ns: Q,
        seed: 7,
    }
}

fn cfg(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cfg(128))]

    /// GR3 §4.2: with a fixed set of runnable clients every scheduling
    /// cycle (Σ shares quanta, starting at the first pick) gives each client
    /// exactly its share, and the guard for a group without counter is never
    /// needed.
    #[test]
    fn gr3_exact_share_every_cycle(shares in prop::collection::vec(1u64..=64, 1..12)) {
        let mut s = Gr3::new(&opts());
        for &w in &shares {
            s.join(w).unwrap();
        }
        let total: u64 = shares.iter().sum();
        for _cycle in 0..3 {
            let mut got = vec![0u64; shares.len()];
            for _ in 0..total {
                let c = s.pick().unwrap();
                s.charge(c, Q).unwrap();
                got[c] += 1;
            }
            prop_assert_eq!(&got, &shares);
        }
        prop_assert_eq!(s.guard_hits(), 0);
    }

    /// WF2Q+ (all clients backlogged, whole quanta): every client's service
    /// error against GPS, E(0,t) at quantum boundaries, stays within one
    /// quantum either way — Bennett & Zhang's worst-case fairness, which
    /// GR3 §3 quotes as "−1 and +1". Slack 1e-6 covers the 2^-40 ns
    /// fixed point of virtual time.
    #[test]
    fn wf2q_lag_within_one_quantum(shares in prop::collection::vec(1u64..=40, 2..10)) {
        let mut s = registry::build("wf2q", &opts()).unwrap();
        let mut t = ServiceTracker::new(Q).unwrap();
        for &w in &shares {
            s.join(w).unwrap();
            t.join(w).unwrap();
        }
        for _ in 0..300 {
            let c = s.pick().unwrap();
            s.charge(c, Q).unwrap();
            t.charge(c, Q).unwrap();
        }
        let (lo, hi) = t.error_range();
        prop_assert!(lo >= -1.0 - 1e-6 && hi <= 1.0 + 1e-6, "{lo} {hi}");
    }

    /// Stride keeps the pairwise relative error of every pair within one
    /// quantum, whatever fraction of its quantum each run uses. Exact
    /// argument: a client is picked only with the minimum pass, so after
    /// any charge pass_i ≤ pass_j + used_i/w_i ≤ pass_j + q/w_i for all j;
    /// multiplying by w_i·w_j/(w_i + w_j) gives e_ij ≤ w_j/(w_i+w_j) ≤ 1.
    /// The 2^-16 fixed point loses < 1 unit per charge: over m ≤ 400 charges
    /// that is < 400·64/(2^16·q) ≈ 4e-7 quanta, hence the 1e-6 slack.
    #[test]
    fn stride_pairwise_error_within_one_quantum(
        shares in prop::collection::vec(1u64..=64, 2..8),
        used in prop::collection::vec(1u64..=Q, 400),
    ) {
        let mut s = registry::build("stride", &opts()).unwrap();
        for &w in &shares {
            s.join(w).unwrap();
        }
        let mut served = vec![0f64; shares.len()];
        for &u in &used {
            let c = s.pick().unwrap();
            s.charge(c, u).unwrap();
            served[c] += u as f64 / Q as f64;
            for i in 0..shares.len() {
                for j in 0..shares.len() {
                    let e = pairwise_error(shares[i], served[i], shares[j], served[j]);
                    prop_assert!(e.abs() <= 1.0 + 1e-6, "e[{i}][{j}] = {e}");
                }
            }
        }
    }
}

/// A random operation on a scheduler; indices may name unknown clients.
#[derive(Debug, Clone)]
enum Op {
    Join(u64),
    Leave(usize),
    SetWeight(usize, u64),
    Block(usize),
    Wake(usize),
    /// pick, then charge this fraction (per mille) of a quantum.
    Run(u64),
    /// pick; try to block/leave/reweight the client in service (refused);
    /// block another client (allowed while one runs); charge the wrong
    /// client (refused), then the right one.
    Pending(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..=16).prop_map(Op::Join),
        1 => (0usize..12).prop_map(Op::Leave),
        2 => ((0usize..12), (0u64..=16)).prop_map(|(i, w)| Op::SetWeight(i, w)),
        2 => (0usize..12).prop_map(Op::Block),
        2 => (0usize..12).prop_map(Op::Wake),
        6 => (0u64..=1000).prop_map(Op::Run),
        1 => (0usize..12).prop_map(Op::Pending),
    ]
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum M {
    Runnable,
    Blocked,
    Left,
}

/// Apply `ops` to `s`, checking every result against a model of the
/// client states: Ok exactly when the model allows it, otherwise the
/// typed error the model predicts; pick only ever returns a runnable client
/// and returns None only when nobody is runnable.
fn drive(s: &mut dyn Scheduler, ops: &[Op]) -> Result<Vec<M>, TestCaseError> {
    let mut m: Vec<M> = Vec::new();
    let known = |m: &Vec<M>, i: usize| i < m.len() && m[i] != M::Left;
    for o in ops {
        match *o {
            Op::Join(w) => {
                let r = s.join(w);
                if w == 0 {
                    prop_assert_eq!(r, Err(Error::ZeroWeight));
                } else {
                    prop_assert_eq!(r, Ok(m.len()));
                    m.push(M::Runnable);
                }
            }
            Op::Leave(i) => {
                let r = s.leave(i);
                if known(&m, i) {
                    prop_assert_eq!(r, Ok(()));
                    m[i] = M::Left;
                } else {
                    prop_assert_eq!(r, Err(Error::UnknownClient(i)));
                }
            }
            Op::SetWeight(i, w) => {
                let r = s.set_weight(i, w);
                if !known(&m, i) {
                    prop_assert_eq!(r, Err(Error::UnknownClient(i)));
                } else if w == 0 {
                    prop_assert_eq!(r, Err(Error::ZeroWeight));
                } else {
                    prop_assert_eq!(r, Ok(()));
                    prop_assert_eq!(s.weight(i), Ok(w));
                }
            }
            Op::Block(i) => {
                let r = s.block(i);
                if !known(&m, i) {
                    prop_assert_eq!(r, Err(Error::UnknownClient(i)));
                } else if m[i] == M::Blocked {
                    prop_assert_eq!(r, Err(Error::AlreadyBlocked(i)));
                } else {
                    prop_assert_eq!(r, Ok(()));
                    m[i] = M::Blocked;
                }
            }
            Op::Wake(i) => {
                let r = s.wake(i);
                if !known(&m, i) {
                    prop_assert_eq!(r, Err(Error::UnknownClient(i)));
                } else if m[i] == M::Runnable {
                    prop_assert_eq!(r, Err(Error::AlreadyRunnable(i)));
                } else {
                    prop_assert_eq!(r, Ok(()));
                    m[i] = M::Runnable;
                }
            }
            Op::Run(permille) => match s.pick() {
                None => prop_assert!(m.iter().all(|&x| x != M::Runnable)),
                Some(c) => {
                    prop_assert_eq!(m.get(c), Some(&M::Runnable));
                    prop_assert_eq!(s.charge(c, Q * permille / 1000), Ok(()));
                }
            },
            Op::Pending(i) => {
                if let Some(c) = s.pick() {
                    prop_assert_eq!(s.pick(), Some(c));
                    prop_assert_eq!(s.block(c), Err(Error::PickPending));
                    prop_assert_eq!(s.leave(c), Err(Error::PickPending));
                    prop_assert_eq!(s.set_weight(c, 3), Err(Error::PickPending));
                    if known(&m, i) && i != c {
                        prop_assert_eq!(s.charge(i, Q), Err(Error::NotInService(i)));
                        if m[i] == M::Runnable {
                            prop_assert_eq!(s.block(i), Ok(()));
                            m[i] = M::Blocked;
                        }
                    }
                    prop_assert_eq!(s.charge(c, Q), Ok(()));
                    prop_assert_eq!(s.charge(c, Q), Err(Error::NotInService(c)));
                }
            }
        }
        let n = m.iter().filter(|&&x| x == M::Runnable).count();
        prop_assert_eq!(s.runnable(), n);
    }
    Ok(m)
}

proptest! {
    #![proptest_config(cfg(64))]

    /// GR3 after arbitrary joins/leaves/reweights/blocks/wakes: once the
    /// set stops changing, every cycle from the next cycle boundary on
    /// gives each runnable client exactly its share.
    #[test]
    fn gr3_exact_share_after_dynamic_changes(ops in prop::collection::vec(op(), 1..80)) {
        let mut s = Gr3::new(&opts());
        let m = drive(&mut s, &ops)?;
        let live: Vec<ClientId> = (0..m.len()).filter(|&i| m[i] == M::Runnable).collect();
        prop_assume!(!live.is_empty());
        let w: Vec<u64> = (0..m.len()).map(|i| if m[i] == M::Runnable { s.weight(i).unwrap() } else { 0 }).collect();
        let total: u64 = w.iter().sum();
        // Finish the current cycle: at most `total` quanta remain in it
        // (a cycle's counters never exceed the shares: eqs. 8–9 round up
        // but stay ≤ S_A).
        let c0 = s.cycle();
        let mut steps = 0;
        while s.cycle() == c0 {
            let c = s.pick().unwrap();
            s.charge(c, Q).unwrap();
            steps += 1;
            prop_assert!(steps <= total, "cycle did not end within {total} quanta");
        }
        for _ in 0..2 {
            let mut got = vec![0u64; m.len()];
            for _ in 0..total {
                let c = s.pick().unwrap();
                s.charge(c, Q).unwrap();
                got[c] += 1;
            }
            prop_assert_eq!(&got, &w);
        }
    }
}

/// The largest number of picks a runnable client with weight ≥ 1 may wait,
/// with n runnable clients of total weight W, all using whole quanta:
/// * rr: n (one turn each);
/// * wrr: W (everyone else's turn of w_j quanta);
/// * gr3, vtrr, srr: 2W — these serve every client at least once per cycle
///   (GR3, VTRR: a cycle is W quanta and ends with every counter spent; SRR:
///   one WSS pass is W quanta and serves every client w times), and a client
///   waits at most the rest of the current cycle plus one cycle;
/// * stride, wfq, wf2q, eevdf: n + W + W: any other client j can be picked
///   at most about w_j·(gap in virtual time)/q + 1 times before the waiting
///   client, and that gap is ≤ 2q/w_i after a wake or reweight (the
///   place/clamp rules bound a client's distance from the system virtual
///   time by two slices);
/// * mlfq: a boost every boost_period_quanta(n) quanta puts everyone back in the
///   round-robin top level, where each client runs within n picks.
///
/// FCFS, SJF and SRTF are excluded (they let a client that never blocks
/// keep the processor: starvation by design), and so are the lottery draws
/// (no deterministic bound; their statistics are tested elsewhere).
fn service_bound(algo: &str, n: u64, w: u64) -> u64 {
    match algo {
        "rr" => n,
        "wrr" => w,
        "gr3" | "vtrr" | "srr" => 2 * w,
        "stride" | "wfq" | "wf2q" | "eevdf" => n + 2 * w,
        "mlfq" => tix_core::mlfq::boost_period_quanta(n as usize) + n,
        _ => unreachable!(),
    }
}

const BOUNDED: &[&str] = &[
    "rr", "wrr", "gr3", "vtrr", "srr", "stride", "wfq", "wf2q", "eevdf", "mlfq",
];

proptest! {
    #![proptest_config(cfg(64))]

    /// Every policy in the registry (lottery draws included) answers random
    /// operation sequences with exactly the model's results and typed
    /// errors, never a panic.
    #[test]
    fn random_ops_give_typed_errors(ops in prop::collection::vec(op(), 1..120)) {
        for algo in registry::ALGOS {
            let mut s = registry::build(algo, &opts()).unwrap();
            drive(s.as_mut(), &ops).map_err(|e| TestCaseError::fail(format!("{algo}: {e}")))?;
        }
    }

    /// After a random history, every runnable client is served within the
    /// bound of `service_bound`, measured from the end of the history and
    /// between consecutive services, over 3 bounds' worth of picks.
    #[test]
    fn every_client_served_within_bound(ops in prop::collection::vec(op(), 1..80)) {
        for algo in BOUNDED {
            let mut s = registry::build(algo, &opts()).unwrap();
            let m = drive(s.as_mut(), &ops)?;
            let live: Vec<ClientId> = (0..m.len()).filter(|&i| m[i] == M::Runnable).collect();
            if live.is_empty() {
                continue;
            }
            let w: u64 = live.iter().map(|&i| s.weight(i).unwrap()).sum();
            let bound = service_bound(algo, live.len() as u64, w);
            let mut last = vec![0u64; m.len()];
            for t in 1..=3 * bound {
                let c = s.pick().unwrap();
                s.charge(c, Q).unwrap();
                prop_assert!(t - last[c] <= bound, "{algo}: client {c} waited {} > {bound}", t - last[c]);
                last[c] = t;
            }
            for &i in &live {
                prop_assert!(3 * bound - last[i] < bound, "{algo}: client {i} starved");
            }
        }
    }
}
