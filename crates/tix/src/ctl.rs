//! The kernel scheduler's commands: `tix status`, `tix top`, `tix policy`, and
//! Zepp's ticket tools chosen by argv[0] with his exact syntax (seed 000
//! §4.5): `lnice [-p N] CMD…`, `lrenice PID N`, `lsetbase -u USER N`,
//! `ltix -u USER | -p PID`. They talk to scx_tix over tix-ctl's socket.

use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tix_core::waterfill::{ideal_cpus_affine, Demand};
use tix_ctl::{request, ClientError, Policy, Request, Response, Top};

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
    /// Print the status as one JSON line.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct TopArgs {
    #[arg(long)]
    pub socket: Option<PathBuf>,
    /// Print one sample and exit (for scripts).
    #[arg(long)]
    pub once: bool,
    /// Seconds between the two samples that give measured shares.
    #[arg(long, default_value_t = 1.0)]
    pub interval: f64,
    /// Only tasks that ran in the interval or are runnable.
    #[arg(long)]
    pub active: bool,
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
                print!("{}", s.to_openmetrics());
            } else {
                println!("{}", serde_json::to_string(&s)?);
            }
            Ok(if s.attached { 0 } else { 1 })
        }
        Ok(Response::Status(s)) => {
            println!("attached: {}", if s.attached { "yes" } else { "no" });
            println!("policy: {}", s.policy.name());
            println!(
                "compensation: {}",
                if s.compensation_rule.is_empty() {
                    if s.compensation {
                        "on"
                    } else {
                        "off"
                    }
                } else {
                    s.compensation_rule.as_str()
                }
            );
            println!("slice_us: {}", s.slice_us);
            println!("decisions_per_sec: {:.0}", s.decisions_per_sec);
            println!(
                "decisions: {} (prev kept {}, starvation serves {}, direct {})",
                s.decisions, s.prev_kept, s.starve_serves, s.direct
            );
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

fn sample(sock: &Path) -> Result<Top> {
    match ask(sock, Request::Top)? {
        Response::Top(t) => Ok(t),
        other => bail!("unexpected answer {other:?}"),
    }
}

/// Rows of `tix top`, as shares of the machine: expected = the runnable
/// tasks' water-filled ideal (tix_core::waterfill: value-proportional, each
/// task capped at one CPU and confined to its affinity); measured = CPU time
/// in the interval / (interval × CPUs). A daemon that does not report its
/// CPUs is read as one CPU with measured = share of the listed tasks' time.
/// WINS counts lottery wins (runs on an idle CPU found at wake-up are not
/// decisions and are not counted).
pub fn render(before: &Top, after: &Top, active_only: bool) -> String {
    let prev: HashMap<u32, u64> = before.tasks.iter().map(|t| (t.pid, t.runtime_ns)).collect();
    // A task absent from the first sample began within the interval: all
    // of its time is the interval's (it showed 0% before, however busy).
    let deltas: Vec<u64> = after
        .tasks
        .iter()
        .map(|t| t.runtime_ns.saturating_sub(*prev.get(&t.pid).unwrap_or(&0)))
        .collect();
    let cpus = after.nr_cpus.max(1) as usize;
    let interval = after.now_ns.saturating_sub(before.now_ns);
    let capacity = if after.nr_cpus > 0 && interval > 0 {
        interval as f64 * cpus as f64
    } else {
        deltas.iter().sum::<u64>() as f64
    };
    let runnable: Vec<usize> = (0..after.tasks.len())
        .filter(|&i| after.tasks[i].runnable)
        .collect();
    let demands: Vec<Demand> = runnable
        .iter()
        .map(|&i| Demand {
            weight: after.tasks[i].value.max(1),
            cpus: after.tasks[i].cpus_allowed,
        })
        .collect();
    let ideal = ideal_cpus_affine(&demands, cpus);
    let expected: HashMap<usize, f64> = runnable
        .iter()
        .zip(&ideal)
        .map(|(&i, &c)| (i, c / cpus as f64))
        .collect();
    let mut out = format!(
        "{:>7} {:>7} {:>6} {:<15} {:>7} {:>6} {:>8} {:>9} {:>9} {:>8}\n",
        "PID", "TGID", "UID", "COMM", "TICKETS", "BASE", "VALUE", "EXPECTED", "MEASURED", "WINS"
    );
    for (i, (t, d)) in after.tasks.iter().zip(&deltas).enumerate() {
        if active_only && *d == 0 && !t.runnable {
            continue;
        }
        let exp = match expected.get(&i) {
            Some(e) => format!("{:.1}%", 100.0 * e),
            None => "-".into(),
        };
        let meas = if capacity > 0.0 {
            format!("{:.1}%", 100.0 * *d as f64 / capacity)
        } else {
            "-".into()
        };
        out += &format!(
            "{:>7} {:>7} {:>6} {:<15} {:>7} {:>6} {:>8} {:>9} {:>9} {:>8}\n",
            t.pid, t.tgid, t.uid, t.comm, t.tickets, t.base, t.value, exp, meas, t.wins
        );
    }
    out
}

pub fn top(a: TopArgs) -> Result<u8> {
    let sock = a.socket.clone().unwrap_or_else(socket_path);
    if !(a.interval > 0.0 && a.interval <= 3600.0) {
        bail!("--interval must be in (0, 3600] seconds");
    }
    let mut before = sample(&sock)?;
    loop {
        std::thread::sleep(Duration::from_secs_f64(a.interval));
        let after = sample(&sock)?;
        if !a.once {
            print!("\x1b[H\x1b[2J");
        }
        print!("{}", render(&before, &after, a.active));
        if a.once {
            return Ok(0);
        }
        before = after;
    }
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

fn user_uid(user: &str) -> Result<u32> {
    tix_ctl::uid_of(user).ok_or_else(|| anyhow!("no such user: {user}"))
}

/// `lsetbase -u USER N` (the -u may be left out, as in the thesis's usage).
fn lsetbase(args: &[String]) -> Result<u8> {
    let rest = match args.first().map(String::as_str) {
        Some("-u") => &args[1..],
        _ => args,
    };
    let [user, n] = rest else {
        bail!("usage: lsetbase -u USER TICKETS");
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
    use tix_ctl::TaskRow;

    fn row(pid: u32, value: u64, runtime_ns: u64, runnable: bool) -> TaskRow {
        TaskRow {
            pid,
            tgid: pid,
            uid: 0,
            comm: format!("t{pid}"),
            runnable,
            tickets: 100,
            base: 1000,
            value,
            wins: 0,
            runtime_ns,
            hist: vec![0; 10],
            cpus_allowed: u64::MAX,
        }
    }

    #[test]
    fn shares_from_two_samples() {
        let a = Top {
            now_ns: 0,
            nr_cpus: 0,
            tasks: vec![
                row(1, 800, 0, true),
                row(2, 200, 0, true),
                row(3, 5, 7, false),
            ],
            users: vec![],
        };
        let b = Top {
            now_ns: 1,
            nr_cpus: 0,
            tasks: vec![
                row(1, 800, 600, true),
                row(2, 200, 400, true),
                row(3, 5, 7, false),
            ],
            users: vec![],
        };
        let out = render(&a, &b, true);
        // 800/(800+200) expected, 600/(600+400) measured; task 3 idle: hidden.
        assert!(out.contains("80.0%") && out.contains("60.0%"), "{out}");
        assert!(out.contains("20.0%") && out.contains("40.0%"), "{out}");
        assert!(!out.contains(" t3 "), "{out}");
        assert!(render(&a, &b, false).contains("t3"));
    }

    #[test]
    fn shares_on_two_cpus_are_water_filled() {
        // 2 CPUs, values 100:100:800 over 1 s: the 800 is capped at one CPU
        // (50% of the machine), the 100s share the other (25% each); the
        // fourth task may run on CPU 1 only and is not runnable.
        let mut pinned = row(4, 100, 0, false);
        pinned.cpus_allowed = 0b10;
        let a = Top {
            now_ns: 0,
            nr_cpus: 2,
            tasks: vec![
                row(1, 100, 0, true),
                row(2, 100, 0, true),
                row(3, 800, 0, true),
                pinned.clone(),
            ],
            users: vec![],
        };
        let mut b = a.clone();
        b.now_ns = 1_000_000_000;
        b.tasks[0].runtime_ns = 500_000_000;
        b.tasks[1].runtime_ns = 500_000_000;
        b.tasks[2].runtime_ns = 1_000_000_000;
        let out = render(&a, &b, false);
        let line = |pid: &str| {
            out.lines()
                .find(|l| l.split_whitespace().next() == Some(pid))
                .unwrap()
                .to_string()
        };
        assert!(
            line("1").contains("25.0%") && line("2").contains("25.0%"),
            "{out}"
        );
        assert_eq!(line("3").matches("50.0%").count(), 2, "{out}");
        assert!(line("4").contains(" - "), "{out}");
        // A pinned runnable task beside a free one on 2 CPUs, values 1:9:
        // each is capped at one CPU, so 50% each, not 10%/90%.
        let mut p = row(5, 100, 0, true);
        p.cpus_allowed = 1;
        let a = Top {
            now_ns: 0,
            nr_cpus: 2,
            tasks: vec![p, row(6, 900, 0, true)],
            users: vec![],
        };
        let out = render(&a, &a.clone(), false);
        assert_eq!(out.matches("50.0%").count(), 2, "{out}");
    }

    #[test]
    fn a_task_started_between_samples_shows_its_time() {
        let a = Top {
            now_ns: 0,
            nr_cpus: 1,
            tasks: vec![row(1, 100, 0, true)],
            users: vec![],
        };
        let mut b = a.clone();
        b.now_ns = 1_000_000_000;
        b.tasks[0].runtime_ns = 700_000_000;
        b.tasks.push(row(2, 100, 300_000_000, true));
        let out = render(&a, &b, false);
        let line = out.lines().find(|l| l.contains(" t2 ")).unwrap();
        assert!(line.contains("30.0%"), "{out}");
    }

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
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
