//! The "exponential race" form of a lottery draw (Waldspurger 001 §2.2 odds,
//! §3.4 compensation), in integer arithmetic that the sched_ext scheduler
//! repeats line for line in BPF C.
//!
//! Every runnable client holds a key `T + E/value` in a priority queue, where
//! `E ~ Exp(1)` and `T` is the domain's virtual time; the smallest key wins,
//! `T` becomes the winner's key and only the winner draws a fresh `E`.
//! Why this is a lottery: `E/value` is exponential with rate `value`, and
//! the minimum of independent exponentials is won by client i with
//! probability `value_i / Σ value`. The losers keep their old keys, but by
//! memorylessness the part of a loser's exponential beyond the current `T`
//! is again exponential with the same rate, so at *every* decision the
//! remaining times form a fresh race and P(win) = value / Σ values holds
//! again; the losers need no redraw. A client that joins or wakes draws a
//! key from the current `T`, which gives the same conditional law.
//!
//! Approximations (named): `E` is `-ln(u/2^32)` for a 32-bit uniform `u`,
//! quantised to Q16 with a 16-step bitwise log2 (error < 2^-16 in log2,
//! tail truncated at `32·ln 2 ≈ 22.2`, i.e. P ≈ 2^-32 of being cut), and the
//! division by `value` floors in Q(16+RACE_SHIFT). Both are far below the
//! sampling noise of any feasible run.

use crate::compensation::{self, Compensation};

/// Fixed-point scale added on top of Q16 before dividing by a value, so that
/// values up to 2^32 still leave ≥ 4 significant bits in a mean delta.
pub const RACE_SHIFT: u32 = 20;

/// `ln 2` in Q16 (0.693147… · 65536 = 45426.09).
const LN2_Q16: u64 = 45426;

/// `-ln(u / 2^32)` in Q16 — an Exp(1) sample when `u` is uniform on
/// `[0, 2^32)`. `u == 0` is treated as 1 (the log is unbounded there).
///
/// log2 is computed by repeated squaring of the mantissa in Q31: every
/// squaring doubles the log, and a square ≥ 2 yields the next fraction bit.
pub fn neg_ln_q16(u: u32) -> u64 {
    let u = u.max(1);
    let msb = 31 - u.leading_zeros();
    // Mantissa in Q31, in [1, 2).
    let mut x: u64 = (u as u64) << (31 - msb);
    let mut frac: u64 = 0;
    for i in 0..16 {
        // x < 2^32 so x*x < 2^64: no overflow.
        x = (x * x) >> 31;
        if x >= (1u64 << 32) {
            x >>= 1;
            frac |= 1 << (15 - i);
        }
    }
    let log2_q16 = ((msb as u64) << 16) | frac;
    (((32u64 << 16) - log2_q16) * LN2_Q16) >> 16
}

/// Largest charged fraction of a slice, Q10 (2^30 slices): with `e_q16 <
/// 2^64` the delta is below 2^84, so delta·f stays below 2^124.
pub const F_MAX_Q10: u64 = 1 << 40;

/// The increment of a winner's key: `E / value` in Q(16+RACE_SHIFT).
///
/// With `compensate`, a client that used a fraction `f = used/slice` of its
/// slice competes with `value / f` until it next wins (Waldspurger §3.4,
/// §4.5): its delta is multiplied by `f`, held in Q10 and clamped to
/// `[1/1024, F_MAX_Q10]`. Below 1 this is the paper's compensation ticket; the
/// lower clamp keeps a client that used (almost) nothing from an unbounded,
/// overflowing advantage. Above 1 it is the same rule read the other way, an
/// overrun: a kernel ends slices only at a timer tick, so quanta vary in
/// length, and without the penalty a client that wins often in a row (whose
/// kept slices ran longer in the VM, ~6 ms against ~4.2 ms) got more CPU
/// time than its wins. An overrun is charged in full: a run can last many
/// slices when its CPU is held up (a long non-preemptible section; under
/// single-threaded TCG a vCPU not scheduled for up to 100 ms), and any
/// smaller cap hands the excess out free, unevenly (a cap of 4 slices gave
/// 100-ticket tasks 8-20% over their share on 4 vCPUs, while stride, which
/// charges `used` in full, was exact). The upper clamp only keeps the
/// product in 128 bits. With both sides, CPU time, not just wins, stays
/// proportional to value.
pub fn race_delta(e_q16: u64, value: u64, used_ns: u64, slice_ns: u64, compensate: bool) -> u64 {
    let mut delta: u128 = ((e_q16 as u128) << RACE_SHIFT) / (value.max(1) as u128);
    if compensate && slice_ns > 0 && used_ns != slice_ns {
        let f_q10 = ((used_ns as u128) * 1024 / (slice_ns as u128)).clamp(1, F_MAX_Q10 as u128);
        delta = (delta * f_q10) >> 10;
    }
    delta.min(u64::MAX as u128) as u64
}

