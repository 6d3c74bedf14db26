//! An O(1) lottery draw: clients grouped by power-of-two value, a group
//! chosen by its weight and a member by rejection; planned ahead by the
//! look-ahead (`look_ahead.rs`) at large client counts.

use super::*;

/// One member of an O(1)-draw group in 8 bytes, so that a group of 10^5
/// clients stays within a megabyte and a candidate costs one memory access.
/// `top` is the member's value shifted right by `shift(k)` (its top 32
/// bits in groups k ≥ 32, the whole value below), enough to decide the
/// acceptance test except on a tie of those bits (p < 2^-31).
#[derive(Debug, Clone, Copy)]
pub(super) struct Member {
    pub(super) top: u32,
    pub(super) id: u32,
}

/// Bits of a group-k value below the 32 kept in [`Member::top`].
#[inline]
pub(super) fn shift(k: usize) -> u32 {
    k.saturating_sub(31) as u32
}

/// Clients grouped by ⌊log2 value⌋. `slot[id]` is the index in its group's
/// member list, `group[id]` the group, so removal is a swap-remove.
#[derive(Debug, Clone)]
pub(super) struct O1Draw {
    pub(super) members: [Vec<Member>; 64],
    pub(super) sums: [u64; 64],
    /// `len << (k+1)` for group k when one 32-bit half of a word can carry
    /// a candidate's index and acceptance bits (k < 32, len ≤ 2^31 >> k),
    /// else 0: kept with the member lists so a draw does not work it out.
    pub(super) spans: [u64; 64],
    pub(super) nonempty: u64,
    pub(super) slot: Vec<usize>,
    pub(super) group: Vec<u8>,
    /// Bumped by every change of the members, so that a planned lottery
    /// knows whether the group and candidates it worked out still hold.
    pub(super) version: u64,
}

impl Default for O1Draw {
    fn default() -> Self {
        O1Draw {
            members: std::array::from_fn(|_| Vec::new()),
            sums: [0; 64],
            spans: [0; 64],
            nonempty: 0,
            slot: Vec::new(),
            group: Vec::new(),
            version: 0,
        }
    }
}

/// Largest id the O(1) draw can hold (ids are 32 bits in a [`Member`]).
pub(super) const O1_MAX_ID: usize = u32::MAX as usize;

/// The member index a joint-path candidate u names in group k (its low
/// k + 1 bits are the acceptance bits): shared by the draw and the
/// look-ahead, which must aim at the members the draw will read.
#[inline(always)]
pub(super) fn joint_index(k: usize, u: u64) -> usize {
    (u >> (k + 1)) as usize
}

impl O1Draw {
    pub(super) fn insert(&mut self, id: usize, v: u64) {
        let k = 63 - v.leading_zeros() as usize;
        self.slot[id] = self.members[k].len();
        self.group[id] = k as u8;
        // `join` refuses ids above O1_MAX_ID, so the cast keeps the id.
        self.members[k].push(Member {
            top: (v >> shift(k)) as u32,
            id: id as u32,
        });
        self.sums[k] += v;
        self.nonempty |= 1 << k;
        self.respan(k);
        self.version = self.version.wrapping_add(1);
    }

    pub(super) fn respan(&mut self, k: usize) {
        let len = self.members[k].len() as u64;
        let joint = k < 32 && len <= (1u64 << 31) >> k;
        self.spans[k] = if joint { len << (k + 1) } else { 0 };
    }

    pub(super) fn remove(&mut self, id: usize, v: u64) {
        let k = self.group[id] as usize;
        let s = self.slot[id];
        let m = &mut self.members[k];
        m.swap_remove(s);
        if s < m.len() {
            self.slot[m[s].id as usize] = s;
        }
        self.sums[k] -= v;
        if m.is_empty() {
            self.nonempty &= !(1 << k);
        }
        self.respan(k);
        self.version = self.version.wrapping_add(1);
    }

