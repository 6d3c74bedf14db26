//! The lottery's fast draw engines (Waldspurger 001 §4.2): the 32-ary sum
//! tree against an O(n) model that scans the clients in id order (the same
//! winner for every draw, compensation included), and the O(1) draw's
//! distribution by chi-square where its two-candidate rejection and its
//! 32-bit member encoding could bias it.

use proptest::prelude::*;
use tix_core::compensation::Compensation;
use tix_core::lottery::{Draw, Lottery};
use tix_core::rng::{DefaultRng, Rng, SplitMix64};
use tix_core::{ClientId, Error, PolicyOptions, Scheduler};

const Q: u64 = 1000;

/// The obvious lottery: per client tickets, compensation and state; a draw
/// takes `r = below(total)` from the same generator and walks the clients
/// in id order until the running sum of runnable values exceeds r (what a
/// partial-sum tree over ids computes, Waldspurger §4.2).
struct Model {
    rng: DefaultRng,
    comp: Compensation,
    /// (tickets, compensation tickets, runnable, alive)
    c: Vec<(u64, u64, bool, bool)>,
}

impl Model {
    fn total(&self) -> u64 {
        self.c
            .iter()
            .filter(|c| c.2 && c.3)
            .map(|c| c.0 + c.1)
            .sum()
    }

    fn pick(&mut self) -> Option<ClientId> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let r = self.rng.below(total);
        let mut sum = 0;
        for (id, c) in self.c.iter_mut().enumerate() {
            if c.2 && c.3 {
                sum += c.0 + c.1;
                if sum > r {
                    // Compensation lasts until the next win.
                    c.1 = 0;
                    return Some(id);
                }
            }
        }
        unreachable!("r < total")
    }

    fn charge(&mut self, id: ClientId, used: u64) {
        let t = self.c[id].0;
        self.c[id].1 = self.comp.tickets(t, used, Q);
    }

    fn live(&self, i: usize) -> bool {
        self.c.get(i).is_some_and(|c| c.3)
    }
}

#[derive(Debug, Clone)]
enum Op {
    Join(u64),
    Leave(usize),
    SetWeight(usize, u64),
    Block(usize),
    Wake(usize),
    Run(u64),
}

fn op() -> impl Strategy<Value = Op> {
    // Weights from 1 to 2^32 (values up to 2^42 with compensation), ids
    // past the end to hit errors, and runs with partial quanta.
    let weight = prop_oneof![1u64..64, 1u64..5000, 1u64..=1 << 32];
    prop_oneof![
        2 => weight.clone().prop_map(Op::Join),
        1 => (0usize..40).prop_map(Op::Leave),
        1 => (0usize..40, weight).prop_map(|(i, w)| Op::SetWeight(i, w)),
        1 => (0usize..40).prop_map(Op::Block),
        1 => (0usize..40).prop_map(Op::Wake),
        4 => (0u64..=Q + 10).prop_map(Op::Run),
    ]
}

