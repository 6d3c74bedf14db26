//! The daemon's rules without the operating system: Zepp's permission checks
//! (seed 000 §4.1), range checks, pid-reuse-safe process entries and the
//! durable record of every accepted setting. scx_tix supplies a [`Backend`]
//! over BPF maps, /proc and pidfds; tests and fuzzers supply one in memory.
//!
//! A request that changes something runs: pin the target process (a handle
//! that outlives pid reuse) → check the caller's rights against its owner →
//! write the table → record the setting durably → re-check the pinned
//! process. If the record fails, or the process exited or changed owner in
//! the meantime, the write is undone and the caller gets an error: nothing
//! is changed that the caller had no right to, and nothing is acknowledged
//! that a restart would lose.

use crate::{
    check_base, check_tickets, may_set_base, may_set_tickets, ErrorKind, Policy, Request, Response,
    DEFAULT_BASE, DEFAULT_TICKETS, MAX_TICKETS, MIN_TICKETS,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A process as the kernel names it for good: its tgid and its start time
/// (clock ticks after boot, /proc/PID/stat field 22). A reused pid has a
/// later start, so an entry keyed by both never passes to a new process.
/// Two processes with one tgid inside one 10 ms tick would need the pid
/// space to wrap in that tick: the accepted approximation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ProcId {
    pub tgid: u32,
    pub start: u64,
}

/// What the daemon needs to know of a process to apply the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcFacts {
    pub id: ProcId,
    /// Real uid of the process (nice's rule compares the owner's uid).
    pub uid: u32,
}

/// Who sent a request, as the daemon learned it from the kernel (the
/// sender's SCM_CREDENTIALS, checked against /proc while pinned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    pub uid: u32,
    /// CAP_SYS_NICE in the initial user namespace, held by the process that
    /// wrote the request, with its effective uid unchanged since it wrote.
    pub privileged: bool,
}

impl Caller {
    fn rules(&self) -> crate::Caller {
        crate::Caller {
            pid: 0,
            uid: self.uid,
            cap_sys_nice: self.privileged,
        }
    }
}

/// A process's ticket entry as the scheduler holds it: its tickets, the
/// currency they are denominated in (0: its owner's own), and the start
/// time of the process it was written for (0: inherited at fork).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub tickets: u64,
    pub start: u64,
    pub currency: u32,
}

/// What a process holds: tickets in a currency (0: its owner's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Holding {
    pub tickets: u64,
    pub currency: u32,
}

/// A currency users create (seed 001 §3.3; the Mach commands of §4.5):
/// owned by a uid, funded by `amount` tickets of `parent` (0: the owner's
/// own currency, which the owner's base funds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedCurrency {
    pub id: u32,
    pub name: String,
    pub owner: u32,
    pub parent: u32,
    pub amount: u64,
}

/// Every accepted setting, as written to the state file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Saved {
    /// The policy last set through the control socket, if any.
    #[serde(default)]
    pub policy: Option<Policy>,
    /// uid → base tickets set at run time (the config file's are defaults).
    #[serde(default)]
    pub bases: BTreeMap<u32, u64>,
    /// Process tickets, by tgid with the process's start time.
    #[serde(default)]
    pub procs: Vec<SavedProc>,
    /// Currencies created with `tix mkcur`.
    #[serde(default)]
    pub currencies: Vec<SavedCurrency>,
    /// Outstanding ticket loans (`tix lend`).
    #[serde(default)]
    pub loans: Vec<crate::transfer::Loan>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedProc {
    pub tgid: u32,
    pub start: u64,
    pub tickets: u64,
    /// The currency its tickets are in (0, left out of the file: its
    /// owner's own).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub currency: u32,
}

fn is_zero(c: &u32) -> bool {
    *c == 0
}

