//! tix-ctl: the control protocol of the `scx_tix` daemon and its client, kept
//! free of BPF so the `tix` CLI stays light. Permission rules follow Zepp's
//! set_process_tkts / set_base_tkts (seed 000 §4.1, modelled on nice).
//!
//! # Protocol
//!
//! A Unix stream socket (default [`DEFAULT_SOCKET`], mode 0666). The client
//! writes one JSON object per line (a [`Request`], tagged by `"op"`) and reads
//! one JSON line back (a [`Response`], tagged by `"result"`); a connection
//! may carry several requests. The daemon identifies the sender of each
//! request by the credentials the kernel attaches to what it writes
//! (SCM_CREDENTIALS: its pid and uid at the time of writing, as seen from
//! the initial namespaces), and grants privilege only for CAP_SYS_NICE in
//! the initial user namespace held by that sender ([`daemon`]).
//!
//! Limits ([`wire`]): a request line is at most 64 KiB; a connection must
//! complete a started line within 2 s and send its next within 30 s; an
//! answer the client does not read within 2 s closes the connection; each
//! uid holds at most 16 connections at once (256 in all). A client that
//! crosses a limit gets one error line (kind `bad_request` or `busy`) and
//! is disconnected; other clients are served meanwhile.
//!
//! ```text
//! → {"op":"status"}
//! ← {"result":"status","attached":true,"policy":"lottery",...}
//! → {"op":"set_tickets","pid":1234,"tickets":400}
//! ← {"result":"tickets","pid":1234,"tgid":1234,"tickets":400}
//! → {"op":"set_base","uid":1001,"base":5000}
//! ← {"result":"error","kind":"not_permitted","message":"..."}
//! ```
//!
//! Rules: anyone may read (`status`, `get_tickets`, `get_base`, `top`). The
//! owner of a process (same real uid) or a CAP_SYS_NICE holder may set its
//! tickets, 1..=10000; tickets are per process (tgid), any thread id names
//! its process. Base tickets are 100..=10000; only a CAP_SYS_NICE holder may
//! change another user's base or set any base above [`DEFAULT_BASE`].
//! `set_policy` needs CAP_SYS_NICE. A refused or invalid request changes
//! nothing.

pub mod daemon;
pub mod mach;
pub mod trace;
pub mod transfer;
pub mod wire;

use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// Where the daemon listens unless told otherwise.
pub const DEFAULT_SOCKET: &str = "/run/tix.sock";
/// Zepp's defaults and ranges (seed 000 §4.1; 1000 from his Table 4).
pub const DEFAULT_BASE: u64 = 1000;
pub const DEFAULT_TICKETS: u64 = 100;
pub const MIN_TICKETS: u64 = 1;
pub const MAX_TICKETS: u64 = 10_000;
pub const MIN_BASE: u64 = 100;
pub const MAX_BASE: u64 = 10_000;

