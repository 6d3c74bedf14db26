//! The exponential race as a lottery draw (`race.rs`): an indexed binary
//! min-heap of keys, O(log n); the kernel's engine.

use super::*;

/// The exponential race: an indexed binary min-heap of (key, id).
#[derive(Debug, Clone, Default)]
pub(super) struct RaceDraw {
    pub(super) heap: Vec<(u64, usize)>,
    pub(super) pos: Vec<usize>,
    /// Virtual time T: the key of the last winner.
    pub(super) vt: u64,
}

impl RaceDraw {
    pub(super) fn push(&mut self, id: usize, delta: u64) {
        if self.vt > (1 << 62) {
            // Rebase before keys can overflow: every key is ≥ T, so
            // subtracting T keeps the order and the race.
            for e in &mut self.heap {
                e.0 -= self.vt;
            }
            self.vt = 0;
        }
        let key = self.vt.saturating_add(delta);
        self.heap.push((key, id));
        let i = self.heap.len() - 1;
        self.pos[id] = i;
        self.up(i);
    }

    pub(super) fn pop(&mut self) -> usize {
        let (key, id) = self.heap[0];
        self.vt = key;
        self.take(0);
        id
    }

    pub(super) fn remove(&mut self, id: usize) {
        let i = self.pos[id];
        self.take(i);
    }

    pub(super) fn take(&mut self, i: usize) {
        let id = self.heap[i].1;
        let last = self.heap.pop().unwrap_or((0, id));
        self.pos[id] = NIL;
        if i < self.heap.len() {
            self.heap[i] = last;
            self.pos[last.1] = i;
            self.up(i);
            self.down(self.pos[last.1]);
        }
    }

    pub(super) fn up(&mut self, mut i: usize) {
        while i > 0 {
            let p = (i - 1) / 2;
            if self.heap[i] < self.heap[p] {
                self.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
    }

    pub(super) fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && self.heap[l + 1] < self.heap[l] {
                l + 1
            } else {
                l
            };
            if self.heap[c] < self.heap[i] {
                self.swap(i, c);
                i = c;
            } else {
                break;
            }
        }
    }

    pub(super) fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1] = a;
        self.pos[self.heap[b].1] = b;
    }
}
