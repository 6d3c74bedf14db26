//! Virtual-Time Round-Robin (Nieh, Vaill & Zhong 2001, as GR3 §3 describes
//! it): a run queue sorted by share, largest first, never reordered by
//! selection; each client in turn runs one quantum. After a quantum the scan
//! moves on to the next client if its time counter is larger than the one
//! just run (the time-counter invariant: counters never increase along the
//! queue), or if it is unspent and its virtual finishing time shows it has
//! not had more than its fair share (VFT_next − QVT(t+Q) < 1/S_next);
//! otherwise it returns to the head. Counters are reset to the shares each
//! cycle (Σ shares quanta), so every client gets its share per cycle.
//!
//! Approximations: insertion is a Vec insert (O(n); the original uses a
//! sorted list with O(log n) search); a client joining mid-cycle gets
//! ⌈C_TOTAL·S/S_TOTAL⌉ quanta as GR3's eqs. 8–9; a waking client's VFT is
//! max(its VFT, QVT + 1/S). Every charge counts as one quantum. The counter
//! rule and QVT(t+Q) follow the original VTRR paper, which is not a seed
//! (GR3 §3 only says "until it reaches a client whose VFT indicates it has
//! received more than its fair allocation").

use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};

/// One quantum of virtual time, fixed point.
const ONE: u128 = 1 << 40;

/// VTRR scheduler.
#[derive(Debug, Clone)]
pub struct Vtrr {
    roster: Roster,
    queue: Vec<ClientId>,
    pos: usize,
    counter: Vec<u64>,
    vft: Vec<u128>,
    qvt: u128,
    s_total: u128,
    c_total: u128,
}

impl Vtrr {
    pub fn new(opts: &PolicyOptions) -> Self {
        Vtrr {
            roster: Roster::new(opts),
            queue: Vec::new(),
            pos: 0,
            counter: Vec::new(),
            vft: Vec::new(),
            qvt: 0,
            s_total: 0,
            c_total: 0,
        }
    }

    fn reset_cycle(&mut self) {
        for &c in &self.queue {
            self.counter[c] = self.roster.weights[c];
        }
        self.c_total = self.s_total;
        self.pos = 0;
    }

    fn insert(&mut self, id: ClientId, fresh: bool) {
        let w = self.roster.weights[id];
        let c = if self.s_total == 0 {
            w as u128
        } else {
            (self.c_total * w as u128).div_ceil(self.s_total)
        };
        self.counter[id] = c as u64;
        self.c_total += c;
        self.s_total += w as u128;
        let start = self.qvt + ONE / w as u128;
        self.vft[id] = if fresh {
            start
        } else {
            self.vft[id].max(start)
        };
        let weights = &self.roster.weights;
        let at = self.queue.partition_point(|&x| weights[x] >= w);
        // Mid-scan, the client the scan stands at stays next. At the head
        // (the start, or after a return to it) the scan runs whoever heads
        // the list: "returns to the beginning of the list" (GR3 §3), and a
        // first cycle starts at the largest share, not the first joiner.
        if self.pos > 0 && at <= self.pos {
            self.pos += 1;
        }
        self.queue.insert(at, id);
    }

    fn remove(&mut self, id: ClientId, w: u64) {
        self.s_total -= w as u128;
        self.c_total -= (self.counter[id] as u128).min(self.c_total);
        if let Some(i) = self.queue.iter().position(|&c| c == id) {
            self.queue.remove(i);
            if i < self.pos {
                self.pos -= 1;
            }
            if self.pos >= self.queue.len() {
                self.pos = 0;
            }
        }
        if self.c_total == 0 && !self.queue.is_empty() {
            self.reset_cycle();
        }
    }
}

impl RunQueue for Vtrr {
    fn grow(&mut self, _id: ClientId) {
        self.counter.push(0);
        self.vft.push(0);
    }
    fn enqueue(&mut self, id: ClientId, fresh: bool) {
        self.insert(id, fresh);
    }
    fn dequeue(&mut self, id: ClientId, weight: u64) {
        self.remove(id, weight);
    }
    fn reweigh(&mut self, id: ClientId, old: u64, runnable: bool) {
        if runnable {
            self.remove(id, old);
            self.insert(id, false);
        }
    }
}

impl Scheduler for Vtrr {
    fn name(&self) -> &'static str {
        "vtrr"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_some() {
            return self.roster.in_service;
        }
        if self.queue.is_empty() {
            return None;
        }
        // A spent client ends the scan: under the time-counter invariant
        // every client behind it is spent too, so go back to the head.
        if self.counter[self.queue[self.pos]] == 0 {
            self.pos = 0;
        }
        // Joins and weight changes mid-cycle can break the invariant (a
        // newcomer's prorated counter may exceed its predecessor's); then
        // the head itself may be spent, and the first unspent client runs.
        if self.counter[self.queue[self.pos]] == 0 {
            match self.queue.iter().position(|&c| self.counter[c] > 0) {
                Some(i) => self.pos = i,
                None => self.reset_cycle(),
            }
        }
        let c = self.queue[self.pos];
        self.roster.in_service = Some(c);
        Some(c)
    }
    fn charge(&mut self, id: ClientId, _used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let w = self.roster.weights[id] as u128;
        if self.counter[id] > 0 {
            self.counter[id] -= 1;
            self.c_total -= 1;
        }
        self.vft[id] += ONE / w;
        self.qvt += ONE / self.s_total.max(1);
        // The next client runs if (1) its counter exceeds the one just
        // charged — the time-counter invariant (counters never increase
        // along the queue) forces it, whatever its VFT — or (2) it is
        // unspent and passes the VFT inequality VFT − QVT(t+Q) < Q/S,
        // QVT(t+Q) being the queue virtual time once its quantum is over.
        // Otherwise the scan restarts at the head.
        let qvt_next = self.qvt + ONE / self.s_total.max(1);
        let mine = self.counter[id];
        let next = self.pos + 1;
        self.pos = match self.queue.get(next) {
            Some(&c) if self.counter[c] > mine => next,
            Some(&c)
                if self.counter[c] > 0
                    && self.vft[c] < qvt_next + ONE / self.roster.weights[c] as u128 =>
            {
                next
            }
            _ => 0,
        };
        if self.c_total == 0 {
            self.reset_cycle();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The literal model's first counterexample (shares [1, 2] joined in
    /// that order): the first cycle starts at the head of the list — the
    /// larger share — not at the first client to join.
    #[test]
    fn first_cycle_starts_at_the_largest_share() {
        let mut v = Vtrr::new(&PolicyOptions::default());
        let small = v.join(1).unwrap();
        let large = v.join(2).unwrap();
        let mut picks = Vec::new();
        for _ in 0..6 {
            let c = v.pick().unwrap();
            v.charge(c, 1_000_000).unwrap();
            picks.push(c);
        }
        assert_eq!(picks, [large, small, large, large, small, large]);
    }
}