    /// A new value for a member: in place when it stays in its group.
    pub(super) fn update(&mut self, id: usize, old: u64, new: u64) {
        let k = self.group[id] as usize;
        if 63 - new.leading_zeros() as usize == k {
            self.members[k][self.slot[id]].top = (new >> shift(k)) as u32;
            self.sums[k] = self.sums[k] - old + new;
            self.version = self.version.wrapping_add(1);
        } else {
            self.remove(id, old);
            self.insert(id, new);
        }
    }

    #[inline]
    pub(super) fn pick<R: Rng>(&self, rng: &mut R, total: u64, clients: &[Client]) -> usize {
        let (k, _) = self.group(rng.below(total));
        let k = k % 64;
        // The first round of the joint path (below) inline, where most
        // lotteries end; a failed round or the other path go on out of
        // line, from the next round, taking the same words in the same
        // order as if the first round had run there. The rounds' set-up
        // (masks, shifts) and registers are then paid only when needed.
        let span = self.spans[k];
        if span != 0 {
            if let Some((u1, u2)) = two_below(rng.next_u64(), span) {
                if let Some(id) = self.joint_round(k, [u1, u2]) {
                    return id;
                }
            }
        }
        self.rounds(rng, k, clients)
    }

    /// One round of the joint path in group k from N uniform draws below
    /// `len << (k+1)` (two in the ordinary draw, [`O1_CANDIDATES`] in the
    /// look-ahead): each is a candidate's index (high bits) and acceptance
    /// bits (the low k + 1); the first that accepts wins. Taken last to
    /// first, so that the first acceptance is the last to set `id`.
    /// Values < 2^32 here, so bits < value is the sign of their difference;
    /// arithmetic rather than compares, so that the compiler neither
    /// branches on a candidate (a coin flip to a predictor) nor delays the
    /// next one's load, and one sign test of them all OR-ed covers "any
    /// accepts".
    #[inline(always)]
    pub(super) fn joint_round<const N: usize>(&self, k: usize, u: [u64; N]) -> Option<usize> {
        let k = k % 64;
        let bits = (1u64 << (k + 1)) - 1;
        let m = &self.members[k];
        let (mut id, mut any) = (0u32, 0u64);
        for &u in u.iter().rev() {
            let c = m.get(joint_index(k, u))?;
            let d = (u & bits).wrapping_sub(c.top as u64);
            id ^= (c.id ^ id) & ((d as i64) >> 63) as u32;
            any |= d;
        }
        ((any as i64) < 0).then_some(id as usize)
    }

    /// Rounds of candidates in group `k` until one is accepted.
    #[inline(never)]
    pub(super) fn rounds<R: Rng>(&self, rng: &mut R, k: usize, clients: &[Client]) -> usize {
        // Nothing below panics (no bounds checks): a panic path would make
        // the compiler keep the generator's state in memory, not registers.
        let k = k % 64;
        let m = &self.members[k];
        let len = m.len() as u64;
        let sh = shift(k);
        // One 32-bit half of a word gives a candidate its index and its k+1
        // acceptance bits together, as one uniform u < len·2^(k+1) (index
        // u >> (k+1), bits the rest), when that product fits in 32 bits.
        let span = self.spans[k];
        let joint = span != 0;
        loop {
            // A member uniformly, accepted with probability value/2^(k+1):
            // P(id) ∝ (1/len)·value/2^(k+1) ∝ value, and value ≥ 2^k makes
            // acceptance ≥ 1/2. Two independent candidates per round, both
            // loaded at once: the first accepted of an i.i.d. sequence of
            // trials has the law of one trial repeated until accepted, and a
            // round fails with probability ≤ 1/4.
            if joint {
                let Some((u1, u2)) = two_below(rng.next_u64(), span) else {
                    continue;
                };
                match self.joint_round(k, [u1, u2]) {
                    Some(id) => return id,
                    None => continue,
                }
            }
            let Some((j1, j2)) = two_below(rng.next_u64(), len) else {
                continue;
            };
            let (b1, b2) = if k < 32 {
                // Both candidates' k+1 uniform bits from one word's halves.
                let x = rng.next_u64();
                ((x & 0xffff_ffff) >> (31 - k), x >> (63 - k))
            } else {
                (rng.next_u64() >> (63 - k), rng.next_u64() >> (63 - k))
            };
            let (Some(&c1), Some(&c2)) = (m.get(j1 as usize), m.get(j2 as usize)) else {
                continue;
            };
            let a1 = accepts(b1, sh, c1, clients);
            let a2 = accepts(b2, sh, c2, clients);
            if a1 | a2 {
                return if a1 { c1.id } else { c2.id } as usize;
            }
        }
    }

