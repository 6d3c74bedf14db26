//! Unit behaviour of the deterministic policies: the choices each module
//! documents (GR3's rounding and ratios, stride's kernel rules, EEVDF's
//! eligibility, SRR's sequence, VTRR's scan, MLFQ's levels).

use tix_core::eevdf::Eevdf;
use tix_core::gr3::Gr3;
use tix_core::mlfq::{Mlfq, BOOST_QUANTA};
use tix_core::stride::{pass_delta, Stride};
use tix_core::{registry, ClientId, Error, PolicyOptions, Scheduler};

const Q: u64 = 1_000_000;

fn opts() -> PolicyOptions {
    PolicyOptions {
        quantum_ns: Q,
        seed: 1,
    }
}

fn run(s: &mut dyn Scheduler, n: usize) -> Vec<ClientId> {
    (0..n)
        .map(|_| {
            let c = s.pick().unwrap();
            s.charge(c, Q).unwrap();
            c
        })
        .collect()
}

#[test]
fn gr3_joiner_counter_rounds_up() {
    let mut s = Gr3::new(&opts());
    for w in [3, 2, 1] {
        s.join(w).unwrap();
    }
    run(&mut s, 2);
    // Eqs. 8–9: C_D = C_TOTAL·S_D/S_TOTAL = 4·2/6 = 1.33…, rounded up to 2.
    let d = s.join(2).unwrap();
    assert_eq!(s.counter(d), Ok(2));
}

#[test]
fn gr3_group_list_and_ratios() {
    let mut s = Gr3::new(&opts());
    for w in [3, 2, 1] {
        s.join(w).unwrap();
    }
    // Eq. 3: R = 5/1 for group 1; the last group has ratio 1.
    assert_eq!(s.group_list(), vec![(1, 5, 5.0), (0, 1, 1.0)]);

    // Eq. 16: a new group that is not last starts at C_G / S_next.
    let mut s = Gr3::new(&opts());
    s.join(1).unwrap();
    s.join(1).unwrap();
    run(&mut s, 1);
    s.join(4).unwrap(); // C = ⌈1·4/2⌉ = 2, group 2 goes first: R = 2/2.
    assert_eq!(s.group_list(), vec![(2, 4, 1.0), (0, 2, 1.0)]);
}

#[test]
fn gr3_equal_group_shares_tie_by_group_number() {
    let mut s = Gr3::new(&opts());
    s.join(1).unwrap();
    s.join(1).unwrap();
    s.join(2).unwrap();
    let l = s.group_list();
    assert_eq!((l[0].0, l[1].0), (1, 0));
}

#[test]
fn stride_pass_delta_is_the_kernel_rule() {
    assert_eq!(pass_delta(1_000_000, 3), (1_000_000u64 << 16) / 3);
    assert_eq!(pass_delta(u64::MAX, 1), u64::MAX);
    assert_eq!(pass_delta(10, 0), 10 << 16);
}

#[test]
fn stride_wake_takes_global_pass() {
    let mut s = Stride::new(&opts());
    let a = s.join(1).unwrap();
    let b = s.join(1).unwrap();
    s.block(b).unwrap();
    run(&mut s, 5);
    assert_eq!(s.pass(b), Ok(0));
    s.wake(b).unwrap();
    // Global pass = a's pass when last picked (before its last charge).
    assert_eq!(s.global_pass(), 4 * pass_delta(Q, 1));
    assert_eq!(s.pass(b), Ok(s.global_pass()));
    assert_eq!(s.pass(a), Ok(5 * pass_delta(Q, 1)));
    assert_eq!(s.pick(), Some(b));
}

