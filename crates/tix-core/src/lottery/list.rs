//! The paper's lottery draw (001 §4.2): the run queue as a list walked
//! with a running ticket sum, the winner moved to the front. O(n).

use super::*;

/// The run queue as an intrusive doubly linked list over ids.
#[derive(Debug, Clone, Default)]
pub(super) struct ListDraw {
    pub(super) head: usize,
    pub(super) next: Vec<usize>,
    pub(super) prev: Vec<usize>,
    pub(super) len: usize,
}

impl ListDraw {
    pub(super) fn insert(&mut self, id: usize) {
        // New and woken clients go to the back, as a run queue appends them.
        if self.len == 0 {
            self.head = id;
            self.next[id] = id;
            self.prev[id] = id;
        } else {
            let tail = self.prev[self.head];
            self.next[tail] = id;
            self.prev[id] = tail;
            self.next[id] = self.head;
            self.prev[self.head] = id;
        }
        self.len += 1;
    }

    pub(super) fn remove(&mut self, id: usize) {
        self.len -= 1;
        if self.len == 0 {
            self.head = NIL;
        } else {
            let (p, n) = (self.prev[id], self.next[id]);
            self.next[p] = n;
            self.prev[n] = p;
            if self.head == id {
                self.head = n;
            }
        }
        self.next[id] = NIL;
        self.prev[id] = NIL;
    }

    pub(super) fn pick<R: Rng>(&mut self, rng: &mut R, total: u64, clients: &[Client]) -> usize {
        let r = rng.below(total);
        let mut sum = 0u64;
        let mut id = self.head;
        loop {
            sum += clients[id].tickets + clients[id].extra;
            if sum > r {
                break;
            }
            id = self.next[id];
        }
        if id != self.head {
            self.remove(id);
            // Re-link at the front: insert puts it at the back of the ring,
            // so moving the head pointer onto it makes it the front.
            self.insert(id);
            self.head = id;
        }
        id
    }
}