    /// Plan a lottery from words of `rng` (the look-ahead's own) — one for
    /// the ticket, one per two candidates — and prefetch the members its
    /// first round will read.
    #[inline(always)]
    pub(super) fn plan(&self, rng: &mut WyRand, total: u64, order: &Order) -> Plan {
        let ticket = rng.next_u64();
        let mut words = [0; O1_CANDIDATES.div_ceil(2)];
        for w in &mut words {
            *w = rng.next_u64();
        }
        let mut p = Plan {
            version: self.version,
            k: PLAN_NONE,
            cands: [0; O1_CANDIDATES],
        };
        let Some(r) = below_word(ticket, total) else {
            return p;
        };
        let k = self.group_ahead(r, order);
        p.k = k | PLAN_GROUP_ONLY;
        if let Some(cands) = self.candidates(k, words) {
            let base = self.members[k].as_ptr();
            for u in cands {
                prefetch_line(base.wrapping_add(joint_index(k, u)));
            }
            (p.k, p.cands) = (k, cands);
        }
        p
    }

    /// The candidates `words` name in group k, uniform below
    /// `len << (k+1)` (index and acceptance bits, as in
    /// [`O1Draw::joint_round`]), two from each word by [`pair_below`] —
    /// the 32-bit halves of [`O1Draw::pick`] are rejected ~10% of the time
    /// at 10^6 clients. None when a word is rejected or the group holds
    /// values ≥ 2^32.
    #[inline(always)]
    pub(super) fn candidates(
        &self,
        k: usize,
        words: [u64; O1_CANDIDATES.div_ceil(2)],
    ) -> Option<[u64; O1_CANDIDATES]> {
        // The joint span (0 when the group has none), below 2^32 so that
        // span² fits a word.
        let span = self.spans[k % 64];
        if span.wrapping_sub(1) >= u32::MAX as u64 {
            return None;
        }
        let mut c = [0; O1_CANDIDATES];
        for (i, &w) in words.iter().enumerate() {
            let (a, b) = pair_below(w, span)?;
            c[2 * i] = a;
            if let Some(x) = c.get_mut(2 * i + 1) {
                *x = b;
            }
        }
        Some(c)
    }

    /// A lottery of the look-ahead: the oldest plan is held and a new one
    /// made in its place for the lottery [`O1_LOOKAHEAD`] picks on. The
    /// plan's group and candidates stand if no client changed since it was
    /// made; else the lottery is drawn afresh from `retry`, as is whatever
    /// the plan cannot settle — a rejected word, a group of values ≥ 2^32,
    /// a first round that accepts no one. The law is the ordinary draw's:
    /// the ticket is uniform, and the first accepted of independent
    /// uniform candidates is drawn with probability ∝ value, from
    /// whichever generator they come.
    #[inline]
    pub(super) fn pick_ahead(&self, a: &mut LookAhead, total: u64, clients: &[Client]) -> usize {
        if a.order_version != self.version {
            (a.order, a.order_version) = (self.order(), self.version);
        }
        let i = a.next % O1_LOOKAHEAD;
        let p = &a.plans[i];
        // The lottery is settled from its plan before the plan's slot is
        // reused (no copy of it); its words were taken long ago.
        let held = if p.version == self.version && p.k < 64 {
            self.joint_round(p.k, p.cands).ok_or(p.k)
        } else if p.version == self.version && p.k < PLAN_NONE {
            Err(p.k - PLAN_GROUP_ONLY)
        } else {
            Err(PLAN_NONE)
        };
        a.plans[i] = self.plan(&mut a.words, total, &a.order);
        a.next = (i + 1) % O1_LOOKAHEAD;
        match held {
            Ok(id) => id,
            Err(PLAN_NONE) => self.redraw(&mut a.retry, total, clients),
            Err(k) => {
                let id = self.rounds(&mut a.retry, k, clients);
                self.prefetch_retry(&a.retry, k);
                id
            }
        }
    }

