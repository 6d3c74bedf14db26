//! Round robin (GR3 §3): runnable clients in a circular FIFO, each runs one
//! quantum in turn; weights are stored and validated but do not change the
//! order. Samih Ch. 2 (Table 2.4) uses it with q = 4 ms.

use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};
use std::collections::VecDeque;

/// Round robin over runnable clients in join (then wake) order.
#[derive(Debug, Clone)]
pub struct RoundRobin {
    roster: Roster,
    queue: VecDeque<ClientId>,
}

impl RoundRobin {
    pub fn new(opts: &PolicyOptions) -> Self {
        RoundRobin {
            roster: Roster::new(opts),
            queue: VecDeque::new(),
        }
    }

    fn dequeue(&mut self, id: ClientId) {
        // O(n): leaving and blocking are rare next to pick/charge.
        if let Some(i) = self.queue.iter().position(|&c| c == id) {
            self.queue.remove(i);
        }
    }
}

impl RunQueue for RoundRobin {
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.queue.push_back(id);
    }
    fn dequeue(&mut self, id: ClientId, _weight: u64) {
        self.dequeue(id);
    }
}

impl Scheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "rr"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_none() {
            self.roster.in_service = self.queue.front().copied();
        }
        self.roster.in_service
    }
    fn charge(&mut self, id: ClientId, _used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        // A client that used less than its quantum still goes to the tail:
        // Samih's RR releases the CPU voluntarily and rejoins the queue.
        if let Some(head) = self.queue.pop_front() {
            self.queue.push_back(head);
        }
        Ok(())
    }
}
