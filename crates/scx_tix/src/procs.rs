//! Who is asking and about which process, as the kernel knows it: pidfds
//! pin a process across a request (its pid cannot be reused while the pidfd
//! shows it alive), /proc gives owner and start time, and privilege is
//! CAP_SYS_NICE in the daemon's own user namespace (the initial one: a
//! scheduler cannot be loaded from any other).

use std::os::fd::AsRawFd;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use tix_ctl::daemon::{ProcFacts, ProcId};

const CAP_SYS_NICE: u32 = 23;

fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    if pid == 0 || pid > i32::MAX as u32 {
        return None;
    }
    // SAFETY: a plain syscall; on success it returns a new fd we own.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Not yet reaped (a zombie counts: its pid is still taken).
fn alive(fd: &OwnedFd) -> bool {
    // SAFETY: signal 0 only checks; the fd is a valid pidfd.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        ) == 0
    }
}

fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .map(str::trim)
}

fn nth_u32(s: &str, n: usize) -> Option<u32> {
    s.split_whitespace().nth(n)?.parse().ok()
}

/// starttime (field 22) of /proc/PID/stat, after the parenthesised comm,
/// which may itself hold spaces and parentheses.
pub fn start_ticks(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    // Fields 3.. follow the comm: starttime is the 20th of them.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// PF_KTHREAD in /proc/PID/stat's flags (field 9): a kernel thread.
pub fn kernel_thread(pid: u32) -> bool {
    const PF_KTHREAD: u64 = crate::bpf_intf::tix_consts_TIX_PF_KTHREAD as u64;
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 1..];
            rest.split_whitespace().nth(6)?.parse::<u64>().ok()
        })
        .is_some_and(|f| f & PF_KTHREAD != 0)
}

impl Pinned {
    pub fn tgid(&self) -> u32 {
        self.tgid
    }
}

/// tgid, real uid of the process `pid` belongs to, and its start.
fn facts(pid: u32) -> Option<ProcFacts> {
    let st = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let tgid = nth_u32(status_field(&st, "Tgid:")?, 0)?;
    let uid = nth_u32(status_field(&st, "Uid:")?, 0)?;
    Some(ProcFacts {
        id: ProcId {
            tgid,
            start: start_ticks(tgid)?,
        },
        uid,
    })
}

/// A process pinned by a pidfd on its thread-group leader.
pub struct Pinned {
    fd: OwnedFd,
    tgid: u32,
}

/// Pin the process that `pid` (process or thread id) belongs to. Read
/// /proc after opening the pidfd and check it is still alive after: what
/// was read belongs to the pinned process, not to a successor on its pid.
pub fn pin(pid: u32) -> Option<(Pinned, ProcFacts)> {
    let first = facts(pid)?;
    let fd = pidfd_open(first.id.tgid)?;
    let f = facts(first.id.tgid)?;
    alive(&fd).then_some((
        Pinned {
            fd,
            tgid: f.id.tgid,
        },
        f,
    ))
}

pub fn recheck(p: &Pinned) -> Option<ProcFacts> {
    let f = facts(p.tgid)?;
    alive(&p.fd).then_some(f)
}

/// Is the process still there with the same start (no pid reuse)?
pub fn exists(id: ProcId) -> bool {
    start_ticks(id.tgid) == Some(id.start)
}

fn user_ns(pid: &str) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/ns/user")).ok()
}

/// Does the process that wrote a request (pid and effective uid from its
/// SCM_CREDENTIALS) hold CAP_SYS_NICE in the initial user namespace?
///
/// Three conditions, each closing a route: the capability in its effective
/// set (as nice checks); its user namespace the daemon's own (inside
/// `unshare -U` every capability is set, but only over that namespace);
/// and its effective uid still the one it wrote with (a process that
/// connected, handed the socket to a child and exec'd a setuid program has
/// the capability now, but the child wrote the request, under its own
/// pid). Read while the process is pinned.
pub fn privileged(pid: u32, euid: u32) -> bool {
    let Some(fd) = pidfd_open(pid) else {
        return false;
    };
    let Ok(st) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let cap = status_field(&st, "CapEff:")
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .is_some_and(|c| c & (1 << CAP_SYS_NICE) != 0);
    let same_euid = status_field(&st, "Uid:").and_then(|u| nth_u32(u, 1)) == Some(euid);
    let ns = user_ns(&pid.to_string());
    let own = user_ns("self");
    cap && same_euid && ns.is_some() && ns == own && alive(&fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_threads_are_told_apart() {
        // kthreadd is pid 2 wherever the initial pid namespace is seen.
        assert!(kernel_thread(2) || !std::path::Path::new("/proc/2").exists());
        assert!(!kernel_thread(std::process::id()));
        assert!(!kernel_thread(u32::MAX));
    }

    #[test]
    fn this_process_pins_and_rechecks() {
        let me = std::process::id();
        let (p, f) = pin(me).expect("pin self");
        assert_eq!(f.id.tgid, me);
        assert_eq!(recheck(&p), Some(f));
        assert!(exists(f.id));
        assert!(!exists(ProcId {
            tgid: me,
            start: f.id.start + 1
        }));
        assert!(pin(0).is_none());
        assert!(pin(u32::MAX).is_none());
    }

    #[test]
    fn a_reaped_child_is_no_longer_pinned() {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        let pinned = pin(pid);
        c.wait().unwrap();
        if let Some((p, _)) = pinned {
            assert_eq!(recheck(&p), None);
        }
    }

    #[test]
    fn privilege_needs_the_writers_euid() {
        let me = std::process::id();
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        assert!(!privileged(me, euid.wrapping_add(1)));
        assert!(!privileged(0, euid));
    }
}
