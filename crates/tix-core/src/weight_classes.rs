//! WF2Q+'s eligible queue by weight class: the smallest virtual finish among
//! the clients whose virtual start ≤ V, ties to the lower id (GR3 §3's
//! WF2Q+ rule), found among the heads of classes of equal weight.
//!
//! Why classes: a WF2Q+ client's virtual length is one quantum over its
//! weight (F − S = slice), so inside a class of equal weights the smallest
//! (S, id) is also the smallest (F, id), and the class's head alone can
//! answer for it. Only the heads are ordered across classes, in two indexed
//! binary heaps: `eligible` by (F, id) and `waiting` by (S, id). A take
//! promotes waiting heads with S ≤ V and sends back an eligible top whose
//! S > V (a head can change while its class sits in `eligible`), so the
//! answer is the exact minimum over every queued client with S ≤ V. With W
//! distinct weights a pick + charge costs O(log W) heap steps, whatever the
//! order of the ids; equal weights joined together cost nothing extra.
//!
//! A class keeps its members in a FIFO sorted by (S, id): whole-quantum
//! charges move each member by the same slice in turn, so a re-queued member
//! goes behind the others. A key that would break the order (a partial
//! charge, a wake at V) goes to the class's spill heap instead, O(log n).
//! Removals are lazy: a client's live entry carries a sequence number and
//! stale entries are dropped when they reach a front, or all at once when
//! they outnumber the live ones. Empty classes are kept (a class of one
//! empties at every pick and fills at every charge) until they outnumber
//! the others.
//!
//! Against the tournament tree of [`crate::eligible`], which WF2Q+ used
//! before: the tree is cheap only while equal keys sit at adjacent ids (its
//! runs); with ids in any other order every pick + charge walks all of it
//! twice, a cache miss a level past L2. Here the ids' order does not matter,
//! only the number of weights. The price: when nearly every weight is
//! distinct (a class per client) a pick + charge is about four heap sifts,
//! dearer than the tree's walks at 10^3 clients (see the README's table).
//! Up to 16 class slots there are no heaps; a take scans the classes.
//!
//! EEVDF cannot use this: its deadline − vruntime differs between equal
//! weights after partial charges (it keeps [`crate::eligible`]).

use crate::error::{Error, Result};
use crate::sched::ClientId;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// A client's entry in its class. Ordered by (start, id), then sequence
/// (two entries of one client with equal keys, one stale, in any order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    s: i128,
    id: u32,
    seq: u64,
}

/// Clients of one weight.
#[derive(Debug, Clone, Default)]
struct Class {
    /// 0 marks a free slot (weights are ≥ 1).
    weight: u64,
    /// The members' common F − S.
    slice: i128,
    /// The smallest live entry (meaningless while `live` is 0). Whatever
    /// precedes it in the FIFO is stale.
    head: Entry,
    live: usize,
    stale: usize,
    fifo: VecDeque<Entry>,
    spill: BinaryHeap<Reverse<Entry>>,
}

impl Class {
    /// Drop stale entries from both fronts and find the head among them.
    #[inline]
    fn refresh(&mut self, seq: &[u64]) {
        let live = |e: &Entry| seq[e.id as usize] == e.seq;
        while let Some(e) = self.fifo.front() {
            if live(e) {
                break;
            }
            self.fifo.pop_front();
            self.stale -= 1;
        }
        if !self.spill.is_empty() {
            self.refresh_spill(seq);
            return;
        }
        if let Some(&a) = self.fifo.front() {
            self.head = a;
        }
    }

    #[inline(never)]
    fn refresh_spill(&mut self, seq: &[u64]) {
        while let Some(Reverse(e)) = self.spill.peek() {
            if seq[e.id as usize] == e.seq {
                break;
            }
            self.spill.pop();
            self.stale -= 1;
        }
        self.head = match (self.fifo.front(), self.spill.peek()) {
            (Some(&a), Some(&Reverse(b))) => a.min(b),
            (Some(&a), None) => a,
            (None, Some(&Reverse(b))) => b,
            // Only reached with live = 0, where the head means nothing.
            (None, None) => self.head,
        };
    }

    /// The head's client has just been marked out (its `seq` cleared), so
    /// the head is stale now: dropped, with any stale entry before it, by
    /// finding the next.
    #[inline]
    fn pop_head(&mut self, seq: &[u64]) {
        self.live -= 1;
        self.stale += 1;
        self.refresh(seq);
    }

