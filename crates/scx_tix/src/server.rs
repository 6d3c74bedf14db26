//! The control socket: a thread per connection, so no client waits on
//! another, with limits no local user can push past (tix_ctl::wire and the
//! numbers in [`Limits`]): connections per uid and in all, request size,
//! time to finish a started request, time between requests, time for the
//! client to take its answer. Each request is credited to the process that
//! wrote it (SCM_CREDENTIALS), not to whoever connected.

use crate::control::Control;
use crate::procs;
use std::collections::HashMap;
use std::io::{ErrorKind as IoKind, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tix_ctl::daemon::Caller;
use tix_ctl::wire::{self, Frame, Framer};
use tix_ctl::{ErrorKind, Request, Response};

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections one uid may hold open at once.
    pub per_uid: usize,
    /// Connections in all.
    pub total: usize,
    /// Quiet time allowed between requests.
    pub idle: Duration,
    /// Time allowed to finish a request once its first byte arrived.
    pub line: Duration,
    /// Time allowed for the client to take an answer.
    pub write: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_uid: 16,
            total: 256,
            idle: Duration::from_secs(30),
            line: Duration::from_secs(2),
            write: Duration::from_secs(2),
        }
    }
}

#[derive(Default)]
struct Counts {
    by_uid: HashMap<u32, usize>,
    total: usize,
}

/// A connection's place in the counts, given back when it ends.
struct Slot {
    counts: Arc<Mutex<Counts>>,
    uid: u32,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.counts.lock().unwrap();
        c.total -= 1;
        if let Some(n) = c.by_uid.get_mut(&self.uid) {
            *n -= 1;
            if *n == 0 {
                c.by_uid.remove(&self.uid);
            }
        }
    }
}

fn set_passcred(fd: i32) -> bool {
    let one: libc::c_int = 1;
    // SAFETY: a valid socket fd and a c_int option value.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PASSCRED,
            &one as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

/// uid of whoever connected (SO_PEERCRED): what the connection counts
/// against. Requests are credited per write, below.
fn peer_uid(s: &UnixStream) -> Option<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: cred and len are valid for writes of the sizes given.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    (rc == 0).then_some(cred.uid)
}

/// The sender of some bytes: pid and effective uid at the time of writing,
/// in the daemon's namespaces. pid 0 when the kernel attached none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sender {
    pid: u32,
    uid: u32,
}