impl Saved {
    /// Parse a state file's text; every number is range-checked.
    pub fn parse(text: &str) -> Result<Saved, String> {
        // serde would also take a JSON array for a struct; the file is an object.
        if !text.trim_start().starts_with('{') {
            return Err("not a tix state: expected a JSON object".into());
        }
        let s: Saved = serde_json::from_str(text).map_err(|e| format!("not a tix state: {e}"))?;
        for (uid, b) in &s.bases {
            check_base(*b).map_err(|_| format!("base of uid {uid} out of range: {b}"))?;
        }
        for p in &s.procs {
            check_tickets(p.tickets)
                .map_err(|_| format!("tickets of tgid {} out of range: {}", p.tgid, p.tickets))?;
            if p.currency != 0 && !s.currencies.iter().any(|c| c.id == p.currency) {
                return Err(format!(
                    "tgid {} holds tickets in currency {}, which the file does not define",
                    p.tgid, p.currency
                ));
            }
        }
        crate::mach::check_saved(&s.currencies)?;
        for l in &s.loans {
            check_tickets(l.amount)
                .map_err(|_| format!("loan {} out of range: {}", l.id, l.amount))?;
            if l.currency != 0 && !s.currencies.iter().any(|c| c.id == l.currency) {
                return Err(format!("loan {} is in an unknown currency", l.id));
            }
        }
        Ok(s)
    }

    pub fn to_text(&self) -> String {
        // Plain data of integers and strings: serialising cannot fail.
        serde_json::to_string_pretty(self).expect("state serialises") + "\n"
    }

    /// Process tickets as a map (the state file keeps a list for
    /// readability; duplicates resolve to the last).
    pub fn proc_map(&self) -> BTreeMap<ProcId, Holding> {
        self.procs
            .iter()
            .map(|p| {
                (
                    ProcId {
                        tgid: p.tgid,
                        start: p.start,
                    },
                    Holding {
                        tickets: p.tickets,
                        currency: p.currency,
                    },
                )
            })
            .collect()
    }

    pub fn set_procs(&mut self, m: &BTreeMap<ProcId, Holding>) {
        self.procs = m
            .iter()
            .map(|(id, h)| SavedProc {
                tgid: id.tgid,
                start: id.start,
                tickets: h.tickets,
                currency: h.currency,
            })
            .collect();
    }
}

/// The operating system as the rules see it.
pub trait Backend {
    /// A handle on one process that stays bound to it (a pidfd).
    type Pin;
    /// The process that `pid` (a process or thread id) belongs to, pinned.
    fn pin(&mut self, pid: u32) -> Option<(Self::Pin, ProcFacts)>;
    /// The pinned process's facts now; None once it has exited.
    fn recheck(&mut self, pin: &Self::Pin) -> Option<ProcFacts>;
    /// The ticket entry of `tgid` as the scheduler holds it.
    fn entry(&self, tgid: u32) -> Option<Entry>;
    /// Write (Some) or remove (None) the ticket entry of `tgid`.
    fn put_entry(&mut self, tgid: u32, entry: Option<Entry>) -> Result<(), String>;
    /// Write (Some) or remove (None) a currency: (parent, amount, owner).
    fn put_currency(&mut self, id: u32, def: Option<(u32, u64, u32)>) -> Result<(), String>;
    /// Write a user's base tickets into the scheduler.
    fn put_base(&mut self, uid: u32, base: u64) -> Result<(), String>;
    /// Record every accepted setting durably (atomic replace + fsync).
    fn save(&mut self, saved: &Saved) -> Result<(), String>;
    /// CLOCK_MONOTONIC, ns (loans' deadlines).
    fn now_ns(&self) -> u64;
    /// The process still exists (same tgid, same start).
    fn alive(&self, id: ProcId) -> bool;
    /// The pinned process is a kernel thread (no user memory).
    fn kernel_thread(&self, pin: &Self::Pin) -> bool;
    /// Start counting the writes of the pinned process `id` to [lo, hi).
    fn trace_on(&mut self, pin: &Self::Pin, id: ProcId, lo: u64, hi: u64) -> Result<(), String>;
    /// Stop counting the writes of `tgid` and forget its counts.
    fn trace_off(&mut self, tgid: u32);
    /// Its threads: (tid, writes, RAS race_prob, RAS slice ns).
    fn trace_counts(&self, tgid: u32) -> Vec<(u32, u64, u32, u64)>;
    /// How often traced pages are write-protected again, µs.
    fn trace_period_us(&self) -> u64;
}

