//! Write tracing's rules (seed 002 §1.5: start_trace, stop_trace,
//! get_trace), with the checks the seed left out: only a process's owner or
//! CAP_SYS_NICE (in the initial user namespace) may trace it, stop it or
//! read its counts; kernel threads have no user memory and are refused;
//! tracing twice and stopping or reading what was never started are
//! errors; a stop answers with the final counts instead of discarding them.
//!
//! The counting itself (write-protecting pages, counting write faults per
//! thread) is the backend's; a trace lives until stopped or until its
//! process exits, and is not recorded across daemon restarts (the counters
//! live in the scheduler, which restarts with the daemon).

use crate::daemon::{no_process, Backend, Caller, Daemon, ProcId};
use crate::{ErrorKind, Response, TraceReport, TraceThread};

/// Traced processes in all, and per owner (for unprivileged callers): each
/// costs the daemon a walk of the process's page tables every period.
pub const MAX_TRACES: usize = 64;
pub const MAX_TRACES_PER_UID: usize = 8;

/// One traced process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trace {
    pub id: ProcId,
    pub uid: u32,
    pub lo: u64,
    pub hi: u64,
}

fn not_traced(pid: u32) -> Response {
    Response::error(
        ErrorKind::BadRequest,
        format!("process {pid} is not traced (tix trace start {pid} first)"),
    )
}

fn not_permitted(pid: u32, owner: u32) -> Response {
    Response::error(
        ErrorKind::NotPermitted,
        format!(
            "not permitted: process {pid} belongs to uid {owner} (only its owner or CAP_SYS_NICE may trace it)"
        ),
    )
}

impl<B: Backend> Daemon<B> {
    /// The trace of the process `pid` belongs to, if the caller may see it.
    fn trace_of(&mut self, caller: &Caller, pid: u32) -> Result<Trace, Response> {
        let Some((_, f)) = self.backend.pin(pid) else {
            return Err(no_process(pid));
        };
        let Some(t) = self
            .traces
            .get(&f.id.tgid)
            .copied()
            .filter(|t| t.id == f.id)
        else {
            return Err(not_traced(pid));
        };
        if !(caller.privileged || caller.uid == t.uid) {
            return Err(not_permitted(pid, t.uid));
        }
        Ok(t)
    }

    fn report(&self, t: &Trace, stopped: bool) -> Response {
        let mut threads: Vec<TraceThread> = self
            .backend
            .trace_counts(t.id.tgid)
            .into_iter()
            .map(|(tid, writes, race_prob, slice_ns)| TraceThread {
                tid,
                writes,
                race_prob,
                slice_us: slice_ns / 1000,
            })
            .collect();
        threads.sort_by_key(|x| x.tid);
        Response::Trace(TraceReport {
            tgid: t.id.tgid,
            lo: t.lo,
            hi: t.hi,
            period_us: self.backend.trace_period_us(),
            writes: threads.iter().map(|x| x.writes).sum(),
            threads,
            stopped,
        })
    }

