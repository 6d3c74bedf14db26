//! scx_tix: loads the tix sched_ext scheduler (lottery or stride with Zepp's
//! per-user base tickets and per-process tickets, seeds 000 §3–4, 001 §3.4),
//! attaches it, keeps the ticket tables and serves the control socket.

mod bpf_intf;
mod bpf_skel;
mod config;
mod control;
mod io;
mod lifecycle;
mod procs;
mod server;
mod state;
mod stats;
mod trace;
mod userspace;

use anyhow::{Context, Result};
use bpf_skel::*;
use clap::{Parser, ValueEnum};
use libbpf_rs::{MapHandle, OpenObject};
use scx_utils::{scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_report};
use std::mem::MaybeUninit;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tix_ctl::daemon::Backend;
use tix_ctl::{Policy, Status};

/// Lottery and stride scheduling with per-user base tickets and per-process
/// tickets (sched_ext).
#[derive(Parser, Debug)]
#[command(name = "scx_tix", version)]
struct Opts {
    /// Scheduling policy: lottery or stride (switchable later with `tix
    /// policy`), or ras (seed 002's race-averse WRR: slices of 100 down to
    /// 10 ms as a task's share of the traced writes rises; `tix trace
    /// start` traces). Default: the policy last set with `tix policy` (kept
    /// in the state file), else lottery. gr3, wf2q, eevdf, vtrr, srr, wfq
    /// and rr run in user space: scx_tix hands them to scx_tix_user.
    #[arg(long)]
    policy: Option<Policy>,
    /// Slice length in µs. Slices end only at a timer tick: the default sits
    /// just under one tick at HZ=250 (4 ms), so every quantum is one tick;
    /// a slice of exactly 4000 often survives the first tick by a hair and
    /// runs two, which makes quanta uneven and lottery shares noisier.
    #[arg(long, default_value_t = 3500, value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    slice_us: u64,
    /// Size of the per-process and per-task tables (process states, ticket
    /// settings, task statistics). Past it, a new process runs at value 1
    /// and has no statistics, logged and shown by `tix status`; a ticket
    /// setting is refused. Raise it where kernel.pid_max allows more.
    #[arg(long, default_value_t = bpf_intf::tix_consts_TIX_MAX_TASKS, value_parser = clap::value_parser!(u32).range(64..=4_194_304))]
    max_tasks: u32,
    /// The lottery's compensation tickets for a task that used part of its
    /// slice: waldspurger (v/f, seed 001 §3.4), zepp (his 6-tick rule with
    /// 59·v for less than a tick, seed 000 §4.2), zepp-io (zepp plus his
    /// "I/O enhanced" 5^(c+1) bonus, §4.3) or off. Stride ignores it.
    #[arg(long, value_enum, default_value_t = CompensationRule::Waldspurger)]
    compensation: CompensationRule,
    /// The same as --compensation off.
    #[arg(long, conflicts_with = "compensation")]
    no_compensation: bool,
    /// Print this program's man page (roff, from these definitions) and
    /// exit; the Debian package installs it as scx_tix(8).
    #[arg(long, hide = true)]
    man: bool,
    /// How many of its own slices a waking task may lag the others: a
    /// task below its share that sleeps between short runs is served
    /// first by that much. 0 is the seeds' rule (sleeping earns nothing).
    #[arg(long, default_value_t = tix_core::vtime::WAKE_SLICES, value_parser = clap::value_parser!(u64).range(0..=64))]
    wake_lag: u64,
    /// Own slices of wake lag a task earns per slice it sleeps, up to
    /// --wake-lag. Default: the policy's, 4 under the lottery and 1 under
    /// stride (following `tix policy`). At 1 a 7.5 ms sleep at 3.5 ms
    /// slices earns 2.1 slices. The lottery needs more: its last run's
    /// draw can key a short sleeper behind the runners (at 1 a 1 ms-every-
    /// 10 ms task beside 4 hogs missed 2-3x the default scheduler's
    /// periods; docs/kernel-results.md); the cap is unchanged.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=bpf_intf::tix_consts_TIX_WAKE_RATE_MAX as u64))]
    wake_rate: Option<u64>,
    /// Own full runs by which a woken task allowed on one CPU only (a
    /// pinned program, a per-CPU kernel thread) leads unpinned tasks at
    /// that CPU's decisions. An unpinned task passed over keeps its key and its
    /// turn on any CPU; shares do not move. 0: keys alone (a pinned
    /// cyclictest then lost its CPU to an unpinned hog keyed just before
    /// it 1 time in 9-17 and waited the hog's slice; docs/kernel-results.md).
    #[arg(long, default_value_t = tix_core::vtime::PINNED_LEAD, value_parser = clap::value_parser!(u64).range(0..=tix_core::vtime::PINNED_LEAD_MAX))]
    pinned_lead: u64,
    /// Deferred wake-up cuts (experimental): when a decision passes over
    /// a woken task for a winner keyed just before it, cut the winner when
    /// its position, E at its mean, reaches the woken key, instead of at
    /// its slice end (the first tick past it). Off by default: in two
    /// boots it did not lower cyclictest's p99 consistently
    /// (docs/kernel-results.md).
    #[arg(long)]
    wake_cut: bool,
    /// Wake level (experimental): a woken task may lag the others as far
    /// as the runner furthest behind, not only by its own wake credit,
    /// and a runner is weighed for wake-up preemption as if it started no
    /// earlier than the others' time. A woken task never gets ahead of
    /// its own service: it is served sooner, not more.
    #[arg(long)]
    wake_level: bool,
    /// Per-user base tickets: a [base] table of user name or uid = tickets.
    #[arg(long, default_value = "/etc/tix/tix.toml")]
    config: PathBuf,
    /// Control socket.
    #[arg(long, default_value = tix_ctl::DEFAULT_SOCKET)]
    socket: PathBuf,
    /// Where every accepted setting is recorded (and restored from at start).
    #[arg(long, default_value = state::DEFAULT_PATH)]
    state: PathBuf,
    /// Start from defaults: ignore (and then overwrite) the state file.
    #[arg(long)]
    fresh: bool,
    /// Print statistics every second (-v), and libbpf's log (-vv).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// While attached, print the status (`tix status`'s fields) every SECS
    /// seconds as one JSON line on stdout (sampled once a second).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    stats: Option<f64>,
    /// Do not attach: print the running instance's status every SECS
    /// seconds as one JSON line (over --socket) until interrupted.
    #[arg(long, value_name = "SECS", value_parser = parse_secs, conflicts_with = "stats")]
    monitor: Option<f64>,
    /// How often a traced process's pages are write-protected again (`tix
    /// trace`), ms: a count is a write to a page within one period. Each
    /// period walks every traced process's page tables.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    trace_period_ms: u64,
    /// Carry each user's base to the block layer too (seed 001 §6): the
    /// io.bfq.weight and io.weight of systemd's user-UID.slice follow the
    /// base as its CPU funding does (base / 10: 3000 is 300), for users
    /// whose base is set. The earlier weights come back when a base is
    /// unset and when scx_tix stops.
    #[arg(long)]
    fund_io: bool,
    /// Bytes of the kernel's debug dump kept when the scheduler is ejected
    /// (0: the kernel's default).
    #[arg(long, default_value_t = 0)]
    exit_dump_len: u32,
}

