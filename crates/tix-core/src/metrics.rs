//! Fairness metrics: service time error E_A(t1,t2) (GR3 §2, eq. 2, in
//! quanta), lag in EEVDF's sense (ideal − received, the negation of E),
//! pairwise relative error, Jain's index, and per-client min/max over a run.
//!
//! The ideal is GPS over the clients that are *runnable*: while client A is
//! runnable, each ns of service handed out earns A w_A/Σw ns of ideal
//! service. [`ServiceTracker`] keeps this in O(1) per event with one global
//! "virtual" clock V (ns per unit of weight): ideal_A grows as w_A·ΔV.

use crate::error::{Error, Result};
use crate::sched::{check_weight, ClientId};
use serde::{Deserialize, Serialize};

/// E_A over an interval: received − interval × S_A/ΣS (all in quanta).
pub fn service_error(received: f64, interval: f64, share: f64, total_share: f64) -> f64 {
    received - interval * share / total_share
}

/// Pairwise relative error of client i against client j: i's service
/// error in the two-client GPS system formed by the pair,
/// (W_i·w_j − W_j·w_i)/(w_i + w_j). Stride keeps |e_ij| ≤ 1 quantum.
pub fn pairwise_error(w_i: u64, served_i: f64, w_j: u64, served_j: f64) -> f64 {
    let (wi, wj) = (w_i as f64, w_j as f64);
    (served_i * wj - served_j * wi) / (wi + wj)
}

/// Jain's fairness index (Σx)²/(n·Σx²): 1 when all equal, 1/n at worst.
/// For proportional share pass x_i = service_i / weight_i. Empty or
/// all-zero input gives 1 (nobody was treated unfairly).
pub fn jain_index(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (xs.len() as f64 * s2)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum TrackState {
    Runnable,
    Blocked,
    Left,
}

#[derive(Debug, Clone)]
struct Track {
    weight: u64,
    state: TrackState,
    service_ns: u128,
    /// Ideal service (ns) accrued up to `v_mark`.
    ideal_base: f64,
    v_mark: f64,
    min_err: f64,
    max_err: f64,
}

/// One client's numbers at the end of (or during) a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientReport {
    pub id: ClientId,
    pub weight: u64,
    pub service_ns: u128,
    /// Service error E(join, now) in quanta (positive = ahead of GPS).
    pub error: f64,
    /// Smallest and largest E(join, t) seen at event boundaries.
    pub min_error: f64,
    pub max_error: f64,
}

/// Feeds on a policy's events and keeps every client's service error
/// against GPS. Usage: mirror every `join`/`leave`/`set_weight`/`block`/
/// `wake` you do on the scheduler, and after each `charge(id, used)` on
/// the scheduler call `charge(id, used)` here. Ids must be the scheduler's
/// (dense, in join order). Errors are measured at event boundaries, which
/// for whole quanta are GR3's integer time units.
///
/// Min/max are exact at boundaries in O(1) per event: between its own
/// charges a runnable client's error only falls, so its minimum is taken
/// just before each of its charges (and when it blocks/leaves/reweights
/// or a report is made), its maximum just after.
#[derive(Debug, Clone)]
pub struct ServiceTracker {
    quantum_ns: u64,
    clients: Vec<Track>,
    v: f64,
    active_weight: u128,
    total_ns: u128,
}

impl ServiceTracker {
    pub fn new(quantum_ns: u64) -> Result<Self> {
        if quantum_ns == 0 {
            return Err(Error::ZeroQuantum);
        }
        Ok(ServiceTracker {
            quantum_ns,
            clients: Vec::new(),
            v: 0.0,
            active_weight: 0,
            total_ns: 0,
        })
    }

    fn get(&self, id: ClientId) -> Result<&Track> {
        match self.clients.get(id) {
            Some(t) if t.state != TrackState::Left => Ok(t),
            _ => Err(Error::UnknownClient(id)),
        }
    }

    fn ideal_ns(&self, t: &Track) -> f64 {
        if t.state == TrackState::Runnable {
            t.ideal_base + t.weight as f64 * (self.v - t.v_mark)
        } else {
            t.ideal_base
        }
    }

