//! `tix sim kernel FILE`: a scenario's clients as real processes on this
//! machine, under the scheduler attached now, beside the simulator's run of
//! the same file — the simulator's prediction and the kernel's measurement
//! of one workload (issue 17 item 5).
//!
//! What replays: CPU-bound clients (the scenario's default behaviour) on
//! one shared queue, all present for the whole run. Each is a forked
//! process that spins at the nice level whose sched_ext weight equals its
//! tickets (the kernel's prio_to_weight × 100 / 1024, rounded: 100 at nice
//! 0, 305 at −5), which is the weight scx_tix_user's policies and scx_tix
//! see. Anything else in the file is refused in one line rather than
//! approximated. Shares are of the clients' own CPU time, on both sides.

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::time::Duration;
use tix_core::cgroup::NICE_WEIGHTS;
use tix_sim::model::{Behaviour, QueueMode, System};

/// sched_ext's weight of a nice level (sched_weight_to_cgroup).
fn scx_weight(nice: i32) -> u64 {
    let w = NICE_WEIGHTS[(nice + 20) as usize];
    ((w * 100 + 512) / 1024).clamp(1, 10_000)
}

/// The nice level whose sched_ext weight is `tickets`.
fn nice_for(tickets: u64) -> Option<i32> {
    (-20..=19).find(|&n| scx_weight(n) == tickets)
}

pub use tix_sim::replay::{Replay, Row};

/// Why `sys` cannot be replayed as processes, naming the field.
fn check(sys: &System, online: usize) -> Result<Vec<i32>> {
    let c = &sys.config;
    if c.cpus != online {
        bail!(
            "[sim].cpus: {} but this machine has {online} CPUs online; the replay runs on all of them",
            c.cpus
        );
    }
    if c.queue != QueueMode::Shared {
        bail!("[sim].queue: the kernel schedulers keep one shared queue; replay takes \"shared\"");
    }
    if !sys.users.is_empty() || !sys.currencies.is_empty() || !sys.events.is_empty() {
        bail!("[[user]], [[currency]] and [[event]] are simulator-only here; replay takes plain clients");
    }
    let mut nices = Vec::with_capacity(sys.clients.len());
    for (i, cl) in sys.clients.iter().enumerate() {
        if cl.behaviour != Behaviour::Cpu {
            bail!(
                "client {} ({}): behaviour: replay runs CPU-bound clients only",
                i,
                cl.name
            );
        }
        if cl.arrive_ns != 0 || cl.exit_ns.is_some() || cl.work_ns.is_some() || cl.cpu.is_some() {
            bail!(
                "client {} ({}): arrive/exit/work/cpu: replay runs every client for the whole run",
                i,
                cl.name
            );
        }
        let Some(n) = nice_for(cl.tickets) else {
            let all: Vec<String> = (-20..=19).map(|n| scx_weight(n).to_string()).collect();
            bail!(
                "client {} ({}): tickets {} is no nice level's sched_ext weight (nice -20..19: {})",
                i,
                cl.name,
                cl.tickets,
                all.join(" ")
            );
        };
        nices.push(n);
    }
    Ok(nices)
}

/// CPU time (ns) of each pid from /proc/PID/schedstat (single-threaded
/// children), read back to back so the samples are close together.
fn cpu_ns(pids: &[i32]) -> Result<Vec<u64>> {
    pids.iter()
        .map(|p| {
            let s = std::fs::read_to_string(format!("/proc/{p}/schedstat"))
                .with_context(|| format!("reading pid {p}'s schedstat"))?;
            s.split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .with_context(|| format!("pid {p}'s schedstat: {s:?}"))
        })
        .collect()
}

/// The children, killed and reaped however the replay ends.
struct Children(Vec<i32>);

