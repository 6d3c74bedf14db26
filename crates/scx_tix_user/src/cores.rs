//! Where a task's turns are dealt: one shell for the machine (a shared
//! queue every CPU takes from, policy.rs), or with `--balance` one shell per
//! CPU, as the per-core run queues Samih Ch. 4 balances — CFS's rule or
//! his shuttle process (tix_core::shuttle) — each period.
//!
//! Per CPU: a task's home is the least-loaded CPU when it is first seen
//! (the CPU it is on if it may not run everywhere), and it is dispatched
//! to its home's queue only. A move takes a task out of its shell's
//! policy; it joins its new home's when the kernel next hands it back (it
//! may run one more slice where it was).
//!
//! A CPU's load (Eq. 4.1) counts the weights of its CPU-bound tasks, as
//! the thesis does: a task counts once it has been CPU-bound for two
//! periods in a row — handed back at least once in the period with its
//! slice used up (not on a wake-up), or its CPU time (/proc, utime +
//! stime, from probe.rs) grew by at least half a period (a task alone on
//! a CPU keeps its replenished slice and is never handed back) — and its
//! policy has not found it asleep. A task that wakes, runs a little and
//! sleeps (a shell command, a kernel thread; the guest's kdamond wakes
//! every few ms) is not counted, though it reads 'R' in /proc while it
//! waits in this scheduler's queue; counted whole, such tasks moved the
//! hogs back and forth. ("Found running" was the rule while the probe
//! answered late; answered at once, a waiter read 'R' at two period ends
//! often enough to move Fig. 4.1's T1, vm/tests/79-shuttle.sh.)
//! (/proc/PID/schedstat's wait time was tried
//! first: under scx_rustland_core it read from .3 to 1.2 s a second for
//! the same hogs.) Accepted approximations: a task that uses up a slice
//! now and then counts whole while it does (CFS's average would count a
//! part); a moved task joins its new CPU's policy at the front, as a new
//! client (up to a quantum ahead).
//!
//! One timeline for every CPU's keys. Each shell numbers its own turns, so
//! an idle CPU's keys fall behind a busy one's. The keys must still
//! compare across CPUs: scx_rustland_core puts a task sent to a CPU it may
//! not run on in the queue of the CPU it was on (a task preempted inside
//! migrate_disable() may run only there, though its affinity says every
//! CPU), keyed as sent; keyed by a CPU thousands of turns ahead, it would
//! wait behind every turn of that CPU's tasks, past the kernel's 5 s
//! watchdog. (The stir in vm/tests/79-shuttle.sh bounces 100-odd
//! dispatches a run.) So a shell whose sequence falls more than
//! `LAG_KEPT` turns behind the leading shell's jumps forward (an offset
//! added to its keys): a task keyed by any CPU then waits at most that
//! many turns of another's, and within one shell the order is the
//! policy's, but for the jump (its next keys follow every key it sent).

use crate::bpf::{DispatchedTask, QueuedTask};
use crate::policy::{Shell, SCX_ENQ_WAKEUP};
use anyhow::Result;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};
use tix_core::shuttle::{Balancer, Queue, Rule};

/// A task not handed back for this long loses its home.
const HOME_KEPT: Duration = Duration::from_secs(10);

/// How far (turns) a CPU's keys may trail the leading CPU's (header): 64
/// quanta, 256 ms at 4 ms.
const LAG_KEPT: u64 = 64;

/// Periods in a row a task must be active to count in a CPU's load.
const ACTIVE_PERIODS: u32 = 2;

/// A task's CPU time in ms as probe.rs last read it (None: not answered
/// yet); it may wrap (a reading below the last one counts as no time).
pub type CpuMsFn = Box<dyn Fn(i32) -> Option<u64>>;

#[derive(Debug, Clone, Copy)]
struct Home {
    cpu: usize,
    /// The kernel's weight (nice), which CFS's load counts.
    weight: u64,
    seen: Instant,
    /// Handed back with its slice used up during the current period.
    handed: bool,
    /// Periods in a row it has been active.
    active: u32,
    /// Its CPU time (ms) at the last period, once known.
    cpu_ms: Option<u64>,
}

