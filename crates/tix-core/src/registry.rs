//! The policy registry: every algorithm the CLI and the simulator can name,
//! built from one [`PolicyOptions`]. The client roster the deterministic
//! policies share is `roster.rs`, so no policy imports the registry.

use crate::error::{Error, Result};
use crate::sched::{PolicyOptions, Scheduler};

/// Every policy name [`build`] accepts, in the order the CLI lists them.
pub const ALGOS: &[&str] = &[
    "rr",
    "wrr",
    "lottery",
    "lottery-tree",
    "lottery-o1",
    "lottery-race",
    "stride",
    "wfq",
    "wf2q",
    "eevdf",
    "vtrr",
    "srr",
    "gr3",
    "fcfs",
    "sjf",
    "srtf",
    "mlfq",
];

/// Build the policy named `algo`. A zero quantum is refused here (the
/// constructors themselves clamp it to 1 ns so they can stay infallible).
pub fn build(algo: &str, opts: &PolicyOptions) -> Result<Box<dyn Scheduler>> {
    use crate::lottery::{Draw, Lottery};
    if opts.quantum_ns == 0 {
        return Err(Error::ZeroQuantum);
    }
    Ok(match algo {
        "rr" => Box::new(crate::rr::RoundRobin::new(opts)),
        "wrr" => Box::new(crate::wrr::WeightedRoundRobin::new(opts)),
        "lottery" => Box::new(Lottery::new(opts, Draw::List)),
        "lottery-tree" => Box::new(Lottery::new(opts, Draw::Tree)),
        "lottery-o1" => Box::new(Lottery::new(opts, Draw::O1)),
        "lottery-race" => Box::new(Lottery::new(opts, Draw::Race)),
        "stride" => Box::new(crate::stride::Stride::new(opts)),
        "wfq" => Box::new(crate::wfq::Wfq::new(opts)),
        "wf2q" => Box::new(crate::wf2q::Wf2qPlus::new(opts)),
        "eevdf" => Box::new(crate::eevdf::Eevdf::new(opts)),
        "vtrr" => Box::new(crate::vtrr::Vtrr::new(opts)),
        "srr" => Box::new(crate::srr::Srr::new(opts)),
        "gr3" => Box::new(crate::gr3::Gr3::new(opts)),
        "fcfs" => Box::new(crate::fcfs::Fcfs::new(opts)),
        "sjf" => Box::new(crate::sjf::Sjf::new(opts)),
        "srtf" => Box::new(crate::srtf::Srtf::new(opts)),
        "mlfq" => Box::new(crate::mlfq::Mlfq::new(opts)),
        other => return Err(Error::UnknownPolicy(other.to_string())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_policy_is_a_typed_error() {
        let e = build("nope", &PolicyOptions::default()).err();
        assert_eq!(e, Some(Error::UnknownPolicy("nope".into())));
    }

    #[test]
    fn zero_quantum_is_refused() {
        let opts = PolicyOptions {
            quantum_ns: 0,
            seed: 1,
        };
        assert_eq!(build("rr", &opts).err(), Some(Error::ZeroQuantum));
    }
}
