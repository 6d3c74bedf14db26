//! TWRS on real tasks (Samih Ch. 3, Eq. 3.3, the weight rule in
//! tix_core::twrs): a thread of process j weighs its process's weight ×
//! (N − n_j), N the runnable threads and n_j the process's own, so a
//! process gains nothing by spawning threads. With one shared queue the
//! machine is the thesis's "core k"; with `--balance` each CPU's shell is
//! a core and counts its own threads, as the thesis does.
//!
//! Accepted hazard: a new thread's tgid is read from /proc/PID/status on
//! the scheduling loop, once, when it joins. probe.rs moved the per-turn
//! /proc reads off the loop because such a read can wait on a task that
//! waits on the loop (an exec, a concurrent /proc lookup); this one is
//! left there, with `--twrs` only, since the weight needs the tgid at once.
//!
//! "Runnable" is the policy's view: joined and not blocked (a task found
//! asleep is blocked until the kernel hands it back), so the counts lag a
//! sleep by as long as the shell takes to notice it (policy.rs).

use std::collections::HashMap;

/// The process (thread group) of a thread, from /proc; tests replace it.
pub type TgidFn = Box<dyn Fn(i32) -> i32>;

/// /proc/PID/status's Tgid, or the pid itself if it cannot be read (a
/// thread already gone counts as its own process until it leaves).
pub fn tgid_in_proc(pid: i32) -> i32 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Tgid:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(pid)
}

pub struct Twrs {
    tgid_of: TgidFn,
    /// n_j: runnable threads per process.
    runnable: HashMap<i32, u64>,
    /// N: runnable threads in all.
    total: u64,
    /// Counts changed since the weights were last set.
    pub dirty: bool,
}

impl Twrs {
    pub fn new(tgid_of: TgidFn) -> Self {
        Twrs {
            tgid_of,
            runnable: HashMap::with_capacity(1024),
            total: 0,
            dirty: false,
        }
    }

    pub fn tgid(&self, pid: i32) -> i32 {
        (self.tgid_of)(pid)
    }

    /// A thread of `tgid` became runnable in the policy.
    pub fn up(&mut self, tgid: i32) {
        *self.runnable.entry(tgid).or_insert(0) += 1;
        self.total += 1;
        self.dirty = true;
    }

    /// A thread of `tgid` stopped being runnable in the policy.
    pub fn down(&mut self, tgid: i32) {
        if let Some(n) = self.runnable.get_mut(&tgid) {
            *n -= 1;
            if *n == 0 {
                self.runnable.remove(&tgid);
            }
            self.total -= 1;
            self.dirty = true;
        }
    }

    /// Eq. 3.3 for a runnable thread of `tgid` whose process weighs
    /// `base`; `base` itself if the rule cannot apply (it always can for a
    /// counted thread: 1 ≤ n_j ≤ N).
    pub fn weight(&self, base: u64, tgid: i32) -> u64 {
        let n_j = self.runnable.get(&tgid).copied().unwrap_or(0);
        tix_core::twrs::thread_weight(base, self.total, n_j).unwrap_or(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_threads_against_one_weigh_one_to_four() {
        // Samih's case: a process of 4 threads and one of 1 thread, N = 5:
        // 100 × (5 − 4) per thread against 100 × (5 − 1), 4 × 100 each.
        let mut t = Twrs::new(Box::new(|pid| pid / 10));
        for pid in [10, 11, 12, 13, 20] {
            let g = t.tgid(pid);
            t.up(g);
        }
        assert_eq!(t.weight(100, 1), 100);
        assert_eq!(t.weight(100, 2), 400);
        // One of the four sleeps: N = 4, n = 3.
        t.down(1);
        assert_eq!(t.weight(100, 1), 100);
        assert_eq!(t.weight(100, 2), 300);
        // Alone: its own weight.
        for _ in 0..3 {
            t.down(1);
        }
        assert_eq!(t.weight(100, 2), 100);
        // A thread never counted changes nothing.
        t.down(7);
        assert_eq!(t.total, 1);
    }

    #[test]
    fn tgid_of_this_process() {
        let me = std::process::id() as i32;
        assert_eq!(tgid_in_proc(me), me);
        assert_eq!(tgid_in_proc(i32::MAX), i32::MAX);
    }
}
