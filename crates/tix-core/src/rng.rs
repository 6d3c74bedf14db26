//! The random number generators of the seeds: Park–Miller's "minimal
//! standard" with Carta's division-free step (Waldspurger 001 App. A),
//! Numerical Recipes' `ranqd1` (Zepp 000 §4.4) for faithful replays, and
//! xoshiro256** (seeded by SplitMix64) as the fast default, and wyrand,
//! one multiplication a word, for the O(1) lottery's look-ahead.

/// A deterministic source of uniform random numbers.
pub trait Rng {
    /// 32 uniformly distributed bits.
    fn next_u32(&mut self) -> u32;

    /// 64 uniformly distributed bits.
    fn next_u64(&mut self) -> u64 {
        ((self.next_u32() as u64) << 32) | self.next_u32() as u64
    }

    /// A uniform integer in `[0, n)`, without modulo bias; `n == 0` gives 0.
    ///
    /// Lemire's multiply-shift: the high word of `x·n` is uniform once the
    /// low word is outside the `2^64 mod n` values that would over-represent
    /// some outcomes; those are rejected (probability `< n / 2^64`).
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }
}

/// Park & Miller's minimal standard LCG, `S' = 16807·S mod (2^31 − 1)`,
/// stepped the way Carta (1990) and Waldspurger's MIPS `fastrand` do it:
/// split `16807·S` into its high part P (bits ≥ 31) and low 31 bits Q;
/// since `2^31 ≡ 1`, `S' ≡ P + Q`, and one conditional subtraction of
/// `2^31 − 1` (clear bit 31, add 1) finishes the reduction. No division.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkMiller {
    state: u32,
}

/// The minimal standard's modulus, `2^31 − 1`.
pub const PARK_MILLER_M: u32 = 0x7fff_ffff;

impl ParkMiller {
    /// A generator whose first state is `seed` reduced into `[1, 2^31 − 2]`
    /// (0 and `2^31 − 1` are fixed points of the recurrence, so they are
    /// mapped to 1 and `2^31 − 2`).
    pub fn new(seed: u64) -> Self {
        let s = (seed % PARK_MILLER_M as u64) as u32;
        ParkMiller {
            state: if s == 0 { 1 } else { s },
        }
    }

    /// The next state, in `[1, 2^31 − 2]` — the paper's `fastrand`.
    pub fn next_raw(&mut self) -> u32 {
        let x = 16807u64 * self.state as u64;
        let mut r = (x & 0x7fff_ffff) as u32 + (x >> 31) as u32;
        if r & 0x8000_0000 != 0 {
            r = (r & 0x7fff_ffff) + 1;
        }
        self.state = r;
        r
    }
}

impl Rng for ParkMiller {
    /// Sixteen uniform bits from each of two raw draws: `raw − 1` is uniform
    /// on `[0, 2^31 − 2)`; values at or above `2^31 − 2^16` (a multiple of
    /// 2^16) are rejected (p ≈ 2^-15) so the low 16 bits are exactly uniform.
    fn next_u32(&mut self) -> u32 {
        let mut half = || loop {
            let r = self.next_raw() - 1;
            if r < (1u32 << 31) - (1 << 16) {
                return r & 0xffff;
            }
        };
        let hi = half();
        (hi << 16) | half()
    }

    /// One raw draw per lottery when `n < 2^31 − 2`, as the paper's
    /// scheduler does; rejection removes the modulo bias.
    fn below(&mut self, n: u64) -> u64 {
        const RANGE: u64 = PARK_MILLER_M as u64 - 1;
        if n == 0 {
            return 0;
        }
        if n > RANGE {
            // Too wide for one draw: fall back to 64 assembled bits.
            let mut m = (self.next_u64() as u128) * (n as u128);
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.next_u64() as u128) * (n as u128);
            }
            return (m >> 64) as u64;
        }
        let limit = RANGE - RANGE % n;
        loop {
            let r = (self.next_raw() - 1) as u64;
            if r < limit {
                return r % n;
            }
        }
    }
}

