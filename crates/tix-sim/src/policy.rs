//! Where the simulator gets its policies: tix-core, by the names the CLI
//! uses. The simulator never implements a policy itself. Besides the core's
//! names it accepts lottery variants with a compensation rule, which the
//! Zepp §5 and Waldspurger §3.4 reproductions need:
//! `lottery+comp` (Waldspurger 1/f), `lottery+zepp` (Zepp's 6-tick rule),
//! `lottery+zepp-io` (with his "I/O enhanced" bonus).

use tix_core::compensation::Compensation;
use tix_core::lottery::{Draw, Lottery};
use tix_core::{PolicyOptions, Scheduler};

/// The compensation variants of the list lottery, by name.
pub const COMPENSATED: [&str; 3] = ["lottery+comp", "lottery+zepp", "lottery+zepp-io"];

/// Every policy name `--algo` accepts.
pub fn algos() -> Vec<&'static str> {
    let mut v = core_algos();
    v.extend(COMPENSATED);
    v
}

/// Build a policy instance by name.
pub fn build(algo: &str, opts: &PolicyOptions) -> tix_core::Result<Box<dyn Scheduler>> {
    let comp = match algo {
        "lottery+comp" => Some(Compensation::Waldspurger),
        "lottery+zepp" => Some(Compensation::zepp(
            tix_core::compensation::ZEPP_SLICE_TICKS,
            false,
        )?),
        "lottery+zepp-io" => Some(Compensation::zepp(
            tix_core::compensation::ZEPP_SLICE_TICKS,
            true,
        )?),
        _ => None,
    };
    if let Some(c) = comp {
        return Ok(Box::new(
            Lottery::try_new(opts, Draw::List)?.with_compensation(c),
        ));
    }
    core_build(algo, opts)
}

fn core_algos() -> Vec<&'static str> {
    tix_core::registry::ALGOS.to_vec()
}

fn core_build(algo: &str, opts: &PolicyOptions) -> tix_core::Result<Box<dyn Scheduler>> {
    tix_core::registry::build(algo, opts)
}
