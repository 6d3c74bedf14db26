//! The kernel scheduler's commands: `tix status`, `tix top`, `tix policy`, and
//! Zepp's ticket tools chosen by argv[0] with his exact syntax (seed 000
//! §4.5): `lnice [-p N] CMD…`, `lrenice PID N`, `lsetbase -u USER N`,
//! `ltix -u USER | -p PID`. They talk to scx_tix over tix-ctl's socket.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use tix_ctl::{request, ClientError, Policy, Request, Response};

/// Socket to use: $TIX_SOCKET, else the default.
pub fn socket_path() -> PathBuf {
    std::env::var_os("TIX_SOCKET")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(tix_ctl::DEFAULT_SOCKET))
}

pub fn ask(sock: &Path, req: Request) -> Result<Response> {
    request(sock, &req).map_err(|e| match e {
        ClientError::Refused { message, .. } => anyhow!(message),
        e => anyhow!(e),
    })
}

#[derive(clap::Args, Debug)]
pub struct StatusArgs {
    /// Control socket of scx_tix.
    #[arg(long)]
    pub socket: Option<PathBuf>,
    /// Print the status in the OpenMetrics text format (for Prometheus,
    /// e.g. a node_exporter textfile); `tix_attached 0` when no scheduler
    /// answers.
    #[arg(long, conflicts_with = "json")]
    pub openmetrics: bool,
    /// With --openmetrics: per-task families too (wins, CPU seconds,
    /// tickets, value by pid, tgid, uid and comm).
    #[arg(long, requires = "openmetrics")]
    pub tasks: bool,
    /// Print the status as one JSON line.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct PolicyArgs {
    /// lottery or stride
    pub policy: Policy,
    #[arg(long)]
    pub socket: Option<PathBuf>,
}

/// `tix status`: exit 0 only when the scheduler is attached.
pub fn status(a: StatusArgs) -> Result<u8> {
    let sock = a.socket.unwrap_or_else(socket_path);
    match request(&sock, &Request::Status) {
        Ok(Response::Status(s)) if a.openmetrics || a.json => {
            if a.openmetrics {
                let mut text = s.to_openmetrics();
                if a.tasks {
                    let Response::Top(top) = ask(&sock, Request::Top)? else {
                        bail!("unexpected answer to a top request");
                    };
                    // The task families go before the closing "# EOF".
                    text.truncate(text.len() - "# EOF\n".len());
                    text += &top.tasks_openmetrics();
                    text += "# EOF\n";
                }
                print!("{text}");
            } else {
                println!("{}", serde_json::to_string(&s)?);
            }
            Ok(if s.attached { 0 } else { 1 })
        }
        Ok(Response::Status(s)) => {
            println!("attached: {}", if s.attached { "yes" } else { "no" });
            println!("policy: {}", s.policy.name());
            println!("compensation: {}", s.compensation_name());
            println!("slice_us: {}", s.slice_us);
            println!("decisions_per_sec: {:.0}", s.decisions_per_sec);
            println!(
                "decisions: {} (prev kept {}, starvation serves {}{}, direct {}, wake-up preemptions {})",
                s.decisions,
                s.prev_kept,
                s.starve_serves,
                s.aged_serves
                    .map_or(String::new(), |a| format!(" of which per-task {a}")),
                s.direct,
                s.preempt_kicks
                    .map_or("not reported".to_string(), |k| k.to_string())
            );
            if let (Some(n), Some(us)) = (s.guard_scans, s.guard_us) {
                println!(
                    "per-task guard: {n} looks, {us} us ({:.1} us each)",
                    us as f64 / n.max(1) as f64
                );
            }
            if let Some(ms) = s.stalled_ms {
                println!(
                    "stalled: {ms} ms (squares {} ms^2; run time past a slice and a tick: the host did not run a vCPU)",
                    s.stalled_sq_ms2.unwrap_or(0)
                );
            }
            let l = s.lost;
            println!("process states: {} of {}", s.proc_states, s.max_tasks);
            println!(
                "cgroups: {} ({} set cpu.max, not enforced)",
                s.cgroups, s.cgroups_cpu_max
            );
            println!(
                "tables full: process states {}, user sums {}, task stats {}, user stats {}, cgroups {}",
                l.proc_state, l.user_sums, l.task_stats, l.user_stats, l.cgroups
            );
            Ok(if s.attached { 0 } else { 1 })
        }
        Ok(other) => bail!("unexpected answer {other:?}"),
        Err(ClientError::NotRunning(_)) => {
            if a.openmetrics {
                print!("{}", tix_ctl::openmetrics_not_running());
            } else if a.json {
                println!("{{\"attached\":false}}");
            } else {
                println!("attached: no");
            }
            eprintln!(
                "tix: scheduler not running (no scx_tix daemon at {})",
                sock.display()
            );
            Ok(1)
        }
        Err(e) => Err(anyhow!(e)),
    }
}

pub fn policy(a: PolicyArgs) -> Result<u8> {
    let sock = a.socket.unwrap_or_else(socket_path);
    ask(&sock, Request::SetPolicy { policy: a.policy })?;
    println!("policy: {}", a.policy.name());
    Ok(0)
}

/// The thesis's tools, chosen by argv[0]. None when argv[0] is not one.
pub fn alias_main(argv: &[String]) -> Option<u8> {
    let name = Path::new(argv.first()?).file_name()?.to_str()?.to_string();
    let args = &argv[1..];
    let r = match name.as_str() {
        "lnice" => lnice(args),
        "lrenice" => lrenice(args),
        "lsetbase" => lsetbase(args),
        "ltix" => ltix(args),
        _ => return None,
    };
    Some(match r {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{name}: {e:#}");
            1
        }
    })
}

