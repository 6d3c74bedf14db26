//! EEVDF as Linux defines it (kernel/sched/fair.c since 6.6): each client has
//! a vruntime v advancing by used/w, a virtual deadline d = v + slice/w, and
//! lag w·(V − v) against the weighted average vruntime V; a client is eligible
//! when its lag ≥ 0 (v ≤ V) and the eligible client with the earliest deadline
//! runs. Slice = the quantum.
//!
//! Followed from Linux: the deadline is refreshed only once v reaches it;
//! a blocking client keeps its lag (clamped to ±2 slices) and its relative
//! deadline, and on wake is placed at v = V − lag·(W + w)/W (place_entity's
//! inflation, so the lag survives its own re-entry into the average); a
//! weight change rescales lag and relative deadline by w_old/w_new. Not
//! followed: new clients get a full (not half) first slice.

use crate::eligible::{udiv, EligibleQueue};
use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::sched::{ClientId, PolicyOptions, Scheduler};

/// Fixed point: 2^-20 ns per unit of weight, leaving room for w·v sums in i128.
const SHIFT: u32 = 20;

fn vdelta(ns: u64, w: u64) -> i128 {
    udiv((ns as u128) << SHIFT, w.max(1) as u128) as i128
}

/// A client's `slice` entry: a whole quantum in its virtual time, and w · that.
fn slice(quantum_ns: u64, w: u64) -> [i128; 2] {
    let d = vdelta(quantum_ns, w);
    [d, w as i128 * d]
}

/// EEVDF scheduler; `q.start` holds vruntimes, `q.finish` deadlines.
#[derive(Debug, Clone)]
pub struct Eevdf {
    roster: Roster,
    q: EligibleQueue,
    /// Base of the weighted sum (Linux's min_vruntime role).
    v0: i128,
    /// Σ w·(v − v0) and Σ w over runnable clients (in service included).
    sum_wv: i128,
    sum_w: i128,
    /// Per blocked client: (lag V − v, deadline − v) at block time.
    saved: Vec<(i128, i128)>,
    /// Per client: [vdelta(quantum, w), w · that], kept with the weight: a
    /// whole-quantum charge then adds to v and to Σ without a multiply.
    slice: Vec<[i128; 2]>,
    /// V as the last charge computed it, while no client has entered or
    /// left the sums since (`account` clears it): the next pick reuses it
    /// instead of dividing again.
    v_charged: Option<i128>,
    /// ⌊(2^64 − 1)/Σw⌋ while 0 < Σw < 2^64, else 0: V's quotient by a
    /// multiply instead of a divide (`div_by_recip`), rewritten with Σw.
    recip: u64,
}

/// ⌊n/w⌋ for w ≥ 1 given m = ⌊(2^64 − 1)/w⌋. Why one correction suffices:
/// m ≥ 2^64/w − 1, so n/w − n·m/2^64 ≤ n/2^64 < 1 and the high half of n·m
/// is the quotient or one less; the remainder n − q·w then says which.
#[inline(always)]
fn div_by_recip(n: u64, w: u64, m: u64) -> u64 {
    let q = ((n as u128 * m as u128) >> 64) as u64;
    // q·w ≤ n: no overflow.
    q + (n - q * w >= w) as u64
}

impl Eevdf {
    pub fn new(opts: &PolicyOptions) -> Self {
        Eevdf {
            roster: Roster::new(opts),
            q: EligibleQueue::default(),
            v0: 0,
            sum_wv: 0,
            sum_w: 0,
            saved: Vec::new(),
            slice: Vec::new(),
            v_charged: None,
            recip: 0,
        }
    }

    /// Weighted average vruntime V (v0 when nobody is runnable).
    // The reciprocal case is the one `rebase` takes on every charge; the
    // divides remain for Σ < 0 (wakes below V), huge Σ or W.
    #[inline]
    pub fn avg_vruntime(&self) -> i128 {
        if let Some((_, q)) = self.quick_quotient() {
            self.v0 + q as i128
        } else if self.sum_w == 0 {
            self.v0
        } else if let (Ok(a), Ok(b)) = (i64::try_from(self.sum_wv), i64::try_from(self.sum_w)) {
            // Same quotient by the 64-bit divide (an i128 one is a library call).
            self.v0 + a.div_euclid(b) as i128
        } else {
            self.v0 + self.sum_wv.div_euclid(self.sum_w)
        }
    }

    /// Lag of a runnable client, w·(V − v), in ns (Linux's sense: positive
    /// means the client is owed service).
    pub fn lag_ns(&self, id: ClientId) -> Result<f64> {
        let w = self.roster.weight(id)?;
        let d = (self.avg_vruntime() - self.q.start[id]) as f64;
        Ok(d * w as f64 / (1u64 << SHIFT) as f64)
    }

