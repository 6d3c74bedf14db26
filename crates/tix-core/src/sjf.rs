//! Shortest job first, non-preemptive (Samih Ch. 2, Table 2.2): when the
//! processor is free the runnable client with the shortest next burst runs,
//! and keeps it until the burst is used up, it blocks or it leaves. Ties go
//! to join order (the thesis breaks ties FCFS). A client whose burst is
//! unknown ranks after every known burst; burst lengths come through
//! [`BurstAware::set_burst`].

use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{BurstAware, ClientId, PolicyOptions, Scheduler};
use std::collections::BTreeSet;

/// Burst bookkeeping shared by SJF and SRTF: a set ordered by (remaining
/// burst, join order); the client holding the processor (SJF) is out of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bursts {
    pub remaining: Vec<Option<u64>>,
    pub set: BTreeSet<(u64, ClientId)>,
}

impl Bursts {
    pub fn key(&self, id: ClientId) -> (u64, ClientId) {
        (self.remaining[id].unwrap_or(u64::MAX), id)
    }
    pub fn insert(&mut self, id: ClientId) {
        let k = self.key(id);
        self.set.insert(k);
    }
    pub fn remove(&mut self, id: ClientId) -> bool {
        let k = self.key(id);
        self.set.remove(&k)
    }
    /// Change a burst, re-keying the client if it is queued.
    pub fn set(&mut self, id: ClientId, burst: Option<u64>) {
        let queued = self.remove(id);
        self.remaining[id] = burst;
        if queued {
            self.insert(id);
        }
    }
}

/// SJF scheduler.
#[derive(Debug, Clone)]
pub struct Sjf {
    roster: Roster,
    b: Bursts,
    /// The client holding the processor for its whole burst.
    holder: Option<ClientId>,
}

impl Sjf {
    pub fn new(opts: &PolicyOptions) -> Self {
        Sjf {
            roster: Roster::new(opts),
            b: Bursts::default(),
            holder: None,
        }
    }

    fn dequeue(&mut self, id: ClientId) {
        if self.holder == Some(id) {
            self.holder = None;
        } else {
            self.b.remove(id);
        }
    }
}

impl RunQueue for Sjf {
    fn grow(&mut self, _id: ClientId) {
        self.b.remaining.push(None);
    }
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.b.insert(id);
    }
    fn dequeue(&mut self, id: ClientId, _weight: u64) {
        self.dequeue(id);
    }
}

impl Scheduler for Sjf {
    fn name(&self) -> &'static str {
        "sjf"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_none() {
            if self.holder.is_none() {
                let first = self.b.set.pop_first()?;
                self.holder = Some(first.1);
            }
            self.roster.in_service = self.holder;
        }
        self.roster.in_service
    }
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let left = self.b.remaining[id].map(|r| r.saturating_sub(used_ns));
        self.b.remaining[id] = left;
        if left == Some(0) {
            // Burst over: the next one is unknown until set_burst.
            self.b.remaining[id] = None;
            self.holder = None;
            self.b.insert(id);
        }
        Ok(())
    }
    fn as_burst_aware(&mut self) -> Option<&mut dyn BurstAware> {
        Some(self)
    }
}

impl BurstAware for Sjf {
    fn set_burst(&mut self, id: ClientId, burst_ns: u64) -> Result<()> {
        self.roster.state(id)?;
        self.b.set(id, Some(burst_ns));
        Ok(())
    }
}
