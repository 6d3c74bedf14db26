//! Statistics read from the BPF maps: per-task lottery wins and the
//! histogram of the fraction of each slice used (Zepp's get_lott_wins and
//! get_counter_info, seed 000 §4.1), per-user totals, decisions per second.

use crate::bpf_intf::{tix_task_stat, tix_user_stat};

/// Global counters of the BPF program.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    pub decisions: u64,
    pub prev_kept: u64,
    pub starve_serves: u64,
    pub direct: u64,
    pub lost: tix_ctl::Lost,
    pub proc_states: u64,
    pub cgroups: u64,
    pub cgroups_cpu_max: u64,
}

fn read_struct<T: Copy>(bytes: &[u8]) -> Option<T> {
    if bytes.len() < std::mem::size_of::<T>() {
        return None;
    }
    // SAFETY: the length is checked and T is a plain C struct of integers
    // (any bit pattern is valid); read_unaligned copes with Vec alignment.
    Some(unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const T) })
}

pub fn task_stat(bytes: &[u8]) -> Option<tix_task_stat> {
    read_struct(bytes)
}

/// (wins, runtime_ns) of one user.
pub fn user_stat(bytes: &[u8]) -> Option<(u64, u64)> {
    read_struct::<tix_user_stat>(bytes).map(|u| (u.wins, u.runtime_ns))
}

/// What `tix top` shows of a task from one read of /proc/PID/status.
pub struct TaskView {
    /// State R.
    pub runnable: bool,
    /// The first 64 bits of its CPU affinity (`Cpus_allowed:`,
    /// comma-separated 32-bit hex words, highest first).
    pub cpus_allowed: u64,
}

/// Not runnable and allowed everywhere when the task cannot be read.
pub fn task_view(pid: u32) -> TaskView {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    let runnable = field("State:").is_some_and(|v| v.starts_with('R'));
    let cpus_allowed = field("Cpus_allowed:")
        .and_then(|v| {
            let hex: String = v
                .split(',')
                .rev()
                .take(2)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            u64::from_str_radix(&hex, 16).ok()
        })
        .unwrap_or(u64::MAX);
    TaskView {
        runnable,
        cpus_allowed,
    }
}

pub fn online_cpus() -> u32 {
    // SAFETY: sysconf has no memory effects.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(n).unwrap_or(1).max(1)
}

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Rate of a monotone counter between two samples.
pub fn rate(before: u64, after: u64, dt_ns: u64) -> f64 {
    if dt_ns == 0 {
        return 0.0;
    }
    after.saturating_sub(before) as f64 * 1e9 / dt_ns as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_of_counter() {
        assert_eq!(rate(100, 350, 500_000_000), 500.0);
        assert_eq!(rate(100, 50, 1), 0.0);
        assert_eq!(rate(1, 2, 0), 0.0);
    }

    #[test]
    fn short_buffers_are_refused() {
        assert!(task_stat(&[0u8; 8]).is_none());
        let n = std::mem::size_of::<tix_task_stat>();
        let mut b = vec![0u8; n];
        b[0] = 7; // wins, first field, little or big endian: low byte first on x86
        let st = task_stat(&b).unwrap();
        assert_eq!(st.wins, u64::from_ne_bytes([7, 0, 0, 0, 0, 0, 0, 0]));
    }

    #[test]
    fn own_process_is_runnable() {
        // The test thread is running while it reads its own status (by tid:
        // /proc/TID/status is the thread's; the process's main thread sleeps).
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() } as u32;
        assert!(task_view(tid).runnable);
        assert!(!task_view(u32::MAX).runnable);
        assert_eq!(task_view(u32::MAX).cpus_allowed, u64::MAX);
    }

    #[test]
    fn own_affinity_is_read() {
        // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it
        // for the calling thread (pid 0).
        let want = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set),
                0
            );
            (0..64)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .fold(0u64, |m, c| m | 1 << c)
        };
        let tid = unsafe { libc::gettid() } as u32;
        assert_eq!(task_view(tid).cpus_allowed, want);
    }
}