fn comp_rule(i: u8) -> Compensation {
    match i {
        0 => Compensation::None,
        1 => Compensation::Waldspurger,
        _ => Compensation::zepp(6, true).unwrap(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    /// The tree draw picks exactly the client the id-order scan picks, for
    /// every draw of every random sequence of joins (growing the tree past
    /// several capacities), leaves, reweights, blocks, wakes and partial
    /// charges, under each compensation rule.
    #[test]
    fn tree_draw_is_the_id_order_scan(
        ops in prop::collection::vec(op(), 1..300),
        seed in any::<u64>(),
        comp in 0u8..3,
        // Up to three levels of the 32-ary tree (three from 1025 ids).
        initial in prop_oneof![0usize..200, 1000usize..1400],
    ) {
        let comp = comp_rule(comp);
        let opts = PolicyOptions { quantum_ns: Q, seed };
        let mut l = Lottery::new(&opts, Draw::Tree).with_compensation(comp);
        let mut m = Model { rng: DefaultRng::new(seed), comp, c: Vec::new() };
        for i in 0..initial {
            let w = 1 + (i as u64 * 7919) % 1000;
            prop_assert_eq!(l.join(w), Ok(i));
            m.c.push((w, 0, true, true));
        }
        for o in &ops {
            match *o {
                Op::Join(w) => {
                    prop_assert_eq!(l.join(w), Ok(m.c.len()));
                    m.c.push((w, 0, true, true));
                }
                Op::Leave(i) => {
                    let ok = m.live(i);
                    prop_assert_eq!(l.leave(i).is_ok(), ok);
                    if ok { m.c[i].3 = false; }
                }
                Op::SetWeight(i, w) => {
                    let ok = m.live(i);
                    prop_assert_eq!(l.set_weight(i, w).is_ok(), ok);
                    if ok { m.c[i].0 = w; }
                }
                Op::Block(i) => {
                    let ok = m.live(i) && m.c[i].2;
                    prop_assert_eq!(l.block(i).is_ok(), ok);
                    if ok { m.c[i].2 = false; }
                }
                Op::Wake(i) => {
                    let ok = m.live(i) && !m.c[i].2;
                    prop_assert_eq!(l.wake(i).is_ok(), ok);
                    if ok { m.c[i].2 = true; }
                }
                Op::Run(used) => {
                    let want = m.pick();
                    prop_assert_eq!(l.pick(), want);
                    if let Some(id) = want {
                        l.charge(id, used).unwrap();
                        m.charge(id, used);
                    }
                }
            }
            prop_assert_eq!(l.total_value(), m.total());
        }
    }
}

/// 0.999 quantiles of χ²(df) (standard tables). A correct draw fails one
/// of these tests at its fixed seed with probability 0.001; a draw whose
/// shares are off by a few percent of a cell exceeds them many times over.
fn chi2_999(df: usize) -> f64 {
    match df {
        5 => 20.52,
        7 => 24.32,
        19 => 43.82,
        _ => panic!("no table entry for df {df}"),
    }
}

/// Pearson's statistic of win counts against the values' shares.
fn chi2_fit(counts: &[u64], values: &[u64]) -> f64 {
    let n: u64 = counts.iter().sum();
    let t: f64 = values.iter().map(|&v| v as f64).sum();
    counts
        .iter()
        .zip(values)
        .map(|(&c, &v)| {
            let e = n as f64 * v as f64 / t;
            (c as f64 - e).powi(2) / e
        })
        .sum()
}

/// Win counts of the given clients over `picks` whole-quantum lotteries.
fn wins(l: &mut Lottery, ids: &[ClientId], picks: usize) -> Vec<u64> {
    let mut counts = vec![0u64; ids.len()];
    for _ in 0..picks {
        let id = l.pick().unwrap();
        let i = ids
            .iter()
            .position(|&x| x == id)
            .expect("a measured client");
        counts[i] += 1;
        l.charge(id, Q).unwrap();
    }
    counts
}

/// Win counts of an O(1) lottery over `weights` (joined in order) after
/// `draws` whole-quantum pick+charge rounds, seeded with `seed`.
fn o1_wins(weights: &[u64], seed: u64, draws: usize) -> Vec<u64> {
    let opts = PolicyOptions {
        quantum_ns: Q,
        seed,
    };
    let mut l = Lottery::new(&opts, Draw::O1);
    let ids: Vec<ClientId> = weights.iter().map(|&w| l.join(w).unwrap()).collect();
    wins(&mut l, &ids, draws)
}

#[test]
fn o1_fits_shares_after_churn() {
    // 20 clients over four groups (values 2..1023), reshuffled by
    // reweights inside and across groups, blocks, wakes and leaves, so the
    // member lists have been swap-removed and updated in place. Expected
    // wins per cell ≥ 200000·2/Σ ≈ 45 (Σ ≈ 8900): df = 19.
    let mut l = Lottery::new(
        &PolicyOptions {
            quantum_ns: Q,
            seed: 7,
        },
        Draw::O1,
    );
    let mut ids: Vec<ClientId> = (0..30)
        .map(|i| l.join(2 + (i * 37) % 1000).unwrap())
        .collect();
    for (i, &id) in ids.clone().iter().enumerate() {
        match i % 5 {
            0 => l.set_weight(id, 700 + i as u64).unwrap(), // across or within
            1 => l.block(id).unwrap(),
            2 => {
                l.block(id).unwrap();
                l.wake(id).unwrap();
            }
            _ => {}
        }
        let id = l.pick().unwrap();
        l.charge(id, Q).unwrap();
    }
    // Leave the blocked ones and ten more: 20 remain.
    for (i, &id) in ids.clone().iter().enumerate() {
        if i % 5 == 1 || (i % 5 == 3 && i < 20) {
            l.leave(id).unwrap();
            ids.retain(|&x| x != id);
        }
    }
    assert_eq!(ids.len(), 20);
    let values: Vec<u64> = ids.iter().map(|&id| l.weight(id).unwrap()).collect();
    let c = wins(&mut l, &ids, 200_000);
    let x = chi2_fit(&c, &values);
    assert!(x < chi2_999(19), "chi2 {x}: {c:?} for {values:?}");
}

#[test]
fn o1_fits_shares_of_large_values() {
    // Groups 30, 31 and 32: group 32 holds 2^32 (acceptance decided on the
    // top 32 bits of a 33-bit value), group 31 has three members (too many
    // for one word to carry two candidates' index and 32 bits each, so the
    // draw takes its other path). 6 cells, df = 5; the smallest expects
    // 100000·2^30/Σ ≈ 6900 wins.
    let weights = [
        1 << 32,
        (1 << 32) - 1,
        (1 << 31) + 12_345,
        3 << 30,
        (1 << 30) + 99,
        1 << 30,
    ];
    let c = o1_wins(&weights, 8, 100_000);
    let x = chi2_fit(&c, &weights);
    assert!(x < chi2_999(5), "chi2 {x}: {c:?}");
}

#[test]
fn o1_fits_shares_of_one_crowded_group() {
    // 8 clients all in group 9 with values 512..1023: every draw is a
    // rejection among them, acceptance v/1024 from 1/2 to almost 1, so
    // two-candidate rounds fail often enough to matter. df = 7; the
    // smallest cell expects 80000·512/6200 ≈ 6600 wins.
    let weights = [512, 513, 600, 700, 800, 900, 1000, 1023];
    let c = o1_wins(&weights, 9, 80_000);
    let x = chi2_fit(&c, &weights);
    assert!(x < chi2_999(7), "chi2 {x}: {c:?}");
}

#[test]
fn chi2_bounds_have_power() {
    // The same crowded group measured against shares with two values
    // swapped (512 ↔ 1023): far outside the bound, so the test can fail.
    let weights = [512, 513, 600, 700, 800, 900, 1000, 1023];
    let c = o1_wins(&weights, 9, 80_000);
    let mut wrong = weights;
    wrong.swap(0, 7);
    assert!(chi2_fit(&c, &wrong) > 100.0 * chi2_999(7));
}

#[test]
fn o1_compensation_moves_members_between_groups() {
    // Waldspurger's rule inflates a short user's value by up to 1024× (into
    // groups ≥ 32 for large weights) until it next wins; the draw must
    // follow the value out of and back into its group. B uses a fifth of
    // each quantum, so it competes with 5·2^31 against A's 2^31 after its
    // first run: its share of wins is 5/6 (see lottery_draws.rs), here
    // with values that leave group 31. Binomial sd at n = 60000 is
    // sqrt(5/36/60000) = 0.0015; the bound 0.01 is > 6 sd.
    let mut l = Lottery::new(
        &PolicyOptions {
            quantum_ns: Q,
            seed: 10,
        },
        Draw::O1,
    )
    .with_compensation(Compensation::Waldspurger);
    let a = l.join(1 << 31).unwrap();
    let b = l.join(1 << 31).unwrap();
    let mut b_wins = 0u64;
    let n = 60_000;
    for _ in 0..n {
        let id = l.pick().unwrap();
        if id == b {
            b_wins += 1;
            l.charge(b, Q / 5).unwrap();
        } else {
            assert_eq!(id, a);
            l.charge(a, Q).unwrap();
        }
    }
    let share = b_wins as f64 / n as f64;
    assert!((share - 5.0 / 6.0).abs() < 0.01, "share {share}");
}

#[test]
fn engines_refuse_bad_ids_without_panicking() {
    for d in [Draw::Tree, Draw::O1] {
        let mut l = Lottery::new(
            &PolicyOptions {
                quantum_ns: Q,
                seed: 1,
            },
            d,
        );
        assert_eq!(l.charge(3, 1), Err(Error::UnknownClient(3)));
        let a = l.join(5).unwrap();
        assert_eq!(l.charge(a, 1), Err(Error::NotInService(a)));
        assert_eq!(l.charge(a + 1, 1), Err(Error::UnknownClient(a + 1)));
        assert_eq!(l.pick(), Some(a));
        assert_eq!(l.charge(a + 1, 1), Err(Error::UnknownClient(a + 1)));
        l.charge(a, 1).unwrap();
    }
}

// The O(1) draw's winners for fixed-seed runs, recorded from commit 6e11a73
// (`o1_run` below, compiled against that commit's tix-core in a scratch
// crate outside the repository, printing `(seed, hash, picks)`). A guard
// for speed work on the draw: any change to how a ticket's group or a
// candidate is found must keep every winner, unless it consumes random
// words differently, which must then be said and these values re-recorded.

/// A fixed-seed random run of the O(1) lottery: joins, leaves,
/// reweights (weights spread over 1..2^32 so members cross groups),
/// blocks, wakes, picks and partial or whole charges; returns the FNV-1a
/// hash of every pick (None as u64::MAX) and the number of picks.
fn o1_run(seed: u64, comp: Compensation, steps: usize) -> (u64, usize) {
    let opts = PolicyOptions {
        quantum_ns: 1000,
        seed,
    };
    let mut s = Lottery::new(&opts, Draw::O1).with_compensation(comp);
    let mut g = SplitMix64::new(seed ^ 0x5eed);
    let mut ids: Vec<ClientId> = Vec::new();
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut picks = 0;
    let weight = |g: &mut SplitMix64| {
        let bits = g.next_u64() % 33;
        1 + g.next_u64() % (1u64 << bits)
    };
    for _ in 0..steps {
        let op = g.next_u64() % 10;
        let pick_id = |g: &mut SplitMix64, ids: &[ClientId]| {
            (!ids.is_empty()).then(|| ids[(g.next_u64() % ids.len() as u64) as usize])
        };
        match op {
            0 | 1 if ids.len() < 64 => {
                let w = weight(&mut g);
                ids.push(s.join(w).expect("join"));
            }
            2 => {
                if let Some(id) = pick_id(&mut g, &ids) {
                    s.leave(id).expect("leave");
                    ids.retain(|&x| x != id);
                }
            }
            3 => {
                if let Some(id) = pick_id(&mut g, &ids) {
                    let w = weight(&mut g);
                    s.set_weight(id, w).expect("set_weight");
                }
            }
            4 => {
                if let Some(id) = pick_id(&mut g, &ids) {
                    // Err when already blocked: part of the run.
                    let _ = s.block(id);
                }
            }
            5 => {
                if let Some(id) = pick_id(&mut g, &ids) {
                    let _ = s.wake(id);
                }
            }
            _ => {
                let p = s.pick();
                picks += 1;
                hash = (hash ^ p.map_or(u64::MAX, |id| id as u64)).wrapping_mul(0x100_0000_01b3);
                if let Some(id) = p {
                    let used = if g.next_u64() & 1 == 0 {
                        1000
                    } else {
                        1 + g.next_u64() % 1000
                    };
                    s.charge(id, used).expect("charge");
                }
            }
        }
    }
    (hash, picks)
}

#[test]
fn o1_winners_match_the_recorded_runs() {
    const RECORDED: [(u64, u64, usize); 6] = [
        (1, 0x3b78b0abb62005ee, 1971),
        (2, 0xf17c3efe30d7d6d5, 2017),
        (3, 0x5b4b7a70ea622b53, 1919),
        (4, 0x2ab7c878b5e2956e, 1890),
        (5, 0x7480f013fcf27fa6, 1885),
        (6, 0x61fef20a3fbcda62, 1878),
    ];
    for (seed, hash, picks) in RECORDED {
        let comp = match seed % 3 {
            0 => Compensation::None,
            1 => Compensation::Waldspurger,
            _ => Compensation::Zepp {
                slice_ticks: 4,
                io_enhanced: true,
            },
        };
        assert_eq!(o1_run(seed, comp, 4000), (hash, picks), "seed {seed}");
    }
}

// From 2^16 runnable clients the O(1) draw plans each lottery eight picks
// ahead (two words of its own wyrand generator per lottery: the ticket and
// a pair of candidates; the rest from a retry generator) and prefetches the
// members it will try first. Its winners differ from the ordinary path's,
// so it is checked by its law here and its schedule is pinned by a
// fixture, recorded when the plans came to take their words from wyrand
// with two candidates (the `(seed, hash)` this test printed on failure;
// earlier look-aheads, f7a162d, fc517ba and 94d7536, gave others).

/// 2^18 + 64 clients (past the look-ahead threshold), weights 1..=1024 in
/// hash order; `picks` whole-quantum picks, and every 97th step a block,
/// wake or reweight of a random client, so that some planned lotteries
/// are stale when held (at most `picks`/97 blocks: the clients stay above
/// 2^18). Returns the FNV-1a hash of the picks and the chi-square of the
/// wins in 8 weight bins (1..=128, 129..=256, ...) against the bins'
/// share of the runnable tickets at each pick.
fn o1_large_run(seed: u64, picks: usize) -> (u64, f64) {
    let opts = PolicyOptions {
        quantum_ns: 1000,
        seed,
    };
    let mut s = Lottery::new(&opts, Draw::O1);
    let mut g = SplitMix64::new(seed ^ 0x1a46e);
    let n = (1usize << 18) + 64;
    let bin = |w: u64| ((w - 1) / 128).min(7) as usize;
    let mut weight = vec![0u64; n];
    let mut up = vec![true; n];
    let mut sums = [0u64; 8];
    for w in weight.iter_mut() {
        *w = 1 + g.next_u64() % 1024;
        s.join(*w).expect("join");
        sums[bin(*w)] += *w;
    }
    let (mut won, mut expected) = ([0f64; 8], [0f64; 8]);
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for step in 0..picks {
        if step % 97 == 0 {
            let id = (g.next_u64() % n as u64) as usize;
            match g.next_u64() % 3 {
                0 if up[id] => {
                    s.block(id).expect("block");
                    (up[id], sums[bin(weight[id])]) = (false, sums[bin(weight[id])] - weight[id]);
                }
                1 if !up[id] => {
                    s.wake(id).expect("wake");
                    (up[id], sums[bin(weight[id])]) = (true, sums[bin(weight[id])] + weight[id]);
                }
                2 => {
                    let w = 1 + g.next_u64() % 1024;
                    s.set_weight(id, w).expect("set_weight");
                    if up[id] {
                        sums[bin(weight[id])] -= weight[id];
                        sums[bin(w)] += w;
                    }
                    weight[id] = w;
                }
                _ => {}
            }
        }
        let total: u64 = sums.iter().sum();
        for b in 0..8 {
            expected[b] += sums[b] as f64 / total as f64;
        }
        let id = s.pick().expect("runnable clients");
        won[bin(weight[id])] += 1.0;
        hash = (hash ^ id as u64).wrapping_mul(0x100_0000_01b3);
        s.charge(id, 1000).expect("charge");
    }
    let x = (0..8)
        .map(|b| (won[b] - expected[b]).powi(2) / expected[b])
        .sum();
    (hash, x)
}

#[test]
fn o1_look_ahead_draws_by_tickets() {
    // 100000 picks: the lightest bin expects ≥ 100000·(128·129/2)/(1024·
    // 1025/2) ≈ 1560 wins. Bound: chi-square 0.999 quantile at df = 7.
    for seed in [1, 2] {
        let (_, x) = o1_large_run(seed, 100_000);
        assert!(x < 24.32, "seed {seed}: chi-square {x:.1} at df 7");
    }
}

#[test]
fn o1_winners_with_look_ahead_match_the_recorded_runs() {
    const RECORDED: [(u64, u64); 2] = [(1, 0x1824_0267_eb3f_54a3), (2, 0x2c68_08fa_b192_eb8c)];
    for (seed, hash) in RECORDED {
        assert_eq!((seed, o1_large_run(seed, 3000).0), (seed, hash));
    }
}