pub struct Cores {
    shells: Vec<Shell>,
    /// Added to each shell's keys: one timeline for every CPU (header).
    offset: Vec<u64>,
    /// Per CPU (Some) or shared (None).
    balancer: Option<Balancer<i32>>,
    period: Duration,
    last_balance: Instant,
    /// Every task's home, weight and when it was last handed back. A task
    /// counts at its home at once when it moves, as in CFS, though it
    /// joins the new CPU's policy only when next handed back.
    home: HashMap<i32, Home>,
    /// Tasks that may not run on every CPU: they stay where they are.
    pinned: HashSet<i32>,
    last_sweep: Instant,
    /// A task's CPU time: /proc.
    cpu_ms: CpuMsFn,
    /// Each CPU's load and nr_running at the last period (for the stats).
    measured: Vec<(u64, usize)>,
    moves: u64,
    /// The last move and the loads that made it, for the stats line.
    last_move: String,
    shuttle_moves: u64,
    refused: u64,
    /// Times a shell's keys jumped forward to the leading one's.
    jumps: u64,
}

impl Cores {
    /// `make(cpus)` builds a shell for that many CPUs.
    pub fn new(
        cpus: usize,
        rule: Option<Rule>,
        period: Duration,
        cpu_ms: CpuMsFn,
        mut make: impl FnMut(u64) -> Result<Shell>,
    ) -> Result<Self> {
        let shells = match rule {
            Some(_) => (0..cpus.max(1)).map(|_| make(1)).collect::<Result<_>>()?,
            None => vec![make(cpus.max(1) as u64)?],
        };
        Ok(Cores {
            offset: vec![0; shells.len()],
            shells,
            balancer: rule.map(Balancer::new),
            period,
            last_balance: Instant::now(),
            home: HashMap::with_capacity(4096),
            pinned: HashSet::with_capacity(256),
            last_sweep: Instant::now(),
            cpu_ms,
            measured: Vec::new(),
            moves: 0,
            last_move: String::new(),
            shuttle_moves: 0,
            refused: 0,
            jumps: 0,
        })
    }

