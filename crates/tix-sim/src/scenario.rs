//! TOML scenario files (schema in SCENARIOS.md): parsed by hand from the
//! TOML tree so that every error names the file, the field (`client[2].run`)
//! and what was expected.

use crate::error::{Result, SimError};
use crate::model::*;
use toml::{Table, Value};

const TIME_UNITS: [(&str, f64); 4] = [("_s", 1e9), ("_ms", 1e6), ("_us", 1e3), ("_ns", 1.0)];

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn err(&self, field: &str, expected: impl Into<String>) -> SimError {
        SimError::scenario(self.file, field, expected)
    }

    fn check_keys(&self, t: &Table, path: &str, allowed: &[&str]) -> Result<()> {
        for k in t.keys() {
            let ok = allowed.iter().any(|a| {
                if let Some(stem) = a.strip_suffix("_*") {
                    TIME_UNITS
                        .iter()
                        .any(|(suf, _)| k.strip_suffix(suf) == Some(stem))
                } else {
                    a == k
                }
            });
            if !ok {
                let names: Vec<String> = allowed
                    .iter()
                    .map(|a| a.replace("_*", "_s|_ms|_us|_ns"))
                    .collect();
                return Err(self.err(
                    &join(path, k),
                    format!("one of the known fields ({})", names.join(", ")),
                ));
            }
        }
        Ok(())
    }

    fn uint(&self, t: &Table, path: &str, key: &str) -> Result<Option<u64>> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) if *i >= 0 => Ok(Some(*i as u64)),
            Some(_) => Err(self.err(&join(path, key), "a non-negative integer")),
        }
    }

    fn string(&self, t: &Table, path: &str, key: &str) -> Result<Option<String>> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.err(&join(path, key), "a string")),
        }
    }

    /// A time given as `stem_s`, `stem_ms`, `stem_us` or `stem_ns`.
    fn time(&self, t: &Table, path: &str, stem: &str) -> Result<Option<u64>> {
        let mut found = None;
        for (suf, scale) in TIME_UNITS {
            let key = format!("{stem}{suf}");
            if let Some(v) = t.get(&key) {
                if found.is_some() {
                    return Err(self.err(
                        &join(path, &key),
                        format!("only one of {stem}_s/_ms/_us/_ns"),
                    ));
                }
                let x = match v {
                    Value::Integer(i) => *i as f64,
                    Value::Float(f) => *f,
                    _ => return Err(self.err(&join(path, &key), "a number (time)")),
                };
                if !(x >= 0.0 && x * scale < 1.8e19) {
                    return Err(self.err(&join(path, &key), "a non-negative time below 584 years"));
                }
                found = Some((x * scale).round() as u64);
            }
        }
        Ok(found)
    }

    /// A length distribution: a plain time (`run_ms = 5`) or an inline
    /// table (`run = { dist = "exp", mean_ms = 5 }`).
    fn dist(&self, t: &Table, path: &str, stem: &str) -> Result<Option<Dist>> {
        if let Some(ns) = self.time(t, path, stem)? {
            if t.contains_key(stem) {
                return Err(self.err(
                    &join(path, stem),
                    format!("either {stem} or {stem}_ms, not both"),
                ));
            }
            return Ok(Some(Dist::Const { ns }));
        }
        let Some(v) = t.get(stem) else {
            return Ok(None);
        };
        let p = join(path, stem);
        let Value::Table(d) = v else {
            return Err(self.err(&p, "a table such as { dist = \"exp\", mean_ms = 5 }"));
        };
        self.check_keys(d, &p, &["dist", "mean_*", "lo_*", "hi_*", "value_*"])?;
        let kind = self
            .string(d, &p, "dist")?
            .unwrap_or_else(|| "const".into());
        let need = |stem2: &str| -> Result<u64> {
            self.time(d, &p, stem2)?
                .ok_or_else(|| self.err(&join(&p, &format!("{stem2}_ms")), "a time"))
        };
        Ok(Some(match kind.as_str() {
            "const" => Dist::Const { ns: need("value")? },
            "exp" => Dist::Exp {
                mean_ns: need("mean")?,
            },
            "uniform" => {
                let (lo_ns, hi_ns) = (need("lo")?, need("hi")?);
                if lo_ns > hi_ns {
                    return Err(self.err(&join(&p, "hi_ms"), "hi at least lo"));
                }
                Dist::Uniform { lo_ns, hi_ns }
            }
            _ => return Err(self.err(&join(&p, "dist"), "\"const\", \"exp\" or \"uniform\"")),
        }))
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn tables<'a>(cx: &Ctx, root: &'a Table, key: &str) -> Result<Vec<&'a Table>> {
    match root.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Table(t) => Ok(t),
                _ => Err(cx.err(&format!("{key}[{i}]"), format!("a table ([[{key}]])"))),
            })
            .collect(),
        Some(_) => Err(cx.err(key, format!("an array of tables ([[{key}]])"))),
    }
}

