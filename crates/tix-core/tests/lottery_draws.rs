//! Lottery draws (Waldspurger §2.2, §4.2): win counts against t/T by
//! chi-square at fixed seeds, the four draws against each other, the
//! compensation example, and the Scheduler protocol's errors.

use proptest::prelude::*;
use tix_core::compensation::Compensation;
use tix_core::lottery::{Draw, Lottery};
use tix_core::rng::ParkMiller;
use tix_core::{Error, PolicyOptions, Scheduler};

/// 0.999 quantiles of χ²(df) (standard tables): a correct draw fails a test
/// at a fixed seed with probability 0.001; a wrong one (e.g. a share off by
/// 5% of a cell with ~10^4 expected wins) exceeds them many times over.
const CHI2_999_DF9: f64 = 27.88;
const CHI2_999_DF3: f64 = 16.27;

const WEIGHTS: [u64; 10] = [1, 2, 3, 5, 8, 13, 40, 100, 1000, 4];

fn opts(seed: u64) -> PolicyOptions {
    PolicyOptions {
        quantum_ns: 1_000_000,
        seed,
    }
}

fn win_counts(s: &mut dyn Scheduler, weights: &[u64], picks: usize) -> Vec<u64> {
    let ids: Vec<_> = weights.iter().map(|&w| s.join(w).unwrap()).collect();
    let mut counts = vec![0u64; weights.len()];
    for _ in 0..picks {
        let id = s.pick().unwrap();
        counts[ids.iter().position(|&x| x == id).unwrap()] += 1;
        s.charge(id, s.quantum_ns()).unwrap();
    }
    counts
}

/// Pearson's statistic of counts against shares weights/Σweights.
fn chi2_fit(counts: &[u64], weights: &[u64]) -> f64 {
    let n: u64 = counts.iter().sum();
    let t: u64 = weights.iter().sum();
    counts
        .iter()
        .zip(weights)
        .map(|(&c, &w)| {
            let e = n as f64 * w as f64 / t as f64;
            (c as f64 - e).powi(2) / e
        })
        .sum()
}

/// Two-sample statistic for equal sample sizes: Σ (a−b)²/(a+b), χ²(k−1).
fn chi2_two_sample(a: &[u64], b: &[u64]) -> f64 {
    a.iter()
        .zip(b)
        .filter(|(&x, &y)| x + y > 0)
        .map(|(&x, &y)| (x as f64 - y as f64).powi(2) / (x + y) as f64)
        .sum()
}

#[test]
fn names() {
    let names: Vec<_> = Draw::ALL
        .iter()
        .map(|&d| Lottery::new(&opts(1), d).name())
        .collect();
    assert_eq!(
        names,
        ["lottery", "lottery-tree", "lottery-o1", "lottery-race"]
    );
    assert_eq!(Draw::from_name("lottery-o1"), Some(Draw::O1));
    assert_eq!(Draw::from_name("stride"), None);
}

#[test]
fn each_draw_fits_ticket_shares() {
    // 10 clients → df = 9. 100k picks: the smallest cell expects 85 wins.
    for d in Draw::ALL {
        let mut l = Lottery::new(&opts(11), d);
        let c = win_counts(&mut l, &WEIGHTS, 100_000);
        let x = chi2_fit(&c, &WEIGHTS);
        assert!(x < CHI2_999_DF9, "{d:?}: chi2 {x} counts {c:?}");
    }
}

#[test]
fn park_miller_lottery_fits() {
    let mut l = Lottery::with_rng(&opts(1), Draw::List, ParkMiller::new(1));
    let c = win_counts(&mut l, &WEIGHTS, 100_000);
    assert!(chi2_fit(&c, &WEIGHTS) < CHI2_999_DF9);
}

