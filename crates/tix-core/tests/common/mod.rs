//! The obviously correct eligible queue both queue suites check against.

use proptest::test_runner::Config;
use tix_core::ClientId;

/// `cases` cases, nothing written to disk (a failure prints its case).
pub fn cases(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// A scan of every slot: the smallest (finish, id) among queued slots with
/// start ≤ V.
#[derive(Default)]
pub struct Scan {
    /// (start, finish) of each queued slot.
    pub slots: Vec<Option<(i128, i128)>>,
}

impl Scan {
    pub fn take(&mut self, v: i128) -> Option<ClientId> {
        let best = (0..self.slots.len())
            .filter_map(|id| self.slots[id].map(|(s, f)| (s, f, id)))
            .filter(|&(s, _, _)| s <= v)
            .min_by_key(|&(_, f, id)| (f, id))
            .map(|(_, _, id)| id)?;
        self.slots[best] = None;
        Some(best)
    }
    pub fn min_start(&self) -> Option<i128> {
        self.slots.iter().flatten().map(|&(s, _)| s).min()
    }
    /// WF2Q+'s pick: take at v, or at max(v, smallest start) if none is
    /// eligible at v.
    pub fn take_or_raise(&mut self, v: i128) -> Option<(ClientId, i128)> {
        if let Some(id) = self.take(v) {
            return Some((id, v));
        }
        let vr = v.max(self.min_start()?);
        Some((self.take(vr)?, vr))
    }
}
