//! `tix sim …`: the simulator's command contract (issue 4): `error`,
//! `sweep`, `run`, `report`, plus `bench` for the simulator's own speed.

use anyhow::Context;
use clap::{Args as ClapArgs, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use tix_sim::service_error::{self, ShareDist};

#[derive(ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    cmd: SimCmd,
}

#[derive(Subcommand)]
enum SimCmd {
    /// Order of picks and min/max service error (GR3 eq. 2) over fixed shares.
    Error {
        #[arg(long)]
        algo: String,
        /// Comma-separated shares, e.g. 3,2,1.
        #[arg(long, value_delimiter = ',', required = true)]
        shares: Vec<u64>,
        /// Quanta to run (default: one cycle, the sum of the shares).
        #[arg(long)]
        quanta: Option<u64>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        json: bool,
    },
    /// Average min and max service error over random share sets (GR3 §5.1).
    Sweep {
        #[arg(long)]
        algo: String,
        #[arg(long)]
        clients: usize,
        #[arg(long)]
        total: u64,
        #[arg(long, default_value_t = 2500)]
        runs: u64,
        /// random | skewed
        #[arg(long, default_value = "random")]
        dist: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        json: bool,
    },
    /// Run a TOML scenario (schema: crates/tix-sim/SCENARIOS.md).
    Run {
        file: PathBuf,
        #[arg(long)]
        json: bool,
        /// Write SVG and PNG plots (service and lag over time) here.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Write clients.csv and series.csv here.
        #[arg(long)]
        csv: Option<PathBuf>,
    },
    /// Run a scenario's CPU-bound clients as real processes under the
    /// scheduler attached now (nice levels for their tickets) and print
    /// each one's share beside the simulator's run of the same file.
    Kernel {
        file: PathBuf,
        #[arg(long)]
        json: bool,
        /// Also write the replay as one JSON line to this file.
        #[arg(long)]
        json_out: Option<PathBuf>,
        /// Time the processes run before the measured window (ms).
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(0..=60_000))]
        settle_ms: u64,
    },
    /// Run the built-in reproductions and write DIR/index.html.
    Report {
        /// Smaller grids and runs (CI).
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        out: PathBuf,
        /// Only the reproductions of one seed (gr3, waldspurger, zepp, samih, ras).
        #[arg(long)]
        only: Option<String>,
        /// Saved `tix sim kernel` replays (JSON lines, scripts/kernel-replays.sh)
        /// to show beside the simulator and the paper.
        #[arg(long)]
        kernel: Option<PathBuf>,
    },
    /// Simulated quanta per second for CPU-bound clients on one CPU.
    Bench {
        #[arg(long, default_value_t = 1000)]
        clients: usize,
        #[arg(long, default_value_t = 20_000_000)]
        quanta: u64,
        /// Policies to time (rr is always timed first as the reference).
        #[arg(long, value_delimiter = ',')]
        algos: Vec<String>,
        #[arg(long)]
        json: bool,
    },
}

