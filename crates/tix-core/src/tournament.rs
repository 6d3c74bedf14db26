//! A winner (tournament) tree over dense client slots: the run queue of the
//! smallest-key policies, stride (Waldspurger & Weihl's minimum pass) and WFQ
//! (GR3 §3's smallest virtual finishing time). Each node holds the smallest
//! entry of its subtree; the root is the client to run next.
//!
//! Why not a heap: re-keying a client in a binary heap sifts it through a
//! chain of loads whose addresses depend on the previous comparison. Here a
//! slot's leaf and every ancestor sit at addresses known from the slot alone,
//! so the loads of an update overlap; B = 4 children share one 64-byte line
//! (for 16-byte entries) and the path is half as long as a binary one.

/// An entry of the tree: ordered by (key, id) so ties go to the lower id
/// whatever the shape of the tree, and [`Entry::EMPTY`] (a slot with no
/// runnable client) orders after every real entry.
pub trait Entry: Copy + Ord + std::fmt::Debug {
    /// Larger than every entry a client can hold.
    const EMPTY: Self;
    /// The smaller of two entries; implementations may override it with a
    /// branch-free form (the comparisons on a tree path are coin flips).
    #[inline]
    fn min2(a: Self, b: Self) -> Self {
        a.min(b)
    }
}

/// The smaller of two u128 without a branch. On a tree path every
/// comparison is a coin flip, and LLVM turns a plain `min` of a freshly
/// loaded value into a conditional jump (mispredicted half the time, about
/// 15 cycles each); two conditional moves cost 1-2 cycles.
#[inline(always)]
pub fn min_u128(a: u128, b: u128) -> u128 {
    #[cfg(target_arch = "x86_64")]
    {
        let (mut lo, mut hi) = (a as u64, (a >> 64) as u64);
        let (blo, bhi) = (b as u64, (b >> 64) as u64);
        // SAFETY: register-only arithmetic and conditional moves: no memory
        // access, no stack use; the flags it clobbers are declared clobbered
        // (asm! without `preserves_flags`).
        unsafe {
            std::arch::asm!(
                "cmp {blo}, {lo}",
                "mov {t}, {bhi}",
                "sbb {t}, {hi}",
                "cmovb {lo}, {blo}",
                "cmovb {hi}, {bhi}",
                lo = inout(reg) lo,
                hi = inout(reg) hi,
                blo = in(reg) blo,
                bhi = in(reg) bhi,
                t = out(reg) _,
                options(pure, nomem, nostack),
            );
        }
        ((hi as u128) << 64) | lo as u128
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        a.min(b)
    }
}

/// The smaller of two 192-bit numbers given as [high, middle, low] words
/// (lexicographic order of the arrays), without a branch; see [`min_u128`].
#[inline(always)]
pub fn min_u192(a: [u64; 3], b: [u64; 3]) -> [u64; 3] {
    #[cfg(target_arch = "x86_64")]
    {
        let [mut hi, mut mid, mut lo] = a;
        let [bhi, bmid, blo] = b;
        // SAFETY: as in `min_u128`: registers and flags only.
        unsafe {
            std::arch::asm!(
                "cmp {blo}, {lo}",
                "mov {t}, {bmid}",
                "sbb {t}, {mid}",
                "mov {t}, {bhi}",
                "sbb {t}, {hi}",
                "cmovb {lo}, {blo}",
                "cmovb {mid}, {bmid}",
                "cmovb {hi}, {bhi}",
                lo = inout(reg) lo,
                mid = inout(reg) mid,
                hi = inout(reg) hi,
                blo = in(reg) blo,
                bmid = in(reg) bmid,
                bhi = in(reg) bhi,
                t = out(reg) _,
                options(pure, nomem, nostack),
            );
        }
        [hi, mid, lo]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        a.min(b)
    }
}

/// Children per node: one cache line of 16-byte entries. Measured (stride
/// and WFQ pick+charge, 10..10^5 clients): B = 2 is as fast, B = 8 about a
/// quarter slower (seven sibling loads and comparisons per level).
const B: usize = 4;
// Siblings are found by xor-ing the child index (see `set`).
const _: () = assert!(B.is_power_of_two() && B >= 2);

/// The B children of one node, aligned so that they share cache lines.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Group<T>([T; B]);

/// Layout: a complete B-ary tree in one array of groups. Logical node l
/// (root 0) has children B·l+1 ..= B·l+B; shifting every index by B−1
/// ("physical" index p = l + B − 1) puts each family of children at the
/// start of a group: the children of p are group p + 2 − B, the parent of
/// p ≥ B is p / B + B − 2, the root is p = B − 1. Leaves (one per slot, in
/// slot order) fill the last level; their number is a power of B.
#[derive(Debug, Clone)]
pub struct Tournament<T: Entry> {
    groups: Vec<Group<T>>,
    /// Physical index of slot 0's leaf.
    first_leaf: usize,
    /// Number of leaves (a power of B).
    cap: usize,
}

impl<T: Entry> Default for Tournament<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Entry> Tournament<T> {
    /// An empty tree (one slot, empty; it grows as slots are set).
    pub fn new() -> Self {
        Tournament {
            groups: vec![Group([T::EMPTY; B])],
            first_leaf: B - 1,
            cap: 1,
        }
    }

