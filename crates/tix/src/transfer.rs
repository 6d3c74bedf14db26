//! Ticket transfers on the `tix` binary (seed 001 §3.3): `tix lend`,
//! `tix return`, `tix loans`.

use crate::ctl::{ask, socket_path};
use anyhow::{anyhow, bail, Result};
use tix_ctl::{LoanRow, Request, Response};

#[derive(clap::Subcommand, Debug)]
pub enum TransferCmd {
    /// Lend AMOUNT of process FROM's tickets to process TO (same currency)
    /// until `tix return`, --for SECS, or either process exits.
    Lend {
        from: String,
        to: String,
        amount: String,
        #[arg(long = "for", value_name = "SECS")]
        secs: Option<String>,
    },
    /// End a loan: its tickets go back to the lender.
    Return { id: String },
    /// List outstanding loans.
    Loans {
        #[arg(long)]
        json: bool,
    },
}

fn num(s: &str, what: &str) -> Result<u64> {
    tix_ctl::parse_number(s, what).map_err(|e| anyhow!(e))
}

fn show(l: &LoanRow) {
    let until = l
        .secs_left
        .map_or_else(|| "until returned".to_string(), |s| format!("{s} s left"));
    println!(
        "loan {}: {} {} tickets from {} to {} ({until})",
        l.id, l.amount, l.currency, l.from, l.to
    );
}

pub fn run(cmd: TransferCmd) -> Result<u8> {
    let sock = socket_path();
    let r = match cmd {
        TransferCmd::Lend {
            from,
            to,
            amount,
            secs,
        } => {
            let from = tix_ctl::parse_pid(&from).map_err(|e| anyhow!(e))?;
            let to = tix_ctl::parse_pid(&to).map_err(|e| anyhow!(e))?;
            let amount = num(&amount, "AMOUNT")?;
            let secs = secs.map(|s| num(&s, "SECS")).transpose()?;
            ask(
                &sock,
                Request::Lend {
                    from,
                    to,
                    amount,
                    secs,
                },
            )?
        }
        TransferCmd::Return { id } => ask(
            &sock,
            Request::Return {
                id: num(&id, "ID")?,
            },
        )?,
        TransferCmd::Loans { json } => match ask(&sock, Request::ListLoans)? {
            Response::Loans { loans } if json => {
                println!("{}", serde_json::to_string(&loans)?);
                return Ok(0);
            }
            Response::Loans { loans } => {
                for l in &loans {
                    show(l);
                }
                return Ok(0);
            }
            other => bail!("unexpected answer {other:?}"),
        },
    };
    match r {
        Response::Loan(l) => show(&l),
        other => bail!("unexpected answer {other:?}"),
    }
    Ok(0)
}
