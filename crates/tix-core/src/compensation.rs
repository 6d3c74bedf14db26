//! Compensation tickets: a client that used only part of its quantum is
//! inflated until it next wins, so its share of the processor is restored.
//! Waldspurger's 1/f rule (001 §3.4, §4.5) and Zepp's tick-quantised rule
//! with the 59·v case and the "I/O enhanced" 5^(c+1) bonus (000 §4.2–4.3).

use crate::error::{Error, Result};

/// Largest factor 1/f Waldspurger's rule grants. A client that used almost
/// nothing would otherwise get an unbounded value; 1024 matches the clamp
/// of the kernel's race (f ≥ 1/1024 in `race::race_delta`) and keeps every
/// inflated value below 2^42 for weights up to 2^32.
pub const MAX_COMPENSATION_FACTOR: u64 = 1024;

/// Zepp's slice length in ticks (`LOTTERY_SLICE`, 6 ticks of 10 ms).
pub const ZEPP_SLICE_TICKS: u32 = 6;
/// Largest slice (in ticks) accepted for Zepp's rule: keeps the I/O bonus
/// 5^(c+1) ≤ 5^13 < 2^31.
pub const MAX_ZEPP_SLICE_TICKS: u32 = 12;

/// Which compensation rule a lottery applies when a client is charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compensation {
    /// No compensation tickets (Zepp's and Samih's plain lottery).
    #[default]
    None,
    /// Waldspurger's rule: value v becomes v/f for f = used/quantum < 1.
    Waldspurger,
    /// Zepp's kernel: the quantum is `slice_ticks` ticks and use is measured
    /// in whole ticks; optionally his untuned "I/O enhanced" bonus.
    Zepp { slice_ticks: u32, io_enhanced: bool },
}

impl Compensation {
    /// Zepp's rule with a validated slice length.
    pub fn zepp(slice_ticks: u32, io_enhanced: bool) -> Result<Compensation> {
        if slice_ticks == 0 || slice_ticks > MAX_ZEPP_SLICE_TICKS {
            return Err(Error::OutOfRange {
                what: "Zepp slice ticks",
                got: slice_ticks as u64,
                min: 1,
                max: MAX_ZEPP_SLICE_TICKS as u64,
            });
        }
        Ok(Compensation::Zepp {
            slice_ticks,
            io_enhanced,
        })
    }

    /// Compensation tickets (in the units of `value`) for a client worth
    /// `value` that used `used_ns` of a `slice_ns` quantum.
    pub fn tickets(&self, value: u64, used_ns: u64, slice_ns: u64) -> u64 {
        match *self {
            Compensation::None => 0,
            Compensation::Waldspurger => waldspurger(value, used_ns, slice_ns),
            Compensation::Zepp {
                slice_ticks,
                io_enhanced,
            } => {
                let c = ticks_left(used_ns, slice_ns, slice_ticks);
                zepp(value, c, slice_ticks, io_enhanced)
            }
        }
    }
}

/// Waldspurger's compensation ticket: `v/f − v` for `f = used/slice`,
/// 0 when the whole slice was used (or there is no slice). f is clamped to
/// at least 1/[`MAX_COMPENSATION_FACTOR`]. Computed as `v·slice/used − v`
/// with floor division, in u128.
pub fn waldspurger(value: u64, used_ns: u64, slice_ns: u64) -> u64 {
    if slice_ns == 0 || used_ns >= slice_ns {
        return 0;
    }
    let v = value as u128;
    let inflated =
        (v * slice_ns as u128 / used_ns.max(1) as u128).min(v * MAX_COMPENSATION_FACTOR as u128);
    (inflated - v).min(u64::MAX as u128) as u64
}

/// Ticks left of the slice when the client gave up the processor, as
/// Linux 2.4's `counter`: it drops by one at each whole tick used.
pub fn ticks_left(used_ns: u64, slice_ns: u64, slice_ticks: u32) -> u32 {
    let tick_ns = (slice_ns / slice_ticks.max(1) as u64).max(1);
    let used_ticks = (used_ns / tick_ns).min(slice_ticks as u64) as u32;
    slice_ticks - used_ticks
}