    /// The group a ticket r names in the look-ahead's order of the groups
    /// (`order`, from [`O1Draw::order`]): one compare, made arithmetic (a
    /// branch on it would be a coin flip to a predictor), tells the two
    /// heaviest groups apart; the scan past them is rare.
    #[inline(always)]
    pub(super) fn group_ahead(&self, r: u64, order: &Order) -> usize {
        if r >= order.cut[1] {
            return self.group_rest(r - order.cut[1], order.rest).0;
        }
        order.first[(r >= order.cut[0]) as usize]
    }

    /// The group of offset r past the first two groups of either order
    /// ([`O1Draw::group`], [`O1Draw::group_ahead`]), and r's offset in it:
    /// the groups of `mask` laid end to end from the top down.
    #[inline]
    pub(super) fn group_rest(&self, mut r: u64, mut mask: u64) -> (usize, u64) {
        loop {
            let k = 63 - (mask | 1).leading_zeros() as usize;
            mask &= !(1 << k);
            if r < self.sums[k] || mask == 0 {
                return (k, r);
            }
            r -= self.sums[k];
        }
    }

    /// A lottery whose plan is stale or lost its ticket, drawn afresh from
    /// the retry generator; out of line, as the plan's fallbacks are.
    #[inline(never)]
    pub(super) fn redraw(&self, retry: &mut WyRand, total: u64, clients: &[Client]) -> usize {
        self.pick(retry, total, clients)
    }

    /// Prefetch the members the next retry round would take in group k
    /// (retry words are taken only by failed first rounds, so the lines
    /// stay until the next failure, which is most often in the same group).
    #[inline(never)]
    pub(super) fn prefetch_retry(&self, retry: &WyRand, k: usize) {
        let k = k % 64;
        let mut g = retry.clone();
        if let Some((u1, u2)) = two_below(g.next_u64(), self.spans[k]) {
            let base = self.members[k].as_ptr();
            prefetch_line(base.wrapping_add(joint_index(k, u1)));
            prefetch_line(base.wrapping_add(joint_index(k, u2)));
        }
    }

    /// The group whose stretch of `[0, total)` holds `r`, the groups laid
    /// end to end from the largest values down, and r's offset in it. The
    /// two top groups are told apart without a branch (they usually hold most of
    /// the tickets, and which one wins is a coin flip to a predictor); the
    /// rest are scanned. `| 1` and `% 64` only keep a broken invariant
    /// (r ≥ Σ sums) from indexing out; it cannot arise.
    #[inline]
    pub(super) fn group(&self, mut r: u64) -> (usize, u64) {
        let mut mask = self.nonempty;
        let k1 = 63 - (mask | 1).leading_zeros() as usize;
        mask &= !(1 << k1);
        let k2 = 63 - (mask | 1).leading_zeros() as usize;
        let s1 = self.sums[k1 % 64];
        let s2 = self.sums[k2 % 64] & 0u64.wrapping_sub((mask != 0) as u64);
        // Comparisons as sign bits of differences (every sum is < 2^63):
        // written as compares, the compiler turns them back into branches.
        let second = s1.wrapping_sub(r).wrapping_sub(1) >> 63;
        r -= s1 & 0u64.wrapping_sub(second);
        let k = k1 ^ ((k1 ^ k2) & 0usize.wrapping_sub(second as usize));
        if second & (s2.wrapping_sub(r).wrapping_sub(1) >> 63) != 0 {
            return self.group_rest(r - s2, mask & !(1 << k2));
        }
        (k, r)
    }