/// The rules over a backend.
pub struct Daemon<B: Backend> {
    pub backend: B,
    /// Bases from the config file: defaults a run-time setting overrides.
    pub config_bases: BTreeMap<u32, u64>,
    pub saved: Saved,
    /// A policy switch accepted but not yet applied by the main loop.
    pub pending_policy: Option<Policy>,
    /// The policy running now (set by the main loop).
    pub policy: Policy,
    /// Traced processes, by tgid (crate::trace).
    pub traces: BTreeMap<u32, crate::trace::Trace>,
}

pub(crate) fn no_process(pid: u32) -> Response {
    Response::error(ErrorKind::NoSuchProcess, format!("no such process: {pid}"))
}

fn changed(pid: u32) -> Response {
    Response::error(
        ErrorKind::NotPermitted,
        format!("process {pid} exited or changed owner during the request; nothing changed"),
    )
}

impl<B: Backend> Daemon<B> {
    pub fn new(backend: B, config_bases: BTreeMap<u32, u64>) -> Self {
        Daemon {
            backend,
            config_bases,
            saved: Saved::default(),
            pending_policy: None,
            policy: Policy::Lottery,
            traces: BTreeMap::new(),
        }
    }

    /// Base tickets of a user: run-time setting, else config, else default.
    pub fn base(&self, uid: u32) -> u64 {
        self.saved
            .bases
            .get(&uid)
            .or_else(|| self.config_bases.get(&uid))
            .copied()
            .unwrap_or(DEFAULT_BASE)
    }

    /// Every user whose base is set (run time or config), with the base:
    /// the users whose `user-UID.slice` their base funds.
    pub fn set_bases(&self) -> BTreeMap<u32, u64> {
        let mut b = self.config_bases.clone();
        b.extend(self.saved.bases.iter().map(|(u, v)| (*u, *v)));
        b
    }

    /// Tickets of a process: its entry if the entry is its own (same start;
    /// start 0 is an entry inherited at fork, claimed by the child), else
    /// the default.
    pub fn tickets(&self, id: ProcId) -> u64 {
        self.holding(id).tickets
    }

    /// What a process holds: its own entry's tickets and currency, else
    /// the default tickets in its owner's currency.
    pub fn holding(&self, id: ProcId) -> Holding {
        match self.backend.entry(id.tgid) {
            Some(e) if e.start == id.start || e.start == 0 => Holding {
                tickets: e.tickets,
                currency: e.currency,
            },
            _ => Holding {
                tickets: DEFAULT_TICKETS,
                currency: 0,
            },
        }
    }

    /// Apply settings recorded by an earlier run: bases always, process
    /// tickets only for processes that still exist with the same start,
    /// the policy unless `keep_policy` (the command line named one).
    /// Returns (bases, processes) restored.
    pub fn restore(
        &mut self,
        saved: Saved,
        alive: impl Fn(ProcId) -> bool,
    ) -> Result<(usize, usize), String> {
        for (uid, b) in &saved.bases {
            self.backend.put_base(*uid, *b)?;
        }
        for c in &saved.currencies {
            self.backend
                .put_currency(c.id, Some((c.parent, c.amount, c.owner)))?;
        }
        let mut procs = BTreeMap::new();
        for (id, h) in saved.proc_map() {
            if alive(id) {
                self.backend.put_entry(
                    id.tgid,
                    Some(Entry {
                        tickets: h.tickets,
                        start: id.start,
                        currency: h.currency,
                    }),
                )?;
                procs.insert(id, h);
            }
        }
        let n = (saved.bases.len(), procs.len());
        self.pending_policy = saved.policy;
        self.saved = saved;
        self.saved.set_procs(&procs);
        Ok(n)
    }

