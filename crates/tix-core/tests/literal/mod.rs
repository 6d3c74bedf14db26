//! What the literal-model tests share: the library's schedule of a static
//! set, the share sets they draw, and the case count. Only the harness:
//! each model lives in its own file and shares nothing with the library.
#![allow(dead_code)] // each test file uses its own part

use proptest::prelude::*;
use proptest::test_runner::Config;
use tix_core::{registry, ClientId, PolicyOptions};

/// 2,000 cases, or TIX_LITERAL_CASES (the long run uses 10^6).
pub fn config() -> Config {
    Config {
        cases: std::env::var("TIX_LITERAL_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2_000),
        failure_persistence: None,
        ..Config::default()
    }
}

/// How many picks a static check compares: two cycles (Σ shares quanta
/// each), at most 4,000.
pub fn two_cycles(shares: &[u64]) -> usize {
    (2 * shares.iter().sum::<u64>()).min(4_000) as usize
}

/// The library's first `n` picks for `shares` joined in order, every
/// quantum charged whole at `quantum_ns`.
pub fn library(algo: &str, shares: &[u64], n: usize, quantum_ns: u64) -> Vec<ClientId> {
    let mut s = registry::build(
        algo,
        &PolicyOptions {
            quantum_ns,
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
            s.charge(c, quantum_ns).unwrap();
            c
        })
        .collect()
}

/// `v` with `big` inserted at position `at` (mod its length + 1).
fn with_big(mut v: Vec<u64>, big: u64, at: usize) -> Vec<u64> {
    let at = at % (v.len() + 1);
    v.insert(at, big);
    v
}

/// Shares drawn three ways: uniform small (up to 12 clients of 1..=16),
/// spread over groups 2^0..2^max_k (up to `spread` clients), and skewed
/// (one share of 1..=`big` among up to 20 of 1..=3).
pub fn shares(max_k: u32, spread: usize, big: u64) -> impl Strategy<Value = Vec<u64>> {
    prop_oneof![
        prop::collection::vec(1u64..=16, 1..=12),
        prop::collection::vec(
            (0u32..=max_k, 0u64..1 << max_k).prop_map(|(k, r)| (1 << k) + r % (1 << k)),
            1..=spread
        ),
        (
            prop::collection::vec(1u64..=3, 1..=20),
            1u64..=big,
            0usize..=20
        )
            .prop_map(|(v, b, at)| with_big(v, b, at)),
    ]
}

/// Odd parts that divide 45,045 = EXACT_Q / 2^4.
pub const ODD: [u64; 14] = [1, 3, 5, 7, 9, 11, 13, 15, 21, 35, 45, 63, 99, 143];

/// A quantum that, times 2^16 (the smallest fixed-point shift the
/// library uses: 16, 20, 40), every `exact_shares` share divides:
/// 720,720 ns = 2^4 · 45,045.
pub const EXACT_Q: u64 = 720_720;

/// Shares whose odd part divides 45,045, times 2^0..2^12: where the
/// library's fixed-point virtual times are exact at EXACT_Q.
pub fn exact_shares() -> impl Strategy<Value = Vec<u64>> {
    let odd = prop::sample::select(ODD.to_vec());
    prop_oneof![
        prop::collection::vec((odd.clone(), 0u32..=3).prop_map(|(d, k)| d << k), 1..=12),
        prop::collection::vec((odd.clone(), 0u32..=12).prop_map(|(d, k)| d << k), 1..=8),
        (
            prop::collection::vec(1u64..=3, 1..=20),
            odd,
            2u32..=6,
            0usize..=20
        )
            .prop_map(|(v, d, k, at)| with_big(v, d << k, at)),
    ]
}

/// One step of a workload. Indices pick among the clients that exist at
/// that moment (mod their number), so every generated sequence is valid.
#[derive(Debug, Clone)]
pub enum Op {
    Pick,
    Join(u64),
    Leave(usize),
    Block(usize),
    Wake(usize),
    Weight(usize, u64),
}

pub fn weight() -> impl Strategy<Value = u64> {
    let odd = prop::sample::select(ODD.to_vec());
    (odd, 0u32..=6).prop_map(|(d, k)| d << k)
}

pub fn ops() -> impl Strategy<Value = (Vec<u64>, Vec<Op>)> {
    let op = prop_oneof![
        6 => Just(Op::Pick),
        1 => weight().prop_map(Op::Join),
        1 => any::<usize>().prop_map(Op::Leave),
        2 => any::<usize>().prop_map(Op::Block),
        2 => any::<usize>().prop_map(Op::Wake),
        1 => (any::<usize>(), weight()).prop_map(|(i, w)| Op::Weight(i, w)),
    ];
    (
        prop::collection::vec(weight(), 1..=8),
        prop::collection::vec(op, 1..=300),
    )
}

#[derive(Clone, Copy, PartialEq)]
pub enum St {
    Runnable,
    Blocked,
    Gone,
}

/// What the harness asks of a model. Ops arrive only where they are valid:
/// `block` and `leave` of a runnable client, or `leave` of a blocked one,
/// `wake` of a blocked one; never while a pick is unanswered.
pub trait Model {
    fn states(&self) -> &[St];
    fn join(&mut self, t: u64) -> ClientId;
    fn pick(&mut self) -> Option<ClientId>;
    fn leave(&mut self, a: ClientId);
    fn block(&mut self, a: ClientId);
    fn wake(&mut self, a: ClientId);
    fn weight(&mut self, a: ClientId, t: u64);
}

/// The clients that exist (joined, not left), in join order.
fn alive(state: &[St]) -> Vec<ClientId> {
    (0..state.len()).filter(|&a| state[a] != St::Gone).collect()
}

pub fn run_model(
    algo: &str,
    m: &mut dyn Model,
    initial: &[u64],
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let mut lib = registry::build(
        algo,
        &PolicyOptions {
            quantum_ns: EXACT_Q,
            seed: 1,
        },
    )
    .unwrap();
    for &t in initial {
        let id = lib.join(t).unwrap();
        prop_assert_eq!(id, m.join(t));
    }
    for (step, op) in ops.iter().enumerate() {
        let live = alive(m.states());
        let nth = |i: usize| live[i % live.len()];
        match *op {
            Op::Pick => {
                let want = m.pick();
                let got = lib.pick();
                prop_assert_eq!(got, want, "step {}: {:?}", step, op);
                if let Some(c) = got {
                    lib.charge(c, EXACT_Q).unwrap();
                }
            }
            Op::Join(t) => {
                let id = lib.join(t).unwrap();
                prop_assert_eq!(id, m.join(t));
            }
            _ if live.is_empty() => {}
            Op::Leave(i) => {
                let a = nth(i);
                lib.leave(a).unwrap();
                m.leave(a);
            }
            Op::Block(i) => {
                let a = nth(i);
                if m.states()[a] == St::Runnable {
                    lib.block(a).unwrap();
                    m.block(a);
                }
            }
            Op::Wake(i) => {
                let a = nth(i);
                if m.states()[a] == St::Blocked {
                    lib.wake(a).unwrap();
                    m.wake(a);
                }
            }
            Op::Weight(i, t) => {
                let a = nth(i);
                lib.set_weight(a, t).unwrap();
                m.weight(a, t);
            }
        }
    }
    Ok(())
}
