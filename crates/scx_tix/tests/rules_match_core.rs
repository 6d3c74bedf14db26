//! The BPF program's integer rules (src/bpf/rules.h, compiled for the host by
//! build.rs) must equal tix-core's bit for bit: the exponential race
//! (tix_core::race), Zepp's value (tix_core::zepp) and stride's pass
//! (tix_core::stride). Random inputs from fixed seeds over the full u64
//! domain and over the ranges the kernel actually meets, plus edges.

use proptest::prelude::*;
use tix_core::compensation::{self, Compensation};
use tix_core::{cgroup, race, stride, vtime, zepp};

extern "C" {
    fn tix_c_neg_ln_q16(u: u32) -> u64;
    fn tix_c_race_delta(e: u64, v: u64, used: u64, slice: u64, comp: i32) -> u64;
    fn tix_c_race_cost(e: u64, v: u64, used: u64, slice: u64, mode: i32) -> u64;
    fn tix_c_zepp_comp(v: u64, used: u64, slice: u64, io: i32) -> u64;
    fn tix_c_task_value(base: u64, tickets: u64, urt: u64, prt: u64) -> u64;
    fn tix_c_pass_delta(used: u64, value: u64) -> u64;
    fn tix_c_wake_pass(pass: u64, vt: u64) -> u64;
    fn tix_c_sat_add(a: u64, b: u64) -> u64;
    fn tix_c_lag_bound(one_run: u64) -> u64;
    fn tix_c_run_avg(avg: u64, used: u64) -> u64;
    fn tix_c_wake_lag(one: u64, slices: u64, slept: u64, slice: u64) -> u64;
    fn tix_c_wake_slices() -> u64;
    fn tix_c_wake_rate(stride: i32, chosen: u64) -> u64;
    fn tix_c_rated_sleep(slept: u64, rate: u64) -> u64;
    fn tix_c_wake_rate_max() -> u64;
    fn tix_c_lead_cap(stride: i32, starve: u64, slice: u64, vsum: u64, serving: u64) -> u64;
    fn tix_c_wake_cap(stride: i32, slice: u64, vsum: u64, serving: u64) -> u64;
    fn tix_c_level_lag(vt: u64, least: u64) -> u64;
    fn tix_c_cap_lead(key: u64, reference: u64, cap: u64) -> u64;
    fn tix_c_kernel_wake_key(key: u64, head: u64, has_head: i32) -> u64;
    fn tix_c_lead_key(key: u64, one_run: u64, slices: u64) -> u64;
    fn tix_c_pinned_lead() -> u64;
    fn tix_c_pinned_lead_max() -> u64;
    fn tix_c_next_key(own: u64, vt: u64, lag: u64, pending: u64) -> u64;
    fn tix_c_next_pass(own: u64, vt: u64, lag: u64, pending: u64) -> u64;
    fn tix_c_nice_weight(nice: i32, idle: i32) -> u64;
    fn tix_c_cgroup_funding(w: u64, idle: i32) -> u64;
    fn tix_c_process_amount(tickets: u64, weight_sum: u64, nr: u64) -> u64;
    fn tix_c_currency_funding(amount: u64) -> u64;
    fn tix_c_slice_uid(name32: *const u8) -> u32;
    fn tix_c_thread_value(
        base: u64,
        tickets: u64,
        weight: u64,
        nr: u64,
        group_active: u64,
        funding: *const u64,
        active: *const u64,
        n: i32,
    ) -> u64;
}

fn c_neg_ln(u: u32) -> u64 {
    // SAFETY: pure C function of integers.
    unsafe { tix_c_neg_ln_q16(u) }
}
fn c_delta(e: u64, v: u64, used: u64, slice: u64, comp: bool) -> u64 {
    // SAFETY: pure C function of integers.
    unsafe { tix_c_race_delta(e, v, used, slice, comp as i32) }
}
fn c_value(b: u64, t: u64, urt: u64, prt: u64) -> u64 {
    // SAFETY: pure C function of integers.
    unsafe { tix_c_task_value(b, t, urt, prt) }
}
fn c_pass(used: u64, v: u64) -> u64 {
    // SAFETY: pure C function of integers.
    unsafe { tix_c_pass_delta(used, v) }
}

/// A small fixed-seed generator (SplitMix64) for the exhaustive-ish sweeps.
struct Mix(u64);
impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Mostly small numbers, sometimes huge: shifts a random word right.
    fn spread(&mut self) -> u64 {
        let s = self.next() % 64;
        self.next() >> s
    }
}

