//! Smoothed Round Robin (Guo 2001, as GR3 §3 describes it): the weight
//! matrix holds each client's share in binary, one column per bit; the
//! weight spread sequence WSS^k (WSS^1 = 1, WSS^i = WSS^(i−1), i, WSS^(i−1))
//! is scanned term by term, term i serving once every client with bit
//! 2^(k−i) set. One pass over WSS^k serves each client exactly its share.
//!
//! Term t of WSS^k is tz(t)+1 (the ruler sequence), so the pass position is
//! a counter t in 1..2^k and no sequence is stored. k is the bit length of
//! the largest runnable share; when it changes the pass restarts at t = 1
//! (an approximation of Guo's matrix resize). Columns are Vecs (O(n) removal
//! where Guo uses doubly linked lists). Every charge counts as one quantum.

use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};

const BITS: usize = 33;

/// SRR scheduler.
#[derive(Debug, Clone)]
pub struct Srr {
    roster: Roster,
    columns: Vec<Vec<ClientId>>,
    /// Runnable clients per top bit, to know k.
    tops: [usize; BITS],
    k: u32,
    t: u64,
    idx: usize,
}

impl Srr {
    pub fn new(opts: &PolicyOptions) -> Self {
        Srr {
            roster: Roster::new(opts),
            columns: vec![Vec::new(); BITS],
            tops: [0; BITS],
            k: 0,
            t: 1,
            idx: 0,
        }
    }

    /// The matrix order k (bit length of the largest runnable share).
    pub fn order(&self) -> u32 {
        self.k
    }

    fn column(&self) -> usize {
        (self.k - 1 - self.t.trailing_zeros()) as usize
    }

    fn update_k(&mut self) {
        let k = (0..BITS)
            .rev()
            .find(|&b| self.tops[b] > 0)
            .map_or(0, |b| b as u32 + 1);
        if k != self.k {
            self.k = k;
            self.t = 1;
            self.idx = 0;
        }
    }

    fn insert(&mut self, id: ClientId) {
        let w = self.roster.weights[id];
        for b in 0..BITS {
            if w >> b & 1 == 1 {
                self.columns[b].push(id);
            }
        }
        self.tops[63 - w.leading_zeros() as usize] += 1;
        self.update_k();
    }

    fn remove(&mut self, id: ClientId, w: u64) {
        let cur = if self.k > 0 {
            Some(self.column())
        } else {
            None
        };
        for b in 0..BITS {
            if w >> b & 1 == 1 {
                let col = &mut self.columns[b];
                if let Some(i) = col.iter().position(|&c| c == id) {
                    col.remove(i);
                    if Some(b) == cur && i < self.idx {
                        self.idx -= 1;
                    }
                }
            }
        }
        self.tops[63 - w.leading_zeros() as usize] -= 1;
        self.update_k();
    }
}

impl RunQueue for Srr {
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.insert(id);
    }
    fn dequeue(&mut self, id: ClientId, weight: u64) {
        self.remove(id, weight);
    }
    fn reweigh(&mut self, id: ClientId, old: u64, runnable: bool) {
        if runnable {
            self.remove(id, old);
            self.insert(id);
        }
    }
}

impl Scheduler for Srr {
    fn name(&self) -> &'static str {
        "srr"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_some() {
            return self.roster.in_service;
        }
        if self.k == 0 {
            return None;
        }
        // Column k−1 is non-empty and is served at every odd t, so this
        // skips at most one empty term in a row.
        loop {
            let col = self.column();
            if let Some(&c) = self.columns[col].get(self.idx) {
                self.idx += 1;
                self.roster.in_service = Some(c);
                return Some(c);
            }
            self.t += 1;
            if self.t >> self.k == 1 {
                self.t = 1;
            }
            self.idx = 0;
        }
    }
    fn charge(&mut self, id: ClientId, _used_ns: u64) -> Result<()> {
        self.roster.charge(id)
    }
}