/// Numerical Recipes' quick-and-dirty `ranqd1`, `idum = 1664525·idum +
/// 1013904223 mod 2^32` — Zepp's `lottery_random()`. Kept for replaying his
/// kernel's draws (`raw % total + 1`); its low bits are weak (bit k has
/// period 2^(k+1)), so [`Rng::below`] uses the high bits only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ranqd1 {
    idum: u32,
}

impl Ranqd1 {
    pub fn new(seed: u64) -> Self {
        Ranqd1 { idum: seed as u32 }
    }

    /// The next `idum`, exactly as the C macro computes it.
    pub fn next_raw(&mut self) -> u32 {
        self.idum = self
            .idum
            .wrapping_mul(1_664_525)
            .wrapping_add(1_013_904_223);
        self.idum
    }
}

impl Rng for Ranqd1 {
    fn next_u32(&mut self) -> u32 {
        self.next_raw()
    }

    /// Both halves from high-quality top bits: the high 32 bits of two
    /// steps would still carry the weak low bits, so take 16 top bits each
    /// of four steps.
    fn next_u64(&mut self) -> u64 {
        let mut v = 0u64;
        for _ in 0..4 {
            v = (v << 16) | (self.next_raw() >> 16) as u64;
        }
        v
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): a 64-bit counter through a
/// bijective mixer. Used to expand one seed into xoshiro's 256-bit state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The counter: `SplitMix64::new(g.state())` continues where `g` is,
    /// so a generator can live as one word in shared memory.
    pub fn state(&self) -> u64 {
        self.state
    }
}

impl Rng for SplitMix64 {
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// xoshiro256** (Blackman & Vigna 2018): the default generator — a few
/// ns per draw, 2^256 − 1 period, no known statistical weakness relevant to
/// a lottery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xoshiro256 {
    s: [u64; 4],
}

impl Xoshiro256 {
    /// Seeded through SplitMix64, which never yields the all-zero state
    /// from four consecutive outputs (it is a bijection of a counter).
    pub fn new(seed: u64) -> Self {
        let mut sm = SplitMix64::new(seed);
        Xoshiro256 {
            s: [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()],
        }
    }
}

impl Rng for Xoshiro256 {
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }
}

/// wyrand (Wang Yi, from the wyhash family): a 64-bit counter stepped by
/// an odd constant; each output folds (xor of the halves) the 128-bit
/// product of the counter with itself xor a second constant. One
/// multiplication a word, half of xoshiro256**'s instructions: the
/// O(1) lottery's look-ahead takes two words a lottery from it. Period
/// 2^64, and its authors report it passing BigCrush and PractRand; unlike
/// xoshiro its outputs are not a permutation of its states, so it is not
/// the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WyRand {
    state: u64,
}

impl WyRand {
    /// Seeded through SplitMix64: streams are one counter sequence at
    /// different offsets, and a mixed seed puts two seeds' offsets
    /// ~2^63 steps apart rather than a few.
    pub fn new(seed: u64) -> Self {
        WyRand {
            state: SplitMix64::new(seed).next_u64(),
        }
    }
}

impl Rng for WyRand {
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0xa076_1d64_78bd_642f);
        let m = (self.state as u128) * ((self.state ^ 0xe703_7ed1_a0b4_28db) as u128);
        (m >> 64) as u64 ^ m as u64
    }
}