    #[inline]
    fn push(&mut self, e: Entry) {
        // The FIFO stays sorted stale entries and all, so a key at least its
        // back is at least every entry in it.
        let key = (e.s, e.id);
        if self.fifo.back().is_none_or(|b| (b.s, b.id) <= key) {
            self.fifo.push_back(e);
        } else {
            self.spill.push(Reverse(e));
        }
        self.live += 1;
        if self.live == 1 || key < (self.head.s, self.head.id) {
            // In the FIFO, whatever precedes e is ≤ e < every live entry.
            self.head = e;
        }
    }

    /// Every live entry back in one sorted FIFO (when stale ones dominate).
    #[cold]
    fn compact(&mut self, seq: &[u64]) {
        let mut all: Vec<Entry> = self.fifo.drain(..).collect();
        all.extend(self.spill.drain().map(|Reverse(e)| e));
        all.retain(|e| seq[e.id as usize] == e.seq);
        all.sort_unstable();
        self.fifo.extend(all);
        self.stale = 0;
    }

    fn clear(&mut self) {
        self.fifo.clear();
        self.spill.clear();
        self.stale = 0;
    }
}

/// A class's head in one of the two heaps: `key` is F (eligible) or S
/// (waiting), `id` the head client, ordered by (key, id).
#[derive(Debug, Clone, Copy)]
struct Slot {
    key: i128,
    id: u32,
    class: u32,
}

impl Slot {
    #[inline(always)]
    fn before(&self, o: &Slot) -> bool {
        // No short-circuit: which of two heads comes first is a coin flip
        // to a branch predictor.
        (self.key < o.key) | ((self.key == o.key) & (self.id < o.id))
    }
}

/// Which heap a class's head is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Home {
    None,
    Eligible,
    Waiting,
}

/// An indexed binary min-heap of class heads; `pos[class]` is the index.
#[derive(Debug, Clone, Default)]
struct Heap {
    items: Vec<Slot>,
}

impl Heap {
    #[inline(always)]
    fn top(&self) -> Option<&Slot> {
        self.items.first()
    }

    #[inline(always)]
    fn place(&mut self, pos: &mut [u32], i: usize, x: Slot) {
        self.items[i] = x;
        pos[x.class as usize] = i as u32;
    }

    fn up(&mut self, pos: &mut [u32], mut i: usize) {
        let x = self.items[i];
        while i > 0 {
            let p = (i - 1) / 2;
            if !x.before(&self.items[p]) {
                break;
            }
            let y = self.items[p];
            self.place(pos, i, y);
            i = p;
        }
        self.place(pos, i, x);
    }

    /// The smaller of i's children, if it has any (a select, not a
    /// branch: which child is smaller is a coin flip to a predictor).
    #[inline(always)]
    fn smaller_child(&self, i: usize) -> Option<usize> {
        let n = self.items.len();
        let l = 2 * i + 1;
        let r = l + 1;
        match (l < n, r < n) {
            (false, _) => None,
            (true, false) => Some(l),
            (true, true) => Some(l + usize::from(self.items[r].before(&self.items[l]))),
        }
    }

    fn down(&mut self, pos: &mut [u32], mut i: usize) {
        let x = self.items[i];
        while let Some(c) = self.smaller_child(i) {
            if !self.items[c].before(&x) {
                break;
            }
            let y = self.items[c];
            self.place(pos, i, y);
            i = c;
        }
        self.place(pos, i, x);
    }

    fn push(&mut self, pos: &mut [u32], x: Slot) {
        self.items.push(x);
        self.up(pos, self.items.len() - 1);
    }

    /// Remove the slot at i: the hole sinks to a leaf along the smaller
    /// children (one comparison a level, not two), and the last slot fills
    /// it and rises, rarely far, as it was a leaf's.
    fn remove(&mut self, pos: &mut [u32], mut i: usize) {
        let Some(last) = self.items.pop() else {
            return;
        };
        if i >= self.items.len() {
            return;
        }
        while let Some(c) = self.smaller_child(i) {
            let y = self.items[c];
            self.place(pos, i, y);
            i = c;
        }
        self.place(pos, i, last);
        self.up(pos, i);
    }