    pub fn name(&self) -> &'static str {
        self.shells[0].name()
    }

    pub fn shells_mut(&mut self) -> &mut [Shell] {
        &mut self.shells
    }

    /// Placement's view of a CPU: its last measured load, plus the full
    /// weights of tasks placed there since (a burst of new tasks spreads).
    fn load(&self, cpu: usize) -> u64 {
        let measured = self.measured.get(cpu).map_or(0, |m| m.0);
        let fresh: u64 = self
            .home
            .values()
            .filter(|h| h.cpu == cpu && h.active < ACTIVE_PERIODS)
            .map(|h| h.weight)
            .sum();
        measured + fresh
    }

    pub fn queued(&mut self, task: &QueuedTask) {
        if self.balancer.is_none() {
            return self.shells[0].queued(task);
        }
        let n = self.shells.len();
        let prev = (task.cpu.max(0) as usize).min(n - 1);
        let restricted = (task.nr_cpus_allowed as usize) < n;
        if restricted {
            self.pinned.insert(task.pid);
        } else {
            self.pinned.remove(&task.pid);
        }
        let cpu = match self.home.get(&task.pid).map(|h| h.cpu) {
            // Its affinity changed under it: it lives where it may run.
            Some(c) if restricted && c != prev => {
                self.shells[c].remove(task.pid);
                prev
            }
            Some(c) => c,
            None if restricted => prev,
            None => (0..n).min_by_key(|&c| (self.load(c), c)).unwrap_or(0),
        };
        let (active, handed, cpu_ms) = self
            .home
            .get(&task.pid)
            .map_or((0, false, None), |h| (h.active, h.handed, h.cpu_ms));
        let used_up = task.flags & SCX_ENQ_WAKEUP == 0;
        self.home.insert(
            task.pid,
            Home {
                cpu,
                weight: task.weight.clamp(1, 10_000),
                seen: Instant::now(),
                handed: handed || used_up,
                active,
                cpu_ms,
            },
        );
        self.shells[cpu].queued(task);
    }

    /// Every task handed back, dispatched to its home CPU's queue (or the
    /// shared one).
    pub fn dispatch(&mut self, out: &mut Vec<DispatchedTask>) {
        let per_cpu = self.balancer.is_some();
        for (cpu, s) in self.shells.iter_mut().enumerate() {
            while let Some(mut d) = s.dispatch() {
                if per_cpu {
                    d.cpu = cpu as i32;
                    d.vtime += self.offset[cpu];
                }
                out.push(d);
            }
        }
        self.align();
    }

    /// Brings every shell's keys within `LAG_KEPT` of the leading one's.
    fn align(&mut self) {
        let now = |i: usize, c: &Self| c.shells[i].seq() + c.offset[i];
        let lead = (0..self.shells.len())
            .map(|i| now(i, self))
            .max()
            .unwrap_or(0);
        for i in 0..self.shells.len() {
            if now(i, self) + LAG_KEPT < lead {
                self.offset[i] = lead - self.shells[i].seq();
                self.jumps += 1;
            }
        }
    }

    /// Each period: the balancer's moves (Samih Ch. 4). Call with every
    /// handed-back task dispatched.
    pub fn balance(&mut self) {
        if self.balancer.is_none() || self.last_balance.elapsed() < self.period {
            return;
        }
        self.last_balance = Instant::now();
        let mut queues: Vec<Queue<i32>> = vec![Queue::default(); self.shells.len()];
        let half_ms = self.period.as_millis() as u64 / 2;
        for (&pid, h) in self.home.iter_mut() {
            let shell = &self.shells[h.cpu];
            let now = (self.cpu_ms)(pid);
            let ran = match (h.cpu_ms, now) {
                (Some(a), Some(b)) if b > a => b - a,
                _ => 0,
            };
            if now.is_some() {
                h.cpu_ms = now;
            }
            let active = !shell.is_blocked(pid) && (h.handed || (ran > 0 && ran >= half_ms));
            h.handed = false;
            h.active = if active {
                h.active.saturating_add(1)
            } else {
                0
            };
            if h.active < ACTIVE_PERIODS {
                continue;
            }
            let q = &mut queues[h.cpu];
            q.load += h.weight;
            q.nr += 1;
            if !self.pinned.contains(&pid) {
                q.movable.push((pid, h.weight));
            }
        }
        self.measured = queues.iter().map(|q| (q.load, q.nr)).collect();
        let (home, pinned) = (&self.home, &self.pinned);
        let Some(b) = self.balancer.as_mut() else {
            return;
        };
        let before = b.shuttle();
        let moves = b.period(&queues, |pid| {
            home.get(&pid).map(|h| (h.cpu, !pinned.contains(&pid)))
        });
        let shuttle = b.shuttle().or(before).map(|s| s.0);
        for (pid, from, to) in moves {
            // A task still waiting here to be dispatched moves next period.
            if self.shells[from].has(pid) && !self.shells[from].remove(pid) {
                self.refused += 1;
                continue;
            }
            if let Some(h) = self.home.get_mut(&pid) {
                h.cpu = to;
            }
            self.moves += 1;
            self.last_move = format!(
                "{pid} {from}->{to} at {}",
                self.measured
                    .iter()
                    .map(|(l, n)| format!("{l}/{n}"))
                    .collect::<Vec<_>>()
                    .join(":")
            );
            if Some(pid) == shuttle {
                self.shuttle_moves += 1;
            }
        }
    }

    pub fn sweep(&mut self) {
        for s in &mut self.shells {
            s.sweep();
        }
        if self.last_sweep.elapsed() < Duration::from_secs(1) {
            return;
        }
        self.last_sweep = Instant::now();
        self.home.retain(|_, h| h.seen.elapsed() < HOME_KEPT);
        let home = &self.home;
        self.pinned.retain(|p| home.contains_key(p));
    }

    /// Each CPU's runnable load and the shuttle (per-CPU mode).
    pub fn balance_line(&self) -> String {
        match &self.balancer {
            None => String::new(),
            Some(b) => {
                // Each CPU's load and nr_running over the last period.
                let loads: Vec<String> = self
                    .measured
                    .iter()
                    .map(|(l, n)| format!("{l}/{n}"))
                    .collect();
                format!(
                    "balance {} load/nr {} moves {} shuttle-moves {} shuttle {} refused {} key-jumps {} last-move {} | ",
                    match b.rule {
                        Rule::Cfs => "cfs",
                        Rule::Shuttle => "shuttle",
                    },
                    loads.join(":"),
                    self.moves,
                    self.shuttle_moves,
                    b.shuttle().map_or("-".into(), |(p, h)| format!("{p}@{h}")),
                    self.refused,
                    self.jumps,
                    if self.last_move.is_empty() { "-" } else { &self.last_move }
                )
            }
        }
    }
}