/// The generator every randomized policy uses unless told otherwise.
pub type DefaultRng = Xoshiro256;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn park_miller_10000th_value() {
        // Park & Miller (1988): from seed 1 the 10000th value is 1043618065.
        let mut g = ParkMiller::new(1);
        let mut x = 0;
        for _ in 0..10_000 {
            x = g.next_raw();
        }
        assert_eq!(x, 1_043_618_065);
    }

    #[test]
    fn park_miller_matches_division_form() {
        // Carta's step equals the textbook 16807·S mod (2^31 − 1).
        let mut g = ParkMiller::new(42);
        let mut s: u64 = 42;
        for _ in 0..100_000 {
            s = 16807 * s % PARK_MILLER_M as u64;
            assert_eq!(g.next_raw() as u64, s);
        }
    }

    #[test]
    fn park_miller_fixed_points_avoided() {
        assert_ne!(ParkMiller::new(0).next_raw(), 0);
        assert_ne!(ParkMiller::new(PARK_MILLER_M as u64).next_raw(), 0);
    }

    #[test]
    fn ranqd1_sequence() {
        // NR in C 2nd ed. p. 284: from idum = 0 the first values are the
        // additive constant, then 1664525·1013904223 + 1013904223 mod 2^32.
        let mut g = Ranqd1::new(0);
        assert_eq!(g.next_raw(), 1_013_904_223);
        assert_eq!(g.next_raw(), 1_196_435_762);
        assert_eq!(g.next_raw(), 3_519_870_697);
    }

    #[test]
    fn splitmix_reference() {
        // First output of SplitMix64 from seed 0 (reference implementation).
        assert_eq!(SplitMix64::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn wyrand_reference() {
        // From a separate C implementation of the published step (counter
        // += 0xa0761d6478bd642f; fold of counter · (counter ^
        // 0xe7037ed1a0b428db)) on SplitMix64's first output from seed 0.
        let mut g = WyRand::new(0);
        assert_eq!(g.next_u64(), 0x7950_d340_a3b9_a42d);
        assert_eq!(g.next_u64(), 0xbe1a_7908_2232_3877);
        assert_eq!(g.next_u64(), 0xdc88_64b5_8f7f_72c8);
        assert_eq!(WyRand::new(1).next_u64(), 0x987e_7e31_fc95_735b);
    }

    #[test]
    fn deterministic_from_seed() {
        let a: Vec<u64> = {
            let mut g = Xoshiro256::new(7);
            (0..5).map(|_| g.next_u64()).collect()
        };
        let mut g = Xoshiro256::new(7);
        let b: Vec<u64> = (0..5).map(|_| g.next_u64()).collect();
        assert_eq!(a, b);
        assert_ne!(Xoshiro256::new(8).next_u64(), a[0]);
    }

    fn chi_square_below<R: Rng>(g: &mut R, n: u64, draws: u64) -> f64 {
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            let v = g.below(n);
            assert!(v < n);
            counts[v as usize] += 1;
        }
        let e = draws as f64 / n as f64;
        counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
    }

    #[test]
    fn below_is_uniform() {
        // n = 10 cells → df = 9; the 0.999 quantile of χ²(9) is 27.88, so a
        // correct generator fails this at a fixed seed with p = 0.001.
        let crit = 27.88;
        assert!(chi_square_below(&mut Xoshiro256::new(1), 10, 100_000) < crit);
        assert!(chi_square_below(&mut ParkMiller::new(1), 10, 100_000) < crit);
        assert!(chi_square_below(&mut Ranqd1::new(1), 10, 100_000) < crit);
        assert!(chi_square_below(&mut SplitMix64::new(1), 10, 100_000) < crit);
        assert!(chi_square_below(&mut WyRand::new(1), 10, 100_000) < crit);
        // Bits of next_u32 from Park–Miller: 16 cells of the top nibble, df
        // = 15, 0.999 quantile 37.70.
        let mut g = ParkMiller::new(3);
        let mut counts = [0u64; 16];
        for _ in 0..64_000 {
            counts[(g.next_u32() >> 28) as usize] += 1;
        }
        let chi: f64 = counts
            .iter()
            .map(|&c| (c as f64 - 4000.0).powi(2) / 4000.0)
            .sum();
        assert!(chi < 37.70, "chi {chi}");
    }

    #[test]
    fn below_edges() {
        let mut g = Xoshiro256::new(1);
        assert_eq!(g.below(0), 0);
        assert_eq!(g.below(1), 0);
        let big = u64::MAX - 3;
        assert!(g.below(big) < big);
        let mut p = ParkMiller::new(5);
        assert!(p.below(u64::MAX) < u64::MAX);
        assert_eq!(p.below(1), 0);
    }
}