#[test]
fn draws_agree_in_distribution() {
    // Each draw against the list (the paper's reference), independent
    // seeds, equal sample sizes: two-sample χ² with df = 9.
    let reference = win_counts(&mut Lottery::new(&opts(21), Draw::List), &WEIGHTS, 100_000);
    for d in [Draw::Tree, Draw::O1, Draw::Race] {
        let c = win_counts(&mut Lottery::new(&opts(22), d), &WEIGHTS, 100_000);
        let x = chi2_two_sample(&reference, &c);
        assert!(x < CHI2_999_DF9, "{d:?}: chi2 {x}");
    }
}

#[test]
fn a_wrong_distribution_is_rejected() {
    // The test has power: counts drawn with the last two weights swapped
    // (1000 ↔ 4) are far outside the bound.
    let mut swapped = WEIGHTS;
    swapped.swap(8, 9);
    let c = win_counts(&mut Lottery::new(&opts(5), Draw::Tree), &swapped, 20_000);
    assert!(chi2_fit(&c, &WEIGHTS) > 100.0 * CHI2_999_DF9);
}

#[test]
fn dynamic_changes_keep_the_distribution() {
    // Block, wake, reweight and a leave/join mid-run; the final phase is
    // measured against the weights then in force. 4 clients → df = 3.
    for d in Draw::ALL {
        let mut l = Lottery::new(&opts(31), d);
        let ids: Vec<_> = [5u64, 1, 9, 3]
            .iter()
            .map(|&w| l.join(w).unwrap())
            .collect();
        for i in 0..2000 {
            let id = l.pick().unwrap();
            l.charge(id, 1_000_000).unwrap();
            if i % 7 == 0 {
                l.block(ids[1]).unwrap();
                let id = l.pick().unwrap();
                assert_ne!(id, ids[1], "blocked client picked");
                l.charge(id, 10).unwrap();
                l.wake(ids[1]).unwrap();
            }
        }
        l.set_weight(ids[0], 2).unwrap();
        l.leave(ids[3]).unwrap();
        let new = l.join(6).unwrap();
        let live = [ids[0], ids[1], ids[2], new];
        let weights = [2u64, 1, 9, 6];
        let mut counts = [0u64; 4];
        for _ in 0..40_000 {
            let id = l.pick().unwrap();
            counts[live.iter().position(|&x| x == id).unwrap()] += 1;
            l.charge(id, 1_000_000).unwrap();
        }
        let x = chi2_fit(&counts, &weights);
        assert!(x < CHI2_999_DF3, "{d:?}: chi2 {x} {counts:?}");
    }
}

/// CPU share of B when A (400) uses whole 100 ms quanta and B (400) uses
/// 20 ms (f = 1/5), over `picks` lotteries.
fn share_of_short_user(d: Draw, comp: Compensation, picks: usize) -> f64 {
    let o = PolicyOptions {
        quantum_ns: 100,
        seed: 41,
    };
    let mut l = Lottery::new(&o, d).with_compensation(comp);
    let a = l.join(400).unwrap();
    let b = l.join(400).unwrap();
    let (mut ta, mut tb) = (0u64, 0u64);
    for _ in 0..picks {
        let id = l.pick().unwrap();
        if id == a {
            ta += 100;
            l.charge(a, 100).unwrap();
        } else {
            tb += 20;
            l.charge(b, 20).unwrap();
        }
    }
    tb as f64 / (ta + tb) as f64
}

#[test]
fn waldspurger_compensation_restores_one_to_one() {
    // With compensation B is worth 400/f = 2000 at every draw after its
    // first quantum, so it wins with p = 5/6 independently each time, and
    // its CPU share s = 20p̂/(100 − 80p̂) has mean ≈ 1/2 and, by the delta
    // method at n = 60000, sd = |ds/dp|·sqrt(p(1−p)/n) = 1.8 · 0.00152
    // = 0.0027. The bound 0.015 is > 5 sd. (The race's f is held in Q10,
    // 204/1024 instead of 1/5, which moves s by < 0.002.) Without
    // compensation s = 1/6: the rule matters.
    for d in Draw::ALL {
        let s = share_of_short_user(d, Compensation::Waldspurger, 60_000);
        assert!((s - 0.5).abs() < 0.015, "{d:?}: share {s}");
        let s = share_of_short_user(d, Compensation::None, 60_000);
        assert!(
            (s - 1.0 / 6.0).abs() < 0.015,
            "{d:?}: uncompensated share {s}"
        );
    }
}

