//! The control API of scx_tix: tix-ctl's rules (tix_ctl::daemon) over the
//! BPF maps, /proc and the state file, and the answers that read the
//! scheduler (status, top). The socket side is server.rs.

use crate::stats::{self, Counters};
use crate::{procs, state};
use libbpf_rs::{MapCore, MapFlags, MapHandle};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tix_ctl::daemon::{Backend, Caller, Daemon, Entry, Holding, ProcFacts, ProcId, Saved};
use tix_ctl::{Policy, Request, Response, Status, Top, UserRow};

/// State shared between the control threads and the main loop, which alone
/// touches the skeleton (policy global, counters).
#[derive(Debug)]
pub struct Shared {
    pub status: Status,
}

/// The scheduler's ticket tables and the state file, as tix-ctl's rules
/// see them.
pub struct BpfBackend {
    pub user_base: MapHandle,
    pub proc_tickets: MapHandle,
    pub currencies: MapHandle,
    pub state_path: PathBuf,
    /// Write tracing (trace.rs, bpf/ras.bpf.h): maps traced and wcounts,
    /// the protecting thread's list, the period; None where the kernel
    /// keeps no soft-dirty bits or has no page-fault tracepoint to count at.
    pub tracing: Option<Tracing>,
}

pub struct Tracing {
    pub traced: MapHandle,
    pub wcounts: MapHandle,
    pub protector: Arc<crate::trace::Protector>,
    pub period_us: u64,
}

impl Tracing {
    /// Every (tid, tix_wcount) of the counts map.
    fn counts(&self) -> Vec<(u32, u64, u64, u32, u32)> {
        self.wcounts
            .keys()
            .filter_map(|k| {
                let v = self.wcounts.lookup(&k, MapFlags::ANY).ok()??;
                let tid = u32::from_ne_bytes(k.get(0..4)?.try_into().ok()?);
                let writes = u64::from_ne_bytes(v.get(0..8)?.try_into().ok()?);
                let slice = u64::from_ne_bytes(v.get(8..16)?.try_into().ok()?);
                let tgid = u32::from_ne_bytes(v.get(16..20)?.try_into().ok()?);
                let prob = u32::from_ne_bytes(v.get(20..24)?.try_into().ok()?);
                Some((tid, writes, slice, tgid, prob))
            })
            .collect()
    }

    fn forget(&self, tgid: u32) {
        for (tid, _, _, t, _) in self.counts() {
            if t == tgid {
                let _ = self.wcounts.delete(&tid.to_ne_bytes());
            }
        }
    }
}

/// The bytes of a tix_proc_tickets value.
fn entry_bytes(e: &Entry) -> Vec<u8> {
    let mut v = Vec::with_capacity(16);
    v.extend_from_slice(&(e.tickets as u32).to_ne_bytes());
    v.extend_from_slice(&e.currency.to_ne_bytes());
    v.extend_from_slice(&e.start.to_ne_bytes());
    v
}

fn entry_of(bytes: &[u8]) -> Option<Entry> {
    let t = u32::from_ne_bytes(bytes.get(0..4)?.try_into().ok()?);
    let c = u32::from_ne_bytes(bytes.get(4..8)?.try_into().ok()?);
    let s = u64::from_ne_bytes(bytes.get(8..16)?.try_into().ok()?);
    Some(Entry {
        tickets: u64::from(t),
        start: s,
        currency: c,
    })
}

impl Backend for BpfBackend {
    type Pin = procs::Pinned;

    fn pin(&mut self, pid: u32) -> Option<(procs::Pinned, ProcFacts)> {
        procs::pin(pid)
    }

    fn recheck(&mut self, pin: &procs::Pinned) -> Option<ProcFacts> {
        procs::recheck(pin)
    }

    fn entry(&self, tgid: u32) -> Option<Entry> {
        let v = self
            .proc_tickets
            .lookup(&tgid.to_ne_bytes(), MapFlags::ANY)
            .ok()??;
        entry_of(&v)
    }

    fn put_entry(&mut self, tgid: u32, e: Option<Entry>) -> Result<(), String> {
        let key = tgid.to_ne_bytes();
        match e {
            Some(e) => self
                .proc_tickets
                .update(&key, &entry_bytes(&e), MapFlags::ANY)
                .map_err(|e| {
                    // libbpf-rs keeps the errno only in its message: a full
                    // hash map answers E2BIG.
                    if e.to_string().contains(&format!("os error {}", libc::E2BIG)) {
                        "the ticket table is full (scx_tix --max-tasks sets its size)".into()
                    } else {
                        format!("proc_tickets: {e}")
                    }
                }),
            None => match self.proc_tickets.delete(&key) {
                Ok(()) => Ok(()),
                Err(_) if self.entry(tgid).is_none() => Ok(()),
                Err(e) => Err(format!("proc_tickets: {e}")),
            },
        }
    }

