//! Inverse lottery for space-shared resources (Waldspurger 001 §6.2): a
//! "loser" is drawn to give up one unit of a divisible resource (a page),
//! client i with probability (1 − t_i/T)/(n − 1), so more tickets protect more.
//! Also the §6.2 page-fault variant weighted by the share of the resource held.

use crate::error::{Error, Result};
use crate::rng::Rng;

/// Draw the loser among `tickets` (one entry per client, 0 allowed).
///
/// Exact in integers: client i's weight is `T − t_i`, and Σ(T − t_i) =
/// (n − 1)·T, so one uniform draw in `[0, (n − 1)·T)` picks i with
/// probability (1 − t_i/T)/(n − 1), the paper's footnote-10 formula.
///
/// Errors: fewer than 2 clients ([`Error::TooFewClients`]; with one client
/// the formula divides by zero), all tickets zero ([`Error::ZeroTotal`]),
/// a total beyond u64 ([`Error::Overflow`]).
pub fn inverse_lottery<R: Rng + ?Sized>(tickets: &[u64], rng: &mut R) -> Result<usize> {
    let weights = inverse_weights(tickets)?;
    pick_weighted(&weights, rng)
}

/// The §6.2 page-fault refinement: the loser is drawn with probability
/// proportional to both (1 − t_i/T) and the units `held[i]` of the
/// resource that client i holds, so a client holding nothing never loses.
///
/// Errors as [`inverse_lottery`], plus [`Error::Invalid`] when the slices
/// differ in length and [`Error::ZeroTotal`] when no client with a nonzero
/// inverse weight holds any unit.
pub fn inverse_lottery_weighted<R: Rng + ?Sized>(
    tickets: &[u64],
    held: &[u64],
    rng: &mut R,
) -> Result<usize> {
    if tickets.len() != held.len() {
        return Err(Error::Invalid(format!(
            "{} ticket counts but {} holdings",
            tickets.len(),
            held.len()
        )));
    }
    let weights: Vec<u128> = inverse_weights(tickets)?
        .into_iter()
        .zip(held)
        .map(|(w, &u)| {
            w.checked_mul(u as u128)
                .ok_or(Error::Overflow("inverse weight"))
        })
        .collect::<Result<_>>()?;
    pick_weighted(&weights, rng)
}

/// Each client's probability of losing, (1 − t_i/T)/(n − 1); for tests,
/// reports and the simulator's expected values.
pub fn inverse_probabilities(tickets: &[u64]) -> Result<Vec<f64>> {
    let weights = inverse_weights(tickets)?;
    let total: u128 = weights.iter().sum();
    Ok(weights.iter().map(|&w| w as f64 / total as f64).collect())
}

/// `T − t_i` for every client, validated.
fn inverse_weights(tickets: &[u64]) -> Result<Vec<u128>> {
    let n = tickets.len();
    if n < 2 {
        return Err(Error::TooFewClients(n));
    }
    let total: u128 = tickets.iter().map(|&t| t as u128).sum();
    if total == 0 {
        return Err(Error::ZeroTotal("tickets"));
    }
    if total > u64::MAX as u128 {
        return Err(Error::Overflow("inverse lottery ticket total"));
    }
    Ok(tickets.iter().map(|&t| total - t as u128).collect())
}

/// Index of the first weight whose running sum exceeds a uniform draw in
/// `[0, Σ weights)`: a plain list lottery (§4.2) over integer weights.
fn pick_weighted<R: Rng + ?Sized>(weights: &[u128], rng: &mut R) -> Result<usize> {
    let mut total: u128 = 0;
    for &w in weights {
        total = total
            .checked_add(w)
            .ok_or(Error::Overflow("inverse lottery total"))?;
    }
    if total == 0 {
        return Err(Error::ZeroTotal("inverse weights"));
    }
    let r = below_u128(rng, total);
    let mut sum = 0u128;
    for (i, &w) in weights.iter().enumerate() {
        sum += w;
        if r < sum {
            return Ok(i);
        }
    }
    unreachable!("r < total = Σ weights")
}

/// Uniform in `[0, n)` for n ≥ 1 that may exceed u64: below u64 the
/// generator's own unbiased `below`; above, 128 random bits masked to n's
/// bit length and rejected when ≥ n (acceptance > 1/2 per try).
fn below_u128<R: Rng + ?Sized>(rng: &mut R, n: u128) -> u128 {
    if n <= u64::MAX as u128 {
        return rng.below(n as u64) as u128;
    }
    let bits = 128 - (n - 1).leading_zeros();
    let mask = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    loop {
        let x = (((rng.next_u64() as u128) << 64) | rng.next_u64() as u128) & mask;
        if x < n {
            return x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Xoshiro256;

    #[test]
    fn probabilities_follow_footnote_10() {
        // n = 3, T = 10: (1 − t/T)/2 = 0.4, 0.35, 0.25; they sum to 1.
        let p = inverse_probabilities(&[2, 3, 5]).unwrap();
        assert_eq!(p, vec![0.4, 0.35, 0.25]);
    }

    #[test]
    fn sole_holder_never_loses() {
        // A client holding all T tickets has 1 − T/T = 0.
        let mut g = Xoshiro256::new(3);
        for _ in 0..1000 {
            assert_ne!(inverse_lottery(&[0, 7, 0], &mut g).unwrap(), 1);
            // And a client holding no units is never the page-fault victim.
            assert_ne!(
                inverse_lottery_weighted(&[1, 1, 1], &[5, 0, 5], &mut g).unwrap(),
                1
            );
        }
    }

    #[test]
    fn huge_totals_draw_in_range() {
        let mut g = Xoshiro256::new(9);
        let w = [u128::MAX / 2, u128::MAX / 4];
        for _ in 0..100 {
            assert!(pick_weighted(&w, &mut g).unwrap() < 2);
        }
        assert_eq!(
            pick_weighted(&[u128::MAX, 1], &mut g),
            Err(Error::Overflow("inverse lottery total"))
        );
    }
}
