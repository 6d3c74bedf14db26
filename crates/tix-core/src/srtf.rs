//! Shortest remaining time first, preemptive SJF (Samih Ch. 2, Table 2.3):
//! at every pick the runnable client with the least remaining work runs, so
//! an arrival with a shorter burst preempts at the next quantum boundary.
//! Ties go to join order; unknown remaining work ranks last.

use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{BurstAware, ClientId, PolicyOptions, Scheduler};
use crate::sjf::Bursts;

/// SRTF scheduler.
#[derive(Debug, Clone)]
pub struct Srtf {
    roster: Roster,
    b: Bursts,
}

impl Srtf {
    pub fn new(opts: &PolicyOptions) -> Self {
        Srtf {
            roster: Roster::new(opts),
            b: Bursts::default(),
        }
    }
}

impl RunQueue for Srtf {
    fn grow(&mut self, _id: ClientId) {
        self.b.remaining.push(None);
    }
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.b.insert(id);
    }
    fn dequeue(&mut self, id: ClientId, _weight: u64) {
        self.b.remove(id);
    }
}

impl Scheduler for Srtf {
    fn name(&self) -> &'static str {
        "srtf"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_none() {
            self.roster.in_service = self.b.set.first().map(|k| k.1);
        }
        self.roster.in_service
    }
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let left = self.b.remaining[id].map(|r| r.saturating_sub(used_ns));
        // Work done: unknown until the next set_burst.
        self.b.set(id, left.filter(|&r| r > 0));
        Ok(())
    }
    fn as_burst_aware(&mut self) -> Option<&mut dyn BurstAware> {
        Some(self)
    }
}

impl BurstAware for Srtf {
    fn set_burst(&mut self, id: ClientId, burst_ns: u64) -> Result<()> {
        self.roster.state(id)?;
        self.b.set(id, Some(burst_ns));
        Ok(())
    }
}