/// A positive number of seconds, at most a day.
fn parse_secs(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!("expected seconds in (0, 86400], got '{s}'")),
    }
}

/// `--monitor SECS`: one JSON status line per interval from the running
/// instance; a clear error (exit 1) when none answers.
fn monitor(socket: &std::path::Path, secs: f64) -> Result<ExitCode> {
    let shutdown = lifecycle::shutdown_flag()?;
    while !shutdown.load(Ordering::Relaxed) {
        match tix_ctl::request(socket, &tix_ctl::Request::Status) {
            Ok(tix_ctl::Response::Status(st)) => println!("{}", serde_json::to_string(&st)?),
            Ok(other) => anyhow::bail!("unexpected answer from {}: {other:?}", socket.display()),
            Err(e) => anyhow::bail!("no running scx_tix to monitor at {}: {e}", socket.display()),
        }
        std::thread::sleep(Duration::from_secs_f64(secs));
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match userspace::handover(&argv) {
        Some(Ok(args)) => {
            eprintln!("scx_tix: {}", userspace::exec(args));
            return ExitCode::from(1);
        }
        Some(Err(e)) => {
            eprintln!("scx_tix: {e}");
            return ExitCode::from(1);
        }
        None => {}
    }
    let opts = Opts::parse();
    if opts.man {
        use clap::CommandFactory;
        return match clap_mangen::Man::new(Opts::command())
            .section("8")
            .render(&mut std::io::stdout())
        {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("scx_tix: writing the man page: {e}");
                ExitCode::from(1)
            }
        };
    }
    let result = match opts.monitor {
        Some(secs) => monitor(&opts.socket, secs),
        None => run(opts),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("scx_tix: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The lottery's compensation rule (TIX_COMP_* in intf.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CompensationRule {
    Waldspurger,
    Zepp,
    ZeppIo,
    Off,
}

impl CompensationRule {
    fn code(self) -> u32 {
        match self {
            CompensationRule::Off => bpf_intf::tix_consts_TIX_COMP_OFF,
            CompensationRule::Waldspurger => bpf_intf::tix_consts_TIX_COMP_WALDSPURGER,
            CompensationRule::Zepp => bpf_intf::tix_consts_TIX_COMP_ZEPP,
            CompensationRule::ZeppIo => bpf_intf::tix_consts_TIX_COMP_ZEPP_IO,
        }
    }

    fn name(self) -> &'static str {
        match self {
            CompensationRule::Off => "off",
            CompensationRule::Waldspurger => "waldspurger",
            CompensationRule::Zepp => "zepp",
            CompensationRule::ZeppIo => "zepp-io",
        }
    }
}

fn policy_code(p: Policy) -> u32 {
    match p {
        Policy::Lottery => bpf_intf::tix_consts_TIX_POLICY_LOTTERY,
        Policy::Stride => bpf_intf::tix_consts_TIX_POLICY_STRIDE,
        Policy::Ras => bpf_intf::tix_consts_TIX_POLICY_RAS,
    }
}

fn run(opts: Opts) -> Result<ExitCode> {
    // A missing default config is normal; a broken one is an error.
    let bases = config::load(&opts.config, opts.config.as_os_str() != "/etc/tix/tix.toml")?;

    let shutdown = lifecycle::shutdown_flag()?;

    let load_start = std::time::Instant::now();
    let mut open_object = MaybeUninit::<OpenObject>::uninit();
    let mut builder = BpfSkelBuilder::default();
    builder.obj_builder.debug(opts.verbose > 1);
    let mut skel = scx_ops_open!(builder, &mut open_object, tix_ops, None)?;
    if opts.exit_dump_len > 0 {
        skel.struct_ops.tix_ops_mut().exit_dump_len = opts.exit_dump_len;
    }
    let rule = if opts.no_compensation {
        CompensationRule::Off
    } else {
        opts.compensation
    };
    let nr_cpus = libbpf_rs::num_possible_cpus()? as u32;
    if nr_cpus > bpf_intf::tix_consts_TIX_MAX_CPUS {
        anyhow::bail!(
            "{nr_cpus} possible CPUs; scx_tix supports at most {}",
            bpf_intf::tix_consts_TIX_MAX_CPUS
        );
    }
    {
        let rodata = skel.maps.rodata_data.as_mut().unwrap();
        rodata.slice_ns = opts.slice_us * 1000;
        rodata.wake_slices = opts.wake_lag;
        // 0: the policy's own, read per draw (tix_core::vtime::wake_rate).
        rodata.wake_rate = opts.wake_rate.unwrap_or(0);
        rodata.wake_cut = opts.wake_cut;
        rodata.wake_level = opts.wake_level;
        rodata.pinned_lead = opts.pinned_lead;
        rodata.nr_cpus = nr_cpus;
        rodata.tick_ns = stats::tick_ns();
    }
    {
        skel.maps.data_data.as_mut().unwrap().compensate = rule.code();
    }
    skel.maps.proc_state.set_max_entries(opts.max_tasks)?;
    skel.maps.proc_tickets.set_max_entries(opts.max_tasks)?;
    skel.maps.task_stats.set_max_entries(opts.max_tasks)?;
    skel.maps.wcounts.set_max_entries(opts.max_tasks)?;
    // Writes are counted at x86's page_fault_user tracepoint; elsewhere the
    // program is left out and tix trace says why.
    let x86 = cfg!(target_arch = "x86_64");
    let tracing = x86 && trace::soft_dirty_works();
    if !x86 {
        skel.progs.tix_write_fault.set_autoload(false);
    } else {
        // Attached only while something is traced (trace::Protector).
        skel.progs.tix_write_fault.set_autoattach(false);
    }
    let mut skel = scx_ops_load!(skel, tix_ops, uei)?;
    let load_ms = load_start.elapsed().as_millis();
    let verified = verified_insns(&skel);

    state::prepare(&opts.state).map_err(anyhow::Error::msg)?;
    // A broken state file stops the start: silently dropping it would lose
    // settings users were told had been recorded. --fresh overrides.
    let saved = if opts.fresh {
        None
    } else {
        state::load(&opts.state)
            .map_err(|e| anyhow::anyhow!("{e} (start with --fresh to discard it)"))?
    };
    let protector = Arc::new(if tracing {
        use std::os::fd::AsFd;
        trace::Protector::new(skel.progs.tix_write_fault.as_fd().try_clone_to_owned()?)
    } else {
        trace::Protector::default()
    });
    let backend = control::BpfBackend {
        user_base: MapHandle::try_from(&skel.maps.user_base)?,
        proc_tickets: MapHandle::try_from(&skel.maps.proc_tickets)?,
        currencies: MapHandle::try_from(&skel.maps.currencies)?,
        state_path: opts.state.clone(),
        tracing: if tracing {
            Some(control::Tracing {
                traced: MapHandle::try_from(&skel.maps.traced)?,
                wcounts: MapHandle::try_from(&skel.maps.wcounts)?,
                protector: protector.clone(),
                period_us: opts.trace_period_ms * 1000,
            })
        } else {
            None
        },
    };
    let mut daemon = tix_ctl::daemon::Daemon::new(backend, bases.clone());
    for (uid, base) in &bases {
        daemon
            .backend
            .put_base(*uid, *base)
            .map_err(anyhow::Error::msg)?;
    }
    if let Some(saved) = saved {
        let (nb, np) = daemon
            .restore(saved, procs::exists)
            .map_err(anyhow::Error::msg)?;
        eprintln!(
            "scx_tix: restored {nb} base(s) and {np} process ticket setting(s) from {}",
            opts.state.display()
        );
    }
    // The command line's policy wins over the recorded one, and is recorded.
    let restored_policy = daemon.pending_policy.take();
    let policy = opts.policy.or(restored_policy).unwrap_or(Policy::Lottery);
    if opts.policy.is_some() && restored_policy.is_some_and(|p| p != policy) {
        daemon.saved.policy = Some(policy);
    }
    daemon
        .backend
        .save(&daemon.saved.clone())
        .map_err(anyhow::Error::msg)?;
    skel.maps.bss_data.as_mut().unwrap().policy = policy_code(policy);
    daemon.policy = policy;
    let shared = Arc::new(Mutex::new(control::Shared {
        status: Status {
            attached: false,
            policy,
            compensation: rule != CompensationRule::Off,
            compensation_rule: rule.name().into(),
            slice_us: opts.slice_us,
            decisions_per_sec: 0.0,
            decisions: 0,
            prev_kept: 0,
            starve_serves: 0,
            aged_serves: Some(0),
            direct: 0,
            preempt_kicks: Some(0),
            stalled_ms: Some(0),
            stalled_sq_ms2: Some(0),
            guard_scans: Some(0),
            guard_us: Some(0),
            lost: Default::default(),
            proc_states: 0,
            cgroups: 0,
            cgroups_cpu_max: 0,
            max_tasks: opts.max_tasks.into(),
        },
    }));
    let ctl = Arc::new(control::Control {
        daemon: Mutex::new(daemon),
        shared: shared.clone(),
        task_stats: MapHandle::try_from(&skel.maps.task_stats)?,
        user_stats: MapHandle::try_from(&skel.maps.user_stats)?,
        nr_cpus: stats::online_cpus(),
    });
    let listener = server::bind(&opts.socket)
        .with_context(|| format!("binding the control socket {}", opts.socket.display()))?;

    // The field's stats socket beside tix's own control socket; a failure
    // to serve it is said and does not stop the scheduler.
    let _scx_stats =
        match scx_stats::StatsServer::<(), ()>::new(stats::server_data(shared.clone())).launch() {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("scx_tix: the scx_stats socket is not served: {e:#}");
                None
            }
        };
    let link = scx_ops_attach!(skel, tix_ops)?;
    shared.lock().unwrap().status.attached = true;
    if tracing {
        protector.spawn(
            Duration::from_millis(opts.trace_period_ms),
            shutdown.clone(),
        );
    }
    // Said before the socket is served: a client that reaches it (the VM
    // tests wait for tix status) can read the line.
    eprintln!(
        "scx_tix: attached ({}, slice {} us, compensation {}, wake lag {} slices at {} per slice slept{}; \
         loaded in {load_ms} ms, {verified} instructions verified)",
        policy.name(),
        opts.slice_us,
        rule.name(),
        opts.wake_lag,
        tix_core::vtime::wake_rate(
            policy == Policy::Stride,
            opts.wake_rate.unwrap_or(0)
        ),
        if opts.wake_level { ", wake level" } else { "" }
    );
    server::spawn(
        ctl.clone(),
        listener,
        opts.socket.clone(),
        server::Limits::default(),
    );

    let mut policy = policy;
    let mut io_funding = opts.fund_io.then(|| io::IoFunding::new("/sys/fs/cgroup"));
    let mut last = read_counters(&skel);
    let mut last_t = stats::monotonic_ns();
    let mut ticks = 0u32;
    let mut last_stats = 0f64;
    while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&skel, uei) {
        std::thread::sleep(Duration::from_millis(100));
        let pending = ctl.daemon.lock().unwrap().pending_policy.take();
        if let Some(p) = pending {
            // Queued keys keep their old meaning until redrawn (lazy switch).
            skel.maps.bss_data.as_mut().unwrap().policy = policy_code(p);
            ctl.daemon.lock().unwrap().policy = p;
            policy = p;
            eprintln!("scx_tix: policy {}", p.name());
        }
        ticks += 1;
        if ticks.is_multiple_of(10) {
            // Tickets children inherited at fork reach the state file too;
            // entries of exited processes leave the table and the file.
            let mut d = ctl.daemon.lock().unwrap();
            let n = d.expire_loans();
            if n > 0 && opts.verbose > 0 {
                eprintln!("scx_tix: {n} loan(s) returned");
            }
            let n = d.prune_traces();
            if n > 0 && opts.verbose > 0 {
                eprintln!("scx_tix: {n} traced process(es) exited");
            }
            let table = d.backend.table();
            if let Err(e) = d.sync_procs(&table) {
                eprintln!("scx_tix: {e}");
            }
            let bases = io_funding.is_some().then(|| d.set_bases());
            drop(d);
            if let (Some(io), Some(bases)) = (io_funding.as_mut(), bases) {
                for line in io.sync(&bases) {
                    eprintln!("scx_tix: io: {line}");
                }
            }
            let now = stats::monotonic_ns();
            let c = read_counters(&skel);
            let r = stats::rate(last.decisions, c.decisions, now - last_t);
            control::publish(&shared, &c, r, policy);
            if let Some(secs) = opts.stats {
                let now_s = now as f64 / 1e9;
                if now_s - last_stats >= secs {
                    last_stats = now_s;
                    let st = shared.lock().unwrap().status.clone();
                    println!("{}", serde_json::to_string(&st)?);
                }
            }
            if c.lost != last.lost {
                log_lost(&last.lost, &c.lost, opts.max_tasks);
            }
            if c.cgroups_cpu_max != last.cgroups_cpu_max && c.cgroups_cpu_max > 0 {
                eprintln!(
                    "scx_tix: {} cgroup(s) set cpu.max; tix does not enforce cpu.max: \
                     their tasks get their cpu.weight share, unthrottled",
                    c.cgroups_cpu_max
                );
            }
            if opts.verbose > 0 {
                eprintln!(
                    "scx_tix: {r:.0} decisions/s, prev kept {}, starvation serves {}, direct {}",
                    c.prev_kept, c.starve_serves, c.direct
                );
            }
            last = c;
            last_t = now;
        }
    }
    let by_signal = shutdown.load(Ordering::Relaxed);
    let ejected = uei_exited!(&skel, uei);
    if let Some(io) = io_funding.as_mut() {
        for line in io.restore() {
            eprintln!("scx_tix: io: {line}");
        }
    }
    shared.lock().unwrap().status.attached = false;
    drop(link);
    let _ = std::fs::remove_file(&opts.socket);
    if by_signal && !ejected {
        eprintln!("scx_tix: detached on signal");
    }
    // Prints the kernel's exit kind, reason and message (and dump if any).
    uei_report!(&skel, uei)?;
    Ok(lifecycle::exit_code(ejected, by_signal))
}

