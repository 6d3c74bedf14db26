//! Virtual-Time Round-Robin (Nieh, Vaill & Zhong 2001, as GR3 §3 describes
//! it): a run queue sorted by share, largest first, never reordered by
//! selection; each client in turn runs one quantum, and the scan moves on
//! to the next client only while that client's virtual finishing time shows
//! it has not had more than its fair share (VFT_next − QVT < 1/S_next);
//! otherwise it returns to the head. Per-cycle counters (Σ shares quanta)
//! keep every client to its share per cycle; a client whose counter is 0 is
//! passed over.
//!
//! Approximations: insertion is a Vec insert (O(n); the original uses a
//! sorted list with O(log n) search); a client joining mid-cycle gets
//! ⌈C_TOTAL·S/S_TOTAL⌉ quanta as GR3's eqs. 8–9; a waking client's VFT is
//! max(its VFT, QVT + 1/S). Every charge counts as one quantum.

use crate::error::Result;
use crate::registry::{roster_accessors, Roster};
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
        if at <= self.pos && !self.queue.is_empty() {
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

impl Scheduler for Vtrr {
    fn name(&self) -> &'static str {
        "vtrr"
    }
    roster_accessors!();
    fn join(&mut self, weight: u64) -> Result<ClientId> {
        let id = self.roster.join(weight)?;
        self.counter.push(0);
        self.vft.push(0);
        self.insert(id, true);
        Ok(id)
    }
    fn leave(&mut self, id: ClientId) -> Result<()> {
        if self.roster.leave(id)? {
            self.remove(id, self.roster.weights[id]);
        }
        Ok(())
    }
    fn set_weight(&mut self, id: ClientId, weight: u64) -> Result<()> {
        let (old, runnable) = self.roster.set_weight(id, weight)?;
        if runnable {
            self.remove(id, old);
            self.insert(id, false);
        }
        Ok(())
    }
    fn block(&mut self, id: ClientId) -> Result<()> {
        self.roster.block(id)?;
        self.remove(id, self.roster.weights[id]);
        Ok(())
    }
    fn wake(&mut self, id: ClientId) -> Result<()> {
        self.roster.wake(id)?;
        self.insert(id, false);
        Ok(())
    }
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_some() {
            return self.roster.in_service;
        }
        let n = self.queue.len();
        if n == 0 {
            return None;
        }
        // Pass over clients whose counter is spent; the cycle's total > 0
        // guarantees one is found within n steps.
        for _ in 0..n {
            let c = self.queue[self.pos];
            if self.counter[c] > 0 {
                self.roster.in_service = Some(c);
                return Some(c);
            }
            self.pos = (self.pos + 1) % n;
        }
        self.reset_cycle();
        let c = self.queue[0];
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
        let next = self.pos + 1;
        self.pos = match self.queue.get(next) {
            Some(&c) if self.vft[c] < self.qvt + ONE / self.roster.weights[c] as u128 => next,
            _ => 0,
        };
        if self.c_total == 0 {
            self.reset_cycle();
        }
        Ok(())
    }
}