#[test]
fn wake_credit_default_is_the_cores() {
    // SAFETY: pure C functions.
    unsafe {
        assert_eq!(tix_c_wake_slices(), vtime::WAKE_SLICES);
        assert_eq!(tix_c_wake_rate_max(), vtime::WAKE_RATE_MAX);
        assert_eq!(tix_c_pinned_lead(), vtime::PINNED_LEAD);
        assert_eq!(tix_c_pinned_lead_max(), vtime::PINNED_LEAD_MAX);
        // Both sides of where a sleep starts to count as forever.
        let forever = 1u64 << vtime::RATED_SLEEP_SHIFT;
        for slept in [forever - 1, forever] {
            for rate in [1, 2, vtime::WAKE_RATE_MAX] {
                assert_eq!(
                    tix_c_rated_sleep(slept, rate),
                    vtime::rated_sleep(slept, rate),
                    "slept {slept} rate {rate}"
                );
            }
        }
        // Every policy's own rate and every rate scx_tix takes, and past it.
        for stride in [false, true] {
            for chosen in 0..=vtime::WAKE_RATE_MAX + 2 {
                assert_eq!(
                    tix_c_wake_rate(stride as i32, chosen),
                    vtime::wake_rate(stride, chosen),
                    "stride {stride} chosen {chosen}"
                );
            }
        }
    }
}

#[test]
fn neg_ln_edges_and_sweep() {
    for u in [
        0u32,
        1,
        2,
        3,
        255,
        256,
        1 << 16,
        (1 << 31) - 1,
        1 << 31,
        u32::MAX - 1,
        u32::MAX,
    ] {
        assert_eq!(c_neg_ln(u), race::neg_ln_q16(u), "u={u}");
    }
    let mut m = Mix(1);
    for _ in 0..200_000 {
        let u = m.next() as u32;
        assert_eq!(c_neg_ln(u), race::neg_ln_q16(u), "u={u}");
    }
}

/// The kernel's compensation rules (TIX_COMP_* in intf.h) and the core's.
const RULES: [(i32, Compensation); 4] = [
    (0, Compensation::None),
    (1, Compensation::Waldspurger),
    (
        2,
        Compensation::Zepp {
            slice_ticks: compensation::ZEPP_SLICE_TICKS,
            io_enhanced: false,
        },
    ),
    (
        3,
        Compensation::Zepp {
            slice_ticks: compensation::ZEPP_SLICE_TICKS,
            io_enhanced: true,
        },
    ),
];

/// Zepp's compensation and each rule's key increment, on values the kernel
/// produces (1..=VALUE_MAX) and slices of any length.
#[test]
fn race_cost_sweep() {
    let mut m = Mix(5);
    for _ in 0..200_000 {
        let e = m.next() % 1_500_000;
        let v = 1 + m.spread() % cgroup::VALUE_MAX;
        let slice = if m.next().is_multiple_of(2) {
            3_500_000
        } else {
            m.spread()
        };
        let used = if m.next().is_multiple_of(2) {
            m.next() % slice.max(1).saturating_mul(2)
        } else {
            m.spread()
        };
        for io in [false, true] {
            let c = compensation::ticks_left(used, slice, compensation::ZEPP_SLICE_TICKS);
            // SAFETY: pure C function of integers.
            let got = unsafe { tix_c_zepp_comp(v, used, slice, io as i32) };
            assert_eq!(
                got,
                compensation::zepp(v, c, compensation::ZEPP_SLICE_TICKS, io),
                "v={v} used={used} slice={slice} io={io}"
            );
        }
        for (mode, rule) in RULES {
            // SAFETY: pure C function of integers.
            let got = unsafe { tix_c_race_cost(e, v, used, slice, mode) };
            assert_eq!(
                got,
                race::race_cost(e, v, used, slice, rule),
                "e={e} v={v} used={used} slice={slice} mode={mode}"
            );
        }
    }
    // Zepp's table (000 §4.2, v = 50): 1 of 6 ticks used gives 250; none, 59v.
    let tick = 3_500_000 / 6;
    // SAFETY: pure C function of integers.
    unsafe {
        assert_eq!(tix_c_zepp_comp(50, tick, 3_500_000, 0), 250);
        assert_eq!(tix_c_zepp_comp(50, 0, 3_500_000, 0), 59 * 50);
        assert_eq!(tix_c_zepp_comp(50, 0, 3_500_000, 1), 59 * 50 + 78_125);
        assert_eq!(tix_c_zepp_comp(50, 3_500_000, 3_500_000, 1), 5);
    }
}

