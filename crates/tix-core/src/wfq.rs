//! Weighted fair queueing as GR3 §3 describes it for a processor: a client's
//! virtual time advances by used/share while it runs; its virtual finishing
//! time (VFT) is its virtual time after one more quantum; the smallest VFT runs.
//!
//! Ties go to join order. With shares 3,2,1 (VFTs 1/3, 1/2, 1) this gives
//! A,B,A,A,B,C: after A,B,A all three VFTs equal 1 and the paper's A,B,A,B,C,A
//! breaks that three-way tie differently (both are smallest-VFT orders; the
//! paper names no tie rule). For one share-100 client among 100 of share 1 the
//! join-order rule reproduces the paper's "A runs 100 quanta first, +50 tu".

use crate::eligible::udiv;
use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};
use crate::tournament::{Entry, Tournament};

/// Fixed point of virtual time: 2^-40 ns of service per unit of share.
/// (used_ns < 2^64) << 40 stays below 2^104, far from u128's limit.
pub(crate) const VT_SHIFT: u32 = 40;

/// Virtual time gained by running `used_ns` at `weight` (weight ≥ 1).
pub(crate) fn vt_delta(used_ns: u64, weight: u64) -> u128 {
    // A u64 division whenever the shifted time fits (used_ns < 2^24 ns).
    udiv((used_ns as u128) << VT_SHIFT, weight.max(1) as u128)
}

/// (VFT, id) as the words [VFT high, VFT low, id]: ordered by VFT, then
/// join order. VFTs stay u128: one charge may add up to 2^104, so no fixed
/// u64 window provably holds every runnable client's VFT. No client has id
/// u64::MAX, so `EMPTY` orders after every real entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct VftEntry([u64; 3]);

impl VftEntry {
    fn new(vft: u128, id: ClientId) -> Self {
        VftEntry([(vft >> 64) as u64, vft as u64, id as u64])
    }
    fn id(self) -> ClientId {
        self.0[2] as ClientId
    }
    /// Tests the id word only (no wide load of the root just written).
    fn is_empty(self) -> bool {
        self.0[2] == u64::MAX
    }
}

impl Entry for VftEntry {
    const EMPTY: Self = VftEntry([u64::MAX; 3]);
    #[inline]
    fn min2(a: Self, b: Self) -> Self {
        VftEntry(crate::tournament::min_u192(a.0, b.0))
    }
}

#[derive(Debug, Clone, Copy)]
struct VirtualClock {
    /// Virtual time (start of the next quantum).
    vstart: u128,
    /// Virtual time of one whole quantum at the client's weight (its VFT
    /// minus its virtual start), kept to spare a division per charge.
    qvt: u128,
}

/// WFQ over a tournament tree of virtual finishing times, O(log n) per
/// pick+charge (blocked and departed clients hold an empty leaf).
#[derive(Debug, Clone)]
pub struct Wfq {
    roster: Roster,
    /// Virtual start and quantum per client, side by side: a charge
    /// misses the cache once for both.
    clients: Vec<VirtualClock>,
    tree: Tournament<VftEntry>,
    /// System virtual time: the largest virtual start picked so far.
    vtime: u128,
}

impl Wfq {
    pub fn new(opts: &PolicyOptions) -> Self {
        Wfq {
            roster: Roster::new(opts),
            clients: Vec::new(),
            tree: Tournament::new(),
            vtime: 0,
        }
    }

    /// A client's virtual finishing time in units of 2^-40 ns per share.
    pub fn vft(&self, id: ClientId) -> Result<u128> {
        let w = self.roster.weight(id)?;
        Ok(self.clients[id].vstart + vt_delta(self.roster.quantum_ns, w))
    }

    /// Put a runnable client's current VFT in the tree.
    fn key(&mut self, id: ClientId) {
        let vft = self.clients[id].vstart + self.clients[id].qvt;
        self.tree.set(id, VftEntry::new(vft, id));
    }
}

impl RunQueue for Wfq {
    fn grow(&mut self, id: ClientId) {
        let qvt = vt_delta(self.roster.quantum_ns, self.roster.weights[id]);
        self.clients.push(VirtualClock {
            vstart: self.vtime,
            qvt,
        });
    }
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.clients[id].vstart = self.clients[id].vstart.max(self.vtime);
        self.key(id);
    }
    fn dequeue(&mut self, id: ClientId, _weight: u64) {
        self.tree.clear(id);
    }
    fn reweigh(&mut self, id: ClientId, _old: u64, runnable: bool) {
        self.clients[id].qvt = vt_delta(self.roster.quantum_ns, self.roster.weights[id]);
        if runnable {
            // The VFT depends on the weight: re-key.
            self.key(id);
        }
    }
}

impl Scheduler for Wfq {
    fn name(&self) -> &'static str {
        "wfq"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_some() {
            return self.roster.in_service;
        }
        // The winner keeps its leaf while it runs; charge re-keys it.
        let top = self.tree.min();
        if top.is_empty() {
            return None;
        }
        let id = top.id();
        self.vtime = self.vtime.max(self.clients[id].vstart);
        self.roster.in_service = Some(id);
        Some(id)
    }
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let d = if used_ns == self.roster.quantum_ns {
            self.clients[id].qvt
        } else {
            vt_delta(used_ns, self.roster.weights[id])
        };
        self.clients[id].vstart += d;
        self.key(id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The u64 fast path of `vt_delta` gives the u128 quotient, on both
    /// sides of its 2^24 ns boundary and at the extreme weights.
    #[test]
    fn vt_delta_fast_path_is_exact() {
        for used in [
            0,
            1,
            999_999,
            (1 << 24) - 1,
            1 << 24,
            (1 << 24) + 1,
            u64::MAX,
        ] {
            for w in [0, 1, 3, 1000, 1 << 31, crate::sched::MAX_WEIGHT] {
                let exact = ((used as u128) << VT_SHIFT) / w.max(1) as u128;
                assert_eq!(vt_delta(used, w), exact, "used {used} weight {w}");
            }
        }
    }
}