impl Drop for Children {
    fn drop(&mut self) {
        for &p in &self.0 {
            // SAFETY: plain syscalls on our own children.
            unsafe {
                libc::kill(p, libc::SIGKILL);
                libc::waitpid(p, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// A child that spins at `nice` and dies with its parent.
fn spawn(nice: i32) -> Result<i32> {
    // SAFETY: the child only makes three syscalls and spins: nothing that
    // needs the parent's locks or allocator after fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        bail!("fork: {}", std::io::Error::last_os_error());
    }
    if pid == 0 {
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::setpriority(libc::PRIO_PROCESS, 0, nice) != 0 {
                libc::_exit(3);
            }
        }
        loop {
            std::hint::spin_loop();
        }
    }
    Ok(pid)
}

pub fn replay(file: &Path, settle: Duration) -> Result<Replay> {
    let sys = tix_sim::scenario::load(file)?;
    // SAFETY: sysconf reads a constant of the running system.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
    let nices = check(&sys, online)?;
    let sim = tix_sim::engine::simulate(sys.clone())?;
    let sim_total: u64 = sim.clients.iter().map(|c| c.service_ns).sum();

    let mut kids = Children(Vec::new());
    for &n in &nices {
        kids.0.push(spawn(n)?);
    }
    std::thread::sleep(settle);
    // A child that could not take its nice level exits at once (code 3).
    for &p in &kids.0 {
        let mut st = 0;
        // SAFETY: non-blocking wait on our own child.
        if unsafe { libc::waitpid(p, &mut st, libc::WNOHANG) } == p {
            bail!("setting a nice level below 0 needs root (CAP_SYS_NICE); run as root");
        }
    }
    let before = cpu_ns(&kids.0)?;
    let secs = sys.config.duration_ns as f64 / 1e9;
    std::thread::sleep(Duration::from_nanos(sys.config.duration_ns));
    let after = cpu_ns(&kids.0)?;
    let scheduler = std::fs::read_to_string("/sys/kernel/sched_ext/root/ops")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    drop(kids);

    let used: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    let total: u64 = used.iter().sum::<u64>().max(1);
    let clients = sys
        .clients
        .iter()
        .zip(&sim.clients)
        .zip(nices.iter().zip(&used))
        .map(|((spec, s), (&nice, &u))| Row {
            name: spec.name.clone(),
            tickets: spec.tickets,
            nice,
            sim: s.service_ns as f64 / sim_total.max(1) as f64,
            kernel: u as f64 / total as f64,
        })
        .collect();
    Ok(Replay {
        algo: sys.config.algo.clone(),
        cpus: online,
        scheduler,
        kernel_release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        seconds: secs,
        clients,
    })
}

pub fn table(r: &Replay) -> String {
    let mut s =
        format!(
        "{} on {} CPU(s), {:.1} s; kernel scheduler: {}\n{:<16} {:>8} {:>5} {:>8} {:>8} {:>8}\n",
        r.algo,
        r.cpus,
        r.seconds,
        if r.scheduler.is_empty() { "default (no sched_ext)" } else { &r.scheduler },
        "client",
        "tickets",
        "nice",
        "sim",
        "kernel",
        "diff"
    );
    for c in &r.clients {
        s += &format!(
            "{:<16} {:>8} {:>5} {:>8.4} {:>8.4} {:>+8.4}\n",
            c.name,
            c.tickets,
            c.nice,
            c.sim,
            c.kernel,
            c.kernel - c.sim
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_levels_map_to_the_kernels_scx_weights() {
        assert_eq!(scx_weight(0), 100);
        assert_eq!(scx_weight(-5), 305);
        assert_eq!(scx_weight(-3), 194);
        assert_eq!(scx_weight(19), 1);
        assert_eq!(nice_for(305), Some(-5));
        assert_eq!(nice_for(150), None);
    }

    const BASE: &str = "[sim]\nalgo = \"gr3\"\ncpus = 2\nquantum_ms = 4\nduration_s = 1\n";

    /// The one-line reason a file with `extra` after BASE is refused.
    fn refused(extra: &str) -> String {
        let sys = tix_sim::scenario::parse("t.toml", &format!("{BASE}{extra}")).unwrap();
        let e = check(&sys, 2).unwrap_err().to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        e
    }

    #[test]
    fn what_cannot_be_replayed_is_refused_naming_it() {
        let hog = "[[client]]\nname = \"a\"\ntickets = 100\n";
        let sys = tix_sim::scenario::parse("t.toml", &format!("{BASE}{hog}")).unwrap();
        assert_eq!(check(&sys, 2).unwrap(), vec![0]);
        assert!(check(&sys, 4)
            .unwrap_err()
            .to_string()
            .contains("[sim].cpus"));
        let e = refused("[[client]]\nname = \"io\"\ntickets = 100\nbehaviour = \"io\"\nrun_ms = 1\nblock_ms = 1\n");
        assert!(e.contains("client 0 (io): behaviour"), "{e}");
        let e = refused("[[client]]\nname = \"late\"\ntickets = 100\narrive_s = 1\n");
        assert!(e.contains("client 0 (late)"), "{e}");
        let e = refused("[[client]]\nname = \"b\"\ntickets = 150\n");
        assert!(e.contains("tickets 150 is no nice level"), "{e}");
        let e = refused(&format!(
            "{hog}[[event]]\nat_s = 0.5\naction = \"exit\"\nclient = \"a\"\n"
        ));
        assert!(e.contains("[[event]]"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}
