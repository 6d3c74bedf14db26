//! How a sched_ext daemon of this crate (scx_tix, scx_wvtime) is stopped
//! and what it exits with: one SIGINT/SIGTERM flag, and exit 2 when the
//! kernel ejected the scheduler rather than a signal ending it.

use anyhow::{Context, Result};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag set by SIGINT or SIGTERM (installed once per process).
pub fn shutdown_flag() -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    ctrlc::set_handler(move || f.store(true, Ordering::Relaxed))
        .context("installing the SIGINT/SIGTERM handler")?;
    Ok(flag)
}

/// A scheduler the kernel ejected (error, stall) exits non-zero.
pub fn exit_code(ejected: bool, by_signal: bool) -> ExitCode {
    if ejected && !by_signal {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