    /// A new key for the slot at i.
    fn rekey(&mut self, pos: &mut [u32], i: usize, key: i128, id: u32) {
        let old = self.items[i];
        let new = Slot { key, id, ..old };
        self.items[i] = new;
        if new.before(&old) {
            self.up(pos, i);
        } else {
            self.down(pos, i);
        }
    }

    /// A larger key for the top, which a run of equal weights usually
    /// leaves where it is: its two children are checked here, the rest
    /// of a sift out of line.
    #[inline(always)]
    fn raise_top(&mut self, pos: &mut [u32], key: i128, id: u32) {
        let n = self.items.len();
        let new = Slot {
            key,
            id,
            ..self.items[0]
        };
        self.items[0] = new;
        let stays = (n < 2 || new.before(&self.items[1])) && (n < 3 || new.before(&self.items[2]));
        if !stays {
            self.down(pos, 0);
        }
    }
}

/// Stale entries a class tolerates before a compaction (beyond as many as
/// it has live ones).
const STALE_SLACK: usize = 64;

/// Empty classes kept before a sweep frees them (beyond as many as there
/// are non-empty ones).
const EMPTY_SLACK: usize = 64;

/// Up to this many class slots there are no heaps: a take scans the
/// classes (cheaper than four heap sifts when each class is a client or
/// two). The slots only grow, so the queue leaves this mode once.
const SCAN_MAX: usize = 16;

/// The queue; see the module header. Client slots are dense ids.
#[derive(Debug, Clone)]
pub struct ClassQueue {
    /// Per client: the sequence number of its live entry, 0 if not queued.
    seq: Vec<u64>,
    /// Per client: the class of its live (or last) entry; checked against
    /// the weight before use, as a free class slot may have been reused.
    class_of: Vec<u32>,
    next_seq: u64,
    classes: Vec<Class>,
    /// Per class: index in the heap named by `home`.
    pos: Vec<u32>,
    home: Vec<Home>,
    by_weight: HashMap<u64, u32>,
    free: Vec<u32>,
    empty: usize,
    eligible: Heap,
    waiting: Heap,
    /// No heaps yet: takes scan the classes (see `SCAN_MAX`).
    scan: bool,
    scan_max: usize,
    /// A class a take emptied, still in its heap: the client taken is
    /// usually re-queued into it at its charge, and settling it then is one
    /// sift instead of a removal now and an insertion then. Nothing reads
    /// the heaps' order before the next take, which settles it first.
    pending: Option<usize>,
    /// The last V seen (by a take or an insert), for where a class whose
    /// head a removal changed should wait: a hint only (take corrects it).
    v: i128,
}

impl Default for ClassQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl ClassQueue {
    pub fn new() -> Self {
        ClassQueue {
            seq: Vec::new(),
            class_of: Vec::new(),
            next_seq: 0,
            classes: Vec::new(),
            pos: Vec::new(),
            home: Vec::new(),
            by_weight: HashMap::new(),
            free: Vec::new(),
            empty: 0,
            eligible: Heap::default(),
            waiting: Heap::default(),
            scan: true,
            scan_max: SCAN_MAX,
            pending: None,
            v: 0,
        }
    }

    /// A queue that scans while it has at most `n` class slots (0: heaps
    /// from the start), instead of the default 16 (tests hold both forms
    /// to the same answers).
    pub fn with_scan_max(n: usize) -> Self {
        ClassQueue {
            scan: n > 0,
            scan_max: n,
            ..Self::new()
        }
    }

    /// Number of client slots.
    pub fn len(&self) -> usize {
        self.seq.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }

    /// Refuse a slot whose id would not fit an entry's u32. Call before
    /// handing out the id, so a refusal leaves everything unchanged.
    pub fn check_room(&self) -> Result<()> {
        if self.seq.len() >= u32::MAX as usize {
            Err(Error::Overflow("more than 2^32 - 1 clients"))
        } else {
            Ok(())
        }
    }

    /// A new client slot with id `len()`, not queued.
    pub fn add(&mut self) -> Result<ClientId> {
        self.check_room()?;
        self.seq.push(0);
        self.class_of.push(u32::MAX);
        Ok(self.seq.len() - 1)
    }

    fn slot(&self, id: ClientId) -> Result<()> {
        if id < self.seq.len() {
            Ok(())
        } else {
            Err(Error::UnknownClient(id))
        }
    }

