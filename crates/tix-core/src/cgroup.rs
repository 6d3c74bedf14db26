//! Linux's own rights as Waldspurger currencies (001 §3.3, §4.3), with Zepp's
//! users inside them (000 §3.2): every cgroup is a currency funded by its
//! `cpu.weight` in its parent's, a task's nice weighs it inside its process.
//! The integer rule here is the one the kernel scheduler computes at a draw.
//!
//! The tree a runnable thread is valued through, from the root down:
//! - the root cgroup's currency is the base currency (not normalised, as
//!   001's base is not): one unit is one base ticket;
//! - a cgroup is funded by [`cgroup_funding`] of its parent's currency while
//!   anything below it is runnable; a default cgroup (100) is worth a
//!   default user ([`crate::zepp::DEFAULT_BASE`]);
//! - inside a cgroup, each user with runnable processes *directly* in it is
//!   a currency funded by the user's base tickets (Zepp's level; on systemd
//!   every user has a slice of their own, so this is the user's slice);
//! - a process holds its tickets times the mean nice weight of its runnable
//!   threads in its user's currency ([`process_amount`]); its threads split
//!   its value by nice weight, so with every thread at nice 0 this is Zepp's
//!   `b·p/t` split equally among runnable threads.

/// The user kernel threads are valued as: a user of their own with a
/// default base, beside the users of the root cgroup, not root's processes
/// (the kernel's work is done for every user; Zepp 000 §8 names system
/// tasks' priority as missing). `(uid_t)-1`, which no process can hold.
pub const KERNEL_UID: u32 = u32::MAX;

/// The kernel's weight of each nice level, -20..=19 (`sched_prio_to_weight`:
/// each step is about 10% of CPU between two tasks).
pub const NICE_WEIGHTS: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];
/// The weight of a nice-0 task.
pub const NICE_0_WEIGHT: u64 = 1024;
/// The kernel's weight of a SCHED_IDLE task (and of a `cpu.idle` cgroup).
pub const IDLE_WEIGHT: u64 = 3;

/// cgroup v2 `cpu.weight`: range and default.
pub const CPU_WEIGHT_MIN: u64 = 1;
pub const CPU_WEIGHT_MAX: u64 = 10_000;
pub const CPU_WEIGHT_DEFAULT: u64 = 100;
/// Base tickets per point of `cpu.weight`: a default cgroup is worth a
/// default user's 1000 base tickets.
pub const BASE_PER_WEIGHT: u64 = 10;
/// A `cpu.idle` cgroup's funding: [`IDLE_WEIGHT`] against a default
/// cgroup's 1024, as the kernel weighs an idle group (3/1024 of 1000 is 2.9).
pub const IDLE_FUNDING: u64 = 3;

/// Inside a user's currency (and the currencies below it) amounts are
/// tickets times nice weight, shifted down by this many bits: a nice-0
/// ticket is [`TICKET_UNIT`] (64). The shift keeps every product of the
/// value walk within 64 bits at the largest tickets, weights and fundings.
pub const AMOUNT_SHIFT: u32 = 4;
pub const TICKET_UNIT: u64 = NICE_0_WEIGHT >> AMOUNT_SHIFT;

/// Fraction bits of the running value in [`thread_value`].
pub const VALUE_FRAC: u32 = 16;
/// Largest task value (base tickets): far above any value a real tree makes
/// (10^4 base tickets is the most a user holds); keys stay meaningful.
pub const VALUE_MAX: u64 = 1 << 40;
/// Cgroup levels a value is taken through; deeper ancestors are ignored
/// (their shares are 1, as if the tree were cut there).
pub const MAX_DEPTH: usize = 16;

/// The uid of systemd's slice of a user, from the cgroup's name
/// (`user-UID.slice`); None for any other name or uid u32::MAX.
pub fn slice_uid(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("user-")?.strip_suffix(".slice")?;
    if digits.is_empty() || digits.len() > 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u32>().ok().filter(|&u| u != u32::MAX)
}

