//! Weighted round robin as GR3 §3 describes it: every client runs once per
//! round for a time equal to its share, i.e. w_i consecutive quanta
//! (shares 3,2,1 give A,A,A,B,B,C, error −1..+1.5 tu).

use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};
use std::collections::VecDeque;

/// Weighted round robin: the head of the queue keeps the processor for
/// `weight` consecutive quanta, then goes to the tail.
#[derive(Debug, Clone)]
pub struct WeightedRoundRobin {
    roster: Roster,
    queue: VecDeque<ClientId>,
    /// Quanta the head still has in this round.
    left: u64,
}

impl WeightedRoundRobin {
    pub fn new(opts: &PolicyOptions) -> Self {
        WeightedRoundRobin {
            roster: Roster::new(opts),
            queue: VecDeque::new(),
            left: 0,
        }
    }

    fn dequeue(&mut self, id: ClientId) {
        if let Some(i) = self.queue.iter().position(|&c| c == id) {
            self.queue.remove(i);
            if i == 0 {
                self.left = 0;
            }
        }
    }
}

impl RunQueue for WeightedRoundRobin {
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.queue.push_back(id);
    }
    fn dequeue(&mut self, id: ClientId, _weight: u64) {
        self.dequeue(id);
    }
    fn reweigh(&mut self, id: ClientId, old: u64, _runnable: bool) {
        // The head's current turn is rescaled to the new weight, never
        // beyond it: a cut takes effect at once, a raise at once too.
        let weight = self.roster.weights[id];
        if self.queue.front() == Some(&id) && self.left > 0 {
            let used = old.saturating_sub(self.left);
            self.left = weight.saturating_sub(used).max(1);
        }
    }
}

impl Scheduler for WeightedRoundRobin {
    fn name(&self) -> &'static str {
        "wrr"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_none() {
            let head = *self.queue.front()?;
            if self.left == 0 {
                self.left = self.roster.weights[head];
            }
            self.roster.in_service = Some(head);
        }
        self.roster.in_service
    }
    fn charge(&mut self, id: ClientId, _used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        // Counted in quanta, as the paper's WRR: a short run uses one up.
        self.left = self.left.saturating_sub(1);
        if self.left == 0 {
            if let Some(head) = self.queue.pop_front() {
                self.queue.push_back(head);
            }
        }
        Ok(())
    }
}
