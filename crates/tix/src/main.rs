//! `tix`: one binary for the whole project. Subcommands for people
//! (`tix schedule`, `tix sim …`, `tix status`, `tix top`) and, chosen by
//! argv[0], the thesis's tools with their exact syntax (Zepp §4.5):
//! `lnice`, `lrenice`, `lsetbase`, `ltix`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod ctl;
mod schedule;
mod sim;

#[derive(Parser)]
#[command(
    name = "tix",
    version,
    about = "Proportional-share CPU scheduling: lottery, stride, GR3 and relatives"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one policy over fixed shares and print its order of picks and service errors.
    Schedule(schedule::Args),
    /// Simulate policies on workloads; reproduce the seeds' experiments.
    Sim(sim::Args),
    /// Is the scx_tix kernel scheduler attached? Policy, decisions/s (exit 0 only when attached).
    Status(ctl::StatusArgs),
    /// Per-task value, expected and measured share, lottery wins under scx_tix.
    Top(ctl::TopArgs),
    /// Switch the attached scheduler's policy: lottery or stride.
    Policy(ctl::PolicyArgs),
}

fn main() -> ExitCode {
    // lnice, lrenice, lsetbase, ltix: the thesis's tools, by argv[0].
    let argv: Vec<String> = std::env::args().collect();
    if let Some(code) = ctl::alias_main(&argv) {
        return ExitCode::from(code);
    }
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Schedule(a) => schedule::run(a),
        Cmd::Sim(a) => sim::run(a),
        Cmd::Status(a) => ctl::status(a),
        Cmd::Top(a) => ctl::top(a),
        Cmd::Policy(a) => ctl::policy(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // One clear line, non-zero exit: the project's contract for bad input.
            eprintln!("tix: {e:#}");
            ExitCode::from(1)
        }
    }
}