    /// Fold the scheduler's ticket table (which also holds tickets children
    /// inherited at fork) into the record; saves when it changed.
    pub fn sync_procs(&mut self, table: &BTreeMap<ProcId, Holding>) -> Result<bool, String> {
        if self.saved.proc_map() == *table {
            return Ok(false);
        }
        let mut next = self.saved.clone();
        next.set_procs(table);
        self.backend.save(&next)?;
        self.saved = next;
        Ok(true)
    }

    /// Answer one request. Status and Top are the caller's to answer
    /// (None): they read the scheduler, not the rules.
    pub fn handle(&mut self, caller: &Caller, req: &Request) -> Option<Response> {
        Some(match *req {
            Request::Status | Request::Top => return None,
            Request::GetTickets { pid } => match self.backend.pin(pid) {
                None => no_process(pid),
                Some((_, f)) => Response::Tickets {
                    pid,
                    tgid: f.id.tgid,
                    tickets: self.tickets(f.id),
                },
            },
            Request::SetTickets { pid, tickets } => self.set_tickets(caller, pid, tickets),
            Request::GetBase { uid } => Response::Base {
                uid,
                base: self.base(uid),
            },
            Request::SetBase { uid, base } => self.set_base(caller, uid, base),
            Request::SetPolicy { policy } => self.set_policy(caller, policy),
            Request::MkCur { ref name } => self.mkcur(caller, name),
            Request::RmCur { ref name } => self.rmcur(caller, name),
            Request::Fund {
                ref name,
                amount,
                ref from,
            } => self.fund(caller, name, amount, from.as_deref()),
            Request::Unfund { ref name } => self.fund(caller, name, 0, None),
            Request::Hold {
                pid,
                tickets,
                ref currency,
            } => self.hold(caller, pid, tickets, currency.as_deref()),
            Request::ListCurrencies => self.lscur(caller),
            Request::ListTickets => self.lstkt(),
            Request::Lend {
                from,
                to,
                amount,
                secs,
            } => self.lend(caller, from, to, amount, secs),
            Request::Return { id } => self.give_back(caller, id),
            Request::ListLoans => self.list_loans(),
            Request::TraceStart { pid, lo, hi } => self.trace_start(caller, pid, lo, hi),
            Request::TraceStop { pid } => self.trace_stop(caller, pid),
            Request::TraceGet { pid } => self.trace_get(caller, pid),
        })
    }

    fn set_tickets(&mut self, caller: &Caller, pid: u32, tickets: u64) -> Response {
        self.put_holding(caller, pid, tickets, None)
    }

    /// Add `delta` tickets (kept in MIN_TICKETS..=MAX_TICKETS) to a
    /// process's holding, in its currency. The scheduler's entry alone: a
    /// transfer records its loan, not the tickets it moves.
    pub(crate) fn add_tickets(&mut self, id: ProcId, delta: i64) -> Result<(), String> {
        let h = self.holding(id);
        let tickets =
            (h.tickets as i64 + delta).clamp(MIN_TICKETS as i64, MAX_TICKETS as i64) as u64;
        self.backend.put_entry(
            id.tgid,
            Some(Entry {
                tickets,
                start: id.start,
                currency: h.currency,
            }),
        )
    }