    fn put_currency(&mut self, id: u32, def: Option<(u32, u64, u32)>) -> Result<(), String> {
        let key = id.to_ne_bytes();
        match def {
            Some((parent, amount, owner)) => {
                let mut v = Vec::with_capacity(16);
                for x in [parent, amount as u32, owner, 0] {
                    v.extend_from_slice(&x.to_ne_bytes());
                }
                self.currencies
                    .update(&key, &v, MapFlags::ANY)
                    .map_err(|e| format!("currencies: {e}"))
            }
            None => match self.currencies.delete(&key) {
                Ok(()) => Ok(()),
                Err(e)
                    if e.to_string()
                        .contains(&format!("os error {}", libc::ENOENT)) =>
                {
                    Ok(())
                }
                Err(e) => Err(format!("currencies: {e}")),
            },
        }
    }

    fn put_base(&mut self, uid: u32, base: u64) -> Result<(), String> {
        self.user_base
            .update(
                &uid.to_ne_bytes(),
                &(base as u32).to_ne_bytes(),
                MapFlags::ANY,
            )
            .map_err(|e| format!("user_base: {e}"))
    }

    fn save(&mut self, saved: &Saved) -> Result<(), String> {
        state::save(&self.state_path, saved)
    }

    fn now_ns(&self) -> u64 {
        stats::monotonic_ns()
    }

    fn alive(&self, id: ProcId) -> bool {
        procs::exists(id)
    }

    fn kernel_thread(&self, pin: &procs::Pinned) -> bool {
        procs::kernel_thread(pin.tgid())
    }

    fn trace_on(
        &mut self,
        pin: &procs::Pinned,
        id: ProcId,
        lo: u64,
        hi: u64,
    ) -> Result<(), String> {
        let Some(t) = &self.tracing else {
            return Err("write tracing needs soft-dirty bits (CONFIG_MEM_SOFT_DIRTY) and x86's page_fault_user tracepoint, which this kernel or machine lacks".into());
        };
        // Opened while pinned (the caller rechecks the pin after): the
        // file is this process's for good.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(format!("/proc/{}/clear_refs", pin.tgid()))
            .map_err(|e| format!("/proc/{}/clear_refs: {e}", pin.tgid()))?;
        // Counts a fault raced in after an earlier trace of this tgid stopped.
        t.forget(id.tgid);
        let mut v = Vec::with_capacity(24);
        for x in [lo, hi, id.start] {
            v.extend_from_slice(&x.to_ne_bytes());
        }
        t.traced
            .update(&id.tgid.to_ne_bytes(), &v, MapFlags::ANY)
            .map_err(|e| format!("traced: {e}"))?;
        if let Err(e) = t.protector.add(id.tgid, f) {
            let _ = t.traced.delete(&id.tgid.to_ne_bytes());
            return Err(format!("write-protecting its pages (soft-dirty): {e}"));
        }
        Ok(())
    }

    fn trace_off(&mut self, tgid: u32) {
        if let Some(t) = &self.tracing {
            t.protector.remove(tgid);
            let _ = t.traced.delete(&tgid.to_ne_bytes());
            t.forget(tgid);
        }
    }

    fn trace_counts(&self, tgid: u32) -> Vec<(u32, u64, u32, u64)> {
        let Some(t) = &self.tracing else {
            return Vec::new();
        };
        t.counts()
            .into_iter()
            .filter(|c| c.3 == tgid)
            .map(|(tid, writes, slice, _, prob)| (tid, writes, prob, slice))
            .collect()
    }

    fn trace_period_us(&self) -> u64 {
        self.tracing.as_ref().map_or(0, |t| t.period_us)
    }
}

impl BpfBackend {
    /// The ticket table as (process → tickets), pruning entries whose
    /// process is gone (a pid the kernel may hand to someone else). Entries
    /// not yet claimed by a forked child (start 0) wait for the next pass.
    pub fn table(&mut self) -> BTreeMap<ProcId, Holding> {
        let mut out = BTreeMap::new();
        let keys: Vec<Vec<u8>> = self.proc_tickets.keys().collect();
        for key in keys {
            let Ok(k) = <[u8; 4]>::try_from(key.as_slice()) else {
                continue;
            };
            let tgid = u32::from_ne_bytes(k);
            let Some(e) = self.entry(tgid) else {
                continue;
            };
            if e.start == 0 {
                continue;
            }
            let id = ProcId {
                tgid,
                start: e.start,
            };
            if procs::exists(id) {
                out.insert(
                    id,
                    Holding {
                        tickets: e.tickets,
                        currency: e.currency,
                    },
                );
            } else {
                let _ = self.proc_tickets.delete(&key);
            }
        }
        out
    }
}

