//! Shortest remaining time first, preemptive SJF (Samih Ch. 2, Table 2.3):
//! at every pick the runnable client with the least remaining work runs, so
//! an arrival with a shorter burst preempts at the next quantum boundary.
//! Ties go to join order; unknown remaining work ranks last.

use crate::error::Result;
use crate::registry::{roster_accessors, Roster};
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

impl Scheduler for Srtf {
    fn name(&self) -> &'static str {
        "srtf"
    }
    roster_accessors!();
    fn join(&mut self, weight: u64) -> Result<ClientId> {
        let id = self.roster.join(weight)?;
        self.b.remaining.push(None);
        self.b.insert(id);
        Ok(id)
    }
    fn leave(&mut self, id: ClientId) -> Result<()> {
        if self.roster.leave(id)? {
            self.b.remove(id);
        }
        Ok(())
    }
    fn set_weight(&mut self, id: ClientId, weight: u64) -> Result<()> {
        self.roster.set_weight(id, weight).map(|_| ())
    }
    fn block(&mut self, id: ClientId) -> Result<()> {
        self.roster.block(id)?;
        self.b.remove(id);
        Ok(())
    }
    fn wake(&mut self, id: ClientId) -> Result<()> {
        self.roster.wake(id)?;
        self.b.insert(id);
        Ok(())
    }
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