    /// Set a process's tickets, and (Some) the currency they are in, which
    /// the caller has checked; None keeps the currency it holds.
    pub(crate) fn put_holding(
        &mut self,
        caller: &Caller,
        pid: u32,
        tickets: u64,
        currency: Option<u32>,
    ) -> Response {
        if let Err(e) = check_tickets(tickets) {
            return e;
        }
        let Some((pin, f)) = self.backend.pin(pid) else {
            return no_process(pid);
        };
        if !may_set_tickets(&caller.rules(), f.uid) {
            return Response::error(
                ErrorKind::NotPermitted,
                format!(
                    "not permitted: process {pid} belongs to uid {} (only its owner or CAP_SYS_NICE may set its tickets)",
                    f.uid
                ),
            );
        }
        let before = self.backend.entry(f.id.tgid);
        let currency = currency.unwrap_or_else(|| self.holding(f.id).currency);
        if let Err(e) = self.backend.put_entry(
            f.id.tgid,
            Some(Entry {
                tickets,
                start: f.id.start,
                currency,
            }),
        ) {
            return Response::error(ErrorKind::Internal, format!("ticket table: {e}"));
        }
        let mut next = self.saved.clone();
        let mut procs = next.proc_map();
        procs.retain(|id, _| id.tgid != f.id.tgid);
        procs.insert(f.id, Holding { tickets, currency });
        next.set_procs(&procs);
        let undo = |d: &mut Self, r: Response| {
            // Best effort: a failed undo leaves the entry keyed to a process
            // that is gone or was this caller's, never a stranger's gain.
            let _ = d.backend.put_entry(f.id.tgid, before);
            r
        };
        // The process must still be the one whose owner was checked.
        if self.backend.recheck(&pin) != Some(f) {
            return undo(self, changed(pid));
        }
        if let Err(e) = self.backend.save(&next) {
            return undo(
                self,
                Response::error(
                    ErrorKind::Internal,
                    format!("recording the setting: {e}; nothing changed"),
                ),
            );
        }
        self.saved = next;
        Response::Tickets {
            pid,
            tgid: f.id.tgid,
            tickets,
        }
    }

    fn set_base(&mut self, caller: &Caller, uid: u32, base: u64) -> Response {
        if let Err(e) = check_base(base) {
            return e;
        }
        if !may_set_base(&caller.rules(), uid, base) {
            let why = if caller.uid != uid {
                "only CAP_SYS_NICE may change another user's base tickets"
            } else {
                "only CAP_SYS_NICE may raise base tickets above the default"
            };
            return Response::error(
                ErrorKind::NotPermitted,
                format!("not permitted: {why} ({DEFAULT_BASE})"),
            );
        }
        let mut next = self.saved.clone();
        next.bases.insert(uid, base);
        if let Err(e) = self.backend.save(&next) {
            return Response::error(
                ErrorKind::Internal,
                format!("recording the setting: {e}; nothing changed"),
            );
        }
        if let Err(e) = self.backend.put_base(uid, base) {
            // Keep file and table in step: the record goes back too.
            let _ = self.backend.save(&self.saved);
            return Response::error(ErrorKind::Internal, format!("base table: {e}"));
        }
        self.saved = next;
        Response::Base { uid, base }
    }

    fn set_policy(&mut self, caller: &Caller, policy: Policy) -> Response {
        if !caller.privileged {
            return Response::error(
                ErrorKind::NotPermitted,
                "not permitted: changing the policy needs CAP_SYS_NICE",
            );
        }
        // RAS orders by arrival, lottery and stride by service: their keys
        // do not mix, so RAS is chosen (or left) by restarting scx_tix.
        if (policy == Policy::Ras) != (self.policy == Policy::Ras) {
            return Response::error(
                ErrorKind::BadRequest,
                format!(
                    "cannot switch from {} to {} while attached: ras is chosen when scx_tix starts (scx_tix --policy ras)",
                    self.policy.name(),
                    policy.name()
                ),
            );
        }
        let mut next = self.saved.clone();
        next.policy = Some(policy);
        if let Err(e) = self.backend.save(&next) {
            return Response::error(
                ErrorKind::Internal,
                format!("recording the setting: {e}; nothing changed"),
            );
        }
        self.saved = next;
        self.pending_policy = Some(policy);
        Response::Policy { policy }
    }
}

/// A backend in memory: processes, tables and a "disk", with switches to
/// make a process change owner or exit between pin and recheck, or the disk
/// fail. For the rules' tests and the fuzzers.
pub mod memory {
    use super::*;