/// One line per table that turned entries away since the last sample.
fn log_lost(was: &tix_ctl::Lost, now: &tix_ctl::Lost, max_tasks: u32) {
    let users = bpf_intf::tix_consts_TIX_MAX_USERS;
    let groups = bpf_intf::tix_consts_TIX_MAX_GROUPS;
    let cgroups = bpf_intf::tix_consts_TIX_MAX_CGROUPS;
    let rows = [
        (
            now.proc_state - was.proc_state,
            format!("process state table full ({max_tasks} entries, --max-tasks)"),
            "thread(s) of untracked processes, which run at value 1",
        ),
        (
            now.user_sums - was.user_sums,
            format!("group table full ({groups} users in cgroups)"),
            "first wake-up(s) of untracked users, whose processes run at value 1",
        ),
        (
            now.cgroups - was.cgroups,
            format!("cgroup table full ({cgroups} cgroups)"),
            "cgroup(s) whose tasks are valued as if in the root cgroup",
        ),
        (
            now.wcounts - was.wcounts,
            format!("write count table full ({max_tasks} threads)"),
            "traced write(s) of threads without a count",
        ),
        (
            now.task_stats - was.task_stats,
            format!("task statistics table full ({max_tasks} entries)"),
            "task(s) without statistics",
        ),
        (
            now.user_stats - was.user_stats,
            format!("user statistics table full ({users} users)"),
            "user(s) without statistics",
        ),
    ];
    for (n, table, what) in rows {
        if n > 0 {
            eprintln!("scx_tix: {table}: {n} more {what}");
        }
    }
}