    /// (Σ, ⌊Σ/W⌋) in u64 by the reciprocal, when 0 ≤ Σ < 2^64 and
    /// 0 < W < 2^64 (recip ≠ 0); for Σ ≥ 0 the floor is the plain quotient.
    #[inline(always)]
    fn quick_quotient(&self) -> Option<(u64, u64)> {
        if self.recip == 0 {
            return None;
        }
        let n = u64::try_from(self.sum_wv).ok()?;
        Some((n, div_by_recip(n, self.sum_w as u64, self.recip)))
    }

    fn account(&mut self, id: ClientId, sign: i128) {
        self.v_charged = None;
        let w = self.roster.weights[id] as i128;
        self.sum_w += sign * w;
        self.sum_wv += sign * w * (self.q.start[id] - self.v0);
        self.recip = match u64::try_from(self.sum_w) {
            Ok(w) if w > 0 => u64::MAX / w,
            _ => 0,
        };
    }

    /// Take a client out of the average. When the last one goes, V is
    /// pinned where it was, so later joins and wakes are placed against
    /// the virtual time the clients left at.
    fn unaccount(&mut self, id: ClientId) {
        let v = self.avg_vruntime();
        self.account(id, -1);
        if self.sum_w == 0 {
            self.v0 = v;
            self.sum_wv = 0;
        }
    }

    /// Returns V, which a rebase leaves unchanged (v0 + ⌊Σ/W⌋ with v0
    /// moved by an integer k and Σ by k·W).
    #[inline]
    fn rebase(&mut self) -> i128 {
        // The common case, 0 ≤ Σ < 2^64 with W < 2^64, in u64: the quotient
        // by the reciprocal (no divide), and both tests below on u64s
        // (Σ ≥ 0 makes the shift the quotient itself, ≥ 0).
        if let Some((n, q)) = self.quick_quotient() {
            let v = self.v0 + q as i128;
            if q > 1 << 60 || n > 1 << 62 {
                self.sum_wv -= self.sum_w * q as i128;
                self.v0 = v;
            }
            return v;
        }
        self.rebase_wide()
    }

    /// `rebase` for Σ < 0, Σ ≥ 2^64 or W outside 1..2^64.
    #[cold]
    #[inline(never)]
    fn rebase_wide(&mut self) -> i128 {
        // Keep v − v0 small so w·(v − v0) never nears i128's range, and Σ
        // within i64 so that V stays one 64-bit divide: every whole quantum
        // adds about 2^40 to Σ (quantum · 2^SHIFT), so without the second
        // test Σ leaves i64 after ~2^23 charges and every V after that is
        // an i128 division (a library call) until v drifts 2^60 from v0,
        // which takes practically forever. After a rebase Σ < W.
        let v = self.avg_vruntime();
        let shift = v - self.v0;
        if shift.abs() > 1 << 60 || self.sum_wv.unsigned_abs() > 1 << 62 {
            self.sum_wv -= self.sum_w * shift;
            self.v0 = v;
        }
        v
    }

    fn place(&mut self, id: ClientId, lag: i128, rel_deadline: i128) {
        let w = self.roster.weights[id] as i128;
        let v_avg = self.avg_vruntime();
        let lag = if self.sum_w > 0 {
            lag * (self.sum_w + w) / self.sum_w
        } else {
            lag
        };
        self.q.start[id] = v_avg - lag;
        self.q.finish[id] = self.q.start[id] + rel_deadline;
        self.account(id, 1);
        self.q.insert(id);
    }
}

