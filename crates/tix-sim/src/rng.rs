//! The workload's own random numbers (share sets, run and block lengths):
//! SplitMix64, kept apart from the policies' generators in tix-core so a
//! workload is identical whichever policy runs on it.

#[derive(Debug, Clone)]
pub struct WorkRng(u64);

impl WorkRng {
    pub fn new(seed: u64) -> Self {
        WorkRng(seed)
    }
    /// A generator for sub-stream `k` of `seed` (one per run, per client …).
    pub fn derive(seed: u64, k: u64) -> Self {
        let mut r = WorkRng(seed ^ k.wrapping_mul(0xA24B_AED4_963E_E407));
        r.next_u64();
        r
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform integer in [lo, hi] (inclusive); Lemire's multiply-shift,
    /// whose bias (< range/2^64) is far below anything a run can see.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        if span == 0 {
            return self.next_u64();
        }
        lo + ((self.next_u64() as u128 * span as u128) >> 64) as u64
    }
    /// Exponential with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.next_f64()).ln()
    }
}