#[test]
fn eevdf_picks_only_eligible_clients() {
    let mut s = Eevdf::new(&opts());
    for w in [1, 3, 7, 2, 5] {
        s.join(w).unwrap();
    }
    let mut x = 12345u64;
    for _ in 0..500 {
        let c = s.pick().unwrap();
        // Eligible: lag = w·(V − v) ≥ 0 (allowing V's 1-unit floor).
        assert!(
            s.lag_ns(c).unwrap() >= -1e-3,
            "lag {}",
            s.lag_ns(c).unwrap()
        );
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s.charge(c, 1 + (x >> 33) % Q).unwrap();
    }
    // Σ lag = Σ w·(V − v) = 0 by the definition of V (up to the floor).
    let total: f64 = (0..5).map(|i| s.lag_ns(i).unwrap()).sum();
    assert!(total.abs() < 1e-2, "{total}");
}

#[test]
fn srr_follows_the_weight_spread_sequence() {
    let mut s = registry::build("srr", &opts()).unwrap();
    for w in [3, 2, 1] {
        s.join(w).unwrap();
    }
    // k = 2, WSS^2 = 1,2,1: column 2^1 = {A, B}, column 2^0 = {A, C}.
    assert_eq!(run(s.as_mut(), 12), [0, 1, 0, 2, 0, 1].repeat(2));
}

#[test]
fn vtrr_scans_while_vft_allows() {
    let mut s = registry::build("vtrr", &opts()).unwrap();
    for w in [3, 2, 1] {
        s.join(w).unwrap();
    }
    // A,B,C in turn; back to A; B (VFT 1 − QVT 2/3 < 1/2); C's VFT 2 is
    // too far ahead (2 − 5/6 ≥ 1) so the scan returns to A.
    assert_eq!(run(s.as_mut(), 12), [0, 1, 2, 0, 1, 0].repeat(2));
}

#[test]
fn vtrr_keeps_the_time_counter_invariant() {
    let mut s = registry::build("vtrr", &opts()).unwrap();
    for w in [4, 2, 2] {
        s.join(w).unwrap();
    }
    // Counters 4,2,2; S = 8. A, then B (VFT 1/2 − QVT(t+Q) 2/8 < 1/2).
    // B's counter is now 1 < C's 2, so C must run whatever its VFT
    // (1 − 2/8 ≥ 1/2 would send the scan home). A, B (1 − 5/8 < 1/2), C
    // again by the counter rule, then A's last two quanta.
    assert_eq!(run(s.as_mut(), 16), [0, 1, 2, 0, 1, 2, 0, 0].repeat(2));
}

#[test]
fn mlfq_demotes_and_boosts() {
    let mut s = Mlfq::new(&opts());
    let a = s.join(1).unwrap();
    run(&mut s, 1);
    assert_eq!(s.level(a), Ok(1));
    run(&mut s, 2);
    assert_eq!(s.level(a), Ok(2));
    run(&mut s, (BOOST_QUANTA - 3) as usize);
    assert_eq!(s.level(a), Ok(0));
}

#[test]
fn burst_aware_policies_validate_ids() {
    for algo in ["sjf", "srtf"] {
        let mut s = registry::build(algo, &opts()).unwrap();
        let b = s.as_burst_aware().unwrap();
        assert_eq!(b.set_burst(3, 10), Err(Error::UnknownClient(3)));
    }
    let mut s = registry::build("gr3", &opts()).unwrap();
    assert!(s.as_burst_aware().is_none());
}

#[test]
fn weights_above_the_maximum_are_refused() {
    for algo in registry::ALGOS {
        let mut s = registry::build(algo, &opts()).unwrap();
        let r = s.join(tix_core::MAX_WEIGHT + 1);
        assert!(matches!(r, Err(Error::WeightTooLarge { .. })), "{algo}");
        let a = s.join(tix_core::MAX_WEIGHT).unwrap();
        // The largest weight still schedules without overflow.
        s.join(1).unwrap();
        let c = s.pick().unwrap();
        s.charge(c, u64::MAX / 2).unwrap();
        assert!(s.pick().is_some(), "{algo}");
        let _ = a;
    }
}
