//! The Mach command set (seed 001 §4.5) on the `tix` binary, as subcommands
//! and, chosen by argv[0], under their own names: mkcur, rmcur, fund,
//! unfund, mktkt, rmtkt, lscur, lstkt, fundx. Tickets are written
//! `AMOUNT.CURRENCY` as in the seed (`AMOUNT` alone: the owner's own
//! currency, which the user's base funds).

use crate::ctl::{ask, socket_path};
use anyhow::{anyhow, bail, Context, Result};
use tix_ctl::{CurrencyRow, HoldingRow, Request, Response};

/// The argv[0] names this module answers to.
pub const NAMES: [&str; 9] = [
    "mkcur", "rmcur", "fund", "unfund", "mktkt", "rmtkt", "lscur", "lstkt", "fundx",
];

#[derive(clap::Subcommand, Debug)]
pub enum MachCmd {
    /// Create a currency you own, unfunded (worth nothing until funded).
    Mkcur { name: String },
    /// Remove a currency of yours that funds nothing and backs no process.
    Rmcur { name: String },
    /// Fund a currency with AMOUNT tickets of your own currency, or of
    /// another of yours (AMOUNT.FROM); replaces its funding.
    Fund {
        name: String,
        #[arg(value_name = "AMOUNT[.FROM]")]
        amount: String,
    },
    /// Take a currency's funding away (it stays, worth nothing).
    Unfund { name: String },
    /// Give a process AMOUNT tickets in a currency you own (AMOUNT alone:
    /// in its owner's own currency).
    Mktkt {
        pid: String,
        #[arg(value_name = "AMOUNT[.CURRENCY]")]
        tickets: String,
    },
    /// Take a process's tickets back: the default 100 in its owner's currency.
    Rmtkt { pid: String },
    /// List your currencies (CAP_SYS_NICE: all).
    Lscur {
        #[arg(long)]
        json: bool,
    },
    /// List every process holding tickets other than the default.
    Lstkt {
        #[arg(long)]
        json: bool,
    },
    /// Run a command holding AMOUNT tickets of a currency (children inherit).
    Fundx {
        #[arg(value_name = "AMOUNT[.CURRENCY]")]
        tickets: String,
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
}

/// `AMOUNT` or `AMOUNT.NAME`.
pub fn parse_amount(s: &str) -> Result<(u64, Option<String>)> {
    let (n, cur) = match s.split_once('.') {
        Some((n, c)) => {
            tix_ctl::mach::check_name(c).map_err(|_| anyhow!("bad currency name in {s:?}"))?;
            (n, Some(c.to_string()))
        }
        None => (s, None),
    };
    let n = tix_ctl::parse_number(n, "AMOUNT").map_err(|e| anyhow!(e))?;
    Ok((n, cur))
}

fn pid(s: &str) -> Result<u32> {
    tix_ctl::parse_pid(s).map_err(|e| anyhow!(e))
}

fn print_currency(verb: &str, c: &CurrencyRow) {
    println!(
        "{verb} {} (id {}, uid {}): {}.{}",
        c.name, c.id, c.owner, c.amount, c.funded_by
    );
}

fn print_holding(pid: u32, r: Response) -> Result<u8> {
    match r {
        Response::Tickets { tickets, .. } => {
            println!("{pid}: {tickets} tickets");
            Ok(0)
        }
        other => bail!("unexpected answer {other:?}"),
    }
}

pub fn run(cmd: MachCmd) -> Result<u8> {
    let sock = socket_path();
    match cmd {
        MachCmd::Mkcur { name } => match ask(&sock, Request::MkCur { name })? {
            Response::Currency(c) => print_currency("created", &c),
            other => bail!("unexpected answer {other:?}"),
        },
        MachCmd::Rmcur { name } => match ask(&sock, Request::RmCur { name })? {
            Response::Currency(c) => println!("removed {}", c.name),
            other => bail!("unexpected answer {other:?}"),
        },
        MachCmd::Fund { name, amount } => {
            let (amount, from) = parse_amount(&amount)?;
            if amount == 0 {
                bail!(
                    "funding must be 1..{} tickets (unfund takes it away)",
                    tix_ctl::MAX_TICKETS
                );
            }
            match ask(&sock, Request::Fund { name, amount, from })? {
                Response::Currency(c) => print_currency("funded", &c),
                other => bail!("unexpected answer {other:?}"),
            }
        }
        MachCmd::Unfund { name } => match ask(&sock, Request::Unfund { name })? {
            Response::Currency(c) => print_currency("unfunded", &c),
            other => bail!("unexpected answer {other:?}"),
        },
        MachCmd::Mktkt { pid: p, tickets } => {
            let p = pid(&p)?;
            let (tickets, currency) = parse_amount(&tickets)?;
            return print_holding(
                p,
                ask(
                    &sock,
                    Request::Hold {
                        pid: p,
                        tickets,
                        currency,
                    },
                )?,
            );
        }
        MachCmd::Rmtkt { pid: p } => {
            let p = pid(&p)?;
            let req = Request::Hold {
                pid: p,
                tickets: tix_ctl::DEFAULT_TICKETS,
                currency: None,
            };
            return print_holding(p, ask(&sock, req)?);
        }
        MachCmd::Lscur { json } => match ask(&sock, Request::ListCurrencies)? {
            Response::Currencies { currencies } if json => {
                println!("{}", serde_json::to_string(&currencies)?)
            }
            Response::Currencies { currencies } => {
                println!(
                    "{:<20} {:>5} {:>6} {:>8} {:<20} {:>7} {:>5}",
                    "NAME", "ID", "OWNER", "AMOUNT", "FUNDED BY", "HOLDERS", "FUNDS"
                );
                for c in currencies {
                    println!(
                        "{:<20} {:>5} {:>6} {:>8} {:<20} {:>7} {:>5}",
                        c.name, c.id, c.owner, c.amount, c.funded_by, c.holders, c.funds
                    );
                }
            }
            other => bail!("unexpected answer {other:?}"),
        },
        MachCmd::Lstkt { json } => match ask(&sock, Request::ListTickets)? {
            Response::Holdings { holdings } if json => {
                println!("{}", serde_json::to_string(&holdings)?)
            }
            Response::Holdings { holdings } => {
                println!("{:>8} {:>8} CURRENCY", "TGID", "TICKETS");
                for HoldingRow {
                    tgid,
                    tickets,
                    currency,
                } in holdings
                {
                    println!("{tgid:>8} {tickets:>8} {currency}");
                }
            }
            other => bail!("unexpected answer {other:?}"),
        },
        MachCmd::Fundx { tickets, command } => {
            let (tickets, currency) = parse_amount(&tickets)?;
            let me = std::process::id();
            ask(
                &sock,
                Request::Hold {
                    pid: me,
                    tickets,
                    currency,
                },
            )?;
            use std::os::unix::process::CommandExt;
            let e = std::process::Command::new(&command[0])
                .args(&command[1..])
                .exec();
            return Err(e).with_context(|| format!("cannot run '{}'", command[0]));
        }
    }
    Ok(0)
}
