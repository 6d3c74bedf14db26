//! scx_tix: loads the tix sched_ext scheduler (lottery or stride with Zepp's
//! per-user base tickets and per-process tickets, seeds 000 §3–4, 001 §3.4),
//! attaches it, keeps the ticket tables and serves the control socket.

mod bpf_intf;
mod bpf_skel;
mod config;
mod control;
mod procs;
mod server;
mod state;
mod stats;

use anyhow::{Context, Result};
use bpf_skel::*;
use clap::Parser;
use libbpf_rs::{MapHandle, OpenObject};
use scx_utils::{scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_report};
use std::mem::MaybeUninit;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// policy`). Default: the policy last set with `tix policy` (kept in
    /// the state file), else lottery.
    #[arg(long)]
    policy: Option<Policy>,
    /// Slice length in µs. Slices end only at a timer tick: the default sits
    /// just under one tick at HZ=250 (4 ms), so every quantum is one tick;
    /// a slice of exactly 4000 often survives the first tick by a hair and
    /// runs two, which makes quanta uneven and lottery shares noisier.
    #[arg(long, default_value_t = 3500, value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    slice_us: u64,
    /// Turn compensation tickets off (seed 001 §3.4).
    #[arg(long)]
    no_compensation: bool,
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
}

fn main() -> ExitCode {
    let opts = Opts::parse();
    match run(opts) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("scx_tix: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn policy_code(p: Policy) -> u32 {
    match p {
        Policy::Lottery => bpf_intf::tix_consts_TIX_POLICY_LOTTERY,
        Policy::Stride => bpf_intf::tix_consts_TIX_POLICY_STRIDE,
    }
}

fn run(opts: Opts) -> Result<ExitCode> {
    // A missing default config is normal; a broken one is an error.
    let bases = config::load(&opts.config, opts.config.as_os_str() != "/etc/tix/tix.toml")?;

    let shutdown = Arc::new(AtomicBool::new(false));
    let s = shutdown.clone();
    ctrlc::set_handler(move || s.store(true, Ordering::Relaxed))
        .context("installing the SIGINT/SIGTERM handler")?;

    let mut open_object = MaybeUninit::<OpenObject>::uninit();
    let mut builder = BpfSkelBuilder::default();
    builder.obj_builder.debug(opts.verbose > 1);
    let mut skel = scx_ops_open!(builder, &mut open_object, tix_ops, None)?;
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
        rodata.nr_cpus = nr_cpus;
    }
    {
        skel.maps.data_data.as_mut().unwrap().compensate = u32::from(!opts.no_compensation);
    }
    let mut skel = scx_ops_load!(skel, tix_ops, uei)?;

    state::prepare(&opts.state).map_err(anyhow::Error::msg)?;
    // A broken state file stops the start: silently dropping it would lose
    // settings users were told had been recorded. --fresh overrides.
    let saved = if opts.fresh {
        None
    } else {
        state::load(&opts.state)
            .map_err(|e| anyhow::anyhow!("{e} (start with --fresh to discard it)"))?
    };
    let backend = control::BpfBackend {
        user_base: MapHandle::try_from(&skel.maps.user_base)?,
        proc_tickets: MapHandle::try_from(&skel.maps.proc_tickets)?,
        state_path: opts.state.clone(),
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
    let shared = Arc::new(Mutex::new(control::Shared {
        status: Status {
            attached: false,
            policy,
            compensation: !opts.no_compensation,
            slice_us: opts.slice_us,
            decisions_per_sec: 0.0,
            decisions: 0,
            prev_kept: 0,
            starve_serves: 0,
            direct: 0,
        },
    }));
    let ctl = Arc::new(control::Control {
        daemon: Mutex::new(daemon),
        shared: shared.clone(),
        task_stats: MapHandle::try_from(&skel.maps.task_stats)?,
        user_stats: MapHandle::try_from(&skel.maps.user_stats)?,
    });
    let listener = server::bind(&opts.socket)
        .with_context(|| format!("binding the control socket {}", opts.socket.display()))?;

    let link = scx_ops_attach!(skel, tix_ops)?;
    shared.lock().unwrap().status.attached = true;
    server::spawn(
        ctl.clone(),
        listener,
        opts.socket.clone(),
        server::Limits::default(),
    );
    eprintln!(
        "scx_tix: attached ({}, slice {} us, compensation {})",
        policy.name(),
        opts.slice_us,
        if opts.no_compensation { "off" } else { "on" }
    );

    let mut policy = policy;
    let mut last = read_counters(&skel);
    let mut last_t = stats::monotonic_ns();
    let mut ticks = 0u32;
    while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&skel, uei) {
        std::thread::sleep(Duration::from_millis(100));
        let pending = ctl.daemon.lock().unwrap().pending_policy.take();
        if let Some(p) = pending {
            // Queued keys keep their old meaning until redrawn (lazy switch).
            skel.maps.bss_data.as_mut().unwrap().policy = policy_code(p);
            policy = p;
            eprintln!("scx_tix: policy {}", p.name());
        }
        ticks += 1;
        if ticks.is_multiple_of(10) {
            // Tickets children inherited at fork reach the state file too;
            // entries of exited processes leave the table and the file.
            let mut d = ctl.daemon.lock().unwrap();
            let table = d.backend.table();
            if let Err(e) = d.sync_procs(&table) {
                eprintln!("scx_tix: {e}");
            }
            drop(d);
            let now = stats::monotonic_ns();
            let c = read_counters(&skel);
            let r = stats::rate(last.decisions, c.decisions, now - last_t);
            control::publish(&shared, &c, r, policy, !opts.no_compensation);
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
    shared.lock().unwrap().status.attached = false;
    drop(link);
    let _ = std::fs::remove_file(&opts.socket);
    if by_signal && !ejected {
        eprintln!("scx_tix: detached on signal");
    }
    // Prints the kernel's exit kind, reason and message (and dump if any).
    uei_report!(&skel, uei)?;
    // A scheduler the kernel ejected (error, stall) exits non-zero.
    Ok(if ejected && !by_signal {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

fn read_counters(skel: &BpfSkel) -> stats::Counters {
    let bss = skel.maps.bss_data.as_ref().unwrap();
    // SAFETY-free volatile-ish read: the BPF side updates these with atomics;
    // a torn read is impossible for aligned u64 on the supported arches.
    stats::Counters {
        decisions: unsafe { std::ptr::read_volatile(&bss.nr_decisions) },
        prev_kept: unsafe { std::ptr::read_volatile(&bss.nr_prev_kept) },
        starve_serves: unsafe { std::ptr::read_volatile(&bss.nr_starve_serves) },
        direct: unsafe { std::ptr::read_volatile(&bss.nr_direct) },
    }
}