/// A nice level's weight (clamped to -20..=19), or [`IDLE_WEIGHT`] for a
/// SCHED_IDLE task.
pub fn nice_weight(nice: i32, idle: bool) -> u64 {
    if idle {
        return IDLE_WEIGHT;
    }
    NICE_WEIGHTS[(nice.clamp(-20, 19) + 20) as usize]
}

/// A cgroup's funding in its parent's currency.
pub fn cgroup_funding(cpu_weight: u64, idle: bool) -> u64 {
    if idle {
        return IDLE_FUNDING;
    }
    cpu_weight.clamp(CPU_WEIGHT_MIN, CPU_WEIGHT_MAX) * BASE_PER_WEIGHT
}

/// Range of BFQ's `io.bfq.weight` (default 100).
pub const BFQ_WEIGHT_MAX: u64 = 1000;
/// Range of blk-iocost's `io.weight` (default 100), as `cpu.weight`'s.
pub const IO_WEIGHT_MAX: u64 = 10_000;

/// The I/O weight that carries a cgroup's funding (base tickets, as
/// [`cgroup_funding`] counts them) to the block layer (001 §6: one currency
/// funds every resource): the inverse of `cpu.weight`'s rule, rounded, held
/// to the knob's range `1..=max`. Between sibling cgroups the weights keep
/// the fundings' ratio wherever neither is clamped.
pub fn io_weight(funding: u64, max: u64) -> u64 {
    (funding.saturating_add(BASE_PER_WEIGHT / 2) / BASE_PER_WEIGHT).clamp(1, max.max(1))
}

/// `a * b / c` (c 0 counts as 1), saturating when the product exceeds 64
/// bits: the BPF side has no 128-bit division, so this is the rule on both.
pub fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p / c.max(1),
        None => u64::MAX,
    }
}

/// A process's amount in its currency: its tickets times the mean weight
/// of its `nr` runnable threads (`weight_sum` their sum), in
/// [`TICKET_UNIT`]s; 0 with none runnable.
pub fn process_amount(tickets: u64, weight_sum: u64, nr: u64) -> u64 {
    if nr == 0 {
        return 0;
    }
    mul_div(tickets, weight_sum, nr) >> AMOUNT_SHIFT
}

/// What a currency funded by `amount` tickets of its parent counts in the
/// parent's sum: as many nice-0 tickets of a process would.
pub fn currency_funding(amount: u64) -> u64 {
    amount.saturating_mul(TICKET_UNIT)
}

/// One cgroup on a thread's path: its funding and its currency's active
/// amount (the funding of its active children and users).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    pub funding: u64,
    pub active: u64,
}