    /// Whether a client is queued.
    pub fn contains(&self, id: ClientId) -> bool {
        self.seq.get(id).is_some_and(|&s| s != 0)
    }

    /// Queue a client (re-queue it if it was queued) with virtual start
    /// `start` and virtual length `slice`, which must be the same for every
    /// client of this weight. `v` is the current V (a placement hint).
    pub fn enqueue(
        &mut self,
        id: ClientId,
        weight: u64,
        start: i128,
        slice: i128,
        v: i128,
    ) -> Result<()> {
        self.slot(id)?;
        if weight == 0 {
            return Err(Error::ZeroWeight);
        }
        if let Some(&c) = self.by_weight.get(&weight) {
            if self.classes[c as usize].slice != slice {
                return Err(Error::Invalid(format!(
                    "weight {weight} already has slice {}, not {slice}",
                    self.classes[c as usize].slice
                )));
            }
        }
        self.insert(id, weight, slice, start, v);
        Ok(())
    }

    /// Take a client out of the queue (no-op if it is not queued).
    pub fn remove(&mut self, id: ClientId) -> Result<()> {
        self.slot(id)?;
        self.dequeue(id);
        Ok(())
    }

    /// The class of this weight: the client's last one if it still holds
    /// this weight, else found or made.
    #[inline]
    fn class_for(&mut self, id: ClientId, weight: u64, slice: i128) -> usize {
        let c = self.class_of[id] as usize;
        if c < self.classes.len() && self.classes[c].weight == weight {
            return c;
        }
        self.class_of_weight(weight, slice)
    }

    #[inline(never)]
    fn class_of_weight(&mut self, weight: u64, slice: i128) -> usize {
        if let Some(&c) = self.by_weight.get(&weight) {
            return c as usize;
        }
        let c = match self.free.pop() {
            Some(c) => c as usize,
            None => {
                self.classes.push(Class::default());
                self.pos.push(0);
                self.home.push(Home::None);
                if self.scan && self.classes.len() > self.scan_max {
                    self.leave_scan();
                }
                self.classes.len() - 1
            }
        };
        let cl = &mut self.classes[c];
        cl.weight = weight;
        cl.slice = slice;
        self.by_weight.insert(weight, c as u32);
        self.empty += 1;
        c
    }

    /// From scanning to heaps: every non-empty class waits, and the next
    /// take promotes whichever are eligible.
    #[cold]
    fn leave_scan(&mut self) {
        self.scan = false;
        for c in 0..self.classes.len() {
            if self.classes[c].live > 0 {
                self.home_in(c, Home::Waiting);
            }
        }
    }

    /// Queue client `id` in its weight's class (re-queue it if it was
    /// queued); `slice` is that weight's, `v` the current V.
    #[inline]
    pub(crate) fn insert(&mut self, id: ClientId, weight: u64, slice: i128, start: i128, v: i128) {
        // Out first: a removal can sweep empty classes, the one this weight
        // had among them, so the class is looked up after it.
        if self.seq[id] != 0 {
            self.dequeue(id);
        }
        let c = self.class_for(id, weight, slice);
        self.v = v;
        self.next_seq += 1;
        let e = Entry {
            s: start,
            id: id as u32,
            seq: self.next_seq,
        };
        self.seq[id] = e.seq;
        self.class_of[id] = c as u32;
        let cl = &mut self.classes[c];
        cl.push(e);
        if cl.live == 1 {
            self.empty -= 1;
            if self.pending == Some(c) {
                self.pending = None;
            }
        }
        if cl.head.seq == e.seq && !self.scan {
            self.settle(c, v);
        }
    }

    /// Put class c's head (changed) in the heap it belongs in at V = v.
    #[inline(never)]
    fn settle(&mut self, c: usize, v: i128) {
        let want = if self.classes[c].head.s <= v {
            Home::Eligible
        } else {
            Home::Waiting
        };
        if self.home[c] == want {
            let (i, slot) = (self.pos[c] as usize, self.head_slot(c, want));
            let (heap, pos) = self.heap(want);
            heap.rekey(pos, i, slot.key, slot.id);
            return;
        }
        self.unhome(c);
        self.home_in(c, want);
    }

