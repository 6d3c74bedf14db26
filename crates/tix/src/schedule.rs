//! `tix schedule`: a policy over fixed shares, its order of picks and the
//! per-client service error (GR3 eq. 2) — the seeds' worked examples at a glance.

use clap::Args as ClapArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// Policy name (gr3, wrr, stride, lottery, …).
    #[arg(long, default_value = "gr3")]
    pub algo: String,
    /// Comma-separated weights, e.g. 3,2,1.
    #[arg(long, value_delimiter = ',', required = true)]
    pub shares: Vec<u64>,
    /// Number of quanta to run (default: one cycle, the sum of the shares).
    #[arg(long)]
    pub quanta: Option<u64>,
}

pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("tix schedule: the policy registry is being built (issue 2)")
}