    #[derive(Debug, Default, Clone)]
    pub struct MemBackend {
        /// pid (process or thread id) → facts of its process.
        pub procs: BTreeMap<u32, ProcFacts>,
        pub entries: BTreeMap<u32, Entry>,
        pub bases: BTreeMap<u32, u64>,
        pub currencies: BTreeMap<u32, (u32, u64, u32)>,
        pub disk: Option<Saved>,
        /// On the next recheck, the pinned process has this owner instead.
        pub owner_change: Option<u32>,
        /// The clock loans see, ns.
        pub now: u64,
        /// On the next recheck, the pinned process has exited.
        pub exit_on_recheck: bool,
        pub disk_fails: bool,
        /// Kernel threads (by pid).
        pub kthreads: std::collections::BTreeSet<u32>,
        /// Traced processes: tgid → range.
        pub traced: BTreeMap<u32, (u64, u64)>,
        /// Counts the scheduler would report, by tgid.
        pub writes: BTreeMap<u32, Vec<(u32, u64, u32, u64)>>,
    }

    /// Callers the rules' tests and fuzzers share.
    pub const ALICE: u32 = 1001;
    pub const BOB: u32 = 1002;
    pub const ROOT: Caller = Caller {
        uid: 0,
        privileged: true,
    };

    /// An unprivileged caller.
    pub const fn user(uid: u32) -> Caller {
        Caller {
            uid,
            privileged: false,
        }
    }

    impl MemBackend {
        pub fn with_proc(mut self, pid: u32, tgid: u32, start: u64, uid: u32) -> Self {
            self.procs.insert(
                pid,
                ProcFacts {
                    id: ProcId { tgid, start },
                    uid,
                },
            );
            self
        }
    }

    impl Backend for MemBackend {
        type Pin = u32;
        fn pin(&mut self, pid: u32) -> Option<(u32, ProcFacts)> {
            self.procs.get(&pid).map(|f| (pid, *f))
        }
        fn recheck(&mut self, pin: &u32) -> Option<ProcFacts> {
            if std::mem::take(&mut self.exit_on_recheck) {
                self.procs.remove(pin);
                return None;
            }
            if let Some(uid) = self.owner_change.take() {
                if let Some(f) = self.procs.get_mut(pin) {
                    f.uid = uid;
                }
            }
            self.procs.get(pin).copied()
        }
        fn entry(&self, tgid: u32) -> Option<Entry> {
            self.entries.get(&tgid).copied()
        }
        fn put_entry(&mut self, tgid: u32, e: Option<Entry>) -> Result<(), String> {
            match e {
                Some(v) => self.entries.insert(tgid, v),
                None => self.entries.remove(&tgid),
            };
            Ok(())
        }
        fn put_currency(&mut self, id: u32, def: Option<(u32, u64, u32)>) -> Result<(), String> {
            match def {
                Some(v) => self.currencies.insert(id, v),
                None => self.currencies.remove(&id),
            };
            Ok(())
        }
        fn put_base(&mut self, uid: u32, base: u64) -> Result<(), String> {
            self.bases.insert(uid, base);
            Ok(())
        }
        fn save(&mut self, s: &Saved) -> Result<(), String> {
            if self.disk_fails {
                return Err("disk full".into());
            }
            self.disk = Some(s.clone());
            Ok(())
        }
        fn now_ns(&self) -> u64 {
            self.now
        }
        fn alive(&self, id: ProcId) -> bool {
            self.procs.values().any(|f| f.id == id)
        }
        fn kernel_thread(&self, pin: &u32) -> bool {
            self.kthreads.contains(pin)
        }
        fn trace_on(&mut self, _pin: &u32, id: ProcId, lo: u64, hi: u64) -> Result<(), String> {
            self.traced.insert(id.tgid, (lo, hi));
            Ok(())
        }
        fn trace_off(&mut self, tgid: u32) {
            self.traced.remove(&tgid);
            self.writes.remove(&tgid);
        }
        fn trace_counts(&self, tgid: u32) -> Vec<(u32, u64, u32, u64)> {
            self.writes.get(&tgid).cloned().unwrap_or_default()
        }
        fn trace_period_us(&self) -> u64 {
            10_000
        }
    }
}