/// A runnable thread's value in base tickets: `base · tickets · weight /
/// (group_active · nr)` for the currency its tickets are in (base: that
/// currency's funding, the user's base for the user's own; group_active:
/// the amounts of its runnable holders there; nr: its process's runnable
/// threads), then times `funding / active` of each currency above it and
/// each cgroup from its own up to the root's child (`levels`, bottom-up;
/// at most [`MAX_DEPTH`]).
/// Integer steps in that order with [`VALUE_FRAC`] fraction bits, clamped to
/// 1..=[`VALUE_MAX`] so no runnable task has zero odds.
pub fn thread_value(
    base: u64,
    tickets: u64,
    weight: u64,
    nr: u64,
    group_active: u64,
    levels: &[Level],
) -> u64 {
    let den = group_active.max(1).saturating_mul(nr.max(1));
    let own = tickets.saturating_mul(weight) >> AMOUNT_SHIFT;
    let mut x = mul_div(base << VALUE_FRAC, own, den);
    for l in levels.iter().take(MAX_DEPTH) {
        x = mul_div(x, l.funding, l.active);
    }
    (x >> VALUE_FRAC).clamp(1, VALUE_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::currency::{Ledger, BASE};
    use crate::zepp;

    #[test]
    fn nice_weights_are_the_kernels() {
        assert_eq!(nice_weight(0, false), NICE_0_WEIGHT);
        assert_eq!(nice_weight(-20, false), 88761);
        assert_eq!(nice_weight(19, false), 15);
        assert_eq!(nice_weight(99, false), 15);
        assert_eq!(nice_weight(5, true), IDLE_WEIGHT);
        // Each step is the kernel's ~1.25 ratio.
        for w in NICE_WEIGHTS.windows(2) {
            let r = w[0] as f64 / w[1] as f64;
            assert!((1.2..1.3).contains(&r), "{w:?}");
        }
    }

    #[test]
    fn a_lone_cgroup_free_tree_is_zepps_value() {
        // No cgroups but the root, every thread at nice 0: b·p/t split
        // among runnable threads, up to the floors' order.
        for (b, p, others, nr) in [(1000, 100, 0, 1), (1000, 100, 300, 1), (3000, 7, 93, 3)] {
            let active = (p + others) * TICKET_UNIT;
            let v = thread_value(b, p, NICE_0_WEIGHT, nr, active, &[]);
            let z = zepp::task_value(b, p, p + others, nr);
            assert!(v.abs_diff(z) <= 1, "{v} {z}");
        }
    }

    #[test]
    fn io_weights_invert_cpu_weights() {
        // Every cpu.weight comes back as the io.weight that carries its
        // funding; BFQ's knob stops at 1000.
        for w in [1, 7, 100, 250, 1000, 10_000] {
            assert_eq!(io_weight(cgroup_funding(w, false), IO_WEIGHT_MAX), w);
            assert_eq!(
                io_weight(cgroup_funding(w, false), BFQ_WEIGHT_MAX),
                w.min(1000)
            );
        }
        // A user's base: 3000 and 1000 base tickets are 300 and 100, the
        // ratio kept; tiny and huge bases are held to the range.
        assert_eq!(io_weight(3000, BFQ_WEIGHT_MAX), 300);
        assert_eq!(io_weight(1000, BFQ_WEIGHT_MAX), 100);
        assert_eq!(io_weight(1234, BFQ_WEIGHT_MAX), 123);
        assert_eq!(io_weight(1235, BFQ_WEIGHT_MAX), 124);
        assert_eq!(io_weight(0, BFQ_WEIGHT_MAX), 1);
        assert_eq!(io_weight(u64::MAX, BFQ_WEIGHT_MAX), 1000);
        assert_eq!(io_weight(1 << 40, IO_WEIGHT_MAX), 10_000);
    }

    #[test]
    fn saturation_and_floor() {
        assert_eq!(mul_div(u64::MAX, 2, 1), u64::MAX);
        assert_eq!(mul_div(10, 3, 0), 30);
        assert_eq!(thread_value(100, 1, 15, 64, u64::MAX, &[]), 1);
        let huge = [Level {
            funding: 100_000,
            active: 1,
        }; 8];
        assert_eq!(thread_value(10_000, 10_000, 88761, 1, 1, &huge), VALUE_MAX);
    }

    /// The same tree built as 001's currencies in the ledger: each cgroup a
    /// currency funded from its parent's, each (cgroup, user) a currency
    /// funded by the base, each process a currency funded by its amount,
    /// each thread a client holding its weight.
    #[test]
    fn the_integer_rule_is_the_ledgers_value() {
        let mut l = Ledger::new();
        // root ─ A (cpu.weight 100) ─ A1 (300): alice 2 procs (nice 0 / 1 thread,
        //                                        nice 5 + nice 0 / 2 threads)
        //      │                   └ A2 (100, idle): bob 1 proc
        //      └ B (900): alice 1 proc; root: carol 1 proc
        let a = l.create_currency("A").unwrap();
        let fa = l.issue(BASE, cgroup_funding(100, false)).unwrap();
        l.fund(a, fa).unwrap();
        let a1 = l.create_currency("A1").unwrap();
        let fa1 = l.issue(a, cgroup_funding(300, false)).unwrap();
        l.fund(a1, fa1).unwrap();
        let a2 = l.create_currency("A2").unwrap();
        let fa2 = l.issue(a, cgroup_funding(100, true)).unwrap();
        l.fund(a2, fa2).unwrap();
        let b = l.create_currency("B").unwrap();
        let fb = l.issue(BASE, cgroup_funding(900, false)).unwrap();
        l.fund(b, fb).unwrap();
        let group = |l: &mut Ledger, name: &str, parent, base| {
            let g = l.create_currency(name).unwrap();
            let t = l.issue(parent, base).unwrap();
            l.fund(g, t).unwrap();
            g
        };
        let g_alice_a1 = group(&mut l, "alice@A1", a1, 1000);
        let g_bob_a2 = group(&mut l, "bob@A2", a2, 2500);
        let g_alice_b = group(&mut l, "alice@B", b, 1000);
        let g_carol_root = group(&mut l, "carol@/", BASE, 500);
        // alice's own currency "work" below her group in B (tix mkcur; fund 300).
        let g_work = group(&mut l, "work@B", g_alice_b, currency_funding(300));
        // (group, tickets, thread weights)
        let procs: Vec<(usize, u64, Vec<u64>)> = vec![
            (g_alice_a1, 100, vec![1024]),
            (g_alice_a1, 300, vec![335, 1024]),
            (g_bob_a2, 100, vec![1024]),
            (g_alice_b, 100, vec![110, 110, 110]),
            (g_carol_root, 100, vec![1024]),
            (g_work, 250, vec![1024, 15]),
        ];
        let mut threads = vec![];
        let mut amounts = vec![];
        for (i, (g, tickets, ws)) in procs.iter().enumerate() {
            let amount = process_amount(*tickets, ws.iter().sum(), ws.len() as u64);
            amounts.push((*g, amount));
            let pc = l.create_currency(&format!("p{i}")).unwrap();
            let t = l.issue(*g, amount).unwrap();
            l.fund(pc, t).unwrap();
            for &w in ws {
                let h = l.new_client();
                let t = l.issue(pc, w).unwrap();
                l.give(h, t).unwrap();
                threads.push((h, i, w));
            }
        }
        let active = |l: &Ledger, c| l.active_amount(c).unwrap();
        let lv = |funding, c| Level {
            funding,
            active: active(&l, c),
        };
        for (h, i, w) in threads {
            let (g, tickets, ws) = &procs[i];
            let base = match *g {
                x if x == g_bob_a2 => 2500,
                x if x == g_carol_root => 500,
                x if x == g_work => currency_funding(300),
                _ => 1000,
            };
            let levels: Vec<Level> = match *g {
                x if x == g_alice_a1 => vec![lv(3000, a1), lv(1000, a)],
                x if x == g_bob_a2 => vec![lv(IDLE_FUNDING, a2), lv(1000, a)],
                x if x == g_alice_b => vec![lv(9000, b)],
                x if x == g_work => vec![lv(1000, g_alice_b), lv(9000, b)],
                _ => vec![],
            };
            let funds_work = if *g == g_alice_b {
                currency_funding(300)
            } else {
                0
            };
            let group_active: u64 = amounts
                .iter()
                .filter(|x| x.0 == *g)
                .map(|x| x.1)
                .sum::<u64>()
                + funds_work;
            assert_eq!(group_active, active(&l, *g));
            let v = thread_value(base, *tickets, w, ws.len() as u64, group_active, &levels);
            let want = l.client_value(h).unwrap();
            assert!(
                (v as f64 - want).abs() <= 1.0 + want * 1e-4,
                "thread of p{i} (w {w}): rule {v}, ledger {want:.2}"
            );
        }
    }
}
