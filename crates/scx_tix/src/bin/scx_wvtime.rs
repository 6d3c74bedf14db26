//! scx_wvtime: the smallest weighted virtual-time sched_ext scheduler
//! (src/bpf/wvtime.bpf.c), the peer vm/bench measures scx_tix against in the
//! same boot. Attaches, waits for SIGINT/SIGTERM or the kernel's ejection,
//! and reports how it exited. Not a product: no options beyond the slice.

use anyhow::Result;
use clap::Parser;
use libbpf_rs::OpenObject;
use scx_utils::{scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_report};
use std::mem::MaybeUninit;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[path = "../lifecycle.rs"]
mod lifecycle;

#[allow(clippy::all, dead_code)]
mod wvtime_skel {
    include!(concat!(env!("OUT_DIR"), "/wvtime_skel.rs"));
}
use wvtime_skel::*;

#[derive(Parser)]
#[command(
    version,
    about = "Minimal weighted virtual-time sched_ext scheduler (benchmark peer of scx_tix)"
)]
struct Opts {
    /// Slice length in µs (scx_tix's default).
    #[arg(long, default_value_t = 3500, value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    slice_us: u64,
}

fn main() -> ExitCode {
    match run(Opts::parse()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("scx_wvtime: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run(opts: Opts) -> Result<ExitCode> {
    let shutdown = lifecycle::shutdown_flag()?;
    let mut open_object = MaybeUninit::<OpenObject>::uninit();
    let builder = WvtimeSkelBuilder::default();
    let mut skel = scx_ops_open!(builder, &mut open_object, wvt_ops, None)?;
    skel.maps.rodata_data.as_mut().unwrap().slice_ns = opts.slice_us * 1000;
    let mut skel = scx_ops_load!(skel, wvt_ops, uei)?;
    let link = scx_ops_attach!(skel, wvt_ops)?;
    eprintln!("scx_wvtime: attached (slice {} us)", opts.slice_us);
    while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&skel, uei) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let by_signal = shutdown.load(Ordering::Relaxed);
    let ejected = uei_exited!(&skel, uei);
    drop(link);
    uei_report!(&skel, uei)?;
    Ok(lifecycle::exit_code(ejected, by_signal))
}
