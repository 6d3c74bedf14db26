//! First-come first-served (Samih Ch. 2, Table 2.1): a FIFO of runnable
//! clients; the head keeps the processor until it blocks or leaves
//! (non-preemptive), a woken client goes to the tail. Weights are ignored.

use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};
use std::collections::VecDeque;

/// FCFS scheduler.
#[derive(Debug, Clone)]
pub struct Fcfs {
    roster: Roster,
    queue: VecDeque<ClientId>,
}

impl Fcfs {
    pub fn new(opts: &PolicyOptions) -> Self {
        Fcfs {
            roster: Roster::new(opts),
            queue: VecDeque::new(),
        }
    }

    fn dequeue(&mut self, id: ClientId) {
        if let Some(i) = self.queue.iter().position(|&c| c == id) {
            self.queue.remove(i);
        }
    }
}

impl RunQueue for Fcfs {
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.queue.push_back(id);
    }
    fn dequeue(&mut self, id: ClientId, _weight: u64) {
        self.dequeue(id);
    }
}

impl Scheduler for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
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
        self.roster.charge(id)
    }
}