    fn err_of(&self, t: &Track) -> f64 {
        let e = (t.service_ns as f64 - self.ideal_ns(t)) / self.quantum_ns as f64;
        // The GPS clock is an f64 sum; below 1e-9 quanta is its rounding
        // noise, reported as an exact 0 so cycle ends read as 0.
        if e.abs() < 1e-9 {
            0.0
        } else {
            e
        }
    }

    /// Fold the current error into the client's min (and max).
    fn observe(&mut self, id: ClientId) {
        let e = self.err_of(&self.clients[id]);
        let t = &mut self.clients[id];
        t.min_err = t.min_err.min(e);
        t.max_err = t.max_err.max(e);
    }

    /// Freeze the ideal accrued so far into `ideal_base`.
    fn settle(&mut self, id: ClientId) {
        let ideal = self.ideal_ns(&self.clients[id]);
        let t = &mut self.clients[id];
        t.ideal_base = ideal;
        t.v_mark = self.v;
    }

    /// A client joins (runnable). Returns its id: the next dense index.
    pub fn join(&mut self, weight: u64) -> Result<ClientId> {
        check_weight(weight)?;
        self.clients.push(Track {
            weight,
            state: TrackState::Runnable,
            service_ns: 0,
            ideal_base: 0.0,
            v_mark: self.v,
            min_err: 0.0,
            max_err: 0.0,
        });
        self.active_weight += weight as u128;
        Ok(self.clients.len() - 1)
    }

    pub fn leave(&mut self, id: ClientId) -> Result<()> {
        self.get(id)?;
        self.observe(id);
        self.settle(id);
        if self.clients[id].state == TrackState::Runnable {
            self.active_weight -= self.clients[id].weight as u128;
        }
        self.clients[id].state = TrackState::Left;
        Ok(())
    }

    pub fn block(&mut self, id: ClientId) -> Result<()> {
        if self.get(id)?.state != TrackState::Runnable {
            return Err(Error::AlreadyBlocked(id));
        }
        self.observe(id);
        self.settle(id);
        self.clients[id].state = TrackState::Blocked;
        self.active_weight -= self.clients[id].weight as u128;
        Ok(())
    }

    pub fn wake(&mut self, id: ClientId) -> Result<()> {
        if self.get(id)?.state != TrackState::Blocked {
            return Err(Error::AlreadyRunnable(id));
        }
        let t = &mut self.clients[id];
        t.state = TrackState::Runnable;
        t.v_mark = self.v;
        self.active_weight += t.weight as u128;
        Ok(())
    }

    pub fn set_weight(&mut self, id: ClientId, weight: u64) -> Result<()> {
        self.get(id)?;
        check_weight(weight)?;
        self.observe(id);
        self.settle(id);
        let t = &mut self.clients[id];
        if t.state == TrackState::Runnable {
            self.active_weight = self.active_weight - t.weight as u128 + weight as u128;
        }
        t.weight = weight;
        Ok(())
    }

    /// `id` ran for `used_ns`.
    pub fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        if self.get(id)?.state != TrackState::Runnable {
            return Err(Error::Blocked(id));
        }
        self.observe(id);
        self.v += used_ns as f64 / self.active_weight as f64;
        self.total_ns += used_ns as u128;
        self.clients[id].service_ns += used_ns as u128;
        self.observe(id);
        Ok(())
    }

    /// Current E(join, now) of a client, in quanta.
    pub fn error(&self, id: ClientId) -> Result<f64> {
        Ok(self.err_of(self.get(id)?))
    }

    /// Lag in EEVDF's sense (ideal − received), in quanta: −error.
    pub fn lag(&self, id: ClientId) -> Result<f64> {
        Ok(-self.error(id)?)
    }

    /// Service received since joining, ns.
    pub fn service_ns(&self, id: ClientId) -> Result<u128> {
        Ok(self.get(id)?.service_ns)
    }

    /// Total service handed out, ns.
    pub fn total_ns(&self) -> u128 {
        self.total_ns
    }

    /// Report for every client that has not left (in id order).
    pub fn report(&self) -> Vec<ClientReport> {
        self.clients
            .iter()
            .enumerate()
            .filter(|(_, t)| t.state != TrackState::Left)
            .map(|(id, t)| {
                let e = self.err_of(t);
                ClientReport {
                    id,
                    weight: t.weight,
                    service_ns: t.service_ns,
                    error: e,
                    min_error: t.min_err.min(e),
                    max_error: t.max_err.max(e),
                }
            })
            .collect()
    }

    /// (min, max) of every client's error over the run so far.
    pub fn error_range(&self) -> (f64, f64) {
        self.report().iter().fold((0.0f64, 0.0f64), |(lo, hi), r| {
            (lo.min(r.min_error), hi.max(r.max_error))
        })
    }

    /// Largest |pairwise error| over all pairs of present clients, using
    /// service since joining (meaningful when they joined together). O(n²).
    pub fn max_pairwise_error(&self) -> f64 {
        let r = self.report();
        let q = self.quantum_ns as f64;
        let mut m = 0.0f64;
        for a in &r {
            for b in &r {
                if a.id < b.id {
                    let e = pairwise_error(
                        a.weight,
                        a.service_ns as f64 / q,
                        b.weight,
                        b.service_ns as f64 / q,
                    );
                    m = m.max(e.abs());
                }
            }
        }
        m
    }

    /// Jain's index over service/weight of present clients.
    pub fn jain(&self) -> f64 {
        let xs: Vec<f64> = self
            .report()
            .iter()
            .map(|r| r.service_ns as f64 / r.weight as f64)
            .collect();
        jain_index(&xs)
    }
}

