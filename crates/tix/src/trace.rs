//! `tix trace start|stop|get PID`: seed 002's memory write tracing
//! (start_trace, stop_trace, get_trace), done by scx_tix without help from
//! the traced program; its counts drive `scx_tix --policy ras`.

use crate::ctl::{ask, socket_path};
use anyhow::{anyhow, bail, Result};
use tix_ctl::{Request, Response, TraceReport};

#[derive(clap::Args, Debug)]
pub struct TraceArgs {
    #[command(subcommand)]
    cmd: TraceCmd,
}

#[derive(clap::Subcommand, Debug)]
enum TraceCmd {
    /// Count each thread's writes to the process's memory (or to --range):
    /// a count is a write to a page within one protection period. Only
    /// the process's owner or CAP_SYS_NICE may trace it.
    Start {
        pid: String,
        /// START-END (hex with 0x, or decimal): only writes to [START, END).
        #[arg(long, value_name = "START-END")]
        range: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Stop tracing and print the final counts.
    Stop {
        pid: String,
        #[arg(long)]
        json: bool,
    },
    /// Print the counts so far (per thread, with the RAS slice each was
    /// last given under scx_tix --policy ras).
    Get {
        pid: String,
        #[arg(long)]
        json: bool,
    },
}

fn addr(s: &str) -> Result<u64> {
    let t = s.trim();
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    v.map_err(|_| anyhow!("bad address '{s}' in --range (hex with 0x, or decimal)"))
}

fn range(s: &str) -> Result<(u64, u64)> {
    let (a, b) = s
        .split_once('-')
        .ok_or_else(|| anyhow!("bad --range '{s}': expected START-END"))?;
    Ok((addr(a)?, addr(b)?))
}

fn show(r: &TraceReport, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string(r)?);
        return Ok(());
    }
    let what = if r.lo == 0 && r.hi == u64::MAX {
        "all its memory".to_string()
    } else {
        format!("[{:#x}, {:#x})", r.lo, r.hi)
    };
    println!(
        "process {}{}: {} write(s) to {what}, pages protected every {} µs",
        r.tgid,
        if r.stopped { " (tracing stopped)" } else { "" },
        r.writes,
        r.period_us
    );
    println!(
        "{:>8} {:>12} {:>9} {:>9}",
        "TID", "WRITES", "RACE_PROB", "SLICE_MS"
    );
    for t in &r.threads {
        let slice = if t.slice_us == 0 {
            "-".to_string()
        } else {
            format!("{:.0}", t.slice_us as f64 / 1000.0)
        };
        println!(
            "{:>8} {:>12} {:>9} {:>9}",
            t.tid, t.writes, t.race_prob, slice
        );
    }
    Ok(())
}

pub fn run(a: TraceArgs) -> Result<u8> {
    let pid = |s: &str| tix_ctl::parse_pid(s).map_err(|e| anyhow!(e));
    let (req, json) = match a.cmd {
        TraceCmd::Start {
            pid: p,
            range: r,
            json,
        } => {
            let (lo, hi) = match r {
                Some(r) => {
                    let (lo, hi) = range(&r)?;
                    (Some(lo), Some(hi))
                }
                None => (None, None),
            };
            (
                Request::TraceStart {
                    pid: pid(&p)?,
                    lo,
                    hi,
                },
                json,
            )
        }
        TraceCmd::Stop { pid: p, json } => (Request::TraceStop { pid: pid(&p)? }, json),
        TraceCmd::Get { pid: p, json } => (Request::TraceGet { pid: pid(&p)? }, json),
    };
    match ask(&socket_path(), req)? {
        Response::Trace(r) => show(&r, json)?,
        other => bail!("unexpected answer {other:?}"),
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_or_say_why_not() {
        assert_eq!(range("0x1000-0x2000").unwrap(), (0x1000, 0x2000));
        assert_eq!(range("4096-8192").unwrap(), (4096, 8192));
        for bad in ["0x1000", "x-0x2", "0x1000-0xzz", "-"] {
            let e = range(bad).unwrap_err().to_string();
            assert!(e.contains("--range") && !e.contains('\n'), "{e}");
        }
    }
}