#[test]
fn compensation_granted_and_revoked() {
    let o = PolicyOptions {
        quantum_ns: 100,
        seed: 1,
    };
    let mut l = Lottery::new(&o, Draw::Tree).with_compensation(Compensation::Waldspurger);
    let a = l.join(400).unwrap();
    assert_eq!(l.pick(), Some(a));
    l.charge(a, 20).unwrap();
    assert_eq!(l.compensation_tickets(a).unwrap(), 1600);
    assert_eq!(l.total_value(), 2000);
    // Survives blocking (Zepp: a sleeping task keeps its compensation) …
    l.block(a).unwrap();
    assert_eq!(l.total_value(), 0);
    l.wake(a).unwrap();
    assert_eq!(l.total_value(), 2000);
    // … and is revoked at the next win.
    assert_eq!(l.pick(), Some(a));
    assert_eq!(l.compensation_tickets(a).unwrap(), 0);
    l.charge(a, 100).unwrap();
    assert_eq!(l.total_value(), 400);
}

#[test]
fn zepp_compensation_in_a_lottery() {
    // 60 ms slice of 6 ticks; 10 ms used = 1 tick → c = 5 → 5·v.
    let o = PolicyOptions {
        quantum_ns: 60_000_000,
        seed: 1,
    };
    let z = Compensation::zepp(6, true).unwrap();
    let mut l = Lottery::new(&o, Draw::O1).with_compensation(z);
    let a = l.join(50).unwrap();
    l.pick();
    l.charge(a, 10_000_000).unwrap();
    assert_eq!(l.compensation_tickets(a).unwrap(), 250 + 15625);
}

#[test]
fn protocol_errors() {
    for d in Draw::ALL {
        let mut l = Lottery::new(&opts(1), d);
        assert_eq!(l.pick(), None);
        assert_eq!(l.join(0), Err(Error::ZeroWeight));
        assert!(matches!(
            l.join((1 << 32) + 1),
            Err(Error::WeightTooLarge { .. })
        ));
        let a = l.join(3).unwrap();
        let b = l.join(4).unwrap();
        assert_eq!((a, b), (0, 1));
        assert_eq!(l.weight(7), Err(Error::UnknownClient(7)));
        assert_eq!(l.charge(a, 1), Err(Error::NotInService(a)));
        let w = l.pick().unwrap();
        let other = if w == a { b } else { a };
        // Pick again before charging: still the client in service.
        assert_eq!(l.pick(), Some(w));
        assert_eq!(l.charge(other, 1), Err(Error::NotInService(other)));
        assert_eq!(l.block(w), Err(Error::PickPending));
        assert_eq!(l.leave(w), Err(Error::PickPending));
        assert_eq!(l.set_weight(w, 2), Err(Error::PickPending));
        l.block(other).unwrap();
        assert_eq!(l.block(other), Err(Error::AlreadyBlocked(other)));
        assert_eq!(l.runnable(), 1);
        l.charge(w, 5).unwrap();
        assert_eq!(l.wake(w), Err(Error::AlreadyRunnable(w)));
        assert_eq!(l.set_weight(w, 0), Err(Error::ZeroWeight));
        l.leave(w).unwrap();
        assert_eq!(l.leave(w), Err(Error::UnknownClient(w)));
        assert_eq!(l.pick(), None);
        l.wake(other).unwrap();
        assert_eq!(l.pick(), Some(other));
        assert_eq!(l.weight(other), Ok(if other == a { 3 } else { 4 }));
        // Ids are never reused.
        l.charge(other, 1).unwrap();
        assert_eq!(l.join(1), Ok(2));
    }
    assert_eq!(
        Lottery::try_new(
            &PolicyOptions {
                quantum_ns: 0,
                seed: 1
            },
            Draw::List
        )
        .err(),
        Some(Error::ZeroQuantum)
    );
}

