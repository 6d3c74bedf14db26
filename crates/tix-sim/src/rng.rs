//! The workload's own random numbers (share sets, run and block lengths):
//! tix-core's SplitMix64, kept a separate stream from the policies'
//! generators so a workload is identical whichever policy runs on it.

use tix_core::rng::{Rng, SplitMix64};

#[derive(Debug, Clone)]
pub struct WorkRng(SplitMix64);

impl WorkRng {
    pub fn new(seed: u64) -> Self {
        WorkRng(SplitMix64::new(seed))
    }
    /// A generator for sub-stream `k` of `seed` (one per run, per client …):
    /// the seed xor k times an odd constant, one draw discarded so nearby
    /// k start far apart in the output sequence.
    pub fn derive(seed: u64, k: u64) -> Self {
        let mut r = WorkRng::new(seed ^ k.wrapping_mul(0xA24B_AED4_963E_E407));
        r.next_u64();
        r
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform integer in [lo, hi] (inclusive), by the core's unbiased
    /// `below`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        match (hi - lo).checked_add(1) {
            Some(span) => lo + self.0.below(span),
            None => self.next_u64(),
        }
    }
    /// Exponential with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.next_f64()).ln()
    }
}