#[cfg(test)]
mod tests {
    use super::memory::{user, MemBackend, ALICE, BOB, ROOT};
    use super::*;

    fn daemon() -> Daemon<MemBackend> {
        let b = MemBackend::default()
            .with_proc(10, 10, 500, ALICE)
            .with_proc(11, 10, 500, ALICE) // a thread of 10
            .with_proc(20, 20, 600, BOB);
        Daemon::new(b, BTreeMap::new())
    }

    fn e(tickets: u64, start: u64) -> Entry {
        Entry {
            tickets,
            start,
            currency: 0,
        }
    }

    fn is_err(r: &Option<Response>, kind: ErrorKind) -> bool {
        matches!(r, Some(Response::Error { kind: k, .. }) if *k == kind)
    }

    #[test]
    fn owner_sets_own_tickets_recorded_before_the_answer() {
        let mut d = daemon();
        let r = d.handle(
            &user(ALICE),
            &Request::SetTickets {
                pid: 11,
                tickets: 700,
            },
        );
        assert_eq!(
            r,
            Some(Response::Tickets {
                pid: 11,
                tgid: 10,
                tickets: 700
            })
        );
        assert_eq!(d.backend.entries[&10], e(700, 500));
        let disk = d.backend.disk.clone().unwrap();
        assert_eq!(
            disk.procs,
            vec![SavedProc {
                tgid: 10,
                start: 500,
                tickets: 700,
                currency: 0,
            }]
        );
    }

    #[test]
    fn strangers_and_namespaced_roots_are_refused_with_nothing_changed() {
        let mut d = daemon();
        // uid 0 without the capability in the initial namespace (what a
        // caller in a child user namespace becomes) is an ordinary user.
        for who in [user(ALICE), user(0)] {
            let r = d.handle(
                &who,
                &Request::SetTickets {
                    pid: 20,
                    tickets: 7,
                },
            );
            assert!(is_err(&r, ErrorKind::NotPermitted), "{r:?}");
            let r = d.handle(
                &who,
                &Request::SetBase {
                    uid: BOB,
                    base: 500,
                },
            );
            assert!(is_err(&r, ErrorKind::NotPermitted), "{r:?}");
            let r = d.handle(
                &who,
                &Request::SetBase {
                    uid: who.uid,
                    base: 10_000,
                },
            );
            assert!(is_err(&r, ErrorKind::NotPermitted), "{r:?}");
            let r = d.handle(
                &who,
                &Request::SetPolicy {
                    policy: Policy::Stride,
                },
            );
            assert!(is_err(&r, ErrorKind::NotPermitted), "{r:?}");
        }
        assert!(d.backend.entries.is_empty() && d.backend.bases.is_empty());
        assert_eq!(d.backend.disk, None);
        assert_eq!(d.pending_policy, None);
        assert!(d
            .handle(
                &ROOT,
                &Request::SetTickets {
                    pid: 20,
                    tickets: 7
                }
            )
            .is_some());
        assert_eq!(d.backend.entries[&20], e(7, 600));
    }

    #[test]
    fn owner_change_or_exit_between_check_and_write_is_undone() {
        let mut d = daemon();
        d.backend.entries.insert(20, e(300, 600));
        // Bob's process: root-owned at the check (setuid daemon dropping to
        // bob is the reverse case), so let alice's own process turn into
        // bob's between pin and recheck.
        d.backend.owner_change = Some(BOB);
        let r = d.handle(
            &user(ALICE),
            &Request::SetTickets {
                pid: 10,
                tickets: 9000,
            },
        );
        assert!(is_err(&r, ErrorKind::NotPermitted), "{r:?}");
        assert_eq!(d.backend.entries.get(&10), None);
        assert_eq!(d.backend.disk, None);
        d.backend.exit_on_recheck = true;
        let r = d.handle(
            &ROOT,
            &Request::SetTickets {
                pid: 20,
                tickets: 1,
            },
        );
        assert!(is_err(&r, ErrorKind::NotPermitted), "{r:?}");
        assert_eq!(d.backend.entries[&20], e(300, 600));
    }