/// The policies of the native kernel scheduler. Lottery and stride switch
/// while attached; RAS (seed 002's race-averse WRR) orders by arrival, so it
/// is chosen when scx_tix starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    Lottery,
    Stride,
    Ras,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Lottery => "lottery",
            Policy::Stride => "stride",
            Policy::Ras => "ras",
        }
    }
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "lottery" => Ok(Policy::Lottery),
            "stride" => Ok(Policy::Stride),
            "ras" => Ok(Policy::Ras),
            _ => Err(format!("unknown policy '{s}' (lottery, stride or ras)")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    Status,
    GetTickets {
        pid: u32,
    },
    SetTickets {
        pid: u32,
        tickets: u64,
    },
    GetBase {
        uid: u32,
    },
    SetBase {
        uid: u32,
        base: u64,
    },
    SetPolicy {
        policy: Policy,
    },
    Top,
    /// The Mach commands (seed 001 §4.5): create and remove a currency,
    /// fund it with tickets of another (None: its owner's own), unfund it,
    /// give a process tickets in a currency (None: its owner's own), list.
    MkCur {
        name: String,
    },
    RmCur {
        name: String,
    },
    Fund {
        name: String,
        amount: u64,
        from: Option<String>,
    },
    Unfund {
        name: String,
    },
    Hold {
        pid: u32,
        tickets: u64,
        currency: Option<String>,
    },
    ListCurrencies,
    ListTickets,
    /// Ticket transfers (seed 001 §3.3): lend tickets of `from` to `to`,
    /// for `secs` or until returned or either exits.
    Lend {
        from: u32,
        to: u32,
        amount: u64,
        secs: Option<u64>,
    },
    Return {
        id: u64,
    },
    ListLoans,
    /// Write tracing (seed 002 §1's start_trace/stop_trace/get_trace):
    /// count each thread's writes to [lo, hi) (default: all its memory).
    TraceStart {
        pid: u32,
        #[serde(default)]
        lo: Option<u64>,
        #[serde(default)]
        hi: Option<u64>,
    },
    /// Stop tracing; the answer holds the final counts.
    TraceStop {
        pid: u32,
    },
    TraceGet {
        pid: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    NoSuchProcess,
    NoSuchUser,
    NoSuchCurrency,
    OutOfRange,
    NotPermitted,
    BadRequest,
    /// A connection limit was reached; try again later.
    Busy,
    Internal,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub attached: bool,
    pub policy: Policy,
    pub compensation: bool,
    /// waldspurger, zepp, zepp-io or off (`scx_tix --compensation`).
    #[serde(default)]
    pub compensation_rule: String,
    pub slice_us: u64,
    /// Scheduling decisions (lottery or stride picks) per second, averaged
    /// over the daemon's last sampling interval.
    pub decisions_per_sec: f64,
    pub decisions: u64,
    /// Decisions in which the expired task won again and kept its CPU.
    pub prev_kept: u64,
    /// Decisions forced by the starvation guards: a DSQ unserved for
    /// starve_ns, or a task waiting past twice that.
    pub starve_serves: u64,
    /// Of starve_serves, the per-task guard's: a task that waited past
    /// twice starve_ns in a DSQ that was served meanwhile. None from a
    /// daemon that predates the count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aged_serves: Option<u64>,
    /// Wake-ups placed straight on an idle CPU (no contention, no draw).
    pub direct: u64,
    /// Wake-ups whose key beat a runner's position at its slice end and
    /// kicked its CPU to decide now (wake-up preemption); None from a
    /// daemon that predates the count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_kicks: Option<u64>,
    /// Run time past the longest slice and a tick, in ms: time the host
    /// did not run a vCPU, billed to the task on it. Room a share measured
    /// over a window may need; None from a daemon that predates the count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalled_ms: Option<u64>,
    /// The sum of each stalled stretch's square, in ms^2: with p(1-p) it
    /// is the variance (in ms^2) a stall adds to a task's CPU time of a
    /// window, when it was billed to the task with p of the runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalled_sq_ms2: Option<u64>,
    /// The per-task guard's looks (each CPU's every starve_ns/8) and the
    /// time they took, in us; None from a daemon that predates the count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard_scans: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard_us: Option<u64>,
    /// Entries full tables could not take since attach: threads whose
    /// process has no state entry (it runs at value 1), first wake-ups of a
    /// user with no runnable sum in a cgroup (value 1), tasks and users
    /// without statistics, cgroups valued as the root.
    #[serde(default)]
    pub lost: Lost,
    /// Processes with a state entry now, and the table's size.
    #[serde(default)]
    pub proc_states: u64,
    #[serde(default)]
    pub max_tasks: u64,
    /// cgroups (cpu controller) known to the scheduler, and how many of
    /// them set a cpu.max quota, which tix does not enforce.
    #[serde(default)]
    pub cgroups: u64,
    #[serde(default)]
    pub cgroups_cpu_max: u64,
}

impl Status {
    /// The compensation rule's name; a daemon from before rules had names
    /// said only on or off.
    pub fn compensation_name(&self) -> &str {
        match (self.compensation_rule.as_str(), self.compensation) {
            ("", true) => "on",
            ("", false) => "off",
            (rule, _) => rule,
        }
    }

    /// The status in the OpenMetrics text format (a Prometheus scrape or a
    /// node_exporter textfile): counters end in `_total`, the exposition
    /// ends with `# EOF`. Metric names are `tix_*`.
    pub fn to_openmetrics(&self) -> String {
        let mut o = attached_openmetrics(self.attached);
        let mut metric = |name: &str, kind: &str, help: &str, samples: &[(&str, String)]| {
            openmetrics_family(&mut o, name, kind, help, samples)
        };
        let pol = |p: Policy| (if p == self.policy { "1" } else { "0" }).to_string();
        metric(
            "tix_policy",
            "gauge",
            "The scheduling policy in force (1 on its label).",
            &[
                ("{policy=\"lottery\"}", pol(Policy::Lottery)),
                ("{policy=\"stride\"}", pol(Policy::Stride)),
            ],
        );
        metric(
            "tix_compensation",
            "gauge",
            "1 while compensation tickets are on.",
            &[("", u8::from(self.compensation).to_string())],
        );
        metric(
            "tix_slice_seconds",
            "gauge",
            "Slice length.",
            &[("", format!("{}", self.slice_us as f64 / 1e6))],
        );
        metric(
            "tix_decisions_per_second",
            "gauge",
            "Scheduling decisions per second over the last sampling interval.",
            &[("", format!("{:.3}", self.decisions_per_sec))],
        );
        metric(
            "tix_decisions",
            "counter",
            "Scheduling decisions (lottery or stride picks).",
            &[("", self.decisions.to_string())],
        );
        metric(
            "tix_prev_kept",
            "counter",
            "Decisions the expired task won, keeping its CPU.",
            &[("", self.prev_kept.to_string())],
        );
        metric(
            "tix_starvation_serves",
            "counter",
            "Decisions forced by the starvation guard.",
            &[("", self.starve_serves.to_string())],
        );
        if let Some(a) = self.aged_serves {
            metric(
                "tix_aged_serves",
                "counter",
                "Of the starvation serves, those of a task that waited past twice starve_ns.",
                &[("", a.to_string())],
            );
        }
        metric(
            "tix_direct_dispatches",
            "counter",
            "Wake-ups placed straight on an idle CPU.",
            &[("", self.direct.to_string())],
        );
        if let Some(k) = self.preempt_kicks {
            metric(
                "tix_preempt_kicks",
                "counter",
                "Wake-ups that cut a running task short to decide at once (a kick, or the woken task preempting its own CPU).",
                &[("", k.to_string())],
            );
        }
        if let (Some(n), Some(us)) = (self.guard_scans, self.guard_us) {
            metric(
                "tix_guard_scans",
                "counter",
                "The per-task starvation guard's looks at the waiting tasks.",
                &[("", n.to_string())],
            );
            metric(
                "tix_guard_seconds",
                "counter",
                "Time the per-task starvation guard's looks took.",
                &[("", format!("{}", us as f64 / 1e6))],
            );
        }
        if let Some(ms) = self.stalled_ms {
            metric(
                "tix_stalled_seconds",
                "counter",
                "Run time past the longest slice and a tick: time the host did not run a vCPU, billed to the task on it.",
                &[("", format!("{}", ms as f64 / 1e3))],
            );
        }
        let l = self.lost;
        metric(
            "tix_table_full",
            "counter",
            "Entries a full table turned away since attach.",
            &[
                ("{table=\"process_state\"}", l.proc_state.to_string()),
                ("{table=\"user_sums\"}", l.user_sums.to_string()),
                ("{table=\"task_stats\"}", l.task_stats.to_string()),
                ("{table=\"user_stats\"}", l.user_stats.to_string()),
                ("{table=\"cgroups\"}", l.cgroups.to_string()),
            ],
        );
        metric(
            "tix_process_states",
            "gauge",
            "Processes holding a state entry.",
            &[("", self.proc_states.to_string())],
        );
        metric(
            "tix_process_states_max",
            "gauge",
            "Size of the process state table (--max-tasks).",
            &[("", self.max_tasks.to_string())],
        );
        metric(
            "tix_cgroups",
            "gauge",
            "cgroups with the cpu controller, each a currency funded by its cpu.weight.",
            &[("", self.cgroups.to_string())],
        );
        metric(
            "tix_cgroups_cpu_max",
            "gauge",
            "cgroups that set a cpu.max quota, which tix does not enforce.",
            &[("", self.cgroups_cpu_max.to_string())],
        );
        o.push_str("# EOF\n");
        o
    }
}

/// One metric family: its TYPE and HELP lines, then one sample per label
/// set (a counter's samples end in `_total`).
fn openmetrics_family(
    o: &mut String,
    name: &str,
    kind: &str,
    help: &str,
    samples: &[(&str, String)],
) {
    o.push_str(&format!("# TYPE {name} {kind}\n# HELP {name} {help}\n"));
    let sample = if kind == "counter" {
        format!("{name}_total")
    } else {
        name.to_string()
    };
    for (labels, v) in samples {
        o.push_str(&format!("{sample}{labels} {v}\n"));
    }
}

/// The `tix_attached` family alone, unterminated.
fn attached_openmetrics(attached: bool) -> String {
    let mut o = String::new();
    openmetrics_family(
        &mut o,
        "tix_attached",
        "gauge",
        "1 while scx_tix is attached to the kernel.",
        &[("", u8::from(attached).to_string())],
    );
    o
}

impl Top {
    /// Per-task families in the OpenMetrics text format, unterminated (to
    /// sit before a status's `# EOF`): each task's lottery wins and CPU
    /// time as counters, its tickets and value as gauges, labelled by pid,
    /// tgid, uid and comm (a comm's quotes and backslashes escaped).
    pub fn tasks_openmetrics(&self) -> String {
        let label = |t: &TaskRow| {
            let comm: String = t
                .comm
                .chars()
                .flat_map(|c| match c {
                    '"' | '\\' => vec!['\\', c],
                    '\n' => vec!['\\', 'n'],
                    c => vec![c],
                })
                .collect();
            format!(
                "{{pid=\"{}\",tgid=\"{}\",uid=\"{}\",comm=\"{comm}\"}}",
                t.pid, t.tgid, t.uid
            )
        };
        let mut o = String::new();
        let mut family = |name: &str, kind: &str, help: &str, v: &dyn Fn(&TaskRow) -> String| {
            let samples: Vec<(String, String)> =
                self.tasks.iter().map(|t| (label(t), v(t))).collect();
            let refs: Vec<(&str, String)> = samples
                .iter()
                .map(|(l, v)| (l.as_str(), v.clone()))
                .collect();
            openmetrics_family(&mut o, name, kind, help, &refs)
        };
        family(
            "tix_task_wins",
            "counter",
            "Lotteries (or stride picks) the task won.",
            &|t| t.wins.to_string(),
        );
        family(
            "tix_task_cpu_seconds",
            "counter",
            "CPU time the task ran, seconds.",
            &|t| format!("{:.9}", t.runtime_ns as f64 / 1e9),
        );
        family(
            "tix_task_tickets",
            "gauge",
            "Tickets the task's process holds.",
            &|t| t.tickets.to_string(),
        );
        family(
            "tix_task_value",
            "gauge",
            "The task's value in base tickets at its last draw.",
            &|t| t.value.to_string(),
        );
        o
    }
}

/// What a scrape gets when no scheduler answers: `tix_attached 0`.
pub fn openmetrics_not_running() -> String {
    attached_openmetrics(false) + "# EOF\n"
}

/// See `Status::lost`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lost {
    pub proc_state: u64,
    pub user_sums: u64,
    pub task_stats: u64,
    pub user_stats: u64,
    #[serde(default)]
    pub cgroups: u64,
    /// Traced writes of threads the write count table could not take.
    #[serde(default)]
    pub wcounts: u64,
}