/// Instructions the kernel's verifier walked over the loaded programs: the
/// bulk of a load's time (under TCG in an idle guest, 234,206 took 23-33 s
/// to attach and 56,291 took 4-9 s; docs/kernel-results.md). 0 where the
/// kernel does not report it.
fn verified_insns(skel: &BpfSkel) -> u64 {
    use libbpf_rs::skel::Skel;
    use std::os::fd::AsFd;
    let ids: std::collections::HashSet<u32> = skel
        .object()
        .progs()
        .filter_map(|p| libbpf_rs::Program::id_from_fd(p.as_fd()).ok())
        .collect();
    libbpf_rs::query::ProgInfoIter::default()
        .filter(|i| ids.contains(&i.id))
        .map(|i| u64::from(i.verified_insns))
        .sum()
}

fn read_counters(skel: &BpfSkel) -> stats::Counters {
    let bss = skel.maps.bss_data.as_ref().unwrap();
    // SAFETY-free volatile-ish read: the BPF side updates these with atomics;
    // a torn read is impossible for aligned u64 on the supported arches.
    stats::Counters {
        decisions: unsafe { std::ptr::read_volatile(&bss.nr_decisions) },
        prev_kept: unsafe { std::ptr::read_volatile(&bss.nr_prev_kept) },
        starve_serves: unsafe { std::ptr::read_volatile(&bss.nr_starve_serves) },
        aged_serves: unsafe { std::ptr::read_volatile(&bss.nr_aged_serves) },
        direct: unsafe { std::ptr::read_volatile(&bss.nr_direct) },
        preempt_kicks: unsafe { std::ptr::read_volatile(&bss.nr_preempt_kicks) },
        stalled_ns: unsafe { std::ptr::read_volatile(&bss.stalled_ns) },
        stalled_sq_us2: unsafe { std::ptr::read_volatile(&bss.stalled_sq_us2) },
        guard_scans: unsafe { std::ptr::read_volatile(&bss.nr_guard_scans) },
        guard_ns: unsafe { std::ptr::read_volatile(&bss.guard_ns) },
        proc_states: unsafe { std::ptr::read_volatile(&bss.nr_proc_states) }.max(0) as u64,
        lost: {
            let l = |i: u32| unsafe { std::ptr::read_volatile(&bss.nr_lost[i as usize]) };
            tix_ctl::Lost {
                proc_state: l(bpf_intf::tix_lost_TIX_LOST_PROC_STATE),
                user_sums: l(bpf_intf::tix_lost_TIX_LOST_GROUP),
                task_stats: l(bpf_intf::tix_lost_TIX_LOST_TASK_STATS),
                user_stats: l(bpf_intf::tix_lost_TIX_LOST_USER_STATS),
                cgroups: l(bpf_intf::tix_lost_TIX_LOST_CGROUP),
                wcounts: l(bpf_intf::tix_lost_TIX_LOST_WCOUNT),
            }
        },
        cgroups: unsafe { std::ptr::read_volatile(&bss.nr_cgroups) }.max(0) as u64,
        cgroups_cpu_max: unsafe { std::ptr::read_volatile(&bss.nr_cg_quota) }.max(0) as u64,
    }
}