/// Parse a scenario from its text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<System> {
    let cx = Ctx { file };
    let root: Table = text.parse::<Table>().map_err(|e| {
        let msg = e.message().to_string();
        cx.err("(syntax)", format!("valid TOML ({msg})"))
    })?;
    cx.check_keys(&root, "", &["sim", "user", "currency", "client", "event"])?;
    let sim = match root.get("sim") {
        Some(Value::Table(t)) => t.clone(),
        Some(_) => return Err(cx.err("sim", "a table [sim]")),
        None => return Err(cx.err("sim", "a [sim] table with at least algo and duration_s")),
    };
    cx.check_keys(
        &sim,
        "sim",
        &[
            "algo",
            "cpus",
            "queue",
            "balance",
            "balance_*",
            "quantum_*",
            "seed",
            "duration_*",
            "sample_*",
        ],
    )?;
    let algo = cx
        .string(&sim, "sim", "algo")?
        .ok_or_else(|| cx.err("sim.algo", "a policy name, e.g. \"lottery\""))?;
    let algos = crate::policy::algos();
    if !algos.is_empty() && !algos.contains(&algo.as_str()) {
        return Err(cx.err("sim.algo", format!("one of {}", algos.join(", "))));
    }
    let duration = cx.time(&sim, "sim", "duration")?.ok_or_else(|| {
        cx.err(
            "sim.duration_s",
            "the length of the run (e.g. duration_s = 60)",
        )
    })?;
    if duration == 0 {
        return Err(cx.err("sim.duration_s", "a positive time"));
    }
    let mut cfg = SimConfig::new(&algo, duration);
    if let Some(c) = cx.uint(&sim, "sim", "cpus")? {
        if c == 0 || c > 1024 {
            return Err(cx.err("sim.cpus", "1..=1024"));
        }
        cfg.cpus = c as usize;
    }
    if let Some(q) = cx.string(&sim, "sim", "queue")? {
        cfg.queue = match q.as_str() {
            "shared" => QueueMode::Shared,
            "per-cpu" => QueueMode::PerCpu,
            _ => return Err(cx.err("sim.queue", "\"shared\" or \"per-cpu\"")),
        };
    }
    if let Some(b) = cx.string(&sim, "sim", "balance")? {
        cfg.balance = match b.as_str() {
            "none" => Balance::None,
            "cfs" => Balance::Cfs,
            "shuttle" => Balance::Shuttle,
            _ => return Err(cx.err("sim.balance", "\"none\", \"cfs\" or \"shuttle\"")),
        };
        if cfg.balance != Balance::None && cfg.queue != QueueMode::PerCpu {
            return Err(cx.err("sim.balance", "balancing only with queue = \"per-cpu\""));
        }
    }
    for (stem, slot) in [
        ("balance", &mut cfg.balance_ns),
        ("quantum", &mut cfg.quantum_ns),
        ("sample", &mut cfg.sample_ns),
    ] {
        if let Some(v) = cx.time(&sim, "sim", stem)? {
            if v == 0 {
                return Err(cx.err(&format!("sim.{stem}_ms"), "a positive time"));
            }
            *slot = v;
        }
    }
    if duration / cfg.sample_ns > 1_000_000 {
        return Err(cx.err(
            "sim.sample_ms",
            "at most 1,000,000 samples per run (a longer interval)",
        ));
    }
    if let Some(s) = cx.uint(&sim, "sim", "seed")? {
        cfg.seed = s;
    }
    let mut sys = System::new(cfg);

    for (i, u) in tables(&cx, &root, "user")?.into_iter().enumerate() {
        let p = format!("user[{i}]");
        cx.check_keys(u, &p, &["name", "base"])?;
        let name = cx
            .string(u, &p, "name")?
            .ok_or_else(|| cx.err(&join(&p, "name"), "a name"))?;
        if sys.users.iter().any(|x| x.name == name) {
            return Err(cx.err(
                &join(&p, "name"),
                format!("a unique user name ('{name}' repeats)"),
            ));
        }
        let base = cx
            .uint(u, &p, "base")?
            .unwrap_or(tix_core::zepp::DEFAULT_BASE);
        tix_core::zepp::check_base_tickets(base)
            .map_err(|_| cx.err(&join(&p, "base"), "base tickets in 100..=10000 (Zepp §4.1)"))?;
        sys.user(&name, base);
    }

    for (i, c) in tables(&cx, &root, "currency")?.into_iter().enumerate() {
        let p = format!("currency[{i}]");
        cx.check_keys(c, &p, &["name", "from", "amount"])?;
        let name = cx
            .string(c, &p, "name")?
            .ok_or_else(|| cx.err(&join(&p, "name"), "a name"))?;
        if name == "base" || sys.currencies.iter().any(|x| x.name == name) {
            return Err(cx.err(
                &join(&p, "name"),
                format!("a unique currency name other than 'base' ('{name}')"),
            ));
        }
        let from =
            match cx.string(c, &p, "from")?.as_deref() {
                None | Some("base") => None,
                Some(f) => Some(sys.currencies.iter().position(|x| x.name == f).ok_or_else(
                    || {
                        cx.err(
                            &join(&p, "from"),
                            format!("\"base\" or a currency defined above ('{f}' is not)"),
                        )
                    },
                )?),
            };
        let amount = cx
            .uint(c, &p, "amount")?
            .filter(|&a| (1..=tix_core::MAX_WEIGHT).contains(&a))
            .ok_or_else(|| {
                cx.err(
                    &join(&p, "amount"),
                    format!("the backing tickets, 1..={}", tix_core::MAX_WEIGHT),
                )
            })?;
        sys.currency(&name, from, amount);
    }
    if !sys.currencies.is_empty() && !sys.users.is_empty() {
        return Err(cx.err(
            "currency",
            "either [[user]] (Zepp's one level) or [[currency]] tables, not both",
        ));
    }

    let client_tables = tables(&cx, &root, "client")?;
    // Callers whose server is named: (client, server name, field path).
    let mut pending_calls: Vec<(usize, String, String)> = Vec::new();
    let mut client_index: std::collections::HashMap<String, usize> =
        std::collections::HashMap::new();
    let mut first_of_process: std::collections::HashMap<String, usize> =
        std::collections::HashMap::new();
    if client_tables.is_empty() {
        return Err(cx.err("client", "at least one [[client]]"));
    }
    for (i, c) in client_tables.into_iter().enumerate() {
        let p = format!("client[{i}]");
        cx.check_keys(
            c,
            &p,
            &[
                "name",
                "tickets",
                "user",
                "currency",
                "process",
                "count",
                "behaviour",
                "run",
                "run_*",
                "block",
                "block_*",
                "period_*",
                "work_*",
                "arrive_*",
                "exit_*",
                "cpu",
                "server",
                "query_*",
                "think",
                "think_*",
                "queries",
            ],
        )?;
        let name = cx
            .string(c, &p, "name")?
            .ok_or_else(|| cx.err(&join(&p, "name"), "a name"))?;
        let tickets = cx.uint(c, &p, "tickets")?.unwrap_or(100);
        if tickets > tix_core::MAX_WEIGHT {
            return Err(cx.err(
                &join(&p, "tickets"),
                format!("at most {}", tix_core::MAX_WEIGHT),
            ));
        }
        let user = match cx.string(c, &p, "user")? {
            None => None,
            Some(u) => Some(sys.users.iter().position(|x| x.name == u).ok_or_else(|| {
                cx.err(
                    &join(&p, "user"),
                    format!("a user defined in [[user]] ('{u}' is not)"),
                )
            })?),
        };
        let currency =
            match cx.string(c, &p, "currency")?.as_deref() {
                None | Some("base") => None,
                Some(k) => Some(sys.currencies.iter().position(|x| x.name == k).ok_or_else(
                    || {
                        cx.err(
                            &join(&p, "currency"),
                            format!(
                                "\"base\" or a currency defined in [[currency]] ('{k}' is not)"
                            ),
                        )
                    },
                )?),
            };
        if user.is_none() && !sys.users.is_empty() {
            return Err(cx.err(
                &join(&p, "user"),
                "a user: once [[user]] tables exist every client names one",
            ));
        }
        if user.is_some() && tickets == 0 {
            return Err(cx.err(
                &join(&p, "tickets"),
                "process tickets 1..=10000 for a client of a user",
            ));
        }
        let count = cx.uint(c, &p, "count")?.unwrap_or(1);
        if count == 0 || count > 100_000 {
            return Err(cx.err(&join(&p, "count"), "1..=100000"));
        }
        let behaviour = match cx.string(c, &p, "behaviour")?.as_deref().unwrap_or("cpu") {
            "cpu" => Behaviour::Cpu,
            "io" => Behaviour::Io {
                run: cx.dist(c, &p, "run")?.ok_or_else(|| {
                    cx.err(&join(&p, "run_ms"), "a run length for behaviour = \"io\"")
                })?,
                block: cx.dist(c, &p, "block")?.ok_or_else(|| {
                    cx.err(
                        &join(&p, "block_ms"),
                        "a block length for behaviour = \"io\"",
                    )
                })?,
            },
            "periodic" => {
                let period_ns = cx
                    .time(c, &p, "period")?
                    .filter(|&v| v > 0)
                    .ok_or_else(|| {
                        cx.err(
                            &join(&p, "period_ms"),
                            "a positive period for behaviour = \"periodic\"",
                        )
                    })?;
                let work_ns = cx.time(c, &p, "work")?.ok_or_else(|| {
                    cx.err(
                        &join(&p, "work_ms"),
                        "the work per period for behaviour = \"periodic\"",
                    )
                })?;
                Behaviour::Periodic { period_ns, work_ns }
            }
            "calls" => {
                let server = cx.string(c, &p, "server")?.ok_or_else(|| {
                    cx.err(
                        &join(&p, "server"),
                        "the name of a behaviour = \"server\" client",
                    )
                })?;
                let query_ns = cx.time(c, &p, "query")?.filter(|&v| v > 0).ok_or_else(|| {
                    cx.err(
                        &join(&p, "query_ms"),
                        "a positive CPU cost per query for behaviour = \"calls\"",
                    )
                })?;
                let queries = cx.uint(c, &p, "queries")?;
                if queries == Some(0) {
                    return Err(
                        cx.err(&join(&p, "queries"), "at least 1 (leave it out for no end)")
                    );
                }
                if !sys.users.is_empty() || !sys.currencies.is_empty() {
                    return Err(cx.err(
                        &join(&p, "behaviour"),
                        "\"calls\" only in a system without [[user]] and [[currency]] tables (a loan moves process tickets)",
                    ));
                }
                if count != 1 {
                    return Err(cx.err(
                        &join(&p, "count"),
                        "1 for behaviour = \"calls\" (one caller per server)",
                    ));
                }
                pending_calls.push((sys.clients.len(), server, join(&p, "server")));
                Behaviour::Calls {
                    server: usize::MAX,
                    query_ns,
                    think: cx.dist(c, &p, "think")?,
                    queries,
                }
            }
            "server" => Behaviour::Server,
            _ => {
                return Err(cx.err(
                    &join(&p, "behaviour"),
                    "\"cpu\", \"io\", \"periodic\", \"calls\" or \"server\"",
                ))
            }
        };
        let work_ns = match behaviour {
            Behaviour::Periodic { .. } => None,
            _ => cx.time(c, &p, "work")?,
        };
        if work_ns == Some(0) {
            return Err(cx.err(&join(&p, "work_ms"), "a positive amount of work"));
        }
        let cpu = cx.uint(c, &p, "cpu")?;
        if let Some(k) = cpu {
            if k as usize >= sys.config.cpus {
                return Err(cx.err(
                    &join(&p, "cpu"),
                    format!("a cpu index below sim.cpus = {}", sys.config.cpus),
                ));
            }
        }
        let arrive_ns = cx.time(c, &p, "arrive")?.unwrap_or(0);
        let exit_ns = cx.time(c, &p, "exit")?;
        let process = cx.string(c, &p, "process")?;
        for k in 0..count {
            let n = if count == 1 {
                name.clone()
            } else {
                format!("{name}.{k}")
            };
            if client_index.contains_key(&n) {
                return Err(cx.err(
                    &join(&p, "name"),
                    format!("a unique client name ('{n}' repeats)"),
                ));
            }
            let proc_name = process.clone().unwrap_or_else(|| n.clone());
            if let Some(&o) = first_of_process.get(&proc_name) {
                let other = &sys.clients[o];
                if other.tickets != tickets || other.user != user {
                    return Err(cx.err(
                        &join(&p, "tickets"),
                        format!("the same tickets and user as the other threads of process '{proc_name}'"),
                    ));
                }
            }
            client_index.insert(n.clone(), sys.clients.len());
            first_of_process
                .entry(proc_name.clone())
                .or_insert(sys.clients.len());
            sys.clients.push(ClientSpec {
                name: n,
                tickets,
                user,
                currency,
                process: proc_name,
                arrive_ns,
                exit_ns,
                work_ns,
                behaviour: behaviour.clone(),
                cpu: cpu.map(|k| k as usize),
            });
        }
    }

    // Each caller's server, by name, now that every client is known.
    let mut served = std::collections::HashSet::new();
    for (g, name, path) in pending_calls {
        let srv = match client_index.get(&name) {
            Some(&k) if sys.clients[k].behaviour == Behaviour::Server => k,
            _ => {
                return Err(cx.err(
                    &path,
                    format!("a client with behaviour = \"server\" ('{name}' is not one)"),
                ))
            }
        };
        if !served.insert(srv) {
            return Err(cx.err(
                &path,
                format!("a server of its own ('{name}' already has a caller)"),
            ));
        }
        if let Behaviour::Calls { server, .. } = &mut sys.clients[g].behaviour {
            *server = srv;
        }
    }

    check_work(&cx, &sys)?;

    let find = |p: &str, key: &str, t: &Table| -> Result<usize> {
        let n = cx
            .string(t, p, key)?
            .ok_or_else(|| cx.err(&join(p, key), "a client name"))?;
        client_index.get(&n).copied().ok_or_else(|| {
            cx.err(
                &join(p, key),
                format!("a client defined in [[client]] ('{n}' is not)"),
            )
        })
    };
    let mut events = Vec::new();
    for (i, e) in tables(&cx, &root, "event")?.into_iter().enumerate() {
        let p = format!("event[{i}]");
        cx.check_keys(
            e,
            &p,
            &[
                "at_*", "action", "client", "tickets", "user", "base", "currency", "amount",
                "from", "to", "cpu",
            ],
        )?;
        let at_ns = cx
            .time(e, &p, "at")?
            .ok_or_else(|| cx.err(&join(&p, "at_s"), "the time of the event"))?;
        let need_uint = |key: &str, what: &str| -> Result<u64> {
            cx.uint(e, &p, key)?
                .ok_or_else(|| cx.err(&join(&p, key), what.to_string()))
        };
        let action = match cx.string(e, &p, "action")?.as_deref() {
            Some("tickets") => {
                let tickets = need_uint("tickets", "the new tickets")?;
                if tickets > tix_core::MAX_WEIGHT {
                    return Err(cx.err(
                        &join(&p, "tickets"),
                        format!("at most {}", tix_core::MAX_WEIGHT),
                    ));
                }
                Action::Tickets {
                    client: find(&p, "client", e)?,
                    tickets,
                }
            }
            Some("fund") if e.contains_key("currency") => {
                let k = cx.string(e, &p, "currency")?.unwrap_or_default();
                let currency =
                    sys.currencies
                        .iter()
                        .position(|x| x.name == k)
                        .ok_or_else(|| {
                            cx.err(&join(&p, "currency"), "a currency defined in [[currency]]")
                        })?;
                let amount = need_uint("amount", "the new backing amount")?;
                if amount == 0 || amount > tix_core::MAX_WEIGHT {
                    return Err(
                        cx.err(&join(&p, "amount"), format!("1..={}", tix_core::MAX_WEIGHT))
                    );
                }
                Action::FundCurrency { currency, amount }
            }
            Some("fund") => {
                let u = cx.string(e, &p, "user")?.unwrap_or_default();
                let user = sys
                    .users
                    .iter()
                    .position(|x| x.name == u)
                    .ok_or_else(|| cx.err(&join(&p, "user"), "a user defined in [[user]]"))?;
                let base = need_uint("base", "the new base tickets")?;
                tix_core::zepp::check_base_tickets(base)
                    .map_err(|_| cx.err(&join(&p, "base"), "base tickets in 100..=10000"))?;
                Action::Fund { user, base }
            }
            Some("transfer") => Action::Transfer {
                from: find(&p, "from", e)?,
                to: find(&p, "to", e)?,
                tickets: need_uint("tickets", "the tickets to transfer")?,
            },
            Some("exit") => Action::Exit {
                client: find(&p, "client", e)?,
            },
            Some("migrate") => {
                let cpu = need_uint("cpu", "the target cpu")? as usize;
                if cpu >= sys.config.cpus {
                    return Err(cx.err(&join(&p, "cpu"), "a cpu index below sim.cpus"));
                }
                Action::Migrate {
                    client: find(&p, "client", e)?,
                    cpu,
                }
            }
            _ => {
                return Err(cx.err(
                    &join(&p, "action"),
                    "\"tickets\", \"fund\", \"transfer\", \"exit\" or \"migrate\"",
                ))
            }
        };
        events.push(TimedEvent { at_ns, action });
    }
    sys.events = events;
    let samples = sys.config.duration_ns / sys.config.sample_ns + 2;
    if samples.saturating_mul(sys.clients.len() as u64) > 50_000_000 {
        return Err(cx.err(
            "sim.sample_ms",
            format!(
                "a longer interval: {} clients × {samples} samples exceeds the 50,000,000 points a run may record",
                sys.clients.len()
            ),
        ));
    }
    Ok(sys)
}

