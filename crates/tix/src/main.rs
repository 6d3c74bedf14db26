//! `tix`: one binary for the whole project. Subcommands for people
//! (`tix schedule`, `tix sim …`, `tix status`, `tix top`) and, chosen by
//! argv[0], the thesis's tools with their exact syntax (Zepp §4.5):
//! `lnice`, `lrenice`, `lsetbase`, `ltix`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod schedule;

#[derive(Parser)]
#[command(name = "tix", version, about = "Proportional-share CPU scheduling: lottery, stride, GR3 and relatives")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one policy over fixed shares and print its order of picks and service errors.
    Schedule(schedule::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Schedule(a) => schedule::run(a),
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
