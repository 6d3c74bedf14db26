//! Statistics read from the BPF maps: per-task lottery wins and the
//! histogram of the fraction of each slice used (Zepp's get_lott_wins and
//! get_counter_info, seed 000 §4.1), per-user totals, decisions per second.

use crate::bpf_intf::{tix_task_stat, tix_user_stat};
use crate::control::Shared;
use scx_stats::prelude::*;
use scx_stats_derive::Stats;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// The global figures of `tix status`, as the field's stats library serves
/// them (scx_stats: line-delimited JSON on /var/run/scx/root/stats, where
/// scx_utils::monitor_stats and scxtop-style clients look). Per-task and
/// per-user figures stay on the control socket (`tix top`), which applies
/// tix's own per-user limits to its clients.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, Stats)]
#[stat(top)]
pub struct Metrics {
    #[stat(desc = "1 while the scheduler is attached")]
    pub attached: u64,
    #[stat(desc = "Scheduling policy (lottery or stride)")]
    pub policy: String,
    #[stat(desc = "Compensation rule of the lottery")]
    pub compensation: String,
    #[stat(desc = "Scheduling decisions per second")]
    pub decisions_per_sec: f64,
    #[stat(desc = "Scheduling decisions since attach")]
    pub decisions: u64,
    #[stat(desc = "Decisions that kept the previous task running")]
    pub prev_kept: u64,
    #[stat(
        desc = "Decisions the starvation guards forced (a DSQ unserved for starve_ns, a task waiting past twice that)"
    )]
    pub starve_serves: u64,
    #[stat(desc = "Of the starvation serves, those of a task that waited past twice starve_ns")]
    pub aged_serves: u64,
    #[stat(desc = "Runs on an idle CPU found at wake-up (no decision)")]
    pub direct: u64,
    #[stat(desc = "Wake-ups that cut a runner short: kicks and direct preemptions")]
    pub preempt_kicks: u64,
    #[stat(desc = "Run time past a slice and a tick, ms: the host did not run the vCPU")]
    pub stalled_ms: u64,
    #[stat(desc = "Processes with scheduler state")]
    pub proc_states: u64,
    #[stat(desc = "cgroups with the cpu controller")]
    pub cgroups: u64,
    #[stat(desc = "cgroups that set cpu.max (counted, not enforced)")]
    pub cgroups_cpu_max: u64,
}

impl Metrics {
    pub fn of(s: &tix_ctl::Status) -> Metrics {
        Metrics {
            attached: s.attached.into(),
            policy: s.policy.name().into(),
            compensation: s.compensation_name().into(),
            decisions_per_sec: s.decisions_per_sec,
            decisions: s.decisions,
            prev_kept: s.prev_kept,
            starve_serves: s.starve_serves,
            aged_serves: s.aged_serves.unwrap_or(0),
            direct: s.direct,
            preempt_kicks: s.preempt_kicks.unwrap_or(0),
            stalled_ms: s.stalled_ms.unwrap_or(0),
            proc_states: s.proc_states,
            cgroups: s.cgroups,
            cgroups_cpu_max: s.cgroups_cpu_max,
        }
    }
}

/// What the scx_stats server answers: the status the daemon publishes
/// each second.
pub fn server_data(shared: Arc<Mutex<Shared>>) -> StatsServerData<(), ()> {
    StatsServerData::new().add_meta(Metrics::meta()).add_stats(
        "top",
        Box::new(move |_args, (_tx, _rx)| {
            let m = Metrics::of(&shared.lock().unwrap().status);
            m.to_json()
        }),
    )
}

/// Global counters of the BPF program.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    pub decisions: u64,
    pub prev_kept: u64,
    pub starve_serves: u64,
    pub aged_serves: u64,
    pub direct: u64,
    pub preempt_kicks: u64,
    pub stalled_ns: u64,
    pub stalled_sq_us2: u64,
    pub guard_scans: u64,
    pub guard_ns: u64,
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

/// The kernel's tick (1/HZ): the resolution of CLOCK_MONOTONIC_COARSE,
/// which advances once a jiffy. 4 ms (HZ=250, Debian's) if it cannot be
/// read or is implausible.
pub fn tick_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write.
    let r = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    if r == 0 && (1_000_000..=10_000_000).contains(&ns) {
        ns
    } else {
        4_000_000
    }
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
    fn kernel_threads_user_is_the_cores() {
        // The BPF side values kernel threads as this user; tix top names it.
        assert_eq!(
            crate::bpf_intf::TIX_KERNEL_UID,
            tix_core::cgroup::KERNEL_UID
        );
        assert_eq!(crate::bpf_intf::tix_consts_TIX_PF_KTHREAD, 0x0020_0000);
        // kthreadd (pid 2) is one, where the initial pid namespace is seen.
        if std::path::Path::new("/proc/2/stat").exists()
            && std::fs::read_to_string("/proc/2/comm").is_ok_and(|c| c.trim() == "kthreadd")
        {
            assert!(crate::procs::kernel_thread(2));
        }
        assert!(!crate::procs::kernel_thread(std::process::id()));
    }

    #[test]
    fn rate_of_counter() {
        assert_eq!(rate(100, 350, 500_000_000), 500.0);
        assert_eq!(rate(100, 50, 1), 0.0);
        assert_eq!(rate(1, 2, 0), 0.0);
    }

    #[test]
    fn the_tick_is_one_jiffy() {
        // CLOCK_MONOTONIC_COARSE moves once a jiffy: HZ is 100..1000.
        let t = tick_ns();
        assert!((1_000_000..=10_000_000).contains(&t), "{t}");
        assert_eq!(1_000_000_000 % t, 0, "{t} is not 1/HZ");
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

#[cfg(test)]
mod scx_stats_tests {
    use super::*;
    use scx_stats::{StatsClient, StatsServer};

    /// The field's client reads what the daemon publishes.
    #[test]
    fn scx_stats_clients_read_the_status() {
        let status = tix_ctl::Status {
            attached: true,
            policy: tix_ctl::Policy::Stride,
            compensation: true,
            compensation_rule: "zepp".into(),
            slice_us: 3500,
            decisions_per_sec: 812.5,
            decisions: 40_000,
            prev_kept: 7,
            starve_serves: 2,
            aged_serves: Some(1),
            direct: 3,
            preempt_kicks: Some(11),
            stalled_ms: Some(250),
            stalled_sq_ms2: Some(62_500),
            guard_scans: Some(40),
            guard_us: Some(120),
            lost: Default::default(),
            proc_states: 12,
            cgroups: 4,
            cgroups_cpu_max: 1,
            max_tasks: 65536,
        };
        let shared = Arc::new(Mutex::new(Shared {
            status: status.clone(),
        }));
        let path = std::env::temp_dir().join(format!("tix-scx-stats-{}", std::process::id()));
        let _server = StatsServer::<(), ()>::new(server_data(shared.clone()))
            .set_path(&path)
            .launch()
            .unwrap();
        let mut client = StatsClient::new()
            .set_path(&path)
            .connect(Some(5000))
            .unwrap();
        let m: Metrics = client.request("stats", vec![]).unwrap();
        assert_eq!(m, Metrics::of(&status));
        assert_eq!(
            (
                m.policy.as_str(),
                m.compensation.as_str(),
                m.decisions,
                m.preempt_kicks,
                m.stalled_ms
            ),
            ("stride", "zepp", 40_000, 11, 250)
        );
        shared.lock().unwrap().status.decisions = 40_001;
        let m: Metrics = client.request("stats", vec![]).unwrap();
        assert_eq!(m.decisions, 40_001);
        let _ = std::fs::remove_file(&path);
    }
}
