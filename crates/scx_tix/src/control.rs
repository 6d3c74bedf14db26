//! The control API of scx_tix: a Unix socket speaking tix-ctl's JSON lines,
//! callers identified with SO_PEERCRED, Zepp's permission rules (seed 000
//! §4.1) enforced before any ticket table or BPF map changes.

use crate::stats::{self, Counters};
use libbpf_rs::{MapCore, MapFlags, MapHandle};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tix_ctl::{Caller, ErrorKind, Policy, Request, Response, Status, Top, UserRow};

/// State shared between the control thread and the main loop, which alone
/// touches the skeleton (policy global, counters).
#[derive(Debug)]
pub struct Shared {
    pub status: Status,
    pub pending_policy: Option<Policy>,
}

/// The ticket tables. The BPF maps are the tables the scheduler reads; the
/// daemon keeps base tickets also in memory so defaults from the config file
/// survive a user having no process (unlike Zepp's user_struct).
pub struct Control {
    pub user_base: MapHandle,
    pub proc_tickets: MapHandle,
    pub task_stats: MapHandle,
    pub user_stats: MapHandle,
    pub shared: Arc<Mutex<Shared>>,
    pub bases: HashMap<u32, u64>,
}

/// Facts about a process read from /proc/PID/status.
pub struct ProcInfo {
    pub tgid: u32,
    pub uid: u32,
}

pub fn proc_info(pid: u32) -> Option<ProcInfo> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u32> {
        s.lines()
            .find(|l| l.starts_with(name))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    Some(ProcInfo {
        tgid: field("Tgid:")?,
        uid: field("Uid:")?,
    })
}

/// CAP_SYS_NICE (bit 23) in the effective set of PID. Accepted race: the
/// caller may exit and its pid be reused between SO_PEERCRED and this read;
/// the reused pid would have to belong to a privileged process started in
/// that instant.
pub fn has_cap_sys_nice(pid: u32) -> bool {
    const CAP_SYS_NICE: u32 = 23;
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    s.lines()
        .find(|l| l.starts_with("CapEff:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_SYS_NICE) != 0)
}

fn peer(stream: &UnixStream) -> Option<Caller> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: cred and len are valid for writes of the sizes given.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 || cred.pid <= 0 {
        return None;
    }
    let pid = cred.pid as u32;
    Some(Caller {
        pid,
        uid: cred.uid,
        cap_sys_nice: has_cap_sys_nice(pid),
    })
}

impl Control {
    pub fn tickets(&self, tgid: u32) -> u64 {
        self.proc_tickets
            .lookup(&tgid.to_ne_bytes(), MapFlags::ANY)
            .ok()
            .flatten()
            .and_then(|v| v.try_into().ok().map(u32::from_ne_bytes))
            .map(u64::from)
            .unwrap_or(tix_ctl::DEFAULT_TICKETS)
    }

    pub fn base(&self, uid: u32) -> u64 {
        self.bases
            .get(&uid)
            .copied()
            .unwrap_or(tix_ctl::DEFAULT_BASE)
    }

    /// Store a base in the table and the BPF map.
    pub fn put_base(&mut self, uid: u32, base: u64) -> Result<(), String> {
        self.user_base
            .update(
                &uid.to_ne_bytes(),
                &(base as u32).to_ne_bytes(),
                MapFlags::ANY,
            )
            .map_err(|e| format!("updating user_base: {e}"))?;
        self.bases.insert(uid, base);
        Ok(())
    }

    pub fn handle(&mut self, caller: &Caller, req: Request) -> Response {
        match req {
            Request::Status => Response::Status(self.shared.lock().unwrap().status.clone()),
            Request::GetTickets { pid } => match proc_info(pid) {
                None => no_process(pid),
                Some(pi) => Response::Tickets {
                    pid,
                    tgid: pi.tgid,
                    tickets: self.tickets(pi.tgid),
                },
            },
            Request::SetTickets { pid, tickets } => {
                let Some(pi) = proc_info(pid) else {
                    return no_process(pid);
                };
                if let Err(e) = tix_ctl::check_tickets(tickets) {
                    return e;
                }
                if !tix_ctl::may_set_tickets(caller, pi.uid) {
                    return Response::error(
                        ErrorKind::NotPermitted,
                        format!(
                            "not permitted: process {pid} belongs to uid {} (only its owner or CAP_SYS_NICE may set its tickets)",
                            pi.uid
                        ),
                    );
                }
                match self.proc_tickets.update(
                    &pi.tgid.to_ne_bytes(),
                    &(tickets as u32).to_ne_bytes(),
                    MapFlags::ANY,
                ) {
                    Ok(()) => Response::Tickets {
                        pid,
                        tgid: pi.tgid,
                        tickets,
                    },
                    Err(e) => Response::error(ErrorKind::Internal, format!("proc_tickets: {e}")),
                }
            }
            Request::GetBase { uid } => Response::Base {
                uid,
                base: self.base(uid),
            },
            Request::SetBase { uid, base } => {
                if let Err(e) = tix_ctl::check_base(base) {
                    return e;
                }
                if !tix_ctl::may_set_base(caller, uid, base) {
                    let why = if caller.uid != uid {
                        "only CAP_SYS_NICE may change another user's base tickets"
                    } else {
                        "only CAP_SYS_NICE may raise base tickets above the default"
                    };
                    return Response::error(
                        ErrorKind::NotPermitted,
                        format!("not permitted: {why} ({})", tix_ctl::DEFAULT_BASE),
                    );
                }
                match self.put_base(uid, base) {
                    Ok(()) => Response::Base { uid, base },
                    Err(e) => Response::error(ErrorKind::Internal, e),
                }
            }
            Request::SetPolicy { policy } => {
                if !caller.cap_sys_nice {
                    return Response::error(
                        ErrorKind::NotPermitted,
                        "not permitted: changing the policy needs CAP_SYS_NICE",
                    );
                }
                let mut sh = self.shared.lock().unwrap();
                sh.pending_policy = Some(policy);
                Response::Policy { policy }
            }
            Request::Top => Response::Top(self.top()),
        }
    }

    fn top(&self) -> Top {
        let mut tasks = Vec::new();
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
            tasks.push(tix_ctl::TaskRow {
                pid,
                tgid: st.tgid,
                uid: st.uid,
                comm: comm.trim().to_string(),
                runnable: stats::is_runnable(pid),
                tickets: self.tickets(st.tgid),
                base: self.base(st.uid),
                value: st.value,
                wins: st.wins,
                runtime_ns: st.runtime_ns,
                hist: st.hist.to_vec(),
            });
        }
        tasks.sort_by_key(|t| t.pid);
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
                        base: self.base(uid),
                        wins,
                        runtime_ns,
                    });
                }
            }
        }
        users.sort_by_key(|u| u.uid);
        Top {
            now_ns: stats::monotonic_ns(),
            tasks,
            users,
        }
    }
}