impl Lost {
    pub fn any(&self) -> bool {
        *self != Lost::default()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRow {
    pub pid: u32,
    pub tgid: u32,
    pub uid: u32,
    pub comm: String,
    /// Runnable now (state R in /proc).
    pub runnable: bool,
    pub tickets: u64,
    pub base: u64,
    /// Base-ticket value at its last draw.
    pub value: u64,
    pub wins: u64,
    pub runtime_ns: u64,
    /// Slices by tenth of the slice used (last bucket: 90..100 %).
    pub hist: Vec<u64>,
    /// CPUs it may run on, bit c = CPU c, for the first 64 CPUs
    /// (`Cpus_allowed` in /proc); all bits when unknown.
    #[serde(default = "all_cpus")]
    pub cpus_allowed: u64,
}

fn all_cpus() -> u64 {
    u64::MAX
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserRow {
    pub uid: u32,
    pub base: u64,
    pub wins: u64,
    pub runtime_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Top {
    /// Monotonic time of the sample, ns (to turn runtime deltas into shares).
    pub now_ns: u64,
    /// CPUs the scheduler serves (0 from a daemon that did not say).
    #[serde(default)]
    pub nr_cpus: u32,
    pub tasks: Vec<TaskRow>,
    pub users: Vec<UserRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Response {
    Error { kind: ErrorKind, message: String },
    Status(Box<Status>),
    Tickets { pid: u32, tgid: u32, tickets: u64 },
    Base { uid: u32, base: u64 },
    Policy { policy: Policy },
    Top(Top),
    Currency(CurrencyRow),
    Currencies { currencies: Vec<CurrencyRow> },
    Holdings { holdings: Vec<HoldingRow> },
    Loan(LoanRow),
    Loans { loans: Vec<LoanRow> },
    Trace(TraceReport),
}

/// A traced process's counts as `tix trace` shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceReport {
    pub tgid: u32,
    /// The traced range, [lo, hi).
    pub lo: u64,
    pub hi: u64,
    /// How often its pages are write-protected again, µs: a count is a
    /// write to a page within one such period.
    pub period_us: u64,
    pub threads: Vec<TraceThread>,
    /// Sum over `threads`.
    pub writes: u64,
    /// Tracing has ended (the answer to a stop).
    pub stopped: bool,
}

/// One thread's writes, and the RAS slice it was last given (0: none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceThread {
    pub tid: u32,
    pub writes: u64,
    pub race_prob: u32,
    pub slice_us: u64,
}

/// A loan as `tix lend` and `tix loans` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoanRow {
    pub id: u64,
    pub from: u32,
    pub to: u32,
    pub amount: u64,
    pub currency: String,
    /// Seconds until it returns by itself (None: on return or exit).
    pub secs_left: Option<u64>,
}

/// A currency as `tix lscur` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrencyRow {
    pub id: u32,
    pub name: String,
    pub owner: u32,
    /// The currency its funding is in: a name, or `user:UID` for the
    /// owner's own currency (funded by the owner's base).
    pub funded_by: String,
    /// Tickets of `funded_by` backing it (0: unfunded, worth nothing).
    pub amount: u64,
    /// Processes holding tickets in it, and currencies it funds.
    pub holders: u64,
    pub funds: u64,
}

/// A process's tickets as `tix lstkt` shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoldingRow {
    pub tgid: u32,
    pub tickets: u64,
    pub currency: String,
}

