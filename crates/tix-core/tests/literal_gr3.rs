//! GR3 against a literal model of Chan & Nieh §4.1–4.2: a deliberately naive
//! transcription of the paper's state and equations, sharing no code with
//! `tix_core::gr3`, run beside the library on random share sets; the two
//! schedules must agree pick for pick from the first pick on.
//!
//! Where the paper leaves a choice, the model follows the library's
//! documented one (gr3.rs header):
//! * queue order inside a group: a client that joins a non-empty group
//!   before it has run goes right before the group's current client (§4.3),
//!   and the first client of an empty group is its current client — so a
//!   group whose clients joined A, B, C (none has run) queues B, C, A and
//!   its first round starts at B (§4.2: "the first client at the beginning
//!   of the group's run queue");
//! * equal group shares: the larger group number first (§4.1 breaks the tie
//!   by group number; §4.2's example puts group 6 before group 0);
//! * the last group's ratio is one (eq. 3's "defined to be one"); when it
//!   falls below one, selection wraps to the head, R += 1.
//!
//! Scope: every client joins before the first pick (§4.2's basic
//! algorithm). §4.3's joins, leaves and share changes between picks:
//! literal_gr3_dynamic.rs.

mod literal;

use proptest::prelude::*;
use tix_core::ClientId;

/// An exact non-negative rational, for the group ratios of eqs. 3–4.
#[derive(Clone, Copy, Debug)]
struct Ratio {
    num: u128,
    den: u128,
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Ratio {
    fn new(num: u128, den: u128) -> Ratio {
        let g = gcd(num, den).max(1);
        Ratio {
            num: num / g,
            den: den / g,
        }
    }
    fn add(self, o: Ratio) -> Ratio {
        Ratio::new(self.num * o.den + o.num * self.den, self.den * o.den)
    }
    /// self − 1, only called when self ≥ 1.
    fn minus_one(self) -> Ratio {
        Ratio::new(self.num - self.den, self.den)
    }
    fn below_one(self) -> bool {
        self.num < self.den
    }
}

struct Client {
    share: u128,
    counter: u128,
}

struct Group {
    number: u32,
    /// Clients in run-queue order (indices into `Paper::clients`).
    queue: Vec<usize>,
    share: u128,
    counter: u128,
    /// C_G^last: the group counter at the beginning of the round.
    last: u128,
    ratio: Ratio,
    /// The next queue position the round considers; 0 starts a round.
    at: usize,
}

/// §4.1's scheduler state.
struct Paper {
    clients: Vec<Client>,
    /// The group list, largest group share first.
    groups: Vec<Group>,
    total_counter: u128,
    current: usize,
}

/// Group number k: 2^k ≤ share < 2^(k+1).
fn group_number(share: u128) -> u32 {
    127 - share.leading_zeros()
}

impl Paper {
    fn new(shares: &[u64]) -> Paper {
        let clients: Vec<Client> = shares
            .iter()
            .map(|&s| Client {
                share: s as u128,
                counter: s as u128,
            })
            .collect();
        let mut groups: Vec<Group> = Vec::new();
        for (i, c) in clients.iter().enumerate() {
            let k = group_number(c.share);
            match groups.iter_mut().find(|g| g.number == k) {
                // An empty group: the client is its current client.
                None => groups.push(Group {
                    number: k,
                    queue: vec![i],
                    share: 0,
                    counter: 0,
                    last: 0,
                    ratio: Ratio::new(1, 1),
                    at: 0,
                }),
                // Not run this cycle: right before the current client, which
                // is still the group's first joiner (nothing has run).
                Some(g) => {
                    let cur = g.queue.len() - 1;
                    g.queue.insert(cur, i);
                }
            }
            let g = groups.iter_mut().find(|g| g.number == k).unwrap();
            g.share += c.share;
        }
        // §4.1: largest group share first, ties by group number.
        groups.sort_by(|a, b| b.share.cmp(&a.share).then(b.number.cmp(&a.number)));
        let mut p = Paper {
            clients,
            groups,
            total_counter: 0,
            current: 0,
        };
        p.start_cycle();
        p
    }

    /// §4.2: counters to shares, ratios by eq. 3, the current group the
    /// first of the list, every round from the beginning of its queue.
    fn start_cycle(&mut self) {
        for c in &mut self.clients {
            c.counter = c.share;
        }
        let n = self.groups.len();
        for i in 0..n {
            let share = self.groups[i].share;
            let ratio = if i + 1 < n {
                // Eq. 3: R_G = S_G / S_Gnext.
                Ratio::new(share, self.groups[i + 1].share)
            } else {
                Ratio::new(1, 1)
            };
            let g = &mut self.groups[i];
            g.counter = share;
            g.ratio = ratio;
            g.at = 0;
        }
        self.total_counter = self.clients.iter().map(|c| c.share).sum();
        self.current = 0;
    }