/// E_A(0,t) = W_A − t·S_A/ΣS for fixed, always-runnable shares, kept
/// exactly (numerators over ΣS) after every quantum in O(1): a client's
/// error only falls while others run, so its minimum is reached just before
/// one of its quanta (or at the end) and its maximum just after one (or at
/// t = 0). The GR3 §5.1 simulation method; [`ServiceTracker`] is the general
/// (blocking, ns-weighted) form.
#[derive(Debug, Clone)]
pub struct QuantumErrors {
    shares: Vec<u64>,
    total: i128,
    work: Vec<u64>,
    min_num: Vec<i128>,
    max_num: Vec<i128>,
    t: u64,
}

impl QuantumErrors {
    pub fn new(shares: &[u64]) -> Self {
        let n = shares.len();
        QuantumErrors {
            shares: shares.to_vec(),
            total: shares.iter().map(|&s| s as i128).sum(),
            work: vec![0; n],
            min_num: vec![0; n],
            max_num: vec![0; n],
            t: 0,
        }
    }
    #[inline]
    fn num(&self, a: usize) -> i128 {
        self.work[a] as i128 * self.total - self.t as i128 * self.shares[a] as i128
    }
    /// Client `a` (an index into the shares) ran one quantum.
    #[inline]
    pub fn served(&mut self, a: usize) {
        let before = self.num(a);
        if before < self.min_num[a] {
            self.min_num[a] = before;
        }
        self.work[a] += 1;
        self.t += 1;
        let after = self.num(a);
        if after > self.max_num[a] {
            self.max_num[a] = after;
        }
    }
    /// Idle quantum (nobody runnable): time passes, nobody is served.
    pub fn idle(&mut self) {
        self.t += 1;
    }
    /// Fold in the errors at the end of the run.
    pub fn finish(&mut self) {
        for a in 0..self.shares.len() {
            let e = self.num(a);
            self.min_num[a] = self.min_num[a].min(e);
            self.max_num[a] = self.max_num[a].max(e);
        }
    }
    /// Quanta client `a` received.
    pub fn work(&self, a: usize) -> u64 {
        self.work[a]
    }
    /// Client `a`'s most negative error so far, in quanta.
    pub fn min(&self, a: usize) -> f64 {
        self.min_num[a] as f64 / self.total as f64
    }
    /// Client `a`'s most positive error so far, in quanta.
    pub fn max(&self, a: usize) -> f64 {
        self.max_num[a] as f64 / self.total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_bounds() {
        assert!((jain_index(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn tracker_two_equal_clients() {
        let mut t = ServiceTracker::new(10).unwrap();
        let a = t.join(1).unwrap();
        let b = t.join(1).unwrap();
        t.charge(a, 10).unwrap();
        assert!((t.error(a).unwrap() - 0.5).abs() < 1e-12);
        assert!((t.error(b).unwrap() + 0.5).abs() < 1e-12);
        t.charge(b, 10).unwrap();
        assert!(t.error(a).unwrap().abs() < 1e-12);
        assert_eq!(t.error_range(), (-0.5, 0.5));
        assert_eq!(t.charge(7, 1), Err(Error::UnknownClient(7)));
    }
}