impl Response {
    pub fn error(kind: ErrorKind, message: impl Into<String>) -> Self {
        Response::Error {
            kind,
            message: message.into(),
        }
    }
}

/// Who is asking, as the daemon learned it from SO_PEERCRED and /proc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    pub pid: u32,
    pub uid: u32,
    pub cap_sys_nice: bool,
}

/// Check process tickets against 1..=10000.
pub fn check_tickets(t: u64) -> Result<u64, Response> {
    if (MIN_TICKETS..=MAX_TICKETS).contains(&t) {
        Ok(t)
    } else {
        Err(Response::error(
            ErrorKind::OutOfRange,
            format!("process tickets must be {MIN_TICKETS}..{MAX_TICKETS} (got {t})"),
        ))
    }
}

/// Check base tickets against 100..=10000.
pub fn check_base(b: u64) -> Result<u64, Response> {
    if (MIN_BASE..=MAX_BASE).contains(&b) {
        Ok(b)
    } else {
        Err(Response::error(
            ErrorKind::OutOfRange,
            format!("base tickets must be {MIN_BASE}..{MAX_BASE} (got {b})"),
        ))
    }
}

/// Zepp: the owner of a process or a CAP_SYS_NICE holder may set its tickets.
pub fn may_set_tickets(caller: &Caller, owner_uid: u32) -> bool {
    caller.cap_sys_nice || caller.uid == owner_uid
}