/// Zepp's compensation for a task worth `value` base tickets that gave up
/// the processor with `counter_left` of `slice_ticks` ticks left (000 §4.2):
/// `v·T/(T−c) − v` for `0 < c < T`, `59·v` for `c = T` (he treats a task that
/// used less than a tick as having used 1 ms of a 60 ms slice), 0 for
/// `c = 0`; plus, in the I/O-enhanced kernel, `5^(c+1)` for every `c`
/// (the bonus sits outside his `counter > 0` test, so even c = 0 gets 5).
pub fn zepp(value: u64, counter_left: u32, slice_ticks: u32, io_enhanced: bool) -> u64 {
    let t = slice_ticks as u128;
    let c = (counter_left.min(slice_ticks)) as u128;
    let v = value as u128;
    let mut comp = if c == 0 {
        0
    } else if c == t {
        59 * v
    } else {
        v * t / (t - c) - v
    };
    if io_enhanced {
        comp += io_bonus(c as u32) as u128;
    }
    comp.min(u64::MAX as u128) as u64
}

/// Zepp's "I/O enhanced" static bonus, `5^(counter_left + 1)`, not scaled
/// by the task's value (000 §4.3, Table 3). Saturates at u64::MAX.
pub fn io_bonus(counter_left: u32) -> u64 {
    5u64.saturating_pow(counter_left + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waldspurger_example() {
        // A and B hold 400; B uses 20 of 100 ms (f = 1/5) and receives a
        // 1600 compensation ticket, so it is funded at 400/f = 2000.
        assert_eq!(waldspurger(400, 20, 100), 1600);
        assert_eq!(400 + waldspurger(400, 20, 100), 2000);
        assert_eq!(waldspurger(400, 100, 100), 0);
        assert_eq!(waldspurger(400, 150, 100), 0);
        assert_eq!(waldspurger(400, 20, 0), 0);
        // Used nothing counts as 1 ns: factor 100 here, under the cap…
        assert_eq!(waldspurger(400, 0, 100), 400 * 99);
        // …and capped at factor 1024 for a 1 ms slice.
        assert_eq!(waldspurger(400, 0, 1_000_000), 400 * 1023);
        assert_eq!(waldspurger(1, 1, 1_000_000_000), 1023);
    }

    #[test]
    fn zepp_table_c_0_to_6() {
        // Multipliers of v for a 6-tick slice: 0, 0.2, 0.5, 1, 2, 5, 59
        // (000 §4.2); with v = 10 in integer arithmetic.
        let got: Vec<u64> = (0..=6).map(|c| zepp(10, c, 6, false)).collect();
        assert_eq!(got, vec![0, 2, 5, 10, 20, 50, 590]);
        // Table 2: Proc1 worth 50 used 1 of 6 ticks → 250.
        assert_eq!(zepp(50, 5, 6, false), 250);
    }

    #[test]
    fn zepp_io_bonus_table3() {
        let got: Vec<u64> = (0..=6).map(io_bonus).collect();
        assert_eq!(got, vec![5, 25, 125, 625, 3125, 15625, 78125]);
        assert_eq!(zepp(10, 0, 6, true), 5);
        assert_eq!(zepp(10, 6, 6, true), 590 + 78125);
    }

    #[test]
    fn ticks_from_ns() {
        // 60 ms slice of 6 ticks: 9.9 ms used is still 0 whole ticks.
        let q = 60_000_000;
        assert_eq!(ticks_left(9_900_000, q, 6), 6);
        assert_eq!(ticks_left(10_000_000, q, 6), 5);
        assert_eq!(ticks_left(60_000_000, q, 6), 0);
        assert_eq!(ticks_left(90_000_000, q, 6), 0);
        let z = Compensation::zepp(6, false).unwrap();
        assert_eq!(z.tickets(50, 10_000_000, q), 250);
        assert_eq!(z.tickets(50, 0, q), 59 * 50);
        assert_eq!(Compensation::Waldspurger.tickets(400, 20, 100), 1600);
        assert_eq!(Compensation::None.tickets(400, 20, 100), 0);
    }

    #[test]
    fn zepp_slice_validated() {
        assert!(Compensation::zepp(0, false).is_err());
        assert!(Compensation::zepp(13, true).is_err());
        assert!(Compensation::zepp(12, true).is_ok());
    }
}
