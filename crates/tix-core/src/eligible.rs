//! The eligible queue EEVDF uses: "the smallest virtual finish (deadline)
//! among the clients whose virtual start (vruntime) is ≤ V", ties to the
//! lower id (GR3 §3's WF2Q+ rule; Linux fair.c's pick_eevdf), for any keys.
//! WF2Q+ itself uses [`crate::weight_classes`], which needs finish − start
//! fixed per weight; EEVDF's deadline − vruntime is not after partial
//! charges. (The WF2Q+ schedules were recorded on this queue and still
//! match it.)
//!
//! One implicit tournament tree over the dense client ids. Every client is
//! flagged eligible, ineligible or out; each node keeps two minima of its
//! subtree: the smallest (finish, id) among eligible-flagged leaves and the
//! smallest (start, id) among ineligible-flagged ones. A change is one
//! leaf-to-root walk whose addresses are known before it starts, so the
//! loads of the siblings overlap instead of chaining as heap sift-downs do.
//! Keys are stored as 96 bits above a base with the id below them, so a
//! minimum is one u128 compare and a node is 32 bytes (a sibling pair is
//! one cache line). When the queued keys spread over more than 2^95 (WF2Q+:
//! about a year of service at weight 1; EEVDF: far more) the queue falls
//! back to an O(n) scan until they fit again. The flags are hints, not
//! truth: [`EligibleQueue::take`] promotes every ineligible leaf with
//! start ≤ V and sends an eligible-flagged winner with start > V back
//! (EEVDF's V can move backwards), so the answer is always the exact
//! minimum over all queued clients with start ≤ V. Clients with equal keys
//! on consecutive ids (equal weights joined together) are served and
//! promoted as runs: a run of takes touches no node until it ends, and a
//! run of promotions rewrites the nodes above it once (`take_next`,
//! `promote_run`, `update_range`); other id orders take the walks above.
//! When a run's members also end with equal keys (equal weights charged
//! alike) their leaves differ only in the id, so every node wholly inside
//! the run is written without reading its children (`fill_run`).
//! Up to 16 slots there is no tree at all: a take scans the slots, which
//! costs less than the walks' data-dependent branches at that size.

use crate::error::{Error, Result};
use crate::sched::ClientId;

/// n / d, by the 64-bit divide when both fit (a u128 division is a
/// library call several times slower); the quotient is the same.
#[inline]
pub(crate) fn udiv(n: u128, d: u128) -> u128 {
    if (n | d) >> 64 == 0 {
        (n as u64 / d as u64) as u128
    } else {
        n / d
    }
}

/// Id of no client; real ids stay below it (checked on [`EligibleQueue::add`]).
const NONE: u32 = u32::MAX;

/// An empty minimum. A packed real key has an id below NONE in its low 32
/// bits, so it is never equal to this and always smaller.
const EMPTY: u128 = u128::MAX;

/// Width of a stored key (key − base); the rest of the u128 is the id.
const REL_BITS: u32 = 96;

/// Largest spread of queued keys kept in the tree. The base sits 2^94 below
/// the smallest, so after a rebuild every key can move 2^94 − 1 either
/// way before the next one: rebuilds (O(n)) come at most once per 2^94 of
/// virtual time, ≥ 2^34 whole-quantum charges of a weight-1 WF2Q+ client
/// at 1 ms quanta.
const SPREAD: i128 = 1 << 95;

/// Minima of one subtree as packed (key − base, id): `e` over the
/// eligible-flagged leaves (keyed by finish), `i` over the ineligible-flagged
/// ones (keyed by start). Packed order is (key, id) order, ties to the lower id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(align(32))]
struct Node {
    e: u128,
    i: u128,
}

const EMPTY_NODE: Node = Node { e: EMPTY, i: EMPTY };