    /// The smallest entry, [`Entry::EMPTY`] when every slot is empty.
    #[inline]
    pub fn min(&self) -> T {
        self.groups[0].0[B - 1]
    }

    /// The entry of `slot` ([`Entry::EMPTY`] if never set).
    pub fn get(&self, slot: usize) -> T {
        if slot >= self.cap {
            return T::EMPTY;
        }
        let p = self.first_leaf + slot;
        self.groups[p / B].0[p % B]
    }

    /// Set the entry of `slot` and fix the minima on its path to the root.
    /// Slots past the capacity grow the tree (a rebuild, amortised O(1)
    /// per slot since the capacity grows by a factor B).
    // Inlined into every caller: out of line, LLVM passes a 24-byte entry
    // by reference and keeps the running minimum in memory, a store-to-load
    // round trip on every level.
    #[inline(always)]
    pub fn set(&mut self, slot: usize, entry: T) {
        if slot >= self.cap {
            self.grow(slot);
        }
        let mut p = self.first_leaf + slot;
        let mut cur = entry;
        // Each level reads the node's siblings (one group, not yet written
        // at this level, so these loads do not wait for the stores below)
        // and folds them with the node's new value held in a register.
        while p >= B {
            let k = p % B;
            let g = &mut self.groups[p / B].0;
            // The siblings of k are k ^ 1 .. k ^ (B-1): no branch on k.
            // Their minimum does not depend on `cur`, so only the last
            // comparison lies on the chain from leaf to root.
            let mut sib = g[k ^ 1];
            for x in 2..B {
                sib = T::min2(sib, g[k ^ x]);
            }
            g[k] = cur;
            p = p / B + B - 2;
            cur = T::min2(cur, sib);
        }
        self.groups[0].0[B - 1] = cur;
    }

    /// Set `slot` to [`Entry::EMPTY`].
    pub fn clear(&mut self, slot: usize) {
        if slot < self.cap {
            self.set(slot, T::EMPTY);
        }
    }

    /// Rebuild with room for `slot`: B times the capacity until it fits.
    #[cold]
    fn grow(&mut self, slot: usize) {
        let mut cap = self.cap;
        while cap <= slot {
            cap = cap.saturating_mul(B);
        }
        let internal = (cap - 1) / (B - 1);
        let first_leaf = internal + B - 1;
        let total = first_leaf + cap;
        let mut groups = vec![Group([T::EMPTY; B]); total.div_ceil(B)];
        for s in 0..self.cap {
            let p = first_leaf + s;
            groups[p / B].0[p % B] = self.get(s);
        }
        // Internal nodes bottom-up: physical p's children are group p+2-B.
        for p in (B - 1..first_leaf).rev() {
            let kids = groups[p + 2 - B].0;
            let m = kids.iter().copied().fold(T::EMPTY, T::min);
            groups[p / B].0[p % B] = m;
        }
        self.groups = groups;
        self.first_leaf = first_leaf;
        self.cap = cap;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Entry for (u64, u64) {
        const EMPTY: Self = (u64::MAX, u64::MAX);
    }

    fn scan(v: &[(u64, u64)]) -> (u64, u64) {
        v.iter().copied().fold(<(u64, u64)>::EMPTY, Ord::min)
    }

    /// The branch-free minima agree with `Ord::min` on edge values: equal
    /// high words (the low word decides), the borrow across words, extremes.
    #[test]
    fn branch_free_minima_match_ord() {
        let words = [0u64, 1, 2, u64::MAX - 1, u64::MAX, 1 << 63, (1 << 63) - 1];
        for &a in &words {
            for &b in &words {
                for &c in &words {
                    for &d in &words {
                        let x = ((a as u128) << 64) | b as u128;
                        let y = ((c as u128) << 64) | d as u128;
                        assert_eq!(min_u128(x, y), x.min(y));
                        for &e in &[0u64, 7, u64::MAX] {
                            let p = [a, b, e];
                            let q = [c, d, e ^ a];
                            assert_eq!(min_u192(p, q), p.min(q));
                            assert_eq!(min_u192(q, p), p.min(q));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn root_is_the_minimum_through_growth_and_updates() {
        let mut t = Tournament::<(u64, u64)>::new();
        assert_eq!(t.min(), <(u64, u64)>::EMPTY);
        let mut v: Vec<(u64, u64)> = Vec::new();
        let mut x: u64 = 99;
        for step in 0..3000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = x >> 33;
            // About one step in three joins a new slot (up to 300 slots,
            // past four growths); one update in five empties a slot.
            let join = r % 3 < 1;
            if v.is_empty() || join && v.len() < 300 {
                let s = v.len() as u64;
                v.push((r % 7, s));
                t.set(s as usize, (r % 7, s));
            } else {
                let s = (r as usize / 7) % v.len();
                v[s] = if r % 5 < 1 {
                    <(u64, u64)>::EMPTY
                } else {
                    (r % 11, s as u64)
                };
                t.set(s, v[s]);
            }
            assert_eq!(t.min(), scan(&v), "step {step}");
        }
        for (s, e) in v.iter().enumerate() {
            assert_eq!(t.get(s), *e);
            t.clear(s);
        }
        assert_eq!(t.min(), <(u64, u64)>::EMPTY);
        assert_eq!(t.get(1 << 40), <(u64, u64)>::EMPTY);
    }
}