/// Zepp: only CAP_SYS_NICE may change another user's base tickets or raise
/// any above the default; a user may lower (and restore) their own.
pub fn may_set_base(caller: &Caller, target_uid: u32, base: u64) -> bool {
    caller.cap_sys_nice || (caller.uid == target_uid && base <= DEFAULT_BASE)
}

/// Errors of the client side.
#[derive(Debug)]
pub enum ClientError {
    /// No daemon listens at the socket.
    NotRunning(String),
    /// The daemon answered with an error.
    Refused {
        kind: ErrorKind,
        message: String,
    },
    Io(std::io::Error),
    Protocol(String),
    /// The daemon took longer than the client waits: to accept (nothing
    /// was sent) or to answer (the request may still be carried out).
    Timeout(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::NotRunning(p) => {
                write!(f, "scheduler not running (no scx_tix daemon at {p})")
            }
            ClientError::Refused { message, .. } => write!(f, "{message}"),
            ClientError::Io(e) => write!(f, "control socket: {e}"),
            ClientError::Protocol(m) => write!(f, "control protocol: {m}"),
            ClientError::Timeout(m) => write!(f, "control socket: {m}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// One request, one answer. An error answer becomes [`ClientError::Refused`].
/// The library call of a ticket transfer: lend `amount` of process
/// `from`'s tickets to `to` for the duration of a call (until [`give_back`],
/// `secs`, or either process's exit). Returns the loan's id.
pub fn lend(
    socket: &Path,
    from: u32,
    to: u32,
    amount: u64,
    secs: Option<u64>,
) -> Result<u64, ClientError> {
    match request(
        socket,
        &Request::Lend {
            from,
            to,
            amount,
            secs,
        },
    )? {
        Response::Loan(l) => Ok(l.id),
        other => Err(ClientError::Protocol(format!(
            "unexpected answer {other:?}"
        ))),
    }
}

/// End a loan made with [`lend`]: its tickets go back to the lender.
pub fn give_back(socket: &Path, id: u64) -> Result<(), ClientError> {
    match request(socket, &Request::Return { id })? {
        Response::Loan(_) => Ok(()),
        other => Err(ClientError::Protocol(format!(
            "unexpected answer {other:?}"
        ))),
    }
}

pub fn request(socket: &Path, req: &Request) -> Result<Response, ClientError> {
    request_within(socket, req, Duration::from_secs(10))
}

/// A read or write that ran out of time: the kernel reports it as
/// EAGAIN ("Resource temporarily unavailable"), which tells a user
/// nothing; seen when the daemon waited its turn on a CPU that 10^4
/// threads kept busy (vm/tests/70-scale.sh).
fn timed_out(e: std::io::Error, wait: Duration, sent: bool) -> ClientError {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            ClientError::Timeout(if sent {
                format!(
                    "no answer from the daemon within {} s; the request may still be carried out (check with tix status or tix lstkt)",
                    wait.as_secs_f64()
                )
            } else {
                format!(
                    "the daemon did not take the request within {} s; it was not delivered",
                    wait.as_secs_f64()
                )
            })
        }
        _ => ClientError::Io(e),
    }
}

fn request_within(socket: &Path, req: &Request, wait: Duration) -> Result<Response, ClientError> {
    let stream = connect(socket)?;
    stream
        .set_read_timeout(Some(wait))
        .map_err(ClientError::Io)?;
    stream
        .set_write_timeout(Some(wait))
        .map_err(ClientError::Io)?;
    let mut line = serde_json::to_string(req).map_err(|e| ClientError::Protocol(e.to_string()))?;
    line.push('\n');
    (&stream)
        .write_all(line.as_bytes())
        .map_err(|e| timed_out(e, wait, false))?;
    let mut answer = String::new();
    BufReader::new(&stream)
        .read_line(&mut answer)
        .map_err(|e| timed_out(e, wait, true))?;
    if answer.is_empty() {
        return Err(ClientError::Protocol("daemon closed the connection".into()));
    }
    match serde_json::from_str::<Response>(&answer) {
        Ok(Response::Error { kind, message }) => Err(ClientError::Refused { kind, message }),
        Ok(r) => Ok(r),
        Err(e) => Err(ClientError::Protocol(format!("bad answer: {e}"))),
    }
}

/// Connect, retrying for up to 5 s while the daemon's backlog is full
/// (EAGAIN): a burst of other clients delays a request, it does not fail it.
fn connect(socket: &Path) -> Result<UnixStream, ClientError> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut pause = Duration::from_millis(1);
    loop {
        match UnixStream::connect(socket) {
            Ok(s) => return Ok(s),
            Err(e) => {
                match e.kind() {
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
                        return Err(ClientError::NotRunning(socket.display().to_string()))
                    }
                    std::io::ErrorKind::WouldBlock if std::time::Instant::now() < deadline => {
                        std::thread::sleep(pause);
                        pause = (pause * 2).min(Duration::from_millis(100));
                    }
                    std::io::ErrorKind::WouldBlock => return Err(ClientError::Timeout(
                        "the daemon's queue of connections stayed full for 5 s; nothing was sent"
                            .into(),
                    )),
                    _ => return Err(ClientError::Io(e)),
                }
            }
        }
    }
}