impl Scheduler for Eevdf {
    fn name(&self) -> &'static str {
        "eevdf"
    }
    roster_accessors!();
    fn join(&mut self, weight: u64) -> Result<ClientId> {
        self.q.check_room()?;
        let id = self.roster.join(weight)?;
        self.q.add()?;
        self.saved.push((0, 0));
        self.slice.push(slice(self.roster.quantum_ns, weight));
        self.place(id, 0, self.slice[id][0]);
        Ok(id)
    }
    fn leave(&mut self, id: ClientId) -> Result<()> {
        if self.roster.leave(id)? {
            self.unaccount(id);
            self.q.dequeue(id);
        }
        Ok(())
    }
    fn set_weight(&mut self, id: ClientId, weight: u64) -> Result<()> {
        let v_avg = self.avg_vruntime();
        let (old, runnable) = self.roster.set_weight(id, weight)?;
        let (o, n) = (old as i128, weight as i128);
        self.slice[id] = slice(self.roster.quantum_ns, weight);
        if runnable {
            let start = self.q.start[id];
            let rel = self.q.finish[id] - start;
            self.sum_w -= o;
            self.sum_wv -= o * (start - self.v0);
            // Linux reweight_entity: vlag and relative deadline scale w_old/w_new.
            self.q.start[id] = v_avg - (v_avg - start) * o / n;
            self.q.finish[id] = self.q.start[id] + rel * o / n;
            self.account(id, 1);
            self.q.insert(id);
        } else {
            let (l, d) = self.saved[id];
            self.saved[id] = (l * o / n, d * o / n);
        }
        Ok(())
    }
    fn block(&mut self, id: ClientId) -> Result<()> {
        self.roster.block(id)?;
        let w = self.roster.weights[id];
        let limit = vdelta(2 * self.roster.quantum_ns, w);
        let lag = (self.avg_vruntime() - self.q.start[id]).clamp(-limit, limit);
        self.saved[id] = (lag, self.q.finish[id] - self.q.start[id]);
        self.unaccount(id);
        self.q.dequeue(id);
        self.rebase();
        Ok(())
    }
    fn wake(&mut self, id: ClientId) -> Result<()> {
        self.roster.wake(id)?;
        let (lag, rel) = self.saved[id];
        self.place(id, lag, rel);
        Ok(())
    }
    // Forced inline into a caller that names the type (a plain hint was
    // declined): out of line, the register saves and restores of pick and
    // charge were 60 of 438 instructions per pick + charge at 10^5 clients
    // (cachegrind); the queue's walks stay out of line.
    #[inline(always)]
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_some() {
            return self.roster.in_service;
        }
        let v = self.v_charged.unwrap_or_else(|| self.avg_vruntime());
        // Integer rounding of V can leave nobody eligible by a hair; the
        // smallest vruntime is then the one Linux would pick (the queue
        // takes at it; V itself stays the average).
        let (id, _) = self.q.take_or_raise(v)?;
        self.roster.in_service = Some(id);
        Some(id)
    }
    #[inline(always)]
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let [sl, wsl] = self.slice[id];
        let (d, wd) = if used_ns == self.roster.quantum_ns {
            (sl, wsl)
        } else {
            let w = self.roster.weights[id];
            let d = vdelta(used_ns, w);
            (d, w as i128 * d)
        };
        let v_a = self.q.start[id] + d;
        self.q.start[id] = v_a;
        self.sum_wv += wd;
        if v_a >= self.q.finish[id] {
            self.q.finish[id] = v_a + sl;
        }
        let v = self.rebase();
        self.v_charged = Some(v);
        self.q.requeue(id, v);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! V against its definition, ⌊Σ w·v / Σ w⌋ (which does not depend on
    //! the base v0), while rebases move v0 under it.
    use super::*;
    use crate::rng::{Rng, SplitMix64};

    #[test]
    fn reciprocal_quotient_is_exact() {
        // Edges where the high half is most often one short (w = 1, n and
        // w near 2^64, n a multiple of w or one below), then random pairs
        // over every magnitude of w.
        let edge = [
            1u64,
            2,
            3,
            7,
            1 << 32,
            (1 << 32) + 1,
            u64::MAX / 3,
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut g = SplitMix64::new(4);
        let mut pairs: Vec<(u64, u64)> = Vec::new();
        for &w in &edge {
            for &n in &edge {
                pairs.push((n, w));
            }
            for k in [1u64, 2, 1000, u64::MAX / w] {
                let n = w.wrapping_mul(k);
                pairs.extend([(n, w), (n.wrapping_sub(1), w), (n.wrapping_add(1), w)]);
            }
        }
        for _ in 0..20_000 {
            let w = (g.next_u64() >> g.below(64)).max(1);
            pairs.push((g.next_u64() >> g.below(64), w));
        }
        for (n, w) in pairs {
            assert_eq!(div_by_recip(n, w, u64::MAX / w), n / w, "{n} / {w}");
        }
    }

    #[test]
    fn v_is_the_weighted_average_across_rebases() {
        // Quanta of 2^40 ns add ~2^60 to Σ per charge, so Σ would leave
        // i64 within a few charges without the rebase on Σ's size.
        let q = 1u64 << 40;
        let opts = PolicyOptions {
            quantum_ns: q,
            seed: 1,
        };
        let mut s = Eevdf::new(&opts);
        let weights = [1u64, 3, 1024, 7, 1 << 20];
        for &w in &weights {
            s.join(w).unwrap();
        }
        let mut g = SplitMix64::new(9);
        for step in 0..400 {
            let id = s.pick().unwrap();
            let used = if g.next_u64().is_multiple_of(4) {
                g.below(q) + 1
            } else {
                q
            };
            s.charge(id, used).unwrap();
            let (mut swv, mut sw) = (0i128, 0i128);
            for (i, &w) in weights.iter().enumerate() {
                swv += w as i128 * s.q.start[i];
                sw += w as i128;
            }
            assert_eq!(s.avg_vruntime(), swv.div_euclid(sw), "step {step}");
            assert!(i64::try_from(s.sum_wv).is_ok(), "step {step}: Σ left i64");
        }
    }
}