    pub(crate) fn trace_start(
        &mut self,
        caller: &Caller,
        pid: u32,
        lo: Option<u64>,
        hi: Option<u64>,
    ) -> Response {
        let (lo, hi) = (lo.unwrap_or(0), hi.unwrap_or(u64::MAX));
        if lo >= hi {
            return Response::error(
                ErrorKind::OutOfRange,
                format!("empty range: start {lo:#x} is not below end {hi:#x}"),
            );
        }
        let Some((pin, f)) = self.backend.pin(pid) else {
            return no_process(pid);
        };
        if !(caller.privileged || caller.uid == f.uid) {
            return not_permitted(pid, f.uid);
        }
        if self.backend.kernel_thread(&pin) {
            return Response::error(
                ErrorKind::BadRequest,
                format!("process {pid} is a kernel thread: it has no user memory to trace"),
            );
        }
        self.prune_traces();
        if let Some(t) = self.traces.get(&f.id.tgid) {
            if t.id == f.id {
                return Response::error(
                    ErrorKind::BadRequest,
                    format!(
                        "process {} is already traced (tix trace stop it first)",
                        f.id.tgid
                    ),
                );
            }
        }
        // The per-user cap keeps one user from taking every trace; a
        // CAP_SYS_NICE caller is bounded by the total only.
        let mine = self.traces.values().filter(|t| t.uid == f.uid).count();
        if self.traces.len() >= MAX_TRACES || (mine >= MAX_TRACES_PER_UID && !caller.privileged) {
            return Response::error(
                ErrorKind::Busy,
                format!(
                    "too many traced processes ({MAX_TRACES} in all, {MAX_TRACES_PER_UID} per user); stop one first"
                ),
            );
        }
        if let Err(e) = self.backend.trace_on(&pin, f.id, lo, hi) {
            return Response::error(ErrorKind::Internal, format!("tracing {pid}: {e}"));
        }
        // The process must still be the one whose owner was checked.
        if self.backend.recheck(&pin) != Some(f) {
            self.backend.trace_off(f.id.tgid);
            return Response::error(
                ErrorKind::NotPermitted,
                format!(
                    "process {pid} exited or changed owner during the request; nothing changed"
                ),
            );
        }
        let t = Trace {
            id: f.id,
            uid: f.uid,
            lo,
            hi,
        };
        self.traces.insert(f.id.tgid, t);
        self.report(&t, false)
    }

    pub(crate) fn trace_stop(&mut self, caller: &Caller, pid: u32) -> Response {
        let t = match self.trace_of(caller, pid) {
            Ok(t) => t,
            Err(r) => return r,
        };
        let r = self.report(&t, true);
        self.backend.trace_off(t.id.tgid);
        self.traces.remove(&t.id.tgid);
        r
    }

    pub(crate) fn trace_get(&mut self, caller: &Caller, pid: u32) -> Response {
        match self.trace_of(caller, pid) {
            Ok(t) => self.report(&t, false),
            Err(r) => r,
        }
    }