fn no_process(pid: u32) -> Response {
    Response::error(ErrorKind::NoSuchProcess, format!("no such process: {pid}"))
}

/// Bind the socket (mode 0666: anyone may read; writes are checked per
/// request) replacing a stale one.
pub fn bind(path: &Path) -> anyhow::Result<UnixListener> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            anyhow::bail!("another scx_tix already serves {}", path.display());
        }
        std::fs::remove_file(path)?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let l = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
    Ok(l)
}

fn serve_one(ctl: &mut Control, stream: UnixStream) {
    // A client that never writes cannot hold the thread for long.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let Some(caller) = peer(&stream) else {
        return;
    };
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let resp = match serde_json::from_str::<Request>(line.trim()) {
            Ok(req) => ctl.handle(&caller, req),
            Err(e) => Response::error(ErrorKind::BadRequest, format!("bad request: {e}")),
        };
        let mut out = serde_json::to_string(&resp).unwrap_or_else(|_| "{}".into());
        out.push('\n');
        if (&stream).write_all(out.as_bytes()).is_err() {
            return;
        }
    }
}

/// Serve requests one connection at a time until the process exits.
pub fn spawn(mut ctl: Control, listener: UnixListener, path: PathBuf) {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            match stream {
                Ok(s) => serve_one(&mut ctl, s),
                Err(e) => eprintln!("scx_tix: control socket {}: {e}", path.display()),
            }
        }
    });
}

/// Counters as the main loop samples them, published for `status`.
pub fn publish(shared: &Arc<Mutex<Shared>>, c: &Counters, rate: f64, policy: Policy, comp: bool) {
    let mut sh = shared.lock().unwrap();
    sh.status.policy = policy;
    sh.status.compensation = comp;
    sh.status.decisions = c.decisions;
    sh.status.prev_kept = c.prev_kept;
    sh.status.starve_serves = c.starve_serves;
    sh.status.direct = c.direct;
    sh.status.decisions_per_sec = rate;
}