    /// §4.2's intragroup step: the next client of the current group's round
    /// that passes eq. 5, S_A / S_G ≤ C_A / C_G^last (with C_G^last > 0).
    fn pick_client(&mut self) -> usize {
        let g = &mut self.groups[self.current];
        // Two rounds at most: the paper never skips a whole round when no
        // client has changed (every counter is ≤ its share's fraction).
        for _ in 0..2 * g.queue.len() + 1 {
            if g.at == 0 {
                g.last = g.counter;
            }
            let a = g.queue[g.at];
            g.at = (g.at + 1) % g.queue.len();
            let c = &self.clients[a];
            if g.last > 0 && c.share * g.last <= c.counter * g.share {
                return a;
            }
        }
        panic!("no client of group {} passes eq. 5", g.number);
    }

    /// One quantum: pick, run, then §4.2's updates and eq. 4.
    fn step(&mut self) -> usize {
        let a = self.pick_client();
        let gi = self.current;
        self.clients[a].counter -= 1;
        self.groups[gi].counter -= 1;
        self.total_counter -= 1;
        self.groups[gi].ratio = self.groups[gi].ratio.minus_one();
        if self.groups[gi].ratio.below_one() {
            let last = gi + 1 == self.groups.len();
            // Eq. 4: R += S_current / S_Gnext; the last group's ratio is one.
            let add = if last {
                Ratio::new(1, 1)
            } else {
                Ratio::new(self.groups[gi].share, self.groups[gi + 1].share)
            };
            self.groups[gi].ratio = self.groups[gi].ratio.add(add);
            self.current = if last { 0 } else { gi + 1 };
        } else {
            self.current = 0;
        }
        if self.total_counter == 0 {
            self.start_cycle();
        }
        a
    }
}

/// The library's first `n` picks for `shares` joined in order.
fn library(shares: &[u64], n: usize) -> Vec<ClientId> {
    literal::library("gr3", shares, n, 1)
}

fn paper(shares: &[u64], n: usize) -> Vec<ClientId> {
    let mut p = Paper::new(shares);
    (0..n).map(|_| p.step()).collect()
}

proptest! {
    #![proptest_config(literal::config())]

    /// Three cycles (or 600 picks, whichever is fewer), pick for pick.
    #[test]
    fn gr3_follows_the_paper_from_the_first_pick(shares in literal::shares(14, 12, 1000)) {
        let cycle: u64 = shares.iter().sum();
        let n = (3 * cycle).min(600) as usize;
        prop_assert_eq!(library(&shares, n), paper(&shares, n), "shares {:?}", shares);
    }
}

/// §4.2's worked example (3, 2, 1; B queued before A): the model itself.
#[test]
fn model_reproduces_the_papers_example() {
    let order: String = paper(&[3, 2, 1], 6)
        .iter()
        .map(|&c| (b'A' + c as u8) as char)
        .collect();
    assert_eq!(order, "BAABAC");
}

/// The static sets of tests/gr3_equivalence.rs (`steady`: n clients with
/// weights 1 + splitmix64(n) % 1024), 60,000 picks each: the recorded
/// schedules are the paper's.
#[test]
fn the_recorded_static_sets_are_the_papers() {
    use tix_core::rng::{Rng as _, SplitMix64};
    for n in [10u64, 1000, 5000] {
        let mut r = SplitMix64::new(n);
        let shares: Vec<u64> = (0..n).map(|_| 1 + r.next_u64() % 1024).collect();
        assert_eq!(
            library(&shares, 60_000),
            paper(&shares, 60_000),
            "{n} clients"
        );
    }
}

/// The differential test's shrunk counterexample: shares 1 then 2. The
/// first pick belongs to the heaviest group (share 2) in every cycle,
/// including the first, which used to start at the first joiner's group
/// (0, 1, 1 and only then 1, 1, 0).
#[test]
fn the_first_cycle_starts_at_the_heaviest_group() {
    assert_eq!(library(&[1, 2], 9), [1, 1, 0, 1, 1, 0, 1, 1, 0]);
    assert_eq!(paper(&[1, 2], 9), [1, 1, 0, 1, 1, 0, 1, 1, 0]);
}
