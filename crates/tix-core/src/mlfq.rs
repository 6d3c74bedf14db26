//! Multilevel feedback queue (Samih Ch. 2 §2.5.1): three levels, RR with a
//! one-quantum slice, RR with a two-quantum slice (the thesis's 4 ms and
//! 8 ms with q = 4 ms), then FCFS. A client that uses its whole slice drops
//! a level; one that runs short (yields) goes to the tail of its level.
//! Aging, which the thesis leaves unspecified, is a periodic priority boost:
//! every [`boost_period_quanta`] quanta of charged time all clients return
//! to the top level, so nobody starves. The period grows with the number of
//! runnable clients (at least 4 quanta each) so the O(n) boost stays O(1)
//! amortised per pick. Weights are ignored.

use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};
use std::collections::VecDeque;

/// Fewest quanta of charged time between two priority boosts.
pub const BOOST_QUANTA: u64 = 32;

/// Quanta between two priority boosts with `runnable` clients.
pub fn boost_period_quanta(runnable: usize) -> u64 {
    BOOST_QUANTA.max(4 * runnable as u64)
}
const LEVELS: usize = 3;

/// MLFQ scheduler.
#[derive(Debug, Clone)]
pub struct Mlfq {
    roster: Roster,
    queues: [VecDeque<ClientId>; LEVELS],
    level: Vec<usize>,
    used: Vec<u64>,
    since_boost: u64,
}

impl Mlfq {
    pub fn new(opts: &PolicyOptions) -> Self {
        Mlfq {
            roster: Roster::new(opts),
            queues: Default::default(),
            level: Vec::new(),
            used: Vec::new(),
            since_boost: 0,
        }
    }

    /// Current level (0 = top) of a client.
    pub fn level(&self, id: ClientId) -> Result<usize> {
        self.roster.state(id)?;
        Ok(self.level[id])
    }

    fn slice(&self, level: usize) -> u64 {
        match level {
            0 => self.roster.quantum_ns,
            1 => 2 * self.roster.quantum_ns,
            _ => u64::MAX,
        }
    }

    fn dequeue(&mut self, id: ClientId) {
        let q = &mut self.queues[self.level[id]];
        if let Some(i) = q.iter().position(|&c| c == id) {
            q.remove(i);
        }
        self.used[id] = 0;
    }

    fn boost(&mut self) {
        let (top, rest) = self.queues.split_at_mut(1);
        for q in rest {
            top[0].extend(q.drain(..));
        }
        for &c in &self.queues[0] {
            self.level[c] = 0;
            self.used[c] = 0;
        }
        self.since_boost = 0;
    }
}

impl RunQueue for Mlfq {
    fn grow(&mut self, _id: ClientId) {
        self.level.push(0);
        self.used.push(0);
    }
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.queues[self.level[id]].push_back(id);
    }
    fn dequeue(&mut self, id: ClientId, _weight: u64) {
        self.dequeue(id);
    }
}

impl Scheduler for Mlfq {
    fn name(&self) -> &'static str {
        "mlfq"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_none() {
            self.roster.in_service = self.queues.iter().find_map(|q| q.front().copied());
        }
        self.roster.in_service
    }
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let l = self.level[id];
        // The picked client is the head of the highest non-empty level.
        self.used[id] = self.used[id].saturating_add(used_ns);
        if self.used[id] >= self.slice(l) {
            self.queues[l].pop_front();
            let nl = (l + 1).min(LEVELS - 1);
            self.level[id] = nl;
            self.used[id] = 0;
            self.queues[nl].push_back(id);
        } else if used_ns < self.roster.quantum_ns {
            self.queues[l].pop_front();
            self.used[id] = 0;
            self.queues[l].push_back(id);
        }
        self.since_boost = self.since_boost.saturating_add(used_ns);
        let period = boost_period_quanta(self.roster.runnable);
        if self.since_boost >= period.saturating_mul(self.roster.quantum_ns) {
            self.boost();
        }
        Ok(())
    }
}