/// Most events (quanta, I/O cycles, periods) a scenario may ask of the
/// engine: about a minute of simulation at its speed.
pub const MAX_EVENTS: f64 = 2e9;

/// Refuse scenarios that would never end or run for hours: an I/O client
/// whose run and block are both zero loops in zero time, and a quantum or
/// period far below the horizon asks for more events than [`MAX_EVENTS`].
/// The error names the field that contributes most.
fn check_work(cx: &Ctx, sys: &System) -> Result<()> {
    let c = &sys.config;
    let horizon = c.duration_ns as f64;
    let mut worst = (
        c.cpus as f64 * horizon / c.quantum_ns as f64,
        "sim.quantum_ms".to_string(),
    );
    let mut total = worst.0;
    for (i, cl) in sys.clients.iter().enumerate() {
        let (cycle, field) = match &cl.behaviour {
            Behaviour::Io { run, block } => {
                let cycle = run.mean_ns() + block.mean_ns();
                if cycle == 0.0 {
                    return Err(cx.err(
                        &format!("client[{i}].run_ms"),
                        "a run or block length above zero (both zero is a loop that takes no time and never ends)",
                    ));
                }
                (cycle, format!("client[{i}].run_ms"))
            }
            Behaviour::Periodic { period_ns, .. } => {
                (*period_ns as f64, format!("client[{i}].period_ms"))
            }
            Behaviour::Calls {
                query_ns, think, ..
            } => (
                *query_ns as f64 + think.as_ref().map_or(0.0, Dist::mean_ns),
                format!("client[{i}].query_ms"),
            ),
            Behaviour::Cpu | Behaviour::Server => continue,
        };
        let n = horizon / cycle;
        total += n;
        if n > worst.0 {
            worst = (n, field);
        }
    }
    if total > MAX_EVENTS {
        return Err(cx.err(
            &worst.1,
            format!(
                "a longer time: the scenario asks for {total:.2e} events (quanta, I/O cycles, periods) over sim.duration, at most {MAX_EVENTS:.0e}"
            ),
        ));
    }
    Ok(())
}

/// Largest scenario file read.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// Read and parse a scenario file: a regular file (not a FIFO or a device,
/// which could be read forever) of at most [`MAX_FILE_BYTES`].
pub fn load(path: &std::path::Path) -> Result<System> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| SimError::io(path, e))?;
    if !meta.is_file() {
        return Err(SimError::Invalid(format!(
            "{}: not a regular file",
            path.display()
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(SimError::Invalid(format!(
            "{}: {} bytes; a scenario is at most {MAX_FILE_BYTES}",
            path.display(),
            meta.len()
        )));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| SimError::io(path, e))?;
    parse(&path.display().to_string(), &text)
}