    /// Class c's head as a slot of the heap `home` names: keyed by its
    /// finish in `eligible`, by its start in `waiting`.
    #[inline(always)]
    fn head_slot(&self, c: usize, home: Home) -> Slot {
        let cl = &self.classes[c];
        let key = match home {
            Home::Eligible => cl.head.s + cl.slice,
            _ => cl.head.s,
        };
        Slot {
            key,
            id: cl.head.id,
            class: c as u32,
        }
    }

    /// The heap `home` names (not `Home::None`) and the index array, borrowed
    /// apart.
    #[inline(always)]
    fn heap(&mut self, home: Home) -> (&mut Heap, &mut [u32]) {
        let heap = match home {
            Home::Eligible => &mut self.eligible,
            _ => &mut self.waiting,
        };
        (heap, &mut self.pos)
    }

    /// Put class c, in no heap, into the one `want` names.
    #[inline]
    fn home_in(&mut self, c: usize, want: Home) {
        let slot = self.head_slot(c, want);
        self.home[c] = want;
        let (heap, pos) = self.heap(want);
        heap.push(pos, slot);
    }

    /// Take class c out of whichever heap holds it.
    fn unhome(&mut self, c: usize) {
        let here = self.home[c];
        if here != Home::None {
            let i = self.pos[c] as usize;
            let (heap, pos) = self.heap(here);
            heap.remove(pos, i);
            self.home[c] = Home::None;
        }
    }

    /// Class c has no live member left.
    fn emptied(&mut self, c: usize) {
        self.unhome(c);
        self.classes[c].clear();
        self.empty += 1;
        if self.empty > EMPTY_SLACK && self.empty > self.classes.len() - self.empty {
            self.sweep();
        }
    }

    /// The pending class, if a take emptied it and nothing refilled it,
    /// leaves its heap.
    #[inline]
    fn settle_pending(&mut self) {
        if let Some(c) = self.pending.take() {
            if self.classes[c].live == 0 {
                self.empty -= 1;
                self.emptied(c);
            }
        }
    }

    /// Free every empty class.
    #[cold]
    fn sweep(&mut self) {
        for c in 0..self.classes.len() {
            let cl = &mut self.classes[c];
            if cl.weight != 0 && cl.live == 0 && self.home[c] == Home::None {
                self.by_weight.remove(&cl.weight);
                cl.weight = 0;
                cl.fifo.shrink_to_fit();
                cl.spill.shrink_to_fit();
                self.free.push(c as u32);
                self.empty -= 1;
            }
        }
    }

    /// Take a client out of the queue (no-op if it is not queued).
    pub(crate) fn dequeue(&mut self, id: ClientId) {
        let sq = std::mem::take(&mut self.seq[id]);
        if sq == 0 {
            return;
        }
        let c = self.class_of[id] as usize;
        let cl = &mut self.classes[c];
        cl.live -= 1;
        cl.stale += 1;
        if cl.live == 0 {
            if self.pending == Some(c) {
                self.pending = None;
            }
            self.emptied(c);
            return;
        }
        if cl.stale > STALE_SLACK && cl.stale > cl.live {
            cl.compact(&self.seq);
        }
        if cl.head.seq == sq {
            cl.refresh(&self.seq);
            if !self.scan {
                self.settle(c, self.v);
            }
        }
    }

    /// The queued client with the smallest (finish, id) among those with
    /// start ≤ v, taken out of the queue; None if nobody has start ≤ v.
    #[inline]
    pub fn take(&mut self, v: i128) -> Option<ClientId> {
        self.v = v;
        if self.scan {
            return self.scan_take(v);
        }
        self.settle_pending();
        loop {
            if self.waiting.top().is_some_and(|t| t.key <= v) {
                self.promote(v);
            }
            let c = self.eligible.top()?.class as usize;
            let cl = &mut self.classes[c];
            let h = cl.head;
            if h.s > v {
                self.demote(c);
                continue;
            }
            self.seq[h.id as usize] = 0;
            cl.pop_head(&self.seq);
            if cl.live == 0 {
                // Left in its heap for the charge (see `pending`).
                cl.clear();
                self.empty += 1;
                self.pending = Some(c);
            } else if cl.head.s <= v {
                // Equal weights charged alike: the next member, usually
                // with the same finish, stays on top.
                let slot = self.head_slot(c, Home::Eligible);
                self.eligible.raise_top(&mut self.pos, slot.key, slot.id);
            } else {
                self.settle(c, v);
            }
            return Some(h.id as ClientId);
        }
    }