#[derive(Debug, Clone)]
enum Op {
    Join(u64),
    Leave(usize),
    SetWeight(usize, u64),
    Block(usize),
    Wake(usize),
    Run(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1u64..1000).prop_map(Op::Join),
        (0usize..16).prop_map(Op::Leave),
        (0usize..16, 1u64..1 << 20).prop_map(|(i, w)| Op::SetWeight(i, w)),
        (0usize..16).prop_map(Op::Block),
        (0usize..16).prop_map(Op::Wake),
        (0u64..2000).prop_map(Op::Run),
        (0u64..2000).prop_map(Op::Run),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Under any sequence of operations every draw only picks runnable
    /// clients, keeps its total equal to Σ tickets + compensation of the
    /// runnable clients, agrees with a model on runnable counts and
    /// weights, and returns a typed error (never panics) for bad ids.
    #[test]
    fn random_operations_keep_invariants(ops in prop::collection::vec(op(), 1..80), comp in 0u8..3) {
        let comp = match comp {
            0 => Compensation::None,
            1 => Compensation::Waldspurger,
            _ => Compensation::zepp(6, true).unwrap(),
        };
        for d in Draw::ALL {
            let mut l = Lottery::new(&PolicyOptions { quantum_ns: 1000, seed: 3 }, d)
                .with_compensation(comp);
            // model: (weight, runnable, alive)
            let mut m: Vec<(u64, bool, bool)> = Vec::new();
            for o in &ops {
                match *o {
                    Op::Join(w) => { prop_assert_eq!(l.join(w), Ok(m.len())); m.push((w, true, true)); }
                    Op::Leave(i) => {
                        let r = l.leave(i);
                        if m.get(i).is_some_and(|c| c.2) { prop_assert!(r.is_ok()); m[i].2 = false; }
                        else { prop_assert_eq!(r, Err(Error::UnknownClient(i))); }
                    }
                    Op::SetWeight(i, w) => {
                        let r = l.set_weight(i, w);
                        if m.get(i).is_some_and(|c| c.2) { prop_assert!(r.is_ok()); m[i].0 = w; }
                        else { prop_assert!(r.is_err()); }
                    }
                    Op::Block(i) => {
                        let r = l.block(i);
                        if m.get(i).is_some_and(|c| c.2 && c.1) { prop_assert!(r.is_ok()); m[i].1 = false; }
                        else { prop_assert!(r.is_err()); }
                    }
                    Op::Wake(i) => {
                        let r = l.wake(i);
                        if m.get(i).is_some_and(|c| c.2 && !c.1) { prop_assert!(r.is_ok()); m[i].1 = true; }
                        else { prop_assert!(r.is_err()); }
                    }
                    Op::Run(used) => {
                        match l.pick() {
                            None => prop_assert!(m.iter().all(|c| !(c.1 && c.2))),
                            Some(id) => {
                                prop_assert!(m[id].1 && m[id].2, "picked a non-runnable client");
                                l.charge(id, used).unwrap();
                            }
                        }
                    }
                }
                let runnable = m.iter().filter(|c| c.1 && c.2).count();
                prop_assert_eq!(l.runnable(), runnable);
                let total: u64 = m.iter().enumerate().filter(|(_, c)| c.1 && c.2)
                    .map(|(i, c)| c.0 + l.compensation_tickets(i).unwrap()).sum();
                prop_assert_eq!(l.total_value(), total);
                for (i, c) in m.iter().enumerate().filter(|(_, c)| c.2) {
                    prop_assert_eq!(l.weight(i), Ok(c.0));
                }
            }
        }
    }
}