    /// Drop the traces of processes that have exited (their tgid may be
    /// reused). Returns how many.
    pub fn prune_traces(&mut self) -> usize {
        let gone: Vec<Trace> = self
            .traces
            .values()
            .filter(|t| !self.backend.alive(t.id))
            .copied()
            .collect();
        for t in &gone {
            self.backend.trace_off(t.id.tgid);
            self.traces.remove(&t.id.tgid);
        }
        gone.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::daemon::memory::{user, MemBackend, ALICE, BOB, ROOT};
    use crate::daemon::{Caller, Daemon};
    use crate::{ErrorKind, Request, Response};
    use std::collections::BTreeMap;

    fn daemon() -> Daemon<MemBackend> {
        let b = MemBackend::default()
            .with_proc(10, 10, 5, ALICE)
            .with_proc(11, 10, 5, ALICE)
            .with_proc(20, 20, 7, BOB)
            .with_proc(2, 2, 1, 0);
        let mut d = Daemon::new(b, BTreeMap::new());
        d.backend.kthreads.insert(2);
        d
    }

    fn start(d: &mut Daemon<MemBackend>, who: Caller, pid: u32) -> Response {
        d.handle(
            &who,
            &Request::TraceStart {
                pid,
                lo: None,
                hi: None,
            },
        )
        .unwrap()
    }

    fn kind(r: &Response) -> Option<ErrorKind> {
        match r {
            Response::Error { kind, message } => {
                assert!(!message.contains('\n'), "{message}");
                Some(*kind)
            }
            _ => None,
        }
    }

    #[test]
    fn owner_traces_reads_and_stops_with_final_counts() {
        let mut d = daemon();
        // A thread id names its process.
        let Response::Trace(r) = start(&mut d, user(ALICE), 11) else {
            panic!()
        };
        assert_eq!((r.tgid, r.lo, r.hi, r.writes), (10, 0, u64::MAX, 0));
        assert_eq!(d.backend.traced.get(&10), Some(&(0, u64::MAX)));
        d.backend
            .writes
            .insert(10, vec![(10, 7, 0, 0), (11, 3, 2, 80_000_000)]);
        let Some(Response::Trace(r)) = d.handle(&user(ALICE), &Request::TraceGet { pid: 10 })
        else {
            panic!()
        };
        assert_eq!(r.writes, 10);
        assert_eq!(r.threads[1].slice_us, 80_000);
        assert!(!r.stopped);
        let Some(Response::Trace(r)) = d.handle(&user(ALICE), &Request::TraceStop { pid: 10 })
        else {
            panic!()
        };
        assert!(r.stopped && r.writes == 10);
        assert!(d.backend.traced.is_empty());
        // Stopped: get and stop are errors again.
        for req in [
            Request::TraceGet { pid: 10 },
            Request::TraceStop { pid: 10 },
        ] {
            assert_eq!(
                kind(&d.handle(&user(ALICE), &req).unwrap()),
                Some(ErrorKind::BadRequest)
            );
        }
    }

    #[test]
    fn strangers_kthreads_twice_and_unknown_pids_are_refused_and_change_nothing() {
        let mut d = daemon();
        assert_eq!(
            kind(&start(&mut d, user(BOB), 10)),
            Some(ErrorKind::NotPermitted)
        );
        assert_eq!(
            kind(&start(&mut d, user(ALICE), 2)),
            Some(ErrorKind::NotPermitted)
        );
        let root = ROOT;
        assert_eq!(kind(&start(&mut d, root, 2)), Some(ErrorKind::BadRequest));
        assert_eq!(
            kind(&start(&mut d, user(ALICE), 99)),
            Some(ErrorKind::NoSuchProcess)
        );
        assert!(d.backend.traced.is_empty());
        assert_eq!(kind(&start(&mut d, user(ALICE), 10)), None);
        assert_eq!(
            kind(&start(&mut d, user(ALICE), 10)),
            Some(ErrorKind::BadRequest)
        );
        // Bob may neither read nor stop Alice's trace; CAP_SYS_NICE may.
        for req in [
            Request::TraceGet { pid: 10 },
            Request::TraceStop { pid: 10 },
        ] {
            assert_eq!(
                kind(&d.handle(&user(BOB), &req).unwrap()),
                Some(ErrorKind::NotPermitted)
            );
        }
        assert_eq!(d.backend.traced.len(), 1);
        assert_eq!(
            kind(&d.handle(&root, &Request::TraceGet { pid: 10 }).unwrap()),
            None
        );
        // An empty range.
        let r = d
            .handle(
                &user(BOB),
                &Request::TraceStart {
                    pid: 20,
                    lo: Some(0x2000),
                    hi: Some(0x1000),
                },
            )
            .unwrap();
        assert_eq!(kind(&r), Some(ErrorKind::OutOfRange));
        assert_eq!(d.backend.traced.len(), 1);
    }

    #[test]
    fn a_process_that_exits_is_no_longer_traced_and_its_pid_is_free() {
        let mut d = daemon();
        assert_eq!(kind(&start(&mut d, user(BOB), 20)), None);
        // Exits; a new process of Alice's reuses pid 20.
        d.backend.procs.remove(&20);
        d.backend = d.backend.clone().with_proc(20, 20, 9, ALICE);
        assert_eq!(d.prune_traces(), 1);
        assert!(d.backend.traced.is_empty());
        assert_eq!(
            kind(
                &d.handle(&user(ALICE), &Request::TraceGet { pid: 20 })
                    .unwrap()
            ),
            Some(ErrorKind::BadRequest)
        );
        assert_eq!(kind(&start(&mut d, user(ALICE), 20)), None);
    }

    #[test]
    fn one_user_cannot_take_every_trace() {
        let mut b = MemBackend::default();
        for i in 0..20 {
            b = b.with_proc(100 + i, 100 + i, 1, ALICE);
        }
        let mut d = Daemon::new(b.with_proc(500, 500, 1, BOB), BTreeMap::new());
        let ok = (0..20)
            .filter(|i| kind(&start(&mut d, user(ALICE), 100 + i)).is_none())
            .count();
        assert_eq!(ok, super::MAX_TRACES_PER_UID);
        assert_eq!(kind(&start(&mut d, user(BOB), 500)), None);
        // CAP_SYS_NICE may trace more of Alice's, up to the total.
        assert_eq!(kind(&start(&mut d, ROOT, 100 + 19)), None);
        assert_eq!(d.traces.len(), super::MAX_TRACES_PER_UID + 2);
    }
}