fn progress_on(json: bool) -> bool {
    !json && std::io::stderr().is_terminal()
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        SimCmd::Error {
            algo,
            shares,
            quanta,
            seed,
            json,
        } => {
            let r = service_error::error_run(&algo, &shares, quanta, seed)?;
            if json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                let letters: Vec<String> = r.picks.iter().map(|&i| client_label(i)).collect();
                println!("{} over shares {:?}, {} quanta", r.algo, r.shares, r.quanta);
                println!("picks: {}", letters.join(" "));
                for (i, c) in r.clients.iter().enumerate() {
                    println!(
                        "  {} share {:>6} service {:>8}  error {:+.3} .. {:+.3}",
                        client_label(i),
                        c.share,
                        c.service,
                        c.min,
                        c.max
                    );
                }
                println!("overall error {:+.3} .. {:+.3} quanta", r.min, r.max);
            }
        }
        SimCmd::Sweep {
            algo,
            clients,
            total,
            runs,
            dist,
            seed,
            json,
        } => {
            let dist: ShareDist = dist.parse()?;
            let pb = tix_sim::progress::Progress::new(runs, &algo, progress_on(json));
            let p = service_error::sweep(&algo, clients, total, runs, dist, seed, &|n| pb.inc(n))?;
            pb.finish();
            if json {
                println!("{}", serde_json::to_string(&p)?);
            } else {
                println!(
                    "{} N={} S={} {:?} runs={}: average error {:+.3} .. {:+.3} quanta (worst run {:+.3} .. {:+.3})",
                    p.algo, p.clients, p.total, p.dist, p.runs, p.avg_min, p.avg_max, p.worst_min, p.worst_max
                );
            }
        }
        SimCmd::Run {
            file,
            json,
            plot,
            csv,
        } => {
            let sys = tix_sim::scenario::load(&file)?;
            let r = tix_sim::engine::simulate(sys)?;
            if let Some(dir) = plot {
                std::fs::create_dir_all(&dir).with_context(|| format!("{}", dir.display()))?;
                tix_sim::plot::run_plots(&r, &dir)?;
            }
            if let Some(dir) = csv {
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                write_all_or_none(&[
                    (dir.join("clients.csv"), tix_sim::output::clients_csv(&r)),
                    (dir.join("series.csv"), tix_sim::output::series_csv(&r)),
                ])?;
            }
            if json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                print!("{}", tix_sim::output::table(&r));
            }
        }
        SimCmd::Kernel {
            file,
            json,
            json_out,
            settle_ms,
        } => {
            let r = crate::sim_kernel::replay(&file, std::time::Duration::from_millis(settle_ms))?;
            let line = serde_json::to_string(&r)?;
            if let Some(p) = json_out {
                std::fs::write(&p, format!("{line}\n"))
                    .with_context(|| format!("cannot write {}", p.display()))?;
            }
            if json {
                println!("{line}");
            } else {
                print!("{}", crate::sim_kernel::table(&r));
            }
        }
        SimCmd::Report {
            quick,
            out,
            only,
            kernel,
        } => {
            let page = tix_sim::report::write_report(
                &out,
                quick,
                progress_on(false),
                only.as_deref(),
                kernel.as_deref(),
            )?;
            println!("{}", page.display());
        }
        SimCmd::Bench {
            clients,
            quanta,
            algos,
            json,
        } => {
            if !(1..=MAX_BENCH_CLIENTS).contains(&clients) {
                anyhow::bail!("--clients: {clients}; expected 1..={MAX_BENCH_CLIENTS}");
            }
            if !(1..=MAX_BENCH_QUANTA).contains(&quanta) {
                anyhow::bail!("--quanta: {quanta}; expected 1..={MAX_BENCH_QUANTA}");
            }
            let rows = tix_sim::bench::run(clients, quanta, &algos)?;
            if json {
                println!("{}", serde_json::to_string(&rows)?);
            } else {
                print!("{}", tix_sim::bench::table(&rows, clients));
            }
        }
    }
    Ok(0)
}

/// `tix sim bench` bounds: every client is allocated up front, and each
/// policy runs every quantum.
const MAX_BENCH_CLIENTS: usize = 1_000_000;
const MAX_BENCH_QUANTA: u64 = 1_000_000_000;

/// Write every file or none: each goes to a temporary name first and all
/// are renamed only once all are written, so a failure leaves no partial
/// output (an old complete set stays as it was).
fn write_all_or_none(files: &[(PathBuf, String)]) -> anyhow::Result<()> {
    let tmp = |p: &PathBuf| {
        let mut n = p.clone().into_os_string();
        n.push(".tmp");
        PathBuf::from(n)
    };
    for (i, (p, text)) in files.iter().enumerate() {
        if let Err(e) = std::fs::write(tmp(p), text) {
            for (q, _) in &files[..=i] {
                let _ = std::fs::remove_file(tmp(q));
            }
            return Err(e).with_context(|| format!("writing {}", p.display()));
        }
    }
    for (p, _) in files {
        std::fs::rename(tmp(p), p).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

/// A, B, C, … Z, then c26, c27, …
fn client_label(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("c{i}")
    }
}