#[test]
fn race_delta_sweep() {
    let mut m = Mix(2);
    for _ in 0..200_000 {
        let e = if m.next().is_multiple_of(2) {
            m.next() % 1_500_000
        } else {
            m.spread()
        };
        let v = m.spread();
        let slice = if m.next().is_multiple_of(2) {
            4_000_000
        } else {
            m.spread()
        };
        let used = if m.next().is_multiple_of(2) {
            m.next() % slice.max(1).saturating_mul(2)
        } else {
            m.spread()
        };
        for comp in [false, true] {
            assert_eq!(
                c_delta(e, v, used, slice, comp),
                race::race_delta(e, v, used, slice, comp),
                "e={e} v={v} used={used} slice={slice} comp={comp}"
            );
        }
    }
    for (e, v, u, s) in [
        (u64::MAX, 1, 0, 1),
        (u64::MAX, 1, 1, u64::MAX),
        (u64::MAX, u64::MAX, u64::MAX - 1, u64::MAX),
        (0, 0, 0, 0),
        (1_453_632, 1, 0, 4_000_000),
    ] {
        for comp in [false, true] {
            assert_eq!(
                c_delta(e, v, u, s, comp),
                race::race_delta(e, v, u, s, comp)
            );
        }
    }
}

#[test]
fn task_value_sweep() {
    let mut m = Mix(3);
    for _ in 0..200_000 {
        // Half in the kernel's ranges (base 100..10000, tickets 1..10000),
        // half anywhere in u64.
        let (b, t, urt, prt) = if m.next().is_multiple_of(2) {
            let t = 1 + m.next() % 10_000;
            (
                100 + m.next() % 9_901,
                t,
                t + m.next() % 1_000_000,
                m.next() % 64,
            )
        } else {
            (m.spread(), m.spread(), m.spread(), m.spread())
        };
        assert_eq!(
            c_value(b, t, urt, prt),
            zepp::task_value(b, t, urt, prt),
            "b={b} t={t} urt={urt} prt={prt}"
        );
    }
    assert_eq!(
        c_value(u64::MAX, u64::MAX, 1, 1),
        zepp::task_value(u64::MAX, u64::MAX, 1, 1)
    );
    assert_eq!(
        c_value(u64::MAX, u64::MAX, 3, u64::MAX),
        zepp::task_value(u64::MAX, u64::MAX, 3, u64::MAX)
    );
    assert_eq!(c_value(0, 0, 0, 0), 1);
    // Zepp's Table 1: Fred 200 base, tickets 1000 and 3000 -> 50 and 150.
    assert_eq!(c_value(200, 1000, 4000, 1), 50);
    assert_eq!(c_value(200, 3000, 4000, 1), 150);
}

fn c_slice_uid(name: &[u8]) -> u32 {
    // The kernel's name as bpf_probe_read_kernel_str leaves it: at most 31
    // bytes and a NUL, in a zeroed 32-byte buffer.
    let mut buf = [0u8; 32];
    let n = name.len().min(31);
    buf[..n].copy_from_slice(&name[..n]);
    // SAFETY: a 32-byte buffer, read only within it (indices masked to 31).
    unsafe { tix_c_slice_uid(buf.as_ptr()) }
}

