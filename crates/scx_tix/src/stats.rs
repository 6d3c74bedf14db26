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

/// State R in /proc/PID/stat (the field after the parenthesised comm).
pub fn is_runnable(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rfind(')')
                .and_then(|i| s[i + 1..].split_whitespace().next().map(|f| f == "R"))
        })
        .unwrap_or(false)
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
        // The test thread is running while it reads its own stat (by tid:
        // /proc/TID/stat is the thread's; the process's main thread sleeps).
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() } as u32;
        assert!(is_runnable(tid));
        assert!(!is_runnable(u32::MAX));
    }
}
