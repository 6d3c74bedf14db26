//! `tix`: one binary for the whole project. Subcommands for people
//! (`tix schedule`, `tix sim …`, `tix status`, `tix top`) and, chosen by
//! argv[0], the thesis's tools with their exact syntax (Zepp §4.5):
//! `lnice`, `lrenice`, `lsetbase`, `ltix`, and the Mach commands (seed 001
//! §4.5): `mkcur`, `rmcur`, `fund`, `unfund`, `mktkt`, `rmtkt`, `lscur`,
//! `lstkt`, `fundx`.

use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod ctl;
mod mach;
mod schedule;
mod sim;
mod sim_kernel;
mod top;
mod trace;
mod transfer;

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
    Top(top::TopArgs),
    /// Switch the attached scheduler's policy: lottery or stride (ras is chosen at scx_tix's start).
    Policy(ctl::PolicyArgs),
    #[command(flatten)]
    Mach(mach::MachCmd),
    #[command(flatten)]
    Transfer(transfer::TransferCmd),
    /// Count each thread's writes to a process's memory (the race-averse
    /// scheduler's tracing): start, stop, get.
    Trace(trace::TraceArgs),
    /// Print a shell completion script for tix (bash, zsh, fish, elvish, powershell).
    Completions { shell: clap_complete::Shell },
    /// Write man pages of tix and its subcommands into DIR (tix.1, tix-status.1, …),
    /// or print tix.1 when no DIR is given.
    Man {
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

/// `tix man`: clap_mangen's pages from the command definitions themselves.
fn man(out: Option<PathBuf>) -> anyhow::Result<u8> {
    use anyhow::Context;
    let cmd = Cli::command();
    let Some(dir) = out else {
        clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?;
        return Ok(0);
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut pages = vec![("tix".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands() {
        let name = format!("tix-{}", sub.get_name());
        pages.push((
            name.clone(),
            sub.clone()
                .display_name(name.clone())
                .bin_name(format!("tix {}", sub.get_name())),
        ));
    }
    for (name, page) in pages {
        let path = dir.join(format!("{name}.1"));
        let mut buf = Vec::new();
        clap_mangen::Man::new(page)
            .title(name.to_uppercase())
            .render(&mut buf)?;
        std::fs::write(&path, buf).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(0)
}

/// A reader that stops early (`tix status | grep -q stride`) closes the
/// pipe, and println! then panics. Exit as a filter killed by SIGPIPE
/// would (141), silently; SIGPIPE itself stays ignored so a daemon that
/// hangs up on a request is an error message, not a silent death.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    quiet_on_closed_stdout();
    // lnice, lrenice, lsetbase, ltix: the thesis's tools, by argv[0].
    let argv: Vec<String> = std::env::args().collect();
    if let Some(code) = ctl::alias_main(&argv) {
        return ExitCode::from(code);
    }
    // mkcur, fund, lscur, …: the Mach commands, by argv[0].
    let name = argv
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("tix")
        .to_string();
    let cli = if mach::NAMES.contains(&name.as_str()) {
        Cli::parse_from(
            ["tix".to_string(), name]
                .into_iter()
                .chain(argv.into_iter().skip(1)),
        )
    } else {
        Cli::parse()
    };
    let result = match cli.cmd {
        Cmd::Schedule(a) => schedule::run(a),
        Cmd::Sim(a) => sim::run(a),
        Cmd::Status(a) => ctl::status(a),
        Cmd::Top(a) => top::top(a),
        Cmd::Policy(a) => ctl::policy(a),
        Cmd::Mach(c) => mach::run(c),
        Cmd::Transfer(c) => transfer::run(c),
        Cmd::Trace(a) => trace::run(a),
        Cmd::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "tix", &mut std::io::stdout());
            Ok(0)
        }
        Cmd::Man { out } => man(out),
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