    #[test]
    fn a_failed_record_changes_nothing() {
        let mut d = daemon();
        d.backend.disk_fails = true;
        let r = d.handle(
            &user(ALICE),
            &Request::SetTickets {
                pid: 10,
                tickets: 5,
            },
        );
        assert!(is_err(&r, ErrorKind::Internal), "{r:?}");
        assert!(d.backend.entries.is_empty());
        let r = d.handle(
            &ROOT,
            &Request::SetBase {
                uid: BOB,
                base: 5000,
            },
        );
        assert!(is_err(&r, ErrorKind::Internal), "{r:?}");
        assert!(d.backend.bases.is_empty());
        assert_eq!(d.base(BOB), DEFAULT_BASE);
        let r = d.handle(
            &ROOT,
            &Request::SetPolicy {
                policy: Policy::Stride,
            },
        );
        assert!(is_err(&r, ErrorKind::Internal), "{r:?}");
        assert_eq!(d.pending_policy, None);
    }

    #[test]
    fn a_reused_pid_does_not_inherit_tickets() {
        let mut d = daemon();
        // An entry left by an earlier process 20 (start 100): the present
        // process 20 (start 600) holds the default.
        d.backend.entries.insert(20, e(9000, 100));
        assert_eq!(
            d.handle(&user(BOB), &Request::GetTickets { pid: 20 }),
            Some(Response::Tickets {
                pid: 20,
                tgid: 20,
                tickets: DEFAULT_TICKETS
            })
        );
        // An entry inherited at fork (start 0) is the child's.
        d.backend.entries.insert(20, e(250, 0));
        assert_eq!(
            d.tickets(ProcId {
                tgid: 20,
                start: 600
            }),
            250
        );
    }

    #[test]
    fn restore_keeps_living_processes_only() {
        let mut d = daemon();
        let saved = Saved {
            policy: Some(Policy::Stride),
            bases: [(ALICE, 500)].into(),
            currencies: vec![],
            loans: vec![],
            procs: vec![
                SavedProc {
                    tgid: 10,
                    start: 500,
                    tickets: 700,
                    currency: 0,
                },
                SavedProc {
                    tgid: 20,
                    start: 1,
                    tickets: 900,
                    currency: 0,
                }, // pid reused since
            ],
        };
        let text = saved.to_text();
        let back = Saved::parse(&text).unwrap();
        assert_eq!(back, saved);
        let live = |id: ProcId| {
            id == ProcId {
                tgid: 10,
                start: 500,
            } || id
                == ProcId {
                    tgid: 20,
                    start: 600,
                }
        };
        assert_eq!(d.restore(back, live), Ok((1, 1)));
        assert_eq!(d.backend.entries.get(&10), Some(&e(700, 500)));
        assert_eq!(d.backend.entries.get(&20), None);
        assert_eq!(d.base(ALICE), 500);
        assert_eq!(d.pending_policy, Some(Policy::Stride));
    }

    #[test]
    fn malformed_state_files_are_refused() {
        for bad in [
            "",
            "{",
            "[]",
            r#"{"bases":{"1001":5}}"#,
            r#"{"procs":[{"tgid":1,"start":2,"tickets":0}]}"#,
            r#"{"procs":[{"tgid":1,"start":2,"tickets":20000}]}"#,
            r#"{"policy":"gr9"}"#,
            r#"{"extra":1}"#,
        ] {
            assert!(Saved::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Saved::parse("{}"), Ok(Saved::default()));
    }
}