fn number(s: &str, what: &str) -> Result<u64> {
    tix_ctl::parse_number(s, what).map_err(|e| anyhow!(e))
}

fn pid_arg(s: &str) -> Result<u32> {
    tix_ctl::parse_pid(s).map_err(|e| anyhow!(e))
}

/// `lnice [-p N] CMD…`: this process takes N tickets (default 100), then
/// becomes CMD; children inherit process tickets.
fn lnice(args: &[String]) -> Result<u8> {
    let (tickets, cmd) = match args.first().map(String::as_str) {
        Some("-p") => {
            let n = args
                .get(1)
                .context("usage: lnice [-p TICKETS] COMMAND [ARGS]...")?;
            (number(n, "TICKETS")?, &args[2..])
        }
        _ => (tix_ctl::DEFAULT_TICKETS, args),
    };
    if cmd.is_empty() {
        bail!("usage: lnice [-p TICKETS] COMMAND [ARGS]...");
    }
    ask(
        &socket_path(),
        Request::SetTickets {
            pid: std::process::id(),
            tickets,
        },
    )?;
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(&cmd[0]).args(&cmd[1..]).exec();
    bail!("cannot run '{}': {e}", cmd[0])
}

/// `lrenice PID N`
fn lrenice(args: &[String]) -> Result<u8> {
    let [pid, n] = args else {
        bail!("usage: lrenice PID TICKETS");
    };
    let pid = pid_arg(pid)?;
    let tickets = number(n, "TICKETS")?;
    match ask(&socket_path(), Request::SetTickets { pid, tickets })? {
        Response::Tickets { pid, tickets, .. } => {
            println!("{pid}: {tickets} process tickets");
            Ok(0)
        }
        other => bail!("unexpected answer {other:?}"),
    }
}

/// A user's uid: a name in /etc/passwd, a number, or `kernel`, the user
/// kernel threads are valued as (tix top's UID column names it so), unless
/// a real user holds that name.
fn user_uid(user: &str) -> Result<u32> {
    tix_ctl::uid_of(user)
        .or_else(|| (user == KERNEL_USER).then_some(tix_core::cgroup::KERNEL_UID))
        .ok_or_else(|| anyhow!("no such user: {user}"))
}

/// The name `lsetbase -u` and `ltix -u` take for the kernel threads' user.
pub(crate) const KERNEL_USER: &str = "kernel";

/// `lsetbase -u USER N` (the -u may be left out, as in the thesis's usage).
fn lsetbase(args: &[String]) -> Result<u8> {
    let rest = match args.first().map(String::as_str) {
        Some("-u") => &args[1..],
        _ => args,
    };
    let [user, n] = rest else {
        bail!("usage: lsetbase -u USER|kernel TICKETS");
    };
    let uid = user_uid(user)?;
    let base = number(n, "TICKETS")?;
    ask(&socket_path(), Request::SetBase { uid, base })?;
    println!("{user}: {base} base tickets");
    Ok(0)
}

/// `ltix -u USER | -p PID`: prints the number.
fn ltix(args: &[String]) -> Result<u8> {
    let sock = socket_path();
    match args {
        [f, user] if f == "-u" => {
            let uid = user_uid(user)?;
            match ask(&sock, Request::GetBase { uid })? {
                Response::Base { base, .. } => println!("{base}"),
                other => bail!("unexpected answer {other:?}"),
            }
        }
        [f, pid] if f == "-p" => {
            let pid = pid_arg(pid)?;
            match ask(&sock, Request::GetTickets { pid })? {
                Response::Tickets { tickets, .. } => println!("{tickets}"),
                other => bail!("unexpected answer {other:?}"),
            }
        }
        _ => bail!("usage: ltix -u USER | -p PID"),
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// `kernel` names the kernel threads' user where no real user holds
    /// the name; numbers and unknown names keep their meaning.
    #[test]
    fn the_kernel_threads_user_has_a_name() {
        let real = std::fs::read_to_string("/etc/passwd")
            .ok()
            .and_then(|pw| tix_ctl::passwd_uid(&pw, KERNEL_USER));
        let want = real.unwrap_or(tix_core::cgroup::KERNEL_UID);
        assert_eq!(user_uid(KERNEL_USER).unwrap(), want);
        assert_eq!(user_uid("4294967295").unwrap(), u32::MAX);
        assert_eq!(user_uid("0").unwrap(), 0);
        let e = user_uid("no-such-user-here").unwrap_err().to_string();
        assert_eq!(e, "no such user: no-such-user-here");
    }

    #[test]
    fn aliases_by_argv0_and_usage_errors() {
        assert_eq!(alias_main(&argv(&["tix", "status"])), None);
        assert_eq!(alias_main(&argv(&["/usr/bin/ltix"])), Some(1));
        assert_eq!(alias_main(&argv(&["lrenice", "x", "5"])), Some(1));
        assert_eq!(alias_main(&argv(&["lsetbase", "-u"])), Some(1));
        assert_eq!(alias_main(&argv(&["lnice", "-p"])), Some(1));
        assert_eq!(
            alias_main(&argv(&["ltix", "-u", "no-such-user-tix"])),
            Some(1)
        );
    }
}