/// A count from the command line (tickets, bases): digits only.
pub fn parse_number(s: &str, what: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("{what} must be a number (got '{}')", s.escape_debug()))
}

/// A pid from the command line: a positive number.
pub fn parse_pid(s: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| format!("PID must be a positive number (got '{}')", s.escape_debug()))
}

/// uid of a user name (or a numeric uid) from /etc/passwd.
pub fn uid_of(user: &str) -> Option<u32> {
    if let Ok(u) = user.parse::<u32>() {
        return Some(u);
    }
    let pw = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd_uid(&pw, user)
}

/// The uid of `name` in passwd-format text.
pub fn passwd_uid(passwd: &str, name: &str) -> Option<u32> {
    passwd.lines().find_map(|l| {
        let mut f = l.split(':');
        (f.next()? == name).then_some(())?;
        f.nth(1)?.parse().ok()
    })
}

#[cfg(test)]
mod tests {

    /// A daemon that accepts and never answers: the client says so in
    /// words, not as EAGAIN.
    #[test]
    fn a_silent_daemon_is_reported_as_a_timeout() {
        let path = std::env::temp_dir().join(format!("tix-silent-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let held = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            std::thread::sleep(Duration::from_millis(600));
            drop(s);
        });
        let e = request_within(&path, &Request::Status, Duration::from_millis(200)).unwrap_err();
        held.join().unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(matches!(e, ClientError::Timeout(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "control socket: no answer from the daemon within 0.2 s; the request may still be carried out (check with tix status or tix lstkt)"
        );
    }

    #[test]
    fn compensation_is_named_by_rule_or_on_off() {
        let mut s: Status = serde_json::from_str(
            r#"{"attached":true,"policy":"lottery","compensation":true,"slice_us":3500,"decisions_per_sec":0.0,"decisions":0,"prev_kept":0,"starve_serves":0,"direct":0}"#,
        )
        .unwrap();
        // A daemon from before the kick count: not reported, not zero.
        assert_eq!(s.preempt_kicks, None);
        assert!(!s.to_openmetrics().contains("tix_preempt_kicks"));
        assert_eq!(s.aged_serves, None);
        assert!(!s.to_openmetrics().contains("tix_aged_serves"));
        assert_eq!(s.stalled_ms, None);
        assert!(!s.to_openmetrics().contains("tix_stalled"));
        assert_eq!(s.compensation_name(), "on");
        s.compensation = false;
        assert_eq!(s.compensation_name(), "off");
        s.compensation_rule = "zepp-io".into();
        assert_eq!(s.compensation_name(), "zepp-io");
    }

    #[test]
    fn tasks_render_as_openmetrics() {
        let row = |pid: u32, comm: &str| TaskRow {
            pid,
            tgid: pid,
            uid: 1001,
            comm: comm.into(),
            runnable: true,
            tickets: 300,
            base: 1000,
            value: 750,
            wins: 42,
            runtime_ns: 1_500_000_000,
            hist: vec![0; 10],
            cpus_allowed: u64::MAX,
        };
        let top = Top {
            now_ns: 1,
            nr_cpus: 2,
            tasks: vec![row(7, "hog"), row(8, "we\"ird\\")],
            users: vec![],
        };
        let m = top.tasks_openmetrics();
        assert!(m.contains("# TYPE tix_task_wins counter\n"), "{m}");
        assert!(
            m.contains("tix_task_wins_total{pid=\"7\",tgid=\"7\",uid=\"1001\",comm=\"hog\"} 42\n"),
            "{m}"
        );
        assert!(m.contains("tix_task_cpu_seconds_total{pid=\"7\",tgid=\"7\",uid=\"1001\",comm=\"hog\"} 1.500000000\n"), "{m}");
        assert!(
            m.contains(
                "tix_task_value{pid=\"8\",tgid=\"8\",uid=\"1001\",comm=\"we\\\"ird\\\\\"} 750\n"
            ),
            "{m}"
        );
        assert!(!m.contains("# EOF"));
    }

    #[test]
    fn status_renders_as_openmetrics() {
        let s = Status {
            attached: true,
            policy: Policy::Stride,
            compensation: false,
            compensation_rule: "off".into(),
            slice_us: 3500,
            decisions_per_sec: 812.5,
            decisions: 40_000,
            prev_kept: 7,
            starve_serves: 2,
            aged_serves: Some(1),
            direct: 3,
            preempt_kicks: Some(5),
            stalled_ms: Some(1250),
            stalled_sq_ms2: Some(9000),
            guard_scans: Some(3),
            guard_us: Some(1500),
            lost: Lost {
                proc_state: 1,
                ..Lost::default()
            },
            proc_states: 82,
            max_tasks: 65_536,
            cgroups: 12,
            cgroups_cpu_max: 1,
        };
        let m = s.to_openmetrics();
        for line in [
            "tix_attached 1",
            "tix_policy{policy=\"lottery\"} 0",
            "tix_policy{policy=\"stride\"} 1",
            "tix_compensation 0",
            "tix_slice_seconds 0.0035",
            "tix_decisions_per_second 812.500",
            "tix_decisions_total 40000",
            "tix_preempt_kicks_total 5",
            "tix_starvation_serves_total 2",
            "tix_aged_serves_total 1",
            "tix_stalled_seconds_total 1.25",
            "tix_guard_scans_total 3",
            "tix_guard_seconds_total 0.0015",
            "tix_table_full_total{table=\"process_state\"} 1",
            "tix_process_states_max 65536",
            "tix_cgroups 12",
            "tix_cgroups_cpu_max 1",
        ] {
            assert!(m.lines().any(|l| l == line), "{line} missing from:\n{m}");
        }
        assert!(m.ends_with("# EOF\n"));
        // Every sample follows its own TYPE line; counters' samples end in _total.
        let mut kind = ("", "");
        for l in m.lines() {
            if let Some(t) = l.strip_prefix("# TYPE ") {
                let (n, k) = t.split_once(' ').unwrap();
                kind = (n, k);
            } else if !l.starts_with('#') {
                let name = l.split(['{', ' ']).next().unwrap();
                let want = if kind.1 == "counter" {
                    format!("{}_total", kind.0)
                } else {
                    kind.0.to_string()
                };
                assert_eq!(name, want, "{l}");
            }
        }
    }

    use super::*;

    fn user(uid: u32) -> Caller {
        Caller {
            pid: 1,
            uid,
            cap_sys_nice: false,
        }
    }

    #[test]
    fn requests_round_trip_as_documented() {
        let r = Request::SetTickets {
            pid: 7,
            tickets: 400,
        };
        let s = serde_json::to_string(&r).unwrap();
        assert_eq!(s, r#"{"op":"set_tickets","pid":7,"tickets":400}"#);
        assert_eq!(serde_json::from_str::<Request>(&s).unwrap(), r);
        let s = serde_json::to_string(&Request::Status).unwrap();
        assert_eq!(s, r#"{"op":"status"}"#);
        let e = Response::error(ErrorKind::NotPermitted, "no");
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"result":"error","kind":"not_permitted","message":"no"}"#
        );
        assert!(serde_json::from_str::<Request>(r#"{"op":"reboot"}"#).is_err());
    }

    #[test]
    fn zepp_permission_rules() {
        let alice = user(1001);
        let root = Caller {
            pid: 1,
            uid: 0,
            cap_sys_nice: true,
        };
        assert!(may_set_tickets(&alice, 1001));
        assert!(!may_set_tickets(&alice, 1002));
        assert!(may_set_tickets(&root, 1002));
        // Own base: down and back up to the default, never above.
        assert!(may_set_base(&alice, 1001, 500));
        assert!(may_set_base(&alice, 1001, DEFAULT_BASE));
        assert!(!may_set_base(&alice, 1001, DEFAULT_BASE + 1));
        assert!(!may_set_base(&alice, 1002, 500));
        assert!(may_set_base(&root, 1002, 10_000));
        // uid 0 without the capability is an ordinary user here.
        assert!(!may_set_base(&user(0), 1001, 500));
    }

    #[test]
    fn passwd_lookup() {
        let pw = "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001::/home/alice:/bin/sh\n";
        assert_eq!(passwd_uid(pw, "alice"), Some(1001));
        assert_eq!(passwd_uid(pw, "root"), Some(0));
        assert_eq!(passwd_uid(pw, "bob"), None);
        assert_eq!(uid_of("1234"), Some(1234));
    }

    #[test]
    fn ranges() {
        assert!(check_tickets(0).is_err());
        assert!(check_tickets(1).is_ok());
        assert!(check_tickets(10_000).is_ok());
        assert!(check_tickets(10_001).is_err());
        assert!(check_base(99).is_err());
        assert!(check_base(100).is_ok());
        assert!(check_base(10_001).is_err());
    }

    #[test]
    fn client_reports_missing_daemon() {
        let p = Path::new("/nonexistent-dir-tix/tix.sock");
        match request(p, &Request::Status) {
            Err(ClientError::NotRunning(s)) => assert!(s.contains("nonexistent")),
            other => panic!("expected NotRunning, got {other:?}"),
        }
    }
}