/// Whether a task sleeps, from probe.rs (never blocks the loop). A pid
/// the probe has not answered yet counts as running: its overdue turns
/// are dropped, it is not blocked.
pub fn asleep_probe(probe: &std::sync::Arc<crate::probe::Probe>) -> crate::policy::AsleepFn {
    let p = std::sync::Arc::clone(probe);
    Box::new(move |pid| p.asleep(pid).unwrap_or(false))
}

/// A task's CPU time, from probe.rs (never blocks the loop).
pub fn cpu_ms_probe(probe: &std::sync::Arc<crate::probe::Probe>) -> CpuMsFn {
    let p = std::sync::Arc::clone(probe);
    Box::new(move |pid| p.cpu_ms(pid))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most turns one dispatch spans (policy.rs's MAX_RUN).
    const MAX_RUN_KEYS: u64 = 16;

    fn task(pid: i32, weight: u64, cpu: i32, allowed: u64) -> QueuedTask {
        QueuedTask {
            pid,
            cpu,
            nr_cpus_allowed: allowed,
            flags: 0,
            start_ts: 0,
            stop_ts: 0,
            exec_runtime: 0,
            weight,
            vtime: 0,
            enq_cnt: 0,
            comm: [0; 16],
        }
    }

    /// Every task's CPU time grows between any two readings (hogs).
    fn busy() -> CpuMsFn {
        let ms = std::sync::atomic::AtomicU64::new(0);
        Box::new(move |_| Some(ms.fetch_add(10, std::sync::atomic::Ordering::Relaxed)))
    }

    /// Two CPUs, stride, a balancing every call; every task busy.
    fn cores(rule: Rule) -> Cores {
        cores_with(rule, busy())
    }

    fn cores_with(rule: Rule, cpu_ms: CpuMsFn) -> Cores {
        Cores::new(2, Some(rule), Duration::ZERO, cpu_ms, |n| {
            Shell::new("stride", n, 4_000_000, 1, Box::new(|_| false))
        })
        .unwrap()
    }

    /// Hand every task back and dispatch: pid → the CPU it is sent to.
    fn round(c: &mut Cores, tasks: &[(i32, u64)]) -> HashMap<i32, i32> {
        for &(p, w) in tasks {
            c.queued(&task(p, w, 0, 2));
        }
        let mut out = Vec::new();
        c.dispatch(&mut out);
        out.iter().map(|d| (d.pid, d.cpu)).collect()
    }

    /// Fig. 4.1 in sched_ext weights: T1 (100) placed first, alone on CPU
    /// 0; T2–T5 (33) on CPU 1.
    const FIG41: [(i32, u64); 5] = [(1, 100), (2, 33), (3, 33), (4, 33), (5, 33)];

    #[test]
    fn placement_puts_the_heavy_task_alone() {
        let mut c = cores(Rule::Cfs);
        let mut at = HashMap::new();
        for t in FIG41 {
            at.extend(round(&mut c, &[t]));
        }
        assert_eq!(at[&1], 0);
        for p in 2..=5 {
            assert_eq!(at[&p], 1, "{at:?}");
        }
        // CFS: 100 against 132 is under half a weight apart; nothing moves.
        for _ in 0..6 {
            c.balance();
            assert_eq!(round(&mut c, &FIG41)[&1], 0);
        }
        assert_eq!(c.moves, 0);
        assert!(
            c.balance_line().contains("load/nr 100/1:132/4"),
            "{}",
            c.balance_line()
        );
    }

    #[test]
    fn the_shuttle_spends_every_other_period_beside_t1() {
        let mut c = cores(Rule::Shuttle);
        for t in FIG41 {
            round(&mut c, &[t]);
        }
        // The first period only samples (loads start at a full period).
        c.balance();
        let mut beside = Vec::new();
        for _ in 0..8 {
            c.balance();
            beside.push(round(&mut c, &FIG41)[&2]);
        }
        assert_eq!(beside, vec![0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(c.shuttle_moves, 8);
        // The others never move.
        let at = round(&mut c, &FIG41);
        assert!((3..=5).all(|p| at[&p] == 1), "{at:?}");
    }

    /// A task that only ever wakes (a kernel thread sampling every few
    /// ms) is not CPU-bound: it is no load, and Fig. 4.1 stays balanced;
    /// its CPU time does not grow, though /proc reads it 'R' while it waits.
    #[test]
    fn a_task_that_only_wakes_is_no_load() {
        let hogs = busy();
        let mut c = cores_with(
            Rule::Cfs,
            Box::new(move |pid| if pid == 50 { Some(7) } else { hogs(pid) }),
        );
        for t in FIG41 {
            round(&mut c, &[t]);
        }
        for _ in 0..6 {
            let mut w = task(50, 100, 1, 2);
            w.flags = SCX_ENQ_WAKEUP;
            c.queued(&w);
            round(&mut c, &FIG41);
            c.balance();
        }
        assert_eq!(c.moves, 0);
        assert!(
            c.balance_line().contains("load/nr 100/1:132/4"),
            "{}",
            c.balance_line()
        );
    }

    /// T1 alone runs 16 turns a dispatch on CPU 0, the four take one each
    /// on CPU 1: after 100 rounds their own sequences are about 1,200
    /// turns apart, but the keys sent stay within `LAG_KEPT` (and a run)
    /// of each other, so a task the kernel queues on the other CPU than
    /// the one that keyed it waits at most that long.
    #[test]
    fn every_cpus_keys_share_one_timeline() {
        let mut c = cores(Rule::Cfs);
        for t in FIG41 {
            round(&mut c, &[t]);
        }
        let mut last = [0u64; 2];
        for _ in 0..100 {
            for &(p, w) in &FIG41 {
                c.queued(&task(p, w, 0, 2));
            }
            let mut out = Vec::new();
            c.dispatch(&mut out);
            for d in &out {
                last[d.cpu as usize] = last[d.cpu as usize].max(d.vtime);
            }
        }
        let seqs = (c.shells[0].seq(), c.shells[1].seq());
        assert!(seqs.0.abs_diff(seqs.1) > 1000, "{seqs:?}");
        assert!(
            last[0].abs_diff(last[1]) <= LAG_KEPT + 2 * MAX_RUN_KEYS,
            "{last:?} {seqs:?}"
        );
        assert!(c.jumps > 0);
    }

    #[test]
    fn a_pinned_task_stays_where_it_may_run() {
        let mut c = cores(Rule::Cfs);
        // Allowed one CPU, on CPU 1: its home is 1 even though 0 is idle.
        c.queued(&task(9, 100, 1, 1));
        let mut out = Vec::new();
        c.dispatch(&mut out);
        assert_eq!((out[0].pid, out[0].cpu), (9, 1));
        // Four more pinned to CPU 1: the idle CPU may not pull them.
        for p in 10..14 {
            c.queued(&task(p, 100, 1, 1));
        }
        c.dispatch(&mut out);
        for _ in 0..3 {
            c.balance();
        }
        assert_eq!(c.moves, 0);
    }
}
