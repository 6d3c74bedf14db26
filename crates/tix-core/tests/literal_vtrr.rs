//! VTRR against a literal model of its rules (Nieh, Vaill & Zhong 2001, as
//! GR3 §3 sums it up: "a list of clients from largest to smallest share
//! that does not change on each schedule, runs each client in turn for a
//! time quantum until it reaches a client whose VFT indicates that it has
//! received more than its fair allocation, then returns to the beginning
//! of the list"), sharing no code with `tix_core::vtrr`. The original
//! paper is not a seed; its rules as tix-core's vtrr.rs cites them:
//! * each client has a time counter, its share at the start of each cycle
//!   (Σ shares quanta); a client whose counter is spent is not run, and a
//!   scan that reaches one goes back to the head;
//! * after a quantum the scan moves to the next client if that client's
//!   counter is larger than the counter of the client just run (the
//!   time-counter invariant), or if it is unspent and
//!   VFT_next − QVT(t+Q) < Q/S_next (the VFT inequality), QVT(t+Q) being
//!   the queue virtual time at the end of the next quantum; otherwise it
//!   goes back to the head;
//! * VFT_A = VT_A + Q/S_A, VT_A growing by Q/S_A per quantum A runs, from
//!   QVT = 0 at the start; QVT grows by Q/Σ S per quantum.
//!
//! Where the rules leave a choice, the library's: equal shares keep join
//! order. Exact fractions here (Q = 1); the library keeps virtual time in
//! fixed point (2^40 per quantum, truncated), exact when every share and
//! their sum are powers of two — the first property draws such sets; the
//! second draws any set and lets the model truncate as the library does,
//! so it checks the rules, not the arithmetic.
//!
//! Scope: static sets, all clients joined before the first pick.

mod literal;

use proptest::prelude::*;
use tix_core::ClientId;

/// Virtual time as a value the model can compare: exact (num/den) or the
/// library's truncated fixed point.
#[derive(Clone, Copy)]
enum Arith {
    Exact,
    Fixed,
}

/// A virtual time: exact fractions as (numerator over `den`, the product
/// of every share and the sum), or fixed point in units of 2^-40 quantum.
fn unit(arith: Arith, den: u128, share: u128) -> u128 {
    match arith {
        Arith::Exact => den / share,
        Arith::Fixed => (1u128 << 40) / share,
    }
}

fn vtrr_paper(shares: &[u64], n: usize, arith: Arith) -> Vec<ClientId> {
    let total: u64 = shares.iter().sum();
    // A common denominator for exact fractions: lcm of the shares and the
    // sum (kept small by the power-of-two sets the exact test draws).
    let den = shares
        .iter()
        .chain(std::iter::once(&total))
        .fold(1u128, |l, &s| lcm(l, s as u128));
    // The list: largest share first, join order among equals.
    let mut list: Vec<ClientId> = (0..shares.len()).collect();
    list.sort_by(|&a, &b| shares[b].cmp(&shares[a]).then(a.cmp(&b)));
    let step = |s: u64| unit(arith, den, s as u128);
    let mut counter: Vec<u64> = shares.to_vec();
    let mut vft: Vec<u128> = shares.iter().map(|&s| step(s)).collect();
    let mut qvt: u128 = 0;
    let mut pos = 0;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        if counter[list[pos]] == 0 {
            pos = 0;
        }
        let c = list[pos];
        out.push(c);
        counter[c] -= 1;
        vft[c] += step(shares[c]);
        qvt += step(total);
        let qvt_end_of_next = qvt + step(total);
        pos = match list.get(pos + 1) {
            Some(&nx) if counter[nx] > counter[c] => pos + 1,
            // VFT_next − QVT(t+Q) < Q/S_next, without a subtraction.
            Some(&nx) if counter[nx] > 0 && vft[nx] < qvt_end_of_next + step(shares[nx]) => pos + 1,
            _ => 0,
        };
        if counter.iter().all(|&k| k == 0) {
            counter.copy_from_slice(shares);
            pos = 0;
        }
    }
    out
}

fn lcm(a: u128, b: u128) -> u128 {
    fn gcd(a: u128, b: u128) -> u128 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

/// Powers of two summing to a power of two: 2^k split at random, each
/// piece halved or kept (a share of 75% is 1/2 + 1/4, two clients).
fn pow2_shares() -> impl Strategy<Value = Vec<u64>> {
    (2u32..=11, prop::collection::vec(any::<u32>(), 0..40)).prop_map(|(k, cuts)| {
        let mut parts = vec![1u64 << k];
        for c in cuts {
            let i = c as usize % parts.len();
            if parts[i] > 1 {
                parts[i] /= 2;
                let half = parts[i];
                parts.insert(i + 1 + (c as usize >> 8) % (parts.len() - i), half);
            }
        }
        parts
    })
}

/// The library against the model on `shares`, for two cycles.
fn check(shares: &[u64], arith: Arith) -> Result<(), TestCaseError> {
    let n = literal::two_cycles(shares);
    prop_assert_eq!(
        literal::library("vtrr", shares, n, 1_000_000),
        vtrr_paper(shares, n, arith),
        "shares {:?}",
        shares
    );
    Ok(())
}

proptest! {
    #![proptest_config(literal::config())]

    #[test]
    fn vtrr_follows_the_rules_exactly(shares in pow2_shares()) {
        check(&shares, Arith::Exact)?;
    }

    #[test]
    fn vtrr_follows_the_rules_in_fixed_point(shares in literal::shares(10, 12, 300)) {
        check(&shares, Arith::Fixed)?;
    }
}

/// GR3 §3's skewed example through the model: A (share 100) and 100
/// clients of share 1 — VTRR runs A, then every small client once down the
/// list before A again, so A falls behind by 100·(100/200) − 1 = 49.5
/// quanta: the §3 figure "−49.5".
#[test]
fn model_reproduces_the_skewed_example() {
    let mut shares = vec![100u64];
    shares.extend(std::iter::repeat_n(1, 100));
    let picks = vtrr_paper(&shares, 200, Arith::Exact);
    let mut worst: f64 = 0.0;
    let mut got = 0u64;
    for (t, &c) in picks.iter().enumerate() {
        if c == 0 {
            got += 1;
        }
        let err = got as f64 - (t + 1) as f64 * 100.0 / 200.0;
        worst = worst.min(err);
    }
    assert_eq!(worst, -49.5);
}