/// One read with the writer's credentials. File descriptors a client
/// passes (SCM_RIGHTS) are closed at once: the root daemon keeps nothing a
/// client sends but bytes.
fn recv(s: &UnixStream, buf: &mut [u8], fallback_uid: u32) -> std::io::Result<(usize, Sender)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let mut space = [0u64; 32];
    // SAFETY: msghdr is plain data; the pointers set below stay valid for
    // the call, and cmsg parsing stays within msg_controllen.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&space) as _;
        let n = libc::recvmsg(s.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut who = Sender {
            pid: 0,
            uid: fallback_uid,
        };
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let data = libc::CMSG_DATA(c);
            let len = (*c).cmsg_len as usize - (data as usize - c as usize);
            if (*c).cmsg_level == libc::SOL_SOCKET {
                if (*c).cmsg_type == libc::SCM_CREDENTIALS
                    && len >= std::mem::size_of::<libc::ucred>()
                {
                    let u = std::ptr::read_unaligned(data as *const libc::ucred);
                    who = Sender {
                        pid: u.pid.max(0) as u32,
                        uid: u.uid,
                    };
                } else if (*c).cmsg_type == libc::SCM_RIGHTS {
                    for i in 0..len / std::mem::size_of::<libc::c_int>() {
                        let fd = std::ptr::read_unaligned((data as *const libc::c_int).add(i));
                        libc::close(fd);
                    }
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        Ok((n as usize, who))
    }
}

/// Write all of `bytes` within the limit, or give up on the client.
fn send(s: &UnixStream, bytes: &[u8], limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let mut w = s;
    let mut rest = bytes;
    while !rest.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_write_timeout(Some(left)).is_err() {
            return false;
        }
        match w.write(rest) {
            Ok(0) => return false,
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == IoKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

fn answer_line(r: &Response) -> Vec<u8> {
    let mut out = serde_json::to_vec(r).unwrap_or_else(|_| b"{}".to_vec());
    out.push(b'\n');
    out
}

/// Who the rules see: the writer's uid, privileged only if the writing
/// process holds CAP_SYS_NICE in the initial user namespace with the euid
/// it wrote under. Checked for every request but the reads anyone may make
/// (a new request is checked until listed here).
fn caller(who: Sender, req: &Request) -> Caller {
    let changes = !matches!(
        req,
        Request::Status
            | Request::Top
            | Request::GetTickets { .. }
            | Request::GetBase { .. }
            | Request::ListTickets
            | Request::ListLoans
    );
    Caller {
        uid: who.uid,
        privileged: changes && who.pid != 0 && procs::privileged(who.pid, who.uid),
    }
}

fn serve(ctl: &Control, s: UnixStream, uid: u32, limits: Limits) {
    if !set_passcred(s.as_raw_fd()) {
        return;
    }
    let mut framer: Framer<Sender> = Framer::default();
    let mut buf = vec![0u8; 16 * 1024];
    let mut line_started = Instant::now();
    let mut idle_since = Instant::now();
    loop {
        let deadline = if framer.pending() > 0 {
            line_started + limits.line
        } else {
            idle_since + limits.idle
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            if framer.pending() > 0 {
                let e = Response::error(
                    ErrorKind::BadRequest,
                    format!(
                        "request not completed within {} ms; connection closed",
                        limits.line.as_millis()
                    ),
                );
                send(&s, &answer_line(&e), limits.write);
            }
            return;
        }
        let was_pending = framer.pending() > 0;
        let (n, who) = match recv(&s, &mut buf, uid) {
            Ok((0, _)) => return,
            Ok(r) => r,
            Err(e) if e.kind() == IoKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), IoKind::WouldBlock | IoKind::TimedOut) => continue,
            Err(_) => return,
        };
        let frames = framer.feed(&buf[..n], who);
        // The clock for finishing a line starts at its first byte.
        if framer.pending() > 0 && (!was_pending || !frames.is_empty()) {
            line_started = Instant::now();
        }
        for frame in frames {
            let (reply, close) = match frame {
                Frame::Line(line, who) => {
                    let r = match wire::parse_request(&line) {
                        Ok(req) => ctl.answer(&caller(who, &req), &req),
                        Err(e) => e,
                    };
                    (r, false)
                }
                Frame::TooLong => (wire::too_long(), true),
                Frame::Mixed => (
                    Response::error(
                        ErrorKind::BadRequest,
                        "one request written by two processes; connection closed",
                    ),
                    true,
                ),
            };
            if !send(&s, &answer_line(&reply), limits.write) || close {
                return;
            }
            idle_since = Instant::now();
        }
    }
}

/// Refuse a connection over a limit with one line, never blocking.
fn refuse(s: &UnixStream, why: String) {
    let _ = s.set_nonblocking(true);
    let mut w = s;
    let _ = w.write_all(&answer_line(&Response::error(ErrorKind::Busy, why)));
}

/// Accept connections until the process exits.
pub fn spawn(ctl: Arc<Control>, listener: UnixListener, path: PathBuf, limits: Limits) {
    let counts = Arc::new(Mutex::new(Counts::default()));
    // Accepted sockets inherit SO_PASSCRED, so even bytes written before
    // the accept carry their writer's credentials.
    set_passcred(listener.as_raw_fd());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let s = match stream {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("scx_tix: control socket {}: {e}", path.display());
                    // Out of fds or memory: do not spin.
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            let Some(uid) = peer_uid(&s) else {
                continue;
            };
            {
                let mut c = counts.lock().unwrap();
                let mine = c.by_uid.get(&uid).copied().unwrap_or(0);
                if mine >= limits.per_uid {
                    drop(c);
                    refuse(
                        &s,
                        format!(
                            "too many connections from uid {uid} (at most {}); try again later",
                            limits.per_uid
                        ),
                    );
                    continue;
                }
                if c.total >= limits.total {
                    drop(c);
                    refuse(
                        &s,
                        format!(
                            "too many connections (at most {}); try again later",
                            limits.total
                        ),
                    );
                    continue;
                }
                *c.by_uid.entry(uid).or_insert(0) += 1;
                c.total += 1;
            }
            let slot = Slot {
                counts: counts.clone(),
                uid,
            };
            let ctl = ctl.clone();
            // Small stacks: 256 connections must not cost the root daemon
            // much; serde_json's depth limit bounds its recursion.
            let r = std::thread::Builder::new()
                .name("tix-ctl".into())
                .stack_size(256 * 1024)
                .spawn(move || {
                    let _slot = slot;
                    serve(&ctl, s, uid, limits);
                });
            if let Err(e) = r {
                eprintln!("scx_tix: no thread for a control connection: {e}");
            }
        }
    });
}

/// Bind the socket (mode 0666: anyone may read; writes are checked per
/// request). An old socket is replaced only if it is a socket nobody
/// answers on; anything else at the path is left alone and reported.
pub fn bind(path: &Path) -> anyhow::Result<UnixListener> {
    if std::fs::symlink_metadata(path).is_ok() {
        if !crate::state::is_socket(path) {
            anyhow::bail!(
                "{} exists and is not a socket; not touching it",
                path.display()
            );
        }
        if UnixStream::connect(path).is_ok() {
            anyhow::bail!("another scx_tix already serves {}", path.display());
        }
        std::fs::remove_file(path)?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let l = UnixListener::bind(path)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
    Ok(l)
}
