//! A draw by a tree of partial ticket sums (001 §4.2's "tree of partial
//! ticket sums"), 32-ary: one node per level, O(log n).

use super::*;

/// Children per node of the sum tree: 32 u64, four whole cache lines. The
/// levels of a descent are a chain of dependent loads while a node's lines
/// load side by side, so few wide levels win: 32 measured faster than 8 or
/// 16 at 10^3 and 10^5 clients (4 levels at 10^5).
pub(super) const FANOUT: usize = 32;

/// One node of the sum tree, aligned to cache lines. Entry `j` is the
/// inclusive prefix sum of the node's children `0..=j`, so the last entry
/// is the node's total and a descent needs no adding up.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
pub(super) struct Node(pub(super) [u64; FANOUT]);

/// A node's prefix sums as u32 while its total is below 2^31 (so every
/// entry and a ticket below the total fit, with a sign bit to spare for
/// the branch-free count); a wider node has [`WIDE`] as its last entry
/// and a descent reads its [`Node`] instead. Rewritten from the node at
/// every update, so it is exact whenever it is used.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Narrow(pub(super) [u32; FANOUT]);

/// The last entry of a [`Narrow`] whose node total is 2^31 or more.
pub(super) const WIDE: u32 = u32::MAX;

impl Narrow {
    pub(super) fn of(node: &Node) -> Narrow {
        let mut n = Narrow([0; FANOUT]);
        if node.0[FANOUT - 1] < 1 << 31 {
            for (d, &p) in n.0.iter_mut().zip(&node.0) {
                *d = p as u32;
            }
        } else {
            n.0[FANOUT - 1] = WIDE;
        }
        n
    }
}

/// A [`FANOUT`]-ary tree of partial sums of values over ids; blocked and
/// departed clients count 0. A draw descends one node per level (4 levels
/// at 10^5 clients, against 17 dependent loads of a binary Fenwick tree),
/// and an update walks leaf to root at addresses known from the id alone,
/// so its loads do not wait on one another.
#[derive(Debug, Clone, Default)]
pub(super) struct TreeDraw {
    /// With B = FANOUT, `levels[0]` holds ids `Bi..Bi+B` in node `i`; node
    /// `i` of `levels[k + 1]` holds the totals of nodes `Bi..Bi+B` of
    /// `levels[k]`. The last level is a single node, the root.
    pub(super) levels: Vec<Vec<Node>>,
    /// The same nodes in u32 ([`Narrow`]), which a descent reads instead:
    /// half the bytes (the leaf level of 10^5 ids then fits in L2) and
    /// twice the entries per vector compare.
    pub(super) narrow: Vec<Vec<Narrow>>,
    /// Number of id slots, `B · levels[0].len()`: a power of two ≥ B.
    pub(super) cap: usize,
}

impl TreeDraw {
    /// The value of one id, from the prefix sums of its leaf node.
    pub(super) fn value(&self, id: usize) -> u64 {
        let node = &self.levels[0][id / FANOUT].0;
        let j = id % FANOUT;
        let before = if j == 0 { 0 } else { node[j - 1] };
        node[j].wrapping_sub(before)
    }

    pub(super) fn reserve(&mut self, n: usize) {
        if n <= self.cap {
            return;
        }
        // Rebuild at (at least) double size from the values: O(cap), so
        // amortised O(1) per join.
        let mut cap = self.cap.max(FANOUT);
        while cap < n {
            cap *= 2;
        }
        let mut values: Vec<u64> = (0..self.cap).map(|id| self.value(id)).collect();
        values.resize(cap, 0);
        let mut levels = Vec::new();
        let mut level = Self::build_level(&values);
        while level.len() > 1 {
            let totals: Vec<u64> = level.iter().map(|n| n.0[FANOUT - 1]).collect();
            let up = Self::build_level(&totals);
            levels.push(level);
            level = up;
        }
        levels.push(level);
        self.narrow = levels
            .iter()
            .map(|l| l.iter().map(Narrow::of).collect())
            .collect();
        self.levels = levels;
        self.cap = cap;
    }

    /// Nodes holding the inclusive prefix sums of `items` in runs of B
    /// (the last run padded with zeros).
    pub(super) fn build_level(items: &[u64]) -> Vec<Node> {
        items
            .chunks(FANOUT)
            .map(|run| {
                let mut node = Node::default();
                let mut sum = 0u64;
                for (j, slot) in node.0.iter_mut().enumerate() {
                    sum = sum.wrapping_add(run.get(j).copied().unwrap_or(0));
                    *slot = sum;
                }
                node
            })
            .collect()
    }

    /// Add `delta` (mod 2^64, so a subtraction is the negated amount) to the
    /// value of `id`: in each node on the way up, to the prefixes of its
    /// child and of every later child.
    pub(super) fn add(&mut self, id: usize, delta: u64) {
        let mut i = id;
        for (level, narrow) in self.levels.iter_mut().zip(&mut self.narrow) {
            let j = i % FANOUT;
            let node = &mut level[i / FANOUT];
            // A mask rather than a loop from j: no branch on the position.
            for (t, x) in node.0.iter_mut().enumerate() {
                let take = 0u64.wrapping_sub((t >= j) as u64);
                *x = x.wrapping_add(delta & take);
            }
            narrow[i / FANOUT] = Narrow::of(node);
            i /= FANOUT;
        }
    }

    pub(super) fn sub(&mut self, id: usize, v: u64) {
        self.add(id, v.wrapping_neg());
    }

    /// The id whose running sum first exceeds a uniform `r < total`.
    pub(super) fn pick<R: Rng>(&self, rng: &mut R, total: u64) -> usize {
        self.find(rng.below(total))
    }

    /// The id whose running sum (in id order) first exceeds `r`.
    #[inline]
    pub(super) fn find(&self, mut r: u64) -> usize {
        let mut i = 0usize;
        for (level, narrow) in self.levels.iter().rev().zip(self.narrow.iter().rev()) {
            let n = &narrow[i].0;
            // The child is the number of prefixes ≤ r, counted without
            // branches (the comparisons are coin flips to a predictor) as
            // the sign bits of p − (r + 1): in a narrow node every sum and
            // r + 1 are < 2^31, in a wide one every sum is < 2^63.
            // r < node total (the last entry), so c < B while the sums are
            // right; the `%` only keeps a broken invariant from indexing out.
            let (c, before) = if n[FANOUT - 1] != WIDE {
                let r1 = (r as u32).wrapping_add(1);
                // Summed in u32 so that the count stays in 4-lane vectors.
                let c = n.iter().map(|&p| p.wrapping_sub(r1) >> 31).sum::<u32>() as usize;
                let before = if c == 0 { 0 } else { n[(c - 1) % FANOUT] };
                (c, before as u64)
            } else {
                let node = &level[i].0;
                let r1 = r + 1;
                let c = node
                    .iter()
                    .map(|&p| (p.wrapping_sub(r1) >> 63) as usize)
                    .sum::<usize>();
                (c, if c == 0 { 0 } else { node[(c - 1) % FANOUT] })
            };
            r -= before;
            i = i * FANOUT + c;
        }
        i
    }
}