    /// Move every waiting head with S ≤ v to `eligible`.
    #[inline(never)]
    fn promote(&mut self, v: i128) {
        while let Some(t) = self.waiting.top() {
            if t.key > v {
                break;
            }
            let c = t.class as usize;
            self.waiting.remove(&mut self.pos, 0);
            self.home_in(c, Home::Eligible);
        }
    }

    /// The eligible top (class c) has a head with S > V (V moved back, or
    /// a removal changed the head): it waits again.
    #[cold]
    #[inline(never)]
    fn demote(&mut self, c: usize) {
        self.eligible.remove(&mut self.pos, 0);
        self.home_in(c, Home::Waiting);
    }

    /// `take` with no heaps: the best head over the classes.
    #[inline(never)]
    fn scan_take(&mut self, v: i128) -> Option<ClientId> {
        let mut best: Option<(i128, u32, usize)> = None;
        for (c, cl) in self.classes.iter().enumerate() {
            if cl.live == 0 || cl.head.s > v {
                continue;
            }
            let f = cl.head.s + cl.slice;
            if best.is_none_or(|(bf, bid, _)| (f, cl.head.id) < (bf, bid)) {
                best = Some((f, cl.head.id, c));
            }
        }
        let (_, id, c) = best?;
        self.seq[id as usize] = 0;
        let cl = &mut self.classes[c];
        cl.pop_head(&self.seq);
        if cl.live == 0 {
            self.emptied(c);
        }
        Some(id as ClientId)
    }

    /// The smallest start of any queued client.
    fn min_start(&self) -> Option<i128> {
        if self.scan {
            return self
                .classes
                .iter()
                .filter(|cl| cl.live > 0)
                .map(|cl| cl.head.s)
                .min();
        }
        // After a take that found nobody, every non-empty class waits.
        self.waiting.top().map(|t| t.key)
    }

    /// WF2Q+'s pick: take at v or, when nobody's start is ≤ v, at the
    /// smallest start (V = max(V, min start)). Returns the client and V.
    #[inline]
    pub fn take_or_raise(&mut self, v: i128) -> Option<(ClientId, i128)> {
        if let Some(id) = self.take(v) {
            return Some((id, v));
        }
        let vr = v.max(self.min_start()?);
        Some((self.take(vr)?, vr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A queue of slots 0..n with `queued` (id, weight, start, slice)
    /// queued in that order at V = 0.
    fn queue(n: usize, queued: &[(usize, u64, i128, i128)]) -> ClassQueue {
        let mut q = ClassQueue::new();
        for _ in 0..n {
            q.add().unwrap();
        }
        for &(id, w, s, slice) in queued {
            q.enqueue(id, w, s, slice, 0).unwrap();
        }
        q
    }

    #[test]
    fn ties_go_to_the_lower_id_across_and_within_classes() {
        // Clients 0 and 2 weigh 1 (slice 10), 1 and 3 weigh 2 (slice 5),
        // every start 0: finishes 10, 5, 10, 5.
        let mut q = queue(
            4,
            &[(0, 1, 0, 10), (1, 2, 0, 5), (2, 1, 0, 10), (3, 2, 0, 5)],
        );
        let order: Vec<_> = std::iter::from_fn(|| q.take(0)).collect();
        assert_eq!(order, vec![1, 3, 0, 2]);
    }

    #[test]
    fn a_removed_head_hands_over_and_a_raise_finds_the_smallest_start() {
        let mut q = queue(3, &[(0, 1, 4, 10), (1, 1, 7, 10), (2, 3, 9, 3)]);
        q.remove(0).unwrap();
        assert_eq!(q.take(6), None);
        assert_eq!(q.take_or_raise(6), Some((1, 7)));
        assert_eq!(q.take_or_raise(7), Some((2, 9)));
        assert_eq!(q.take_or_raise(9), None);
    }

    #[test]
    fn bad_input_is_refused_and_changes_nothing() {
        let mut q = queue(1, &[]);
        assert!(q.enqueue(5, 1, 0, 1, 0).is_err());
        assert!(q.enqueue(0, 0, 0, 1, 0).is_err());
        q.enqueue(0, 2, 0, 4, 0).unwrap();
        assert!(q.remove(3).is_err());
        assert_eq!(q.take(0), Some(0));
    }
}