/// Node p's value from its children's (every rebuild and range pass folds
/// with this; the walks keep their values in registers instead).
#[inline(always)]
fn fold(t: &[Node], p: usize) -> Node {
    let (a, b) = (t[2 * p], t[2 * p + 1]);
    Node {
        e: min2(a.e, b.e),
        i: min2(a.i, b.i),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flag {
    Out,
    Eligible,
    Ineligible,
}

/// The branch-free minimum the winner trees share (along a walk every
/// comparison is a coin flip; see [`crate::tournament::min_u128`] for why it is asm).
use crate::tournament::min_u128 as min2;

/// Queue of clients keyed by (virtual start, virtual finish); see the module
/// header. Slots are dense ids added with [`EligibleQueue::add`]; a client's
/// keys may change only while it is out of the queue (or be re-queued after).
#[derive(Debug, Clone)]
pub struct EligibleQueue {
    pub(crate) start: Vec<i128>,
    pub(crate) finish: Vec<i128>,
    flag: Vec<Flag>,
    /// Number of eligible-flagged clients (by `flag`, stale leaf or not).
    n_eligible: usize,
    /// Node n at `tree[n + off]`; root 1, leaves at `cap + id`; `cap` is
    /// a power of two. `off` (0 or 1) puts siblings 2k and 2k + 1 in one
    /// 64-byte line (a clone may lose that: slower, never wrong).
    tree: Vec<Node>,
    off: usize,
    cap: usize,
    /// Stored keys are key − base.
    base: i128,
    /// The keys do not fit 96 bits above any base: the tree is stale and
    /// take scans every slot.
    wide: bool,
    /// The clients taken since the tree was last brought up to date, a
    /// run of consecutive ids a..=b whose leaves are stale: they still show
    /// each client as the eligible winner it was when taken, while `flag`
    /// holds the truth (out after the take, re-queued after its charge).
    /// Nothing reads the minima between a pick and its charge, so a leaf is
    /// written once, at a later query, instead of at the take and again at
    /// the re-queue. A run of one is written by one walk, beside the next
    /// promotion's when that one is known (`walk2`); a longer run by one
    /// bottom-up pass over the nodes above it (`update_range`). Walks of
    /// other leaves meanwhile see the stale leaves, which the flush then
    /// corrects, since it rewrites every node above them.
    pending: Option<(usize, usize)>,
    /// Packed (finish, id) of the last take, while every eligible-flagged
    /// leaf outside the run is known to hold a larger value (EMPTY once any
    /// leaf outside the run has been written): see `take_next`.
    last: u128,
    /// The finish of `last`, unpacked (valid while `last` is set).
    last_f: i128,
    /// What the run's stale leaves hide, as plain keys: the smallest finish
    /// among run members re-queued eligible since the run began, and the
    /// smallest start among those re-queued ineligible (i128::MAX: none).
    /// Kept unpacked so a re-queue packs nothing: a key that no longer fits
    /// above the base is found when the run is flushed, which rebuilds.
    pmin_f: i128,
    pmin_s: i128,
    /// Up to this many slots the queue keeps no tree: a take scans the
    /// slots (`small_take`). With a handful of clients the walks' loop
    /// exits and promotions were 3.4 mispredicts and ~780 instructions per
    /// EEVDF pick + charge at 10 clients (cachegrind); the scan has neither
    /// walks nor promotions. The tree is built when the slots outgrow it.
    scan_max: usize,
    /// `len() ≤ scan_max`: the tree is not kept (see `scan_max`). Kept
    /// rather than derived: the take and every re-queue ask, and deriving
    /// it cost 8 more instructions per pick + charge at 10 clients.
    small: bool,
}

/// Default `scan_max`: slots a take scans before the tree pays.
const SCAN_MAX: usize = 16;

impl Default for EligibleQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EligibleQueue {
    pub fn new() -> Self {
        EligibleQueue {
            start: Vec::new(),
            finish: Vec::new(),
            flag: Vec::new(),
            n_eligible: 0,
            tree: vec![EMPTY_NODE; 3],
            off: 0,
            cap: 1,
            base: 0,
            wide: false,
            pending: None,
            last: EMPTY,
            last_f: 0,
            pmin_f: i128::MAX,
            pmin_s: i128::MAX,
            scan_max: SCAN_MAX,
            small: true,
        }
    }

    /// A queue that scans its slots while there are at most `n` of them
    /// (0: always the tree), instead of the default 16 (tests hold each
    /// form to the same answers).
    pub fn with_scan_max(n: usize) -> Self {
        EligibleQueue {
            scan_max: n,
            small: n > 0,
            ..Self::new()
        }
    }

    /// Number of client slots.
    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// Refuse a slot whose id would not fit the tree's u32 ids (four billion
    /// clients; the memory runs out long before). Call before handing out
    /// the id, so a refusal leaves everything unchanged.
    pub fn check_room(&self) -> Result<()> {
        if self.start.len() >= NONE as usize {
            Err(Error::Overflow("more than 2^32 - 1 clients"))
        } else {
            Ok(())
        }
    }

    /// A new client slot with id `len()`, not queued, keys 0.
    pub fn add(&mut self) -> Result<ClientId> {
        self.check_room()?;
        let id = self.start.len();
        self.start.push(0);
        self.finish.push(0);
        self.flag.push(Flag::Out);
        let small = self.small && self.start.len() <= self.scan_max;
        if id == self.cap || small != self.small {
            self.cap = self.cap.max((id + 1).next_power_of_two());
            self.small = small;
            // Leaving the scan: the tree is built from the flags and keys,
            // which the scan kept as hints (see `small_take`).
            self.rebuild();
        }
        Ok(id)
    }

    #[inline(always)]
    fn node(&self, n: usize) -> &Node {
        &self.tree[n + self.off]
    }

    /// (key − base) << 32 | id, or None when key − base is outside 0..2^96.
    #[inline(always)]
    fn pack(&self, key: i128, id: ClientId) -> Option<u128> {
        let (rel, overflow) = key.overflowing_sub(self.base);
        (!overflow && rel >= 0 && rel >> REL_BITS == 0).then_some((rel as u128) << 32 | id as u128)
    }

    fn unpack(&self, p: u128) -> (i128, ClientId) {
        // In range by construction: p was packed from a key ≥ base.
        (self.base + (p >> 32) as i128, (p as u32) as usize)
    }

    /// Recompute the base from every queued key and rewrite the whole tree
    /// (or fall back to scanning when the keys spread too far).
    fn rebuild(&mut self) {
        self.pending = None;
        self.last = EMPTY;
        let queued = (0..self.flag.len()).filter(|&c| self.flag[c] != Flag::Out);
        let keys = queued.flat_map(|c| [self.start[c], self.finish[c]]);
        let (lo, hi) = keys.fold((i128::MAX, i128::MIN), |(lo, hi), k| (lo.min(k), hi.max(k)));
        self.wide = lo <= hi && hi.checked_sub(lo).is_none_or(|d| d > SPREAD);
        self.tree = vec![EMPTY_NODE; 2 * self.cap + 1];
        self.off = (self.tree.as_ptr() as usize / 32) & 1;
        if self.wide {
            return;
        }
        self.base = if lo <= hi {
            lo.saturating_sub(1 << 94)
        } else {
            0
        };
        for c in 0..self.flag.len() {
            let n = self.cap + c;
            let (e, i) = self.leaf_value(c).unwrap_or((EMPTY, EMPTY));
            self.tree[n + self.off] = Node { e, i };
        }
        let t = &mut self.tree[self.off..];
        for n in (1..self.cap).rev() {
            t[n] = fold(t, n);
        }
    }

    /// The packed halves of a leaf as its flag says, or None when its keys
    /// do not fit above the base. Both keys are checked, so a later
    /// promotion or demotion of a queued client always fits.
    #[inline(always)]
    fn leaf_value(&self, id: ClientId) -> Option<(u128, u128)> {
        if self.flag[id] == Flag::Out {
            return Some((EMPTY, EMPTY));
        }
        let s = self.pack(self.start[id], id)?;
        let f = self.pack(self.finish[id], id)?;
        Some(match self.flag[id] {
            Flag::Eligible => (f, EMPTY),
            _ => (EMPTY, s),
        })
    }

    /// Set a client's flag (the tree is left as it is).
    #[inline(always)]
    fn reflag(&mut self, id: ClientId, flag: Flag) {
        self.n_eligible -= (self.flag[id] == Flag::Eligible) as usize;
        self.n_eligible += (flag == Flag::Eligible) as usize;
        self.flag[id] = flag;
    }

    /// Set a client's flag and bring the tree up to date.
    #[inline]
    fn set_flag(&mut self, id: ClientId, flag: Flag) {
        self.reflag(id, flag);
        self.last = EMPTY;
        if self.wide || self.small {
            return;
        }
        match self.leaf_value(id) {
            Some((e, i)) => self.walk(id, e, i),
            None => self.rebuild(),
        }
    }

    #[inline(always)]
    fn walk(&mut self, id: ClientId, e: u128, i: u128) {
        self.walk_from(self.cap + id, e, i);
    }

    /// Write node n and recompute every node above it. Everything travels
    /// in scalars: when the running minima or the leaf lived in a `Node`,
    /// LLVM kept it in memory and reloaded it with wide loads right after
    /// narrow stores, a failed store-to-load forward at every level.
    #[inline(always)]
    fn walk_from(&mut self, mut n: usize, mut e: u128, mut i: u128) {
        let t = &mut self.tree[self.off..];
        loop {
            t[n] = Node { e, i };
            if n <= 1 {
                return;
            }
            let s = t[n ^ 1];
            e = min2(e, s.e);
            i = min2(i, s.i);
            n >>= 1;
        }
    }

    /// Two leaves (a ≠ b) written and their paths recomputed side by side:
    /// the two dependency chains overlap until the paths meet, then one
    /// walk goes on from the meeting node. Leaves are all at one depth, so
    /// the paths meet exactly when the two nodes become siblings.
    #[inline(always)]
    fn walk2(&mut self, a: (ClientId, u128, u128), b: (ClientId, u128, u128)) {
        let (mut na, mut ea, mut ia) = (self.cap + a.0, a.1, a.2);
        let (mut nb, mut eb, mut ib) = (self.cap + b.0, b.1, b.2);
        let t = &mut self.tree[self.off..];
        loop {
            t[na] = Node { e: ea, i: ia };
            t[nb] = Node { e: eb, i: ib };
            if na >> 1 == nb >> 1 {
                return self.walk_from(na >> 1, min2(ea, eb), min2(ia, ib));
            }
            let sa = t[na ^ 1];
            let sb = t[nb ^ 1];
            ea = min2(ea, sa.e);
            ia = min2(ia, sa.i);
            eb = min2(eb, sb.e);
            ib = min2(ib, sb.i);
            na >>= 1;
            nb >>= 1;
        }
    }

    /// Recompute every node above the leaves of ids lo..=hi, written
    /// already but for hi's, whose (e, i) is `last`: level by level while
    /// the range spans several nodes, then one walk from the node where it
    /// narrows to one. About 2·(hi − lo) + depth nodes, against
    /// (hi − lo + 1)·depth for a walk per leaf. The value walked up stays
    /// in registers (see `walk_from`: reloading a just-stored node fails
    /// store-to-load forwarding), so a range of one is exactly a walk.
    fn update_range(&mut self, lo: ClientId, hi: ClientId, last: (u128, u128)) {
        let (mut l, mut h) = (self.cap + lo, self.cap + hi);
        let (mut e, mut i) = last;
        let t = &mut self.tree[self.off..];
        if l != h {
            t[h] = Node { e, i };
        }
        while l != h {
            l >>= 1;
            h >>= 1;
            for p in l..=h {
                let n = fold(t, p);
                t[p] = n;
                (e, i) = (n.e, n.i);
            }
        }
        self.walk_from(l, e, i);
    }

    /// Write the leaves of ids lo..=hi, whose packed values are (e0, i0)
    /// plus the id's offset from lo (EMPTY halves stay EMPTY), and bring
    /// every node above them up to date. Packed values grow with the id, so
    /// a node whose leaves all lie in the range holds its leftmost leaf's
    /// value: it is written without reading its children. Only the two end
    /// nodes of each level, which may also cover leaves outside the range,
    /// are folded from their children; then one walk goes on from the node
    /// where the range narrows to one, as in `update_range`.
    fn fill_run(&mut self, lo: ClientId, hi: ClientId, e0: u128, i0: u128) {
        if lo == hi {
            self.walk(lo, e0, i0)
        } else {
            self.fill_range(lo, hi, e0, i0)
        }
    }

    /// `fill_run` of two ids or more. Out of line: inlined, it made the
    /// single walk beside it slower (measured: +100 instructions a pick
    /// with ids in hash order, where nearly every run is one id).
    #[inline(never)]
    fn fill_range(&mut self, lo: ClientId, hi: ClientId, e0: u128, i0: u128) {
        #[inline(always)]
        fn at(x0: u128, d: usize) -> u128 {
            // x0 + d stays below EMPTY: ids stay below NONE (`check_room`).
            if x0 == EMPTY {
                EMPTY
            } else {
                x0 + d as u128
            }
        }
        let (first, last) = (self.cap + lo, self.cap + hi);
        let t = &mut self.tree[self.off..];
        for (d, n) in t[first..=last].iter_mut().enumerate() {
            *n = Node {
                e: at(e0, d),
                i: at(i0, d),
            };
        }
        let (mut l, mut h) = (first, last);
        let (mut e, mut i) = (at(e0, 0), at(i0, 0));
        let mut k = 0;
        while l != h {
            l >>= 1;
            h >>= 1;
            k += 1;
            // Interior nodes: their leftmost leaf p << k lies in the range.
            if h > l + 1 {
                for (p, n) in (l + 1..).zip(&mut t[l + 1..h]) {
                    let d = (p << k) - first;
                    *n = Node {
                        e: at(e0, d),
                        i: at(i0, d),
                    };
                }
            }
            t[h] = fold(t, h);
            let n = fold(t, l);
            (e, i) = (n.e, n.i);
            if l != h {
                t[l] = n;
            }
        }
        self.walk_from(l, e, i);
    }

    fn in_run(&self, id: ClientId) -> bool {
        self.pending.is_some_and(|(a, b)| a <= id && id <= b)
    }

    /// Before any other change to a client: a stale (pending) leaf of its
    /// own is about to be rewritten. A run of just this client is pending
    /// no more (the caller's walk rewrites it); a longer run is flushed.
    fn touch(&mut self, id: ClientId) {
        match self.pending {
            Some((a, b)) if a == id && b == id => self.pending = None,
            Some(_) if self.in_run(id) => self.flush(),
            _ => {}
        }
    }

    /// Write the pending run's leaves, if any, as their flags say.
    fn flush(&mut self) {
        let Some((a, b)) = self.pending.take() else {
            return;
        };
        self.last = EMPTY;
        if self.wide {
            return;
        }
        // Equal weights joined together are taken, charged and re-queued
        // alike: their leaves differ only in the id, and `fill_run` writes
        // them (and most nodes above) without a load or a pack each.
        let (fl, s, f) = (self.flag[a], self.start[a], self.finish[a]);
        let same = |j: usize| self.flag[j] == fl && self.start[j] == s && self.finish[j] == f;
        if (a + 1..=b).all(same) {
            return match self.leaf_value(a) {
                Some((e, i)) => self.fill_run(a, b, e, i),
                None => self.rebuild(),
            };
        }
        let mut last = (EMPTY, EMPTY);
        for id in a..=b {
            match self.leaf_value(id) {
                Some((e, i)) if id == b => last = (e, i),
                Some((e, i)) => self.tree[self.cap + id + self.off] = Node { e, i },
                None => return self.rebuild(),
            }
        }
        self.update_range(a, b, last);
    }

    /// Queue (or re-queue) a client with its current start and finish.
    pub(crate) fn insert(&mut self, id: ClientId) {
        self.touch(id);
        self.set_flag(id, Flag::Ineligible);
    }

    /// Re-queue a client after its charge: flagged eligible at once if
    /// start ≤ v, saving the promotion walk at the next pick.
    // Inlined into the policies' charge (the run case is most calls when
    // equal weights hold adjacent ids); the rest stays out of line.
    #[inline(always)]
    pub(crate) fn requeue(&mut self, id: ClientId, v: i128) {
        let flag = if self.start[id] <= v {
            Flag::Eligible
        } else {
            Flag::Ineligible
        };
        if self.in_run(id) && !self.wide {
            // Taken: the leaf stays stale until a later query (see
            // `pending`); the flush rebuilds if its keys need a new base.
            self.reflag(id, flag);
            if flag == Flag::Eligible {
                self.pmin_f = self.pmin_f.min(self.finish[id]);
            } else {
                self.pmin_s = self.pmin_s.min(self.start[id]);
            }
            return;
        }
        self.requeue_walk(id, flag);
    }

    #[inline(never)]
    fn requeue_walk(&mut self, id: ClientId, flag: Flag) {
        self.touch(id);
        self.set_flag(id, flag);
    }

    pub(crate) fn dequeue(&mut self, id: ClientId) {
        self.touch(id);
        self.set_flag(id, Flag::Out);
    }

    fn slot(&self, id: ClientId) -> Result<()> {
        if id < self.start.len() {
            Ok(())
        } else {
            Err(Error::UnknownClient(id))
        }
    }

    /// Set a slot's keys and queue it (the public form of insert).
    pub fn enqueue(&mut self, id: ClientId, start: i128, finish: i128) -> Result<()> {
        self.slot(id)?;
        self.touch(id);
        self.start[id] = start;
        self.finish[id] = finish;
        self.insert(id);
        Ok(())
    }

    /// Set a slot's keys and queue it, flagged against `v` (public requeue).
    pub fn enqueue_at(&mut self, id: ClientId, start: i128, finish: i128, v: i128) -> Result<()> {
        self.slot(id)?;
        // No touch: a just-taken client re-queued here takes the same
        // deferred path as a policy's requeue after a charge.
        self.start[id] = start;
        self.finish[id] = finish;
        self.requeue(id, v);
        Ok(())
    }

    /// Take a client out of the queue (a no-op if it is not queued).
    pub fn remove(&mut self, id: ClientId) -> Result<()> {
        self.slot(id)?;
        self.dequeue(id);
        Ok(())
    }

    /// Virtual start of a slot.
    pub fn start(&self, id: ClientId) -> Option<i128> {
        self.start.get(id).copied()
    }

    /// Virtual finish (deadline) of a slot.
    pub fn finish(&self, id: ClientId) -> Option<i128> {
        self.finish.get(id).copied()
    }

    /// Smallest virtual start among ineligible-flagged clients. After
    /// [`EligibleQueue::take`] returned None every queued client is flagged
    /// ineligible, so this is then the smallest start in the queue.
    pub fn min_ineligible_start(&mut self) -> Option<i128> {
        self.flush();
        if self.wide || self.small {
            return (0..self.flag.len())
                .filter(|&c| self.flag[c] == Flag::Ineligible)
                .map(|c| self.start[c])
                .min();
        }
        let i = self.node(1).i;
        (i != EMPTY).then(|| self.unpack(i).0)
    }

    /// Take the queued client with start ≤ v and the smallest finish, ties
    /// to the lower id; it leaves the queue until re-queued.
    pub fn take(&mut self, v: i128) -> Option<ClientId> {
        if self.small {
            return self.small_take(v);
        }
        if let Some((a, b)) = self.pending {
            if let Some(c) = self.take_next(a, b, v) {
                return Some(c);
            }
            if a == b {
                self.flush_with_promotion(a, v);
            } else {
                self.flush();
            }
        }
        if self.wide {
            self.rebuild();
            if self.wide {
                return self.scan_take(v);
            }
        }
        // Flips below never leave the tree: both keys of a queued client
        // fit above the base (leaf_value), and they do not change.
        loop {
            let i = self.node(1).i;
            if i == EMPTY {
                break;
            }
            let (s, id) = self.unpack(i);
            if s > v {
                break;
            }
            self.promote_run(id, v);
            if self.wide {
                return self.scan_take(v);
            }
        }
        loop {
            let e = self.node(1).e;
            if e == EMPTY {
                return None;
            }
            let (_f, id) = self.unpack(e);
            debug_assert_eq!(_f, self.finish[id]);
            if self.start[id] > v {
                // V moved back below this client's start (EEVDF only).
                self.set_flag(id, Flag::Ineligible);
                continue;
            }
            self.reflag(id, Flag::Out);
            self.pending = Some((id, id));
            self.last = e;
            self.last_f = self.finish[id];
            self.pmin_f = i128::MAX;
            self.pmin_s = i128::MAX;
            return Some(id);
        }
    }

    /// The take that needs no tree: the run a..=b was taken in id order,
    /// each the exact answer of its take, and no leaf outside the run has
    /// been written since (`last` is set), so every eligible-flagged leaf
    /// outside the run holds a packed (finish, id) above `last`. If leaf
    /// b + 1 holds exactly `last` + 1 (same finish, next id: nothing can sort
    /// between), its start is ≤ v, no ineligible client outside the run has
    /// start ≤ v (the root's ineligible minimum is exact outside the run:
    /// stale leaves show no ineligible half) and no run member's re-queued
    /// value could compete (`pmin_f`, `pmin_s`), then b + 1 is the exact
    /// answer.
    ///
    /// This pays only when clients with equal (start, finish) hold adjacent
    /// ids, as equal weights joined together do (the pick_charge bench joins
    /// ~100 clients per weight in a row): a run of k such picks then costs
    /// one `update_range` instead of k walks. Otherwise it fails at the
    /// first test and the take goes on as before.
    #[inline(always)]
    fn take_next(&mut self, a: ClientId, b: ClientId, v: i128) -> Option<ClientId> {
        let c = b + 1;
        // Flag and finish first: their lines sit beside b's, which the take
        // and the charge just touched, while c's leaf may be cold (ids in
        // no useful order make it a cache miss per pick for nothing).
        if self.last == EMPTY
            || c >= self.flag.len()
            || self.flag[c] != Flag::Eligible
            || self.finish[c] != self.last_f
        {
            return None;
        }
        // c's leaf is not read: outside the run every leaf is what its flag
        // and keys say (each change of either writes it), so an eligible-
        // flagged c with last's finish holds exactly last + 1 (c = b + 1;
        // c < NONE, so the id field does not carry).
        let e = self.last + 1;
        // A re-queued member ties c's finish only with a lower id: it wins.
        if self.start[c] > v || self.pmin_f <= self.last_f || self.pmin_s <= v {
            return None;
        }
        let i = self.node(1).i;
        if i != EMPTY && self.unpack(i).0 <= v {
            return None;
        }
        debug_assert_eq!(self.flag[c], Flag::Eligible);
        self.reflag(c, Flag::Out);
        self.pending = Some((a, c));
        self.last = e;
        Some(c)
    }

    /// Promote m (the root's ineligible minimum, start ≤ v) and, after it,
    /// every client of consecutive id flagged ineligible with start ≤ v;
    /// then recompute the nodes above them in one `update_range`. Clients of
    /// equal start often hold adjacent ids (equal weights joined together):
    /// k of them then cost about 2k + depth nodes instead of k walks. Any
    /// others are promoted by later rounds of take's loop, so the flags end
    /// the same whatever the run found.
    fn promote_run(&mut self, m: ClientId, v: i128) {
        // First the extent, and whether every finish equals m's (equal
        // weights joined together): then `fill_run` writes the leaves.
        let fm = self.finish[m];
        let mut j = m;
        let mut same = true;
        loop {
            self.reflag(j, Flag::Eligible);
            same &= self.finish[j] == fm;
            j += 1;
            if j == self.flag.len() || self.flag[j] != Flag::Ineligible || self.start[j] > v {
                break;
            }
        }
        self.last = EMPTY;
        if same {
            // m's keys were checked when it was queued and are unchanged;
            // the rebuild keeps this total anyway.
            return match self.pack(fm, m) {
                Some(e) => self.fill_run(m, j - 1, e, EMPTY),
                None => self.rebuild(),
            };
        }
        let end = j;
        let mut j = m;
        let mut prev = None;
        loop {
            if let Some(e) = prev {
                self.tree[self.cap + j - 1 + self.off] = Node { e, i: EMPTY };
            }
            // Both keys were checked when the client was queued and are
            // unchanged; the rebuild keeps this total anyway.
            match self.pack(self.finish[j], j) {
                Some(e) => prev = Some(e),
                None => return self.rebuild(),
            }
            j += 1;
            if j == end {
                break;
            }
        }
        // prev is Some: the loop ran at least once and did not return.
        let e = prev.unwrap_or(EMPTY);
        self.update_range(m, j - 1, (e, EMPTY));
    }

    /// WF2Q+'s pick (EEVDF's too): [`EligibleQueue::take`] at v, or, when
    /// no queued client has start ≤ v, at v' = the smallest start. Returns
    /// the client and the V it was taken at (v or v').
    ///
    /// Same answer as take(v), then min_ineligible_start and take(v'), but
    /// when the client taken last is still pending and nobody else is
    /// eligible-flagged, its walk and the raise's promotion run side by side.
    // The tree-free take of a run (`take_next`) is inlined into the
    // policies' pick; everything else stays out of line. Trying it before
    // the fused raise changes nothing: the raise needs nobody flagged
    // eligible, take_next an eligible-flagged b + 1.
    #[inline(always)]
    pub fn take_or_raise(&mut self, v: i128) -> Option<(ClientId, i128)> {
        if let Some((a, b)) = self.pending {
            if let Some(c) = self.take_next(a, b, v) {
                return Some((c, v));
            }
        }
        self.take_or_raise_tree(v)
    }

    #[inline(never)]
    fn take_or_raise_tree(&mut self, v: i128) -> Option<(ClientId, i128)> {
        if let Some((x, b)) = self.pending {
            if let Some(vr) = (x == b).then(|| self.raise_with_flush(x, v)).flatten() {
                let id = self.take(vr)?;
                return Some((id, vr));
            }
        }
        if let Some(id) = self.take(v) {
            return Some((id, v));
        }
        let vr = v.max(self.min_ineligible_start()?);
        Some((self.take(vr)?, vr))
    }

    /// The fused raise: when x (pending) is flagged ineligible and nobody
    /// else is eligible-flagged, every queued client is ineligible-flagged,
    /// so the smallest start is min(root's ineligible minimum, x's start);
    /// if it is > v, nobody is eligible at v and V rises to it. Then the
    /// client with that start is promoted while x's leaf is written.
    /// Returns the raised V, or None (nothing done) when the case differs.
    fn raise_with_flush(&mut self, x: ClientId, v: i128) -> Option<i128> {
        if self.wide || self.n_eligible != 0 || self.flag[x] != Flag::Ineligible {
            return None;
        }
        let (_, xi) = self.leaf_value(x)?;
        let i = min2(self.node(1).i, xi);
        let (s, m) = self.unpack(i);
        if s <= v {
            return None;
        }
        let me = self.pack(self.finish[m], m)?;
        self.pending = None;
        self.reflag(m, Flag::Eligible);
        if m == x {
            self.walk(x, me, EMPTY);
        } else {
            // m's keys were checked when it was queued and are unchanged.
            self.walk2((x, EMPTY, xi), (m, me, EMPTY));
        }
        Some(s)
    }

    /// Write the pending leaf x together with the first promotion, if any:
    /// the root's ineligible minimum, which x's stale leaf (eligible half
    /// only) does not affect.
    fn flush_with_promotion(&mut self, x: ClientId, v: i128) {
        let i = self.node(1).i;
        let xv = self.leaf_value(x);
        match (xv, i != EMPTY && !self.wide) {
            (Some((xe, xi)), true) => {
                let (s, p) = self.unpack(i);
                if s > v || p == x {
                    return self.flush();
                }
                self.pending = None;
                self.reflag(p, Flag::Eligible);
                let pe = self.pack(self.finish[p], p);
                // p's keys were checked when it was queued and have not
                // changed since; the fallback keeps this total anyway.
                match pe {
                    Some(pe) if !self.wide => self.walk2((x, xe, xi), (p, pe, EMPTY)),
                    _ => self.rebuild(),
                }
            }
            _ => self.flush(),
        }
    }

    /// Take while the queue is small: the queued slot with start ≤ v and the
    /// smallest (finish, id), by one pass over the slots (ids in increasing
    /// order, so a strict `<` leaves a tie to the lower id). The flags other
    /// than Out are left as hints (the tree's take treats them so), except
    /// when nobody is eligible: then every queued client is flagged
    /// ineligible, as the tree's take leaves them, for
    /// `min_ineligible_start`. (LLVM compiles the i128 select to a branch;
    /// forcing conditional moves with `min_u128` measured slower here.)
    fn small_take(&mut self, v: i128) -> Option<ClientId> {
        let (mut best_f, mut best, mut found) = (i128::MAX, usize::MAX, false);
        let slots = self.flag.iter().zip(&self.start).zip(&self.finish);
        for (c, ((&fl, &s), &f)) in slots.enumerate() {
            let ok = !matches!(fl, Flag::Out) & (s <= v);
            let better = ok & (!found | (f < best_f));
            best_f = if better { f } else { best_f };
            best = if better { c } else { best };
            found |= ok;
        }
        if !found {
            for c in 0..self.flag.len() {
                if self.flag[c] == Flag::Eligible {
                    self.reflag(c, Flag::Ineligible);
                }
            }
            return None;
        }
        self.reflag(best, Flag::Out);
        Some(best)
    }

    /// The O(n) form of take, for keys too far apart for the tree. Every
    /// queued client ends flagged ineligible, as after the tree's take.
    fn scan_take(&mut self, v: i128) -> Option<ClientId> {
        let mut best: Option<(i128, ClientId)> = None;
        for c in 0..self.flag.len() {
            if self.flag[c] == Flag::Out {
                continue;
            }
            self.reflag(c, Flag::Ineligible);
            if self.start[c] <= v && best.is_none_or(|b| (self.finish[c], c) < b) {
                best = Some((self.finish[c], c));
            }
        }
        let (_, id) = best?;
        self.reflag(id, Flag::Out);
        Some(id)
    }
}