pub struct Control {
    pub daemon: Mutex<Daemon<BpfBackend>>,
    pub shared: Arc<Mutex<Shared>>,
    pub task_stats: MapHandle,
    pub user_stats: MapHandle,
    /// Online CPUs, for the water-filled ideal `tix top` shows.
    pub nr_cpus: u32,
}

impl Control {
    /// Answer one request from `caller`. The rules run under the daemon's
    /// lock; status and top read the scheduler without it (top's /proc
    /// reads are the slow part and must not hold up other users).
    pub fn answer(&self, caller: &Caller, req: &Request) -> Response {
        match req {
            Request::Status => {
                Response::Status(Box::new(self.shared.lock().unwrap().status.clone()))
            }
            Request::Top => Response::Top(self.top()),
            _ => self
                .daemon
                .lock()
                .unwrap()
                .handle(caller, req)
                .unwrap_or_else(|| {
                    Response::error(tix_ctl::ErrorKind::Internal, "unanswered request")
                }),
        }
    }

    fn top(&self) -> Top {
        let mut tasks = Vec::new();
        let mut starts = Vec::new();
        for key in self.task_stats.keys() {
            let Ok(k) = <[u8; 4]>::try_from(key.as_slice()) else {
                continue;
            };
            let pid = u32::from_ne_bytes(k);
            let Ok(Some(v)) = self.task_stats.lookup(&key, MapFlags::ANY) else {
                continue;
            };
            let Some(st) = stats::task_stat(&v) else {
                continue;
            };
            let Some(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok() else {
                continue;
            };
            starts.push(procs::start_ticks(st.tgid).unwrap_or(u64::MAX));
            let view = stats::task_view(pid);
            tasks.push(tix_ctl::TaskRow {
                pid,
                tgid: st.tgid,
                uid: st.uid,
                comm: comm.trim().to_string(),
                // The daemon's own threads are runnable because they
                // answer this request: counting them would give them a
                // share in every expected column.
                runnable: view.runnable && st.tgid != std::process::id(),
                tickets: 0,
                base: 0,
                value: st.value,
                wins: st.wins,
                runtime_ns: st.runtime_ns,
                hist: st.hist.to_vec(),
                cpus_allowed: view.cpus_allowed,
            });
        }
        let mut users = Vec::new();
        for key in self.user_stats.keys() {
            let Ok(k) = <[u8; 4]>::try_from(key.as_slice()) else {
                continue;
            };
            let uid = u32::from_ne_bytes(k);
            if let Ok(Some(v)) = self.user_stats.lookup(&key, MapFlags::ANY) {
                if let Some((wins, runtime_ns)) = stats::user_stat(&v) {
                    users.push(UserRow {
                        uid,
                        base: 0,
                        wins,
                        runtime_ns,
                    });
                }
            }
        }
        {
            let d = self.daemon.lock().unwrap();
            for (t, start) in tasks.iter_mut().zip(starts) {
                t.tickets = d.tickets(ProcId {
                    tgid: t.tgid,
                    start,
                });
                t.base = d.base(t.uid);
            }
            for u in &mut users {
                u.base = d.base(u.uid);
            }
        }
        tasks.sort_by_key(|t| t.pid);
        users.sort_by_key(|u| u.uid);
        Top {
            now_ns: stats::monotonic_ns(),
            nr_cpus: self.nr_cpus,
            tasks,
            users,
        }
    }
}

/// Counters as the main loop samples them, published for `status`.
pub fn publish(shared: &Arc<Mutex<Shared>>, c: &Counters, rate: f64, policy: Policy) {
    let mut sh = shared.lock().unwrap();
    sh.status.policy = policy;
    sh.status.decisions = c.decisions;
    sh.status.prev_kept = c.prev_kept;
    sh.status.starve_serves = c.starve_serves;
    sh.status.aged_serves = Some(c.aged_serves);
    sh.status.direct = c.direct;
    sh.status.preempt_kicks = Some(c.preempt_kicks);
    sh.status.stalled_ms = Some(c.stalled_ns / 1_000_000);
    sh.status.stalled_sq_ms2 = Some(c.stalled_sq_us2 / 1_000_000);
    sh.status.guard_scans = Some(c.guard_scans);
    sh.status.guard_us = Some(c.guard_ns / 1000);
    sh.status.lost = c.lost;
    sh.status.proc_states = c.proc_states;
    sh.status.cgroups = c.cgroups;
    sh.status.cgroups_cpu_max = c.cgroups_cpu_max;
    sh.status.decisions_per_sec = rate;
}