    /// The look-ahead's order of the groups: which group a ticket names
    /// does not change the law, so the two of the largest sums come first
    /// and the scan past them (a branch, mispredicted when taken) is rare.
    /// With weights over 1..=1024, the two top groups by value hold 75% of
    /// the tickets, the two heaviest 94%.
    pub(super) fn order(&self) -> Order {
        let first = self.heaviest();
        let one = first[0] == first[1];
        let cut0 = self.sums[first[0]];
        let cut1 = cut0 + if one { 0 } else { self.sums[first[1]] };
        Order {
            first,
            cut: [cut0, cut1],
            rest: self.nonempty & !(1 << first[0]) & !(1 << first[1]),
        }
    }

    /// The two groups of the largest sums (ties to the lower group; the
    /// second is the first when one group is nonempty).
    pub(super) fn heaviest(&self) -> [usize; 2] {
        let (mut a, mut b) = (64, 64);
        let mut m = self.nonempty;
        while m != 0 {
            let k = m.trailing_zeros() as usize;
            m &= m - 1;
            let s = self.sums[k];
            if a == 64 || s > self.sums[a] {
                (a, b) = (k, a);
            } else if b == 64 || s > self.sums[b] {
                b = k;
            }
        }
        let a = a % 64;
        [a, if b == 64 { a } else { b }]
    }
}

/// A uniform integer below `n` ≥ 1 from one word by Lemire's
/// multiply-shift, or None (probability < n/2^64) when the word falls in
/// the sliver that would bias it.
#[inline(always)]
pub(super) fn below_word(w: u64, n: u64) -> Option<u64> {
    let m = (w as u128) * (n as u128);
    let lo = m as u64;
    if lo < n && lo < n.wrapping_neg() % n {
        return None;
    }
    Some((m >> 64) as u64)
}

/// Two independent uniform draws below `n` (1 ≤ n < 2^32) from one word:
/// Lemire's multiply-shift for the range n², its result's two base-n
/// digits taken one multiplication at a time (the high word of w·n is the
/// first; the high word of the low word times n the second, and that
/// low word is w·n² mod 2^64, the one Lemire's rejection tests). None
/// (probability < n²/2^64) when w falls in the sliver that would bias it.
#[inline(always)]
pub(super) fn pair_below(w: u64, n: u64) -> Option<(u64, u64)> {
    let m1 = (w as u128) * (n as u128);
    let m2 = (m1 as u64 as u128) * (n as u128);
    let lo = m2 as u64;
    let nn = n * n;
    if lo < nn && lo < nn.wrapping_neg() % nn {
        return None;
    }
    Some(((m1 >> 64) as u64, (m2 >> 64) as u64))
}

/// Two independent uniform indices below `len` (1 ≤ len ≤ 2^32) from the
/// halves of one word, each by Lemire's multiply-shift on 32 bits; None
/// (probability < 2·len/2^32) when either half falls in the rejected
/// sliver that would bias it, and the caller draws again.
#[inline]
pub(super) fn two_below(x: u64, len: u64) -> Option<(u64, u64)> {
    let p1 = (x & 0xffff_ffff) * len;
    let p2 = (x >> 32) * len;
    let lo = (p1 & 0xffff_ffff).min(p2 & 0xffff_ffff);
    if lo < len && lo < (1u64 << 32) % len {
        return None;
    }
    Some((p1 >> 32, p2 >> 32))
}

/// Whether `bits` (uniform below 2^(k+1)) is below the member's value:
/// decided by its top 32 bits, and on a tie of those by the full value.
#[inline]
pub(super) fn accepts(bits: u64, sh: u32, c: Member, clients: &[Client]) -> bool {
    let b = bits >> sh;
    let top = c.top as u64;
    if b != top || sh == 0 {
        return b < top;
    }
    clients
        .get(c.id as usize)
        .is_some_and(|v| bits < v.tickets + v.extra)
}