#[test]
fn slice_names_match_the_core() {
    let mut names: Vec<String> = [
        "user-1001.slice",
        "user-0.slice",
        "user-4294967294.slice",
        "user-4294967295.slice",
        "user-4294967296.slice",
        "user-.slice",
        "user-12a.slice",
        "user-1001.slicex",
        "user-1001.scope",
        "user.slice",
        "user-12345678901.slice",
        "user-1001.slic",
        "user-/1.slice",
        "user-:1.slice",
        "User-1.slice",
        "user-01.slice",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut m = Mix(12);
    let alphabet = b"user-0123456789.slic/:ex";
    for _ in 0..100_000 {
        let len = (m.next() % 24) as usize;
        let mut s: Vec<u8> = b"user-".to_vec();
        for _ in 0..len {
            s.push(alphabet[(m.next() % alphabet.len() as u64) as usize]);
        }
        names.push(String::from_utf8(s).unwrap());
    }
    for n in &names {
        let want = if n.len() <= 31 {
            cgroup::slice_uid(n).map_or(0, |u| u + 1)
        } else {
            0
        };
        let got = c_slice_uid(n.as_bytes());
        // Names past 31 bytes arrive cut; the C side sees the cut name.
        if n.len() > 31 {
            assert_eq!(got, cgroup::slice_uid(&n[..31]).map_or(0, |u| u + 1), "{n}");
        } else {
            assert_eq!(got, want, "{n}");
        }
    }
}

/// tix_core::cgroup's value walk, as main.bpf.c runs it.
fn c_thread_value(b: u64, t: u64, w: u64, nr: u64, ga: u64, levels: &[cgroup::Level]) -> u64 {
    let f: Vec<u64> = levels.iter().map(|l| l.funding).collect();
    let a: Vec<u64> = levels.iter().map(|l| l.active).collect();
    // SAFETY: two arrays of levels.len() u64s, read only.
    unsafe { tix_c_thread_value(b, t, w, nr, ga, f.as_ptr(), a.as_ptr(), levels.len() as i32) }
}

#[test]
fn cgroup_rules_sweep() {
    for nice in -25..25 {
        for idle in [false, true] {
            // SAFETY: pure C function of integers.
            let c = unsafe { tix_c_nice_weight(nice, idle as i32) };
            assert_eq!(
                c,
                cgroup::nice_weight(nice, idle),
                "nice {nice} idle {idle}"
            );
        }
    }
    let mut m = Mix(11);
    for _ in 0..100_000 {
        let w = if m.next().is_multiple_of(2) {
            m.next() % 12_000
        } else {
            m.spread()
        };
        let idle = m.next().is_multiple_of(5);
        // SAFETY: pure C functions of integers.
        let (cf, ca) = unsafe {
            (
                tix_c_cgroup_funding(w, idle as i32),
                tix_c_process_amount(w, m.0 >> 20, w % 70),
            )
        };
        assert_eq!(cf, cgroup::cgroup_funding(w, idle), "w={w}");
        // SAFETY: pure C function of integers.
        let cu = unsafe { tix_c_currency_funding(w) };
        assert_eq!(cu, cgroup::currency_funding(w), "w={w}");
        assert_eq!(ca, cgroup::process_amount(w, m.0 >> 20, w % 70), "w={w}");
    }
    for _ in 0..200_000 {
        // Half as a real tree makes them (bases, tickets, the kernel's
        // weights, up to 16 levels of cpu.weight-funded cgroups), half
        // anywhere in u64.
        let real = m.next().is_multiple_of(2);
        let pick = |m: &mut Mix, lo: u64, hi: u64| {
            if real {
                lo + m.next() % (hi - lo + 1)
            } else {
                m.spread()
            }
        };
        let b = pick(&mut m, 100, 10_000);
        let t = pick(&mut m, 1, 10_000);
        let w = if real {
            cgroup::NICE_WEIGHTS[(m.next() % 40) as usize]
        } else {
            m.spread()
        };
        let nr = pick(&mut m, 1, 64);
        let ga = if real {
            t * w + m.next() % 100_000_000
        } else {
            m.spread()
        };
        let n = (m.next() % 18) as usize;
        let levels: Vec<cgroup::Level> = (0..n)
            .map(|_| {
                let funding = pick(&mut m, 3, 100_000);
                cgroup::Level {
                    funding,
                    active: if real {
                        funding + m.next() % 200_000
                    } else {
                        m.spread()
                    },
                }
            })
            .collect();
        assert_eq!(
            c_thread_value(b, t, w, nr, ga, &levels),
            cgroup::thread_value(b, t, w, nr, ga, &levels),
            "b={b} t={t} w={w} nr={nr} ga={ga} levels={levels:?}"
        );
    }
}

#[test]
fn pass_delta_and_wake_sweep() {
    let mut m = Mix(4);
    for _ in 0..200_000 {
        let used = m.spread();
        let v = m.spread();
        assert_eq!(
            c_pass(used, v),
            stride::pass_delta(used, v),
            "used={used} v={v}"
        );
        let (p, t) = (m.next(), m.next());
        // SAFETY: pure C functions of integers.
        unsafe {
            assert_eq!(tix_c_wake_pass(p, t), p.max(t));
            assert_eq!(tix_c_sat_add(p, t), p.saturating_add(t));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn rules_agree_on_arbitrary_inputs(u in any::<u32>(), e in any::<u64>(), v in any::<u64>(),
                                       used in any::<u64>(), slice in any::<u64>(),
                                       b in any::<u64>(), t in any::<u64>(), prt in any::<u64>()) {
        prop_assert_eq!(c_neg_ln(u), race::neg_ln_q16(u));
        prop_assert_eq!(c_delta(e, v, used, slice, true), race::race_delta(e, v, used, slice, true));
        prop_assert_eq!(c_value(b, t, v, prt), zepp::task_value(b, t, v, prt));
        prop_assert_eq!(c_pass(used, v), stride::pass_delta(used, v));
    }

    #[test]
    fn shared_vtime_rule_agrees(own in any::<u64>(), vt in any::<u64>(), lag in any::<u64>(),
                                pending in any::<u64>(), small in 0u64..1 << 40) {
        // SAFETY: pure C functions of integers.
        unsafe {
            prop_assert_eq!(tix_c_next_key(own, vt, lag, pending), vtime::next_key(own, vt, lag, pending));
            prop_assert_eq!(tix_c_next_key(small, vt, small, small), vtime::next_key(small, vt, small, small));
            prop_assert_eq!(tix_c_next_pass(own, vt, lag, pending), vtime::next_pass(own, vt, lag, pending));
            prop_assert_eq!(tix_c_next_pass(small, vt, small, small), vtime::next_pass(small, vt, small, small));
            prop_assert_eq!(tix_c_lag_bound(own), vtime::lag_bound(own));
            prop_assert_eq!(tix_c_lag_bound(small), vtime::lag_bound(small));
            prop_assert_eq!(tix_c_run_avg(own, small), vtime::run_avg(own, small));
            prop_assert_eq!(tix_c_run_avg(small, own), vtime::run_avg(small, own));
            prop_assert_eq!(tix_c_wake_lag(own, small % 8, lag, pending), vtime::wake_lag(own, small % 8, lag, pending));
            prop_assert_eq!(tix_c_wake_lag(small, lag, pending % (1 << 30), small % (1 << 30)),
                            vtime::wake_lag(small, lag, pending % (1 << 30), small % (1 << 30)));
            prop_assert_eq!(tix_c_wake_lag(own, vt, lag, pending), vtime::wake_lag(own, vt, lag, pending));
            // Rates past the most scx_tix takes, too: both clamp there.
            let rate = small % (vtime::WAKE_RATE_MAX + 4);
            prop_assert_eq!(tix_c_rated_sleep(own, rate), vtime::rated_sleep(own, rate));
            prop_assert_eq!(tix_c_rated_sleep(small, rate), vtime::rated_sleep(small, rate));
        }
    }

    #[test]
    fn lead_cap_agrees(stride in any::<bool>(), starve in any::<u64>(), slice in any::<u64>(),
                       vsum in any::<u64>(), key in any::<u64>(), r in any::<u64>(),
                       small in 0u64..1 << 40, serving in 0u64..20, any_serving in any::<u64>()) {
        // SAFETY: pure C functions of integers.
        unsafe {
            prop_assert_eq!(tix_c_lead_cap(stride as i32, starve, slice, vsum, any_serving),
                            vtime::lead_cap(stride, starve, slice, vsum, any_serving));
            prop_assert_eq!(tix_c_lead_cap(stride as i32, small, small >> 8, small >> 4, serving),
                            vtime::lead_cap(stride, small, small >> 8, small >> 4, serving));
            prop_assert_eq!(tix_c_wake_cap(stride as i32, slice, vsum, any_serving),
                            vtime::wake_cap(stride, slice, vsum, any_serving));
            prop_assert_eq!(tix_c_wake_cap(stride as i32, small >> 8, small >> 4, serving),
                            vtime::wake_cap(stride, small >> 8, small >> 4, serving));
            prop_assert_eq!(tix_c_level_lag(key, r), vtime::level_lag(key, r));
            prop_assert_eq!(tix_c_level_lag(small, small >> 1), vtime::level_lag(small, small >> 1));
            prop_assert_eq!(tix_c_cap_lead(key, r, slice), vtime::cap_lead(key, r, slice));
            prop_assert_eq!(tix_c_cap_lead(small, small >> 1, small >> 3),
                            vtime::cap_lead(small, small >> 1, small >> 3));
            for slices in [0, 1, 2, 4, 5, r] {
                prop_assert_eq!(tix_c_lead_key(key, r, slices), vtime::lead_key(key, r, slices));
                prop_assert_eq!(tix_c_lead_key(key, small, slices), vtime::lead_key(key, small, slices));
                prop_assert_eq!(tix_c_lead_key(small, small >> 3, slices),
                                vtime::lead_key(small, small >> 3, slices));
            }
            for head in [None, Some(r), Some(small), Some(0), Some(key)] {
                prop_assert_eq!(tix_c_kernel_wake_key(key, head.unwrap_or(0), head.is_some() as i32),
                                vtime::kernel_wake_key(key, head));
                prop_assert_eq!(tix_c_kernel_wake_key(small, head.unwrap_or(0), head.is_some() as i32),
                                vtime::kernel_wake_key(small, head));
            }
        }
    }
}

extern "C" {
    fn tix_cb_neg_ln_q16(u: u32) -> u64;
    fn tix_cb_race_delta(e: u64, v: u64, used: u64, slice: u64, comp: i32) -> u64;
    fn tix_cb_task_value(base: u64, tickets: u64, urt: u64, prt: u64) -> u64;
    fn tix_cb_pass_delta(used: u64, value: u64) -> u64;
}

/// The variant the BPF program compiles (dividends above 2^64 saturate)
/// equals tix-core on every input the scheduler can form: E from
/// neg_ln_q16, values up to 2^32, base and tickets up to 10^4, used below
/// 2^48 ns, slices up to 1 s.
#[test]
fn bounded_bpf_variant_matches_core_on_the_kernel_domain() {
    let mut m = Mix(5);
    for _ in 0..200_000 {
        let u = m.next() as u32;
        // SAFETY: pure C functions of integers.
        unsafe {
            assert_eq!(tix_cb_neg_ln_q16(u), race::neg_ln_q16(u));
            let e = tix_cb_neg_ln_q16(u);
            let v = 1 + m.next() % (1 << 32);
            let slice = 100_000 + m.next() % 1_000_000_000;
            let used = m.next() % (slice * 2);
            for comp in [false, true] {
                assert_eq!(
                    tix_cb_race_delta(e, v, used, slice, comp as i32),
                    race::race_delta(e, v, used, slice, comp)
                );
            }
            let (b, t) = (100 + m.next() % 9_901, 1 + m.next() % 10_000);
            let (urt, prt) = (m.next() % 10_000_000, m.next() % 1_000);
            assert_eq!(
                tix_cb_task_value(b, t, urt, prt),
                zepp::task_value(b, t, urt, prt)
            );
            let used = m.next() % (1 << 48);
            assert_eq!(tix_cb_pass_delta(used, v), stride::pass_delta(used, v));
        }
    }
    // Outside the domain it saturates rather than wrapping.
    // SAFETY: pure C functions of integers.
    unsafe {
        assert_eq!(tix_cb_pass_delta(u64::MAX, 1), u64::MAX);
        assert_eq!(tix_cb_task_value(u64::MAX, u64::MAX, 1, 1), u64::MAX);
    }
}

extern "C" {
    fn tix_c_ras_race_prob(wcounts: u64, sum: u64, nr: u64) -> u64;
    fn tix_c_ras_slice_ns(race_prob: u64) -> u64;
    fn tix_cb_ras_race_prob(wcounts: u64, sum: u64, nr: u64) -> u64;
}

/// RAS's eqs. 2-1/2-2 in rules.h equal tix_core::ras: everywhere on the
/// host build, and as the BPF program compiles them (128-bit dividends
/// saturate) on the counts the kernel can reach (below 2^59 faults).
#[test]
fn ras_slices_match_core() {
    use tix_core::ras;
    let mut m = Mix(17);
    for i in 0..200_000u64 {
        let shift = i % 64;
        let sum = m.next() >> shift;
        let wc = match i % 4 {
            0 => sum,
            1 => m.next() % (sum | 1),
            2 => m.next() >> (i % 64),
            _ => sum.saturating_sub(m.next() % 8),
        };
        let nr = m.next() % 6;
        // SAFETY: pure C functions of integers.
        unsafe {
            let p = tix_c_ras_race_prob(wc, sum, nr);
            assert_eq!(p, ras::race_prob(wc, sum, nr), "wc {wc} sum {sum} nr {nr}");
            assert_eq!(tix_c_ras_slice_ns(p), ras::slice_ns(p));
            if sum < 1 << 59 {
                assert_eq!(tix_cb_ras_race_prob(wc, sum, nr), p);
            }
        }
    }
    for p in 0..12 {
        // SAFETY: pure C function of integers.
        assert_eq!(unsafe { tix_c_ras_slice_ns(p) }, ras::slice_ns(p));
    }
}
