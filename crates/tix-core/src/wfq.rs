//! Weighted fair queueing as GR3 §3 describes it for a processor: a client's
//! virtual time advances by used/share while it runs; its virtual finishing
//! time (VFT) is its virtual time after one more quantum; the smallest VFT runs.
//!
//! Ties go to join order. With shares 3,2,1 (VFTs 1/3, 1/2, 1) this gives
//! A,B,A,A,B,C: after A,B,A all three VFTs equal 1 and the paper's A,B,A,B,C,A
//! breaks that three-way tie differently (both are smallest-VFT orders; the
//! paper names no tie rule). For one share-100 client among 100 of share 1 the
//! join-order rule reproduces the paper's "A runs 100 quanta first, +50 tu".

use crate::error::Result;
use crate::registry::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Fixed point of virtual time: 2^-40 ns of service per unit of share.
/// (used_ns < 2^64) << 40 stays below 2^104, far from u128's limit.
pub(crate) const VT_SHIFT: u32 = 40;

/// Virtual time gained by running `used_ns` at `weight` (weight ≥ 1).
pub(crate) fn vt_delta(used_ns: u64, weight: u64) -> u128 {
    ((used_ns as u128) << VT_SHIFT) / weight.max(1) as u128
}

/// WFQ over a heap of virtual finishing times, O(log n) per pick+charge.
#[derive(Debug, Clone)]
pub struct Wfq {
    roster: Roster,
    /// Virtual time (start of the next quantum) per client.
    vstart: Vec<u128>,
    gen: Vec<u32>,
    heap: BinaryHeap<Reverse<(u128, ClientId, u32)>>,
    /// System virtual time: the largest virtual start picked so far.
    vtime: u128,
}

impl Wfq {
    pub fn new(opts: &PolicyOptions) -> Self {
        Wfq {
            roster: Roster::new(opts),
            vstart: Vec::new(),
            gen: Vec::new(),
            heap: BinaryHeap::new(),
            vtime: 0,
        }
    }

    /// A client's virtual finishing time in units of 2^-40 ns per share.
    pub fn vft(&self, id: ClientId) -> Result<u128> {
        let w = self.roster.weight(id)?;
        Ok(self.vstart[id] + vt_delta(self.roster.quantum_ns, w))
    }

    fn push(&mut self, id: ClientId) {
        self.gen[id] = self.gen[id].wrapping_add(1);
        let key = self.vstart[id] + vt_delta(self.roster.quantum_ns, self.roster.weights[id]);
        self.heap.push(Reverse((key, id, self.gen[id])));
    }

    fn drop_entry(&mut self, id: ClientId) {
        self.gen[id] = self.gen[id].wrapping_add(1);
        if self.heap.len() > 2 * self.roster.runnable + 64 {
            let gen = &self.gen;
            self.heap.retain(|Reverse((_, c, g))| gen[*c] == *g);
        }
    }
}

impl RunQueue for Wfq {
    fn grow(&mut self, _id: ClientId) {
        self.vstart.push(self.vtime);
        self.gen.push(0);
    }
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.vstart[id] = self.vstart[id].max(self.vtime);
        self.push(id);
    }
    fn dequeue(&mut self, id: ClientId, _weight: u64) {
        self.drop_entry(id);
    }
    fn reweigh(&mut self, id: ClientId, _old: u64, runnable: bool) {
        if runnable {
            // The VFT depends on the weight: re-key.
            self.push(id);
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
        // The winner's entry stays at the top while it runs; charge re-keys
        // it in place (one sift-down instead of a pop and a push).
        while let Some(&Reverse((_, id, g))) = self.heap.peek() {
            if self.gen[id] == g {
                self.vtime = self.vtime.max(self.vstart[id]);
                self.roster.in_service = Some(id);
                return Some(id);
            }
            self.heap.pop();
        }
        None
    }
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        self.vstart[id] += vt_delta(used_ns, self.roster.weights[id]);
        let key = self.vstart[id] + vt_delta(self.roster.quantum_ns, self.roster.weights[id]);
        // Re-key in place if the entry is still on top, else push anew.
        if let Some(mut top) = self.heap.peek_mut() {
            let Reverse((_, c, g)) = *top;
            if c == id && g == self.gen[id] {
                *top = Reverse((key, id, g));
                return Ok(());
            }
        }
        self.push(id);
        Ok(())
    }
}