/// A winner's key increment under a compensation rule (the kernel
/// scheduler's `tix_race_cost`): none and Waldspurger's are [`race_delta`]
/// without and with `compensate`; under Zepp's (000 §4.2-4.3) the client
/// competes with its value plus his compensation tickets for the ticks it
/// left ([`compensation::zepp`] after [`compensation::ticks_left`]), and an
/// overrun, with no tick left, is charged for its length as Waldspurger's
/// rule charges it.
pub fn race_cost(e_q16: u64, value: u64, used_ns: u64, slice_ns: u64, rule: Compensation) -> u64 {
    match rule {
        Compensation::None => race_delta(e_q16, value, used_ns, slice_ns, false),
        Compensation::Waldspurger => race_delta(e_q16, value, used_ns, slice_ns, true),
        Compensation::Zepp {
            slice_ticks,
            io_enhanced,
        } => {
            let c = compensation::ticks_left(used_ns, slice_ns, slice_ticks);
            let comp = compensation::zepp(value, c, slice_ticks, io_enhanced);
            race_delta(
                e_q16,
                value.saturating_add(comp),
                used_ns,
                slice_ns,
                used_ns > slice_ns,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neg_ln_known_points() {
        // u = 2^31 → -ln(1/2) = ln 2 = 45426 in Q16 (exact through the table).
        assert_eq!(neg_ln_q16(1 << 31), 45426);
        // u = 2^32 - 1 → -ln(1 - 2^-32) ≈ 0 (two log bits below 32 lost).
        assert!(neg_ln_q16(u32::MAX) <= 2);
        // u = 0 and u = 1 both give 32·ln 2 = 1453632 ± rounding.
        assert_eq!(neg_ln_q16(0), neg_ln_q16(1));
        assert_eq!(neg_ln_q16(1), ((32u64 << 16) * 45426) >> 16);
        // u = 2^30 → 2 ln 2.
        assert_eq!(neg_ln_q16(1 << 30), ((2u64 << 16) * 45426) >> 16);
    }

    #[test]
    fn neg_ln_close_to_float() {
        // Over a spread of inputs the integer log stays within 2^-14 relative
        // (plus one unit) of the floating-point value: the 16 log2 fraction
        // bits floor (≤ 2^-16 ·ln2 absolute) and the final ×ln2 floors once.
        let mut u: u32 = 12345;
        for _ in 0..5000 {
            u = u.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let v = u.max(1);
            let exact = -((v as f64) / 4294967296.0).ln() * 65536.0;
            let got = neg_ln_q16(u) as f64;
            assert!((got - exact).abs() <= 3.0, "u={u} got={got} exact={exact}");
        }
    }

    #[test]
    fn neg_ln_monotone_nonincreasing() {
        let mut prev = u64::MAX;
        let mut u: u64 = 1;
        while u < (1u64 << 32) {
            let v = neg_ln_q16(u as u32);
            assert!(v <= prev);
            prev = v;
            u = u * 3 / 2 + 1;
        }
    }

    #[test]
    fn mean_of_exponential_is_one() {
        // E[-ln U] = 1. Over a full stratified grid of 2^16 points the mean
        // is within 10^-3 of 1 (the integer floors bias it down by < 2^-15).
        let n = 1u64 << 16;
        let sum: u64 = (0..n)
            .map(|i| neg_ln_q16(((i << 16) + (1 << 15)) as u32))
            .sum();
        let mean = sum as f64 / n as f64 / 65536.0;
        assert!((mean - 1.0).abs() < 1e-3, "mean {mean}");
    }

    #[test]
    fn delta_base_and_compensation() {
        let e = 65536; // E = 1.0
        assert_eq!(race_delta(e, 1, 0, 0, false), 1u64 << 36);
        assert_eq!(race_delta(e, 4, 0, 0, false), 1u64 << 34);
        // value 0 is treated as 1.
        assert_eq!(race_delta(e, 0, 0, 0, false), race_delta(e, 1, 0, 0, false));
        // Used 1/5 of the slice: the delta shrinks to floor(1024/5)/1024, i.e.
        // the client competes with ≈ 5× its value (Waldspurger's 400 → 2000).
        let full = race_delta(e, 400, 0, 0, false);
        let comp = race_delta(e, 400, 20, 100, true);
        assert_eq!(comp, (full * 204) >> 10);
        // Full use, or compensation off, or no slice: unchanged.
        assert_eq!(race_delta(e, 400, 100, 100, true), full);
        assert_eq!(race_delta(e, 400, 20, 100, false), full);
        assert_eq!(race_delta(e, 400, 20, 0, true), full);
        // Used nothing: clamped to 1/1024, not zero.
        assert_eq!(race_delta(e, 400, 0, 100, true), full >> 10);
        // Overran by half (a slice that ended at a later tick): the client
        // competes with 2/3 of its value until it next wins.
        assert_eq!(race_delta(e, 400, 150, 100, true), (full * 1536) >> 10);
        // A long overrun is charged in full: 100 slices cost 100 deltas.
        assert_eq!(race_delta(e, 400, 10_000, 100, true), full * 100);
        // Only the 128-bit bound caps it, and the result saturates.
        assert_eq!(race_delta(e, 1, u64::MAX, 1, true), u64::MAX);
        assert_eq!(
            race_delta(e, 1 << 40, 1 << 50, 1, true),
            (((((e as u128) << RACE_SHIFT) / (1u128 << 40)) * (F_MAX_Q10 as u128)) >> 10) as u64
        );
    }

    #[test]
    fn delta_saturates() {
        assert_eq!(race_delta(u64::MAX, 1, 0, 0, false), u64::MAX);
    }
}
