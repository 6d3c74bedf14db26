//! Event sequences: the host model of scx_tix on N CPUs (src/bpf/model_host.c,
//! built on rules.h as the BPF program is) against tix-core. On one CPU,
//! stride must pick the same task and reach the same pass at every step as
//! tix_core::stride, and the lottery must win in proportion to value (with
//! and without compensation, seed 001 §3.4). On N CPUs, hogs' CPU time must
//! reach tix_core::waterfill's ideal: stride within 2%, lottery within 4
//! binomial standard deviations, bounds stated per test.

use tix_core::stride::Stride;
use tix_core::waterfill::{ideal_cpus_affine, Demand};
use tix_core::{PolicyOptions, Scheduler};

extern "C" {
    fn tix_m_reset(stride: i32, slice_ns: u64, compensate: i32, ncpus: i32);
    fn tix_m_set_value(i: i32, v: u64);
    fn tix_m_set_cpus(i: i32, mask: u64);
    fn tix_m_wake(i: i32);
    fn tix_m_dispatch(cpu: i32, rnd: u32) -> i32;
    fn tix_m_expire(cpu: i32, used: u64, rnd: u32) -> i32;
    fn tix_m_stop(cpu: i32, used: u64, runnable: i32);
    fn tix_m_pass(i: i32) -> u64;
    fn tix_m_set_from_now(on: i32);
    fn tix_m_vt() -> u64;
    fn tix_m_spawn(i: i32);
    fn tix_m_set_starve(ns: u64);
    fn tix_m_wake_direct(i: i32, cpu: i32, rnd: u32);
    fn tix_m_set_wake(slices: u64);
    fn tix_m_set_slept(ns: u64);
    fn tix_m_set_wake_rate(rate: u64);
    fn tix_m_set_wake_frame(on: i32);
    fn tix_m_set_uncontested(on: i32);
    fn tix_m_set_kernel(i: i32, on: i32);
    fn tix_m_lift();
    fn tix_m_set_floor(on: i32);
    fn tix_m_set_pinned_lead(slices: u64);
    fn tix_m_set_wake_level(on: i32);
    fn tix_m_set_keep_lag(on: i32);
}

struct Mix(u64);
impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

const SLICE: u64 = 4_000_000;

/// The model is one global C object: tests using it must not interleave.
static MODEL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The pinned lead `run_hogs_by` runs with (a test holding MODEL may set
/// it, and sets it back).
static LEAD: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(tix_core::vtime::PINNED_LEAD);

/// Whether `hogs_and_a_waker` sets up the model with the lag kept across
/// a sleep (`tix_m_set_keep_lag`, a rule scx_tix does not have; a test
/// holding MODEL may set it, and sets it back).
static KEEP_LAG: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[test]
fn stride_model_follows_tix_core_step_by_step() {
    let _g = MODEL.lock().unwrap();
    for seed in 1..=20u64 {
        let mut m = Mix(seed);
        let n = 2 + (m.next() % 7) as usize;
        let mut core = Stride::new(&PolicyOptions {
            quantum_ns: SLICE,
            seed,
        });
        // SAFETY: the C model is plain integer code over a static object,
        // guarded by MODEL. The kernel's lead cap (a bounded wait for tasks
        // below slice/starve of the machine, which weights 1..10^4 reach) is
        // not tix_core::stride's rule: set out of reach here, tested below.
        unsafe {
            tix_m_reset(1, SLICE, 0, 1);
            tix_m_set_starve(1 << 40);
            // tix_core::stride wakes a client at max(pass, global pass):
            // the seeds' rule, scx_tix --wake-lag 0.
            tix_m_set_wake(0);
        }
        for i in 0..n {
            let w = 1 + m.next() % 10_000;
            assert_eq!(core.join(w).unwrap(), i);
            unsafe {
                tix_m_set_value(i as i32, w);
                tix_m_wake(i as i32);
            }
        }
        let mut blocked = vec![false; n];
        for step in 0..2_000 {
            let a = core.pick();
            let b = unsafe { tix_m_dispatch(0, 0) };
            assert_eq!(
                a.map(|x| x as i32).unwrap_or(-1),
                b,
                "seed {seed} step {step}"
            );
            if let Some(id) = a {
                // Mostly full slices, often partial (a blocking or yielding task).
                let used = if m.next().is_multiple_of(3) {
                    1 + m.next() % SLICE
                } else {
                    SLICE
                };
                core.charge(id, used).unwrap();
                let block =
                    m.next().is_multiple_of(5) && blocked.iter().filter(|x| !**x).count() > 1;
                unsafe { tix_m_stop(0, used, (!block) as i32) };
                assert_eq!(core.pass(id).unwrap(), unsafe { tix_m_pass(id as i32) });
                if block {
                    core.block(id).unwrap();
                    blocked[id] = true;
                }
            }
            // Wake at most one sleeper, and only when no queued task sits at
            // the virtual time: a woken task then has a key nobody shares.
            // (Equal keys leave a vtime DSQ in insertion order but tix-core
            // in join order; both are valid stride, so ties are avoided
            // rather than compared.)
            let vt = core.global_pass();
            let tie = (0..n).any(|i| !blocked[i] && core.pass(i).unwrap() == vt);
            if !tie && m.next().is_multiple_of(2) {
                if let Some(i) = (0..n).find(|&i| blocked[i] && m.next().is_multiple_of(2)) {
                    core.wake(i).unwrap();
                    blocked[i] = false;
                    unsafe { tix_m_wake(i as i32) };
                }
            }
            assert_eq!(
                core.global_pass(),
                unsafe { tix_m_vt() },
                "seed {seed} step {step}"
            );
        }
    }
}

/// Run the lottery model with two always-runnable tasks; returns A's wins.
fn lottery_wins(va: u64, vb: u64, used_b: u64, compensate: bool, rounds: u32, seed: u64) -> u32 {
    let mut m = Mix(seed);
    let mut wins = 0;
    // SAFETY: see above; callers hold MODEL.
    unsafe {
        tix_m_reset(0, SLICE, compensate as i32, 1);
        tix_m_set_value(0, va);
        tix_m_set_value(1, vb);
        tix_m_wake(0);
        tix_m_wake(1);
        for _ in 0..rounds {
            let w = tix_m_dispatch(0, m.next() as u32);
            let used = if w == 0 { SLICE } else { used_b };
            wins += (w == 0) as u32;
            tix_m_stop(0, used, 1);
        }
    }
    wins
}

#[test]
fn lottery_model_wins_in_proportion_to_value() {
    let _g = MODEL.lock().unwrap();
    // P(A) = 3/4; 20000 draws: sd = sqrt(.75*.25/20000) = 0.0031; bound 4 sd.
    let n = 20_000;
    let p = lottery_wins(750, 250, SLICE, true, n, 7) as f64 / n as f64;
    assert!((p - 0.75).abs() < 4.0 * 0.0031, "p = {p}");
    // Values 1:1 -> 1/2, sd 0.0035.
    let p = lottery_wins(100, 100, SLICE, true, n, 8) as f64 / n as f64;
    assert!((p - 0.5).abs() < 4.0 * 0.0036, "p = {p}");
}

#[test]
fn compensation_restores_the_odds_of_a_short_runner() {
    let _g = MODEL.lock().unwrap();
    // B (value 250) uses a quarter of its slice: with compensation it
    // competes with 250 * 4 = 1000 against A's 750, so P(A) = 750/1750 =
    // 0.4286 per draw; without, P(A) = 0.75. 20000 draws, sd <= 0.0035,
    // bounds 4 sd.
    let n = 20_000;
    let p = lottery_wins(750, 250, SLICE / 4, true, n, 9) as f64 / n as f64;
    assert!((p - 750.0 / 1750.0).abs() < 4.0 * 0.0035, "p = {p}");
    let p = lottery_wins(750, 250, SLICE / 4, false, n, 10) as f64 / n as f64;
    assert!((p - 0.75).abs() < 4.0 * 0.0031, "p = {p}");
}

/// One CPU, lottery with compensation, a hog H and a task P of equal value
/// that sleeps 3 slices, then needs 1.5 slices (so a slice of its own ends
/// while it is runnable), then sleeps again: P's demand is 1.5/4.5 of the
/// CPU against a share of 1/2. Returns the fraction of P's periods in
/// which it lost no decision between waking and sleeping again.
fn sleeper_periods_served_at_once(wake_slices: u64, periods: u32, seed: u64) -> f64 {
    let mut m = Mix(seed);
    let mut clean = 0;
    // SAFETY: see above; callers hold MODEL.
    unsafe {
        tix_m_reset(0, SLICE, 1, 1);
        tix_m_set_wake(wake_slices);
        tix_m_set_slept(3 * SLICE);
        tix_m_set_value(0, 100);
        tix_m_set_value(1, 100);
        tix_m_wake(0);
        assert_eq!(tix_m_dispatch(0, m.next() as u32), 0);
        for _ in 0..periods {
            for _ in 0..3 {
                assert_eq!(tix_m_expire(0, SLICE, m.next() as u32), 0);
            }
            tix_m_wake(1);
            let mut need = SLICE + SLICE / 2;
            let mut on = tix_m_expire(0, SLICE, m.next() as u32);
            let mut lost = on != 1;
            loop {
                if on != 1 {
                    on = tix_m_expire(0, SLICE, m.next() as u32);
                } else if need > SLICE {
                    need -= SLICE;
                    on = tix_m_expire(0, SLICE, m.next() as u32);
                    lost |= on != 1;
                } else {
                    tix_m_stop(0, need, 0);
                    assert_eq!(tix_m_dispatch(0, m.next() as u32), 0);
                    break;
                }
            }
            clean += (!lost) as u32;
        }
    }
    clean as f64 / periods as f64
}

#[test]
fn a_sleeper_below_its_share_is_not_cut_at_its_slice_end() {
    let _g = MODEL.lock().unwrap();
    // With no wake credit P wakes level with the virtual time, and both its
    // decisions (H's slice end, then its own) are lotteries between keys a
    // few draws apart: it came through both in .34 of its periods (seed
    // 21). With two slices of credit it is two of its draws ahead: .87.
    // 5,000 periods: the sd of a fraction is at most .0071; each bound is
    // over 15 sd from the value it checks.
    let n = 5_000;
    let none = sleeper_periods_served_at_once(0, n, 21);
    let two = sleeper_periods_served_at_once(tix_core::vtime::WAKE_SLICES, n, 21);
    assert!(none < 0.45, "no credit: {none}");
    assert!(two > 0.75, "two slices of credit: {two}");
}

/// Two CPUs, lottery with compensation, two unpinned hogs of equal value
/// and nothing else: each keeps a CPU with nothing waiting, and both get
/// the same CPU time. Returns the mean gap between their keys after each
/// pair of slice ends, in their mean cost per slice, over `steps` slices
/// of each.
fn uncontested_hogs_gap(uncontested: bool, steps: u32, seed: u64) -> f64 {
    let mut m = Mix(seed);
    let mut sum = 0f64;
    // SAFETY: see above; callers hold MODEL.
    unsafe {
        tix_m_reset(0, SLICE, 1, 2);
        tix_m_set_uncontested(uncontested as i32);
        tix_m_set_value(0, 100);
        tix_m_set_value(1, 100);
        tix_m_wake(0);
        tix_m_wake(1);
        assert!(tix_m_dispatch(0, m.next() as u32) >= 0);
        assert!(tix_m_dispatch(1, m.next() as u32) >= 0);
        let start = tix_m_vt();
        for _ in 0..steps {
            assert!(tix_m_expire(0, SLICE, m.next() as u32) >= 0);
            assert!(tix_m_expire(1, SLICE, m.next() as u32) >= 0);
            sum += tix_m_pass(0).abs_diff(tix_m_pass(1)) as f64;
        }
        let per_slice = (tix_m_vt() - start) as f64 / steps as f64;
        sum / steps as f64 / per_slice
    }
}

#[test]
fn uncontested_runners_stay_level_with_the_time() {
    let _g = MODEL.lock().unwrap();
    // With the whole lag bank, two hogs that each keep a CPU drift apart by
    // E's random walk (sd sqrt(2n) slices after n slices) until the bank
    // (LAG_SLICES, 32) stops the one behind: a task woken beside it later,
    // keyed near the time, lost every decision on its CPU for up to 87 ms
    // in the guest (docs/kernel-results.md). Settled to one run of lag when
    // nothing waits, the one behind is pulled up at each of its slice ends
    // and the gap is about one draw of E. 20,000 slices each (the walk's sd
    // there is 200 slices, so the bank is reached). Seed 5: 16.2 and 1.0.
    let bank = uncontested_hogs_gap(false, 20_000, 5);
    let settled = uncontested_hogs_gap(true, 20_000, 5);
    assert!(bank > 8.0, "whole bank: mean gap {bank:.2} slices");
    assert!(settled < 2.5, "settled: mean gap {settled:.2} slices");
}

/// Two CPUs, `hogs` runnable hogs (tasks 0..hogs) and a waker (task
/// `hogs`, asleep, allowed `mask`), all of value 100; every wake lag is
/// computed from a sleep of `slept` ns at wake rate `rate` (0: the
/// policy's own, as scx_tix runs without --wake-rate).
///
/// # Safety
/// Callers hold MODEL (the model is one global C object).
unsafe fn hogs_and_a_waker(stride: i32, hogs: i32, slept: u64, mask: u64, rate: u64) {
    tix_m_reset(stride, SLICE, 1, 2);
    tix_m_set_slept(slept);
    tix_m_set_wake_rate(rate);
    tix_m_set_keep_lag(KEEP_LAG.load(std::sync::atomic::Ordering::Relaxed) as i32);
    for i in 0..=hogs {
        tix_m_set_value(i, 100);
    }
    tix_m_set_cpus(hogs, mask);
    for i in 0..hogs {
        tix_m_wake(i);
    }
}

/// Two CPUs, with compensation: `hogs` unpinned hogs and a waker W pinned
/// to CPU 0 (cyclictest as it runs by default), all of one value. W sleeps
/// two slices, wakes with `slept` ns of sleep credit, waits for a decision
/// on CPU 0 and runs `run` ns. Returns the fraction of W's periods in which
/// it waited past the first slice end on CPU 0, and its longest wait in
/// slice ends.
fn pinned_waker_waits(
    stride: i32,
    hogs: i32,
    seed: u64,
    slept: u64,
    run: u64,
    rate: u64,
    lead: u64,
) -> (f64, u32) {
    let periods = 5_000u32;
    let mut m = Mix(seed);
    let (mut late, mut longest) = (0u32, 0u32);
    let w = hogs;
    // SAFETY: see above; callers hold MODEL.
    unsafe {
        hogs_and_a_waker(stride, hogs, slept, 1, rate);
        tix_m_set_pinned_lead(lead);
        // Every slice end and dispatch finds a task: the hogs never leave.
        let busy = |on: &[i32]| on.iter().all(|&t| t >= 0);
        let mut on = dispatch_all(2, &mut m);
        assert!(busy(&on));
        for _ in 0..periods {
            for _ in 0..2 {
                expire_all(&mut on, &mut m);
                assert!(busy(&on));
            }
            tix_m_wake(w);
            let mut waited = 0;
            expire_all(&mut on, &mut m);
            while on[0] != w {
                assert!(busy(&on));
                waited += 1;
                assert!(waited < 1_000, "W never ran");
                expire_all(&mut on, &mut m);
            }
            tix_m_stop(0, run, 0);
            on[0] = tix_m_dispatch(0, m.next() as u32);
            assert!(busy(&on));
            late += (waited > 0) as u32;
            longest = longest.max(waited);
        }
    }
    (late as f64 / periods as f64, longest)
}

/// Where the lottery's tail for a pinned waker comes from (the kernel held
/// cyclictest 12-19 ms behind hogs; docs/kernel-results.md, "A pinned
/// waker's lost decisions"). A woken key is T less the sleep credit plus
/// the cost of W's last run, E * run / value with E exponential (the
/// race's draw, seed 001 §3.4): W loses to a hog keyed near T whenever E
/// exceeds about credit / run. With a 1 ms credit and 80 µs runs that takes
/// E > 12, which 30,000 periods never drew; with what a guest probe measured
/// for cyclictest under TCG (credit p50 0.12 of a hog's run, runs p50 243
/// µs) it takes E > 2, and W was late in 0.8-1.6% of periods, up to 3
/// slice ends (bounds 0.4-3%), at wake rate 1; at rate 2 in 0.06-0.26%,
/// and at the lottery's own rate (4 since rate 2's boots) in no more than
/// a quarter of rate 1's (the bound). Stride has no
/// draw: never late. Fixed
/// seeds, so each figure is fixed; the bounds say which side of the effect
/// a rule change lands on.
#[test]
fn a_pinned_wakers_wait_is_its_own_draw_against_its_credit() {
    let _g = MODEL.lock().unwrap();
    for hogs in [2, 3, 4] {
        for seed in [3, 4] {
            let short = pinned_waker_waits(0, hogs, seed, SLICE / 4, SLICE / 50, 1, 0);
            let long = pinned_waker_waits(0, hogs, seed, SLICE / 8, SLICE / 16, 1, 0);
            let rated = pinned_waker_waits(0, hogs, seed, SLICE / 8, SLICE / 16, 0, 0);
            let stride = pinned_waker_waits(1, hogs, seed, SLICE / 8, SLICE / 16, 0, 0);
            eprintln!(
                "{hogs} hogs, seed {seed}: long runs {long:?}, at the lottery's rate {rated:?}"
            );
            let at = format!("{hogs} hogs, seed {seed}");
            assert!(
                short.0 <= 0.001 && short.1 <= 1,
                "{at}: short runs {short:?}"
            );
            assert!(
                long.0 >= 0.004 && long.0 <= 0.03 && long.1 >= 2,
                "{at}: long runs {long:?}"
            );
            assert!(
                4.0 * rated.0 <= long.0,
                "{at}: at the lottery's rate {rated:?}"
            );
            assert_eq!(stride, (0.0, 0), "{at}: stride");
        }
    }
}

/// The pinned lead (tix_core::vtime::lead_key, scx_tix's default): at CPU
/// 0's decisions the waker is weighed one of its own full runs ahead of its
/// key against the unpinned hogs, which CPU 1 can serve as well. Its lost
/// first slice ends above came from hogs keyed a fraction of a run before
/// it; a full run's lead covers every draw E up to about slice / run (16 at
/// the probe's 250 µs runs, e^-16 of draws), so at the figures where keys
/// alone left it late in 0.4-3% of periods it must be late in none, at
/// either wake rate, on 2-4 hogs and two seeds. Stride: never late either way.
#[test]
fn a_pinned_lead_serves_the_pinned_waker_at_its_first_slice_end() {
    let _g = MODEL.lock().unwrap();
    for hogs in [2, 3, 4] {
        for seed in [3, 4] {
            let at = format!("{hogs} hogs, seed {seed}");
            for rate in [1, 0] {
                let alone = pinned_waker_waits(0, hogs, seed, SLICE / 8, SLICE / 16, rate, 0);
                let led = pinned_waker_waits(0, hogs, seed, SLICE / 8, SLICE / 16, rate, 1);
                eprintln!("{at}, rate {rate}: keys alone {alone:?}, led {led:?}");
                assert_eq!(
                    led,
                    (0.0, 0),
                    "{at}, rate {rate}: led {led:?}, alone {alone:?}"
                );
            }
            let stride = pinned_waker_waits(1, hogs, seed, SLICE / 8, SLICE / 16, 0, 1);
            assert_eq!(stride, (0.0, 0), "{at}: stride");
        }
    }
}

/// One CPU: a hog worth as much as 60 sleepers together, beside sleepers
/// that wake after a long sleep (their own keys far behind the time: full
/// wake credit), run 20 µs and wake again at once: a storm's thousands of
/// threads, 60 at a time, arriving faster than the CPU serves them. `capped`: with `wake_cap` (else the
/// rule before it). Returns the hog's share of 2 s and its longest wait.
fn hog_among_wakers(stride: bool, capped: bool, seed: u64) -> (f64, u64) {
    const RUN: u64 = 20_000;
    let mut m = Mix(seed);
    // SAFETY: see above; callers hold MODEL.
    unsafe {
        tix_m_reset(stride as i32, SLICE, 1, 1);
        tix_m_set_wake_frame(capped as i32);
        tix_m_set_slept(10 * SLICE);
        tix_m_set_value(0, 600);
        for i in 1..=60 {
            tix_m_set_value(i, 10);
        }
        // The hog alone for 400 slices: the sleepers' own keys (0, as
        // spawned at the start) fall behind the time, as a long sleep does.
        tix_m_wake(0);
        let mut on = tix_m_dispatch(0, m.next() as u32);
        for _ in 0..400 {
            on = tix_m_expire(0, SLICE, m.next() as u32);
        }
        assert_eq!(on, 0);
        for i in 1..=60 {
            tix_m_wake(i);
        }
        let (mut now, mut hog, mut hog_left, mut longest) = (0u64, 0u64, 0u64, 0u64);
        while now < 2_000_000_000 {
            assert!(on >= 0, "the CPU went idle with 61 tasks runnable");
            if on == 0 {
                longest = longest.max(now - hog_left);
                now += SLICE;
                hog += SLICE;
                hog_left = now;
                on = tix_m_expire(0, SLICE, m.next() as u32);
            } else {
                now += RUN;
                tix_m_stop(0, RUN, 0);
                tix_m_wake(on);
                on = tix_m_dispatch(0, m.next() as u32);
            }
        }
        tix_m_set_wake_frame(1);
        (hog as f64 / now as f64, longest)
    }
}

#[test]
fn many_wakers_do_not_hold_back_a_runner() {
    let _g = MODEL.lock().unwrap();
    // Each waking sleeper may stand WAKE_SLICES of its own slices below the
    // virtual time; that time moves only when a decision starts a key
    // above it. Uncapped, the 60 sleepers climbing 20 µs at a time from
    // there held the hog (keyed at the time) back for 60 x 2 slices of
    // their service (at WAKE_SLICES 2): its first wait was 0.48 s (stride; lottery alike),
    // and it grows with the number of sleepers (10^4 in the VM's storm:
    // past the kernel's watchdog). With wake_cap all queued wakers
    // together stand at most WAKE_FRAME_SLICES slices ahead of it.
    let slices = |ns: u64| ns as f64 / SLICE as f64;
    let (_, old) = hog_among_wakers(true, false, 5);
    assert!(
        slices(old) > 100.0,
        "uncapped, stride: longest wait {} slices",
        slices(old)
    );
    let (share, longest) = hog_among_wakers(true, true, 5);
    // Stride is deterministic: the hog's value is half the runnable
    // value, so half the time to within a slice or so over 2 s (.002 per
    // slice); its wait is at most the cap's WAKE_FRAME_SLICES plus its own.
    assert!((share - 0.5).abs() < 0.01, "stride: hog's share {share}");
    assert!(
        slices(longest) <= (tix_core::vtime::WAKE_FRAME_SLICES + 1) as f64,
        "stride: longest wait {} slices",
        slices(longest)
    );
    for seed in [5, 6, 7] {
        let (_, old) = hog_among_wakers(false, false, seed);
        assert!(
            slices(old) > 100.0,
            "uncapped, lottery seed {seed}: longest wait {} slices",
            slices(old)
        );
        let (share, longest) = hog_among_wakers(false, true, seed);
        // Lottery: the hog's wait after a run is about E of its slices of
        // the sleepers' service, E ~ Exp(1); over its ~250 runs the
        // largest E is about ln 250 = 5.5 (above 12 with probability
        // 250·e^-12 < 0.002). Its share is ~250 wins of E-weighted
        // length: the sd of its mean is 1/sqrt(250) = .063 of it.
        assert!(
            (share - 0.5).abs() < 4.0 * 0.063 * 0.5,
            "lottery seed {seed}: hog's share {share}"
        );
        assert!(
            slices(longest) <= 12.0 + tix_core::vtime::WAKE_FRAME_SLICES as f64,
            "lottery seed {seed}: longest wait {} slices",
            slices(longest)
        );
    }
}

/// Every empty CPU takes the smallest key it may run: the task on each CPU.
///
/// # Safety
/// Callers hold MODEL (the model is one global C object).
unsafe fn dispatch_all(ncpus: usize, m: &mut Mix) -> Vec<i32> {
    (0..ncpus)
        .map(|c| tix_m_dispatch(c as i32, m.next() as u32))
        .collect()
}

/// One round of full slices: CPU c's k-th slice ends at (k + (c+1)/ncpus)
/// slices, so round robin over CPUs is exactly time order. `on` holds the
/// task on each CPU before and after.
///
/// # Safety
/// As `dispatch_all`.
unsafe fn expire_all(on: &mut [i32], m: &mut Mix) {
    expire_all_after(on, SLICE, m)
}

/// `expire_all` with runs of `used` ns (late ticks make runs longer than a
/// slice).
///
/// # Safety
/// As `dispatch_all`.
unsafe fn expire_all_after(on: &mut [i32], used: u64, m: &mut Mix) {
    for (c, slot) in on.iter_mut().enumerate() {
        *slot = tix_m_expire(c as i32, used, m.next() as u32);
    }
}

/// Count a slice for each task on a CPU.
fn count_ran(on: &[i32], ran: &mut [u64]) {
    for &t in on.iter().filter(|&&t| t >= 0) {
        ran[t as usize] += 1;
    }
}

/// Hogs on `ncpus` CPUs for `rounds` runs per CPU, run ends staggered
/// across CPUs, under the current rule or, with `from_now`, the one it
/// replaced; returns each task's CPU time in slices. Each run lasts `slices_per_run` slices (a CPU's slice ends are
/// late when its ticks are) and `rounds` counts runs.
fn run_hogs_by(
    stride: bool,
    tasks: &[Demand],
    ncpus: usize,
    rounds: u64,
    seed: u64,
    from_now: bool,
    slices_per_run: u64,
) -> Vec<u64> {
    let mut m = Mix(seed);
    let mut ran = vec![0u64; tasks.len()];
    // SAFETY: see above; callers hold MODEL.
    unsafe {
        tix_m_reset(stride as i32, SLICE, 1, ncpus as i32);
        tix_m_set_pinned_lead(LEAD.load(std::sync::atomic::Ordering::Relaxed));
        tix_m_set_from_now(from_now as i32);
        for (i, t) in tasks.iter().enumerate() {
            tix_m_set_value(i as i32, t.weight);
            tix_m_set_cpus(i as i32, t.cpus);
            tix_m_wake(i as i32);
        }
        let mut on = dispatch_all(ncpus, &mut m);
        for _ in 0..rounds {
            for _ in 0..slices_per_run {
                count_ran(&on, &mut ran);
            }
            expire_all_after(&mut on, slices_per_run * SLICE, &mut m);
        }
    }
    ran
}

fn free(weights: &[u64]) -> Vec<Demand> {
    on(u64::MAX, weights)
}

/// One task per weight, each allowed the CPUs of `cpus`.
fn on(cpus: u64, weights: &[u64]) -> Vec<Demand> {
    weights
        .iter()
        .map(|&weight| Demand { weight, cpus })
        .collect()
}

/// Every task within `tol(ideal slices, p)` slices of the water-filled ideal.
fn check_shares(stride: bool, tasks: &[Demand], ncpus: usize, rounds: u64, seed: u64) {
    check_shares_runs(stride, tasks, ncpus, rounds, seed, 1)
}

/// `check_shares` with runs of `k` slices (`rounds` runs per CPU).
fn check_shares_runs(stride: bool, tasks: &[Demand], ncpus: usize, rounds: u64, seed: u64, k: u64) {
    let ran = run_hogs_by(stride, tasks, ncpus, rounds, seed, false, k);
    let ideal = ideal_cpus_affine(tasks, ncpus);
    let n = (rounds * ncpus as u64) as f64;
    let k = k as f64;
    for (i, (&got, &cpus)) in ran.iter().zip(&ideal).enumerate() {
        let want = cpus * rounds as f64 * k;
        let bound = if stride {
            // Stride: 2% of the ideal, plus one run of granularity.
            0.02 * want + k
        } else {
            // Lottery: 4 binomial sd of a task winning a fraction p of the
            // n runs handed out, each worth k slices.
            let p = cpus / ncpus as f64;
            k * (4.0 * (n * p * (1.0 - p)).sqrt() + 1.0)
        };
        assert!(
            (got as f64 - want).abs() <= bound,
            "{k} slices per run: task {i}: {got} slices, ideal {want:.1} ± {bound:.1} ({ran:?})"
        );
    }
}

#[test]
fn shares_on_n_cpus_reach_the_water_filled_ideal() {
    let _g = MODEL.lock().unwrap();
    // 10 s of 4 ms slices per CPU.
    let rounds = 2_500;
    for stride in [true, false] {
        for seed in 1..=3 {
            check_shares(
                stride,
                &free(&[100, 100, 200, 200, 400, 400]),
                4,
                rounds,
                seed,
            );
            check_shares(stride, &free(&[100, 100, 100, 300]), 2, rounds, seed);
            check_shares(stride, &free(&[100, 100, 800]), 2, rounds, seed);
            check_shares(
                stride,
                &free(&[100, 200, 300, 400, 500, 600, 700]),
                3,
                rounds,
                seed,
            );
            // Zepp's insulation: alice's one hog (value 1000) against bob's
            // eight (125 each) on 2 CPUs: alice keeps one CPU.
            let mut bob = vec![125u64; 8];
            bob.push(1000);
            check_shares(stride, &free(&bob), 2, rounds, seed);
        }
    }
}

#[test]
fn runs_of_many_slices_keep_the_shares() {
    // A CPU's slice ends at a tick, and a late tick (a vCPU not scheduled
    // by its host; single-threaded TCG with 4 vCPUs ran ~16 ms per 3.5 ms
    // slice) makes every run several slices long. Each run is charged in
    // full, so shares must not move. 20,000 runs per CPU (bounds of 4 sd
    // then ~5% of a 100's share): a lead cap sized for one CPU's service
    // clipped the light tasks' long draws (the 100s of
    // 100,100,200,200,400,400 got .085-.093, ideal .0833; the VM measured
    // .087-.094) and a lag bank counted in slices left the 300 of
    // 100:100:100:300 at .471 of 2 CPUs.
    let _g = MODEL.lock().unwrap();
    for stride in [true, false] {
        for seed in 1..=3 {
            check_shares_runs(
                stride,
                &free(&[100, 100, 200, 200, 400, 400]),
                4,
                20_000,
                seed,
                4,
            );
            check_shares_runs(stride, &free(&[100, 100, 100, 300]), 2, 20_000, seed, 4);
            check_shares_runs(stride, &free(&[100, 100, 800]), 2, 20_000, seed, 8);
        }
    }
}

#[test]
fn affinity_and_pinning_keep_their_shares() {
    let _g = MODEL.lock().unwrap();
    let rounds = 2_500;
    for stride in [true, false] {
        // A task pinned to CPU 0 beside two free ones, equal values: 2/3
        // of a CPU each, the pinned one included.
        let t = [on(1, &[100]), free(&[100, 100])].concat();
        check_shares(stride, &t, 2, rounds, 5);
        // Three light tasks confined to CPUs {0,1}, three heavy free ones
        // on 4 CPUs: the heavy take a CPU each (one of them inside {0,1}),
        // the light share the last CPU.
        let t = [on(0b11, &[100, 100, 100]), free(&[300, 300, 300])].concat();
        check_shares(stride, &t, 4, rounds, 6);
        // Two hogs allowed {0,1} on 4 CPUs with two free hogs: all whole.
        let t = [on(0b11, &[100, 100]), free(&[100, 100])].concat();
        check_shares(stride, &t, 4, rounds, 7);
    }
}

/// A rewaker's due slices of `rounds` (its water-filled share of one CPU,
/// `due`) and the bound on its distance from them: 2% plus one under
/// stride, 4 binomial sd plus one under the lottery (each of the
/// `2·rounds` slices on 2 CPUs is its with probability `due / 2`).
fn rewaker_due(stride: bool, due: f64, rounds: u64) -> (f64, f64) {
    let n = (2 * rounds) as f64;
    let want = due * rounds as f64;
    let p = due / 2.0;
    let bound = if stride {
        0.02 * want + 1.0
    } else {
        4.0 * (n * p * (1.0 - p)).sqrt() + 1.0
    };
    (want, bound)
}

/// A task pinned to CPU 0 that blocks at the end of every slice and wakes
/// at once (so every decision it waits for weighs it with its pinned lead,
/// when the lead is on) beside `hogs` free hogs, all of value 100, on 2
/// CPUs, for `rounds` slices per CPU; returns its slices and the hogs'.
fn pinned_rewaker_share(
    stride: bool,
    hogs: usize,
    lead: u64,
    rounds: u64,
    seed: u64,
) -> (u64, u64) {
    rewaker_share(stride, hogs, 1, 0, lead, false, rounds, seed)
}

/// `pinned_rewaker_share` for a rewaker allowed `mask` that earns the
/// wake credit of `slept` ns of sleep at each wake-up, with the wake level
/// (`--wake-level`) on or off.
#[allow(clippy::too_many_arguments)]
fn rewaker_share(
    stride: bool,
    hogs: usize,
    mask: u64,
    slept: u64,
    lead: u64,
    level: bool,
    rounds: u64,
    seed: u64,
) -> (u64, u64) {
    let mut m = Mix(seed);
    let w = hogs as i32;
    let (mut got, mut rest) = (0u64, 0u64);
    // SAFETY: callers hold MODEL.
    unsafe {
        hogs_and_a_waker(stride as i32, hogs as i32, slept, mask, 0);
        tix_m_set_pinned_lead(lead);
        tix_m_set_wake_level(level as i32);
        tix_m_wake(w);
        let mut on = dispatch_all(2, &mut m);
        for _ in 0..rounds {
            for (c, slot) in on.iter_mut().enumerate() {
                let c = c as i32;
                if *slot == w {
                    got += 1;
                    tix_m_stop(c, SLICE, 0);
                    tix_m_wake(w);
                    *slot = tix_m_dispatch(c, m.next() as u32);
                } else {
                    rest += (*slot >= 0) as u64;
                    *slot = tix_m_expire(c, SLICE, m.next() as u32);
                }
            }
        }
    }
    (got, rest)
}

/// The pinned lead moves when a woken pinned task runs, never how much.
/// A pinned task that wakes before every run it waits for, beside 2 or 3
/// free hogs of its value on 2 CPUs, gets its water-filled ideal (2/3 or
/// 1/2 of a CPU) at no lead, the default and the most `--pinned-lead`
/// takes: within 4 binomial sd of the runs handed out plus one (lottery),
/// 2% plus one (stride), over 2,500 slices per CPU.
#[test]
fn a_pinned_lead_keeps_every_share() {
    let _g = MODEL.lock().unwrap();
    let rounds = 2_500u64;
    for lead in [
        0,
        tix_core::vtime::PINNED_LEAD,
        tix_core::vtime::PINNED_LEAD_MAX,
    ] {
        for stride in [true, false] {
            for (hogs, due) in [(2usize, 2.0 / 3.0), (3, 0.5)] {
                let (got, rest) =
                    pinned_rewaker_share(stride, hogs, lead, rounds, 11 + hogs as u64);
                let (want, bound) = rewaker_due(stride, due, rounds);
                eprintln!("lead {lead}, stride {stride}, {hogs} hogs: {got} slices of {rounds}, due {want:.0} ± {bound:.0}");
                assert!(
                    (got as f64 - want).abs() <= bound,
                    "lead {lead}, stride {stride}, {hogs} hogs: the rewaker got {got} slices, due {want:.0} ± {bound:.1} (hogs {rest})"
                );
            }
        }
    }
}

/// A free task that blocks at every slice end and wakes at once, beside 2
/// or 3 free hogs of its value on 2 CPUs, under the lottery. With no sleep
/// it earns no wake credit and its woken key is floored at T, which has
/// moved on during its own run: that charge costs it its share (1422 and
/// 1066 slices of 2,500, due 1667 and 1250; a known limit, README). Given
/// the credit of 4 own slices at each wake-up, the floor stops binding and
/// it gets its water-filled ideal, with the wake level (`--wake-level`)
/// off and on: the level never keys a task ahead of its own service.
/// Bounds: 4 binomial sd plus one over 2,500 slices per CPU.
#[test]
fn a_free_rewakers_share_and_the_floor_at_t() {
    let _g = MODEL.lock().unwrap();
    let rounds = 2_500u64;
    let lead = tix_core::vtime::PINNED_LEAD;
    for (hogs, due) in [(2usize, 2.0 / 3.0), (3, 0.5)] {
        let seed = 21 + hogs as u64;
        let (want, bound) = rewaker_due(false, due, rounds);
        let (floored, _) = rewaker_share(false, hogs, 3, 0, lead, false, rounds, seed);
        eprintln!(
            "{hogs} hogs, no credit: {floored} slices of {rounds}, due {want:.0} ± {bound:.0}"
        );
        assert!(
            (floored as f64) < want - bound,
            "{hogs} hogs: with no credit the rewaker got {floored} slices, due {want:.0} ± {bound:.1}: the floor at T no longer costs it its share; update this test and the README's Known limits"
        );
        for level in [false, true] {
            let (got, rest) = rewaker_share(false, hogs, 3, 4 * SLICE, lead, level, rounds, seed);
            eprintln!("{hogs} hogs, 4 slices of credit, level {level}: {got} slices of {rounds}, due {want:.0} ± {bound:.0}");
            assert!(
                (got as f64 - want).abs() <= bound,
                "{hogs} hogs, level {level}: the rewaker got {got} slices, due {want:.0} ± {bound:.1} (hogs {rest})"
            );
        }
    }
}

/// Pinned hogs beside free ones keep their water-filled shares at no lead,
/// the default and the most `--pinned-lead` takes (`check_shares`' bounds).
#[test]
fn pinned_hogs_keep_every_share_at_each_lead() {
    use std::sync::atomic::Ordering::Relaxed;
    let _g = MODEL.lock().unwrap();
    let rounds = 2_500;
    for lead in [
        0,
        tix_core::vtime::PINNED_LEAD,
        tix_core::vtime::PINNED_LEAD_MAX,
    ] {
        LEAD.store(lead, Relaxed);
        for stride in [true, false] {
            let t = [on(1, &[100]), on(2, &[100]), free(&[100, 200, 300])].concat();
            check_shares(stride, &t, 2, rounds, 8);
            let t = [on(1, &[800]), free(&[100, 100, 100])].concat();
            check_shares(stride, &t, 2, rounds, 9);
            let t = [on(1, &[100, 100]), free(&[100, 100, 100])].concat();
            check_shares(stride, &t, 2, rounds, 10);
        }
    }
    LEAD.store(tix_core::vtime::PINNED_LEAD, Relaxed);
}

#[test]
fn keys_drawn_from_now_fall_short_on_n_cpus() {
    // The rule scx_tix had before (every key drawn from T): each CPU then
    // holds a lottery over the tasks it can see and the heavy task, absent
    // while it runs, is charged for the others' progress. On 2 CPUs with
    // 100:100:100:300 its 300 task got about 0.74 of a CPU in the VM; the
    // model shows the same shortfall, so the checks above can fail.
    let _g = MODEL.lock().unwrap();
    let ran = |from_now: bool| {
        run_hogs_by(
            false,
            &free(&[100, 100, 100, 300]),
            2,
            2_500,
            1,
            from_now,
            1,
        )[3] as f64
            / 2_500.0
    };
    let old = ran(true);
    let new = ran(false);
    assert!(old < 0.85, "old rule gave the 300 task {old} of a CPU");
    assert!(new > 0.95, "shared virtual time gave it {new}");
}

#[test]
fn a_task_pinned_after_the_others_ran_keeps_its_share() {
    // Two free hogs run for 4 s, moving the shared virtual time far from
    // zero; then a new task (its own key from the shared present) is pinned
    // to CPU 0. Equal values: 2/3 of a CPU each over the next 10 s. In the VM
    // the pinned task once took all of CPU 0 (.50 of the machine): its DSQ's
    // time had stayed at zero and the lead cap pulled its key there, far
    // below the free tasks' keys.
    let _g = MODEL.lock().unwrap();
    let rounds = 2_500u64;
    for stride in [true, false] {
        let mut m = Mix(11);
        let mut ran = [0u64; 3];
        // SAFETY: see above; MODEL is held.
        unsafe {
            tix_m_reset(stride as i32, SLICE, 1, 2);
            for i in 1..3 {
                tix_m_set_value(i, 100);
                tix_m_wake(i);
            }
            let mut on = dispatch_all(2, &mut m);
            for _ in 0..1_000 {
                expire_all(&mut on, &mut m);
            }
            assert!(tix_m_vt() > 0);
            tix_m_set_value(0, 100);
            tix_m_set_cpus(0, 1);
            tix_m_spawn(0);
            tix_m_wake(0);
            for _ in 0..rounds {
                count_ran(&on, &mut ran);
                expire_all(&mut on, &mut m);
            }
        }
        let want = 2.0 / 3.0 * rounds as f64;
        for (i, &got) in ran.iter().enumerate() {
            // Stride: 2% plus a slice; lottery: 4 binomial sd of a task
            // winning 1/3 of the 2 * rounds slices.
            let n = 2.0 * rounds as f64;
            let bound = if stride {
                0.02 * want + 1.0
            } else {
                4.0 * (n * (1.0 / 3.0) * (2.0 / 3.0)).sqrt() + 1.0
            };
            assert!(
                (got as f64 - want).abs() <= bound,
                "stride {stride}: task {i} ran {got} slices, ideal {want:.0} ± {bound:.0} ({ran:?})"
            );
        }
    }
}

#[test]
fn pinned_hogs_keep_their_order_beside_an_idle_cpus_wakers() {
    // Stride hogs of value 200 and 100 pinned to CPU 1. On CPU 0, mostly
    // idle, a light task (value 10) wakes each slice and runs at once for
    // half of it, and every fourth slice another light task wakes behind it
    // and wins CPU 0 by a decision. Those runs move the times of CPU 0 and
    // the shared DSQ far ahead of CPU 1's hogs; CPU 1's time must not
    // follow, or both hogs sit at their lag floors, the lighter one's lower,
    // and the order inverts (seen in the VM with one time for all: 0.45).
    let _g = MODEL.lock().unwrap();
    let rounds = 3_000u64;
    let mut m = Mix(12);
    let mut ran = [0u64; 2];
    // SAFETY: see above; MODEL is held.
    unsafe {
        tix_m_reset(1, SLICE, 1, 2);
        tix_m_set_value(0, 200);
        tix_m_set_value(1, 100);
        tix_m_set_value(2, 10);
        tix_m_set_value(3, 10);
        tix_m_set_cpus(0, 0b10);
        tix_m_set_cpus(1, 0b10);
        tix_m_wake(0);
        tix_m_wake(1);
        let mut on1 = tix_m_dispatch(1, m.next() as u32);
        for r in 0..rounds {
            tix_m_wake_direct(2, 0, m.next() as u32);
            if r % 4 == 0 {
                tix_m_wake(3);
            }
            tix_m_stop(0, SLICE / 2, 0);
            if r % 4 == 0 {
                assert_eq!(tix_m_dispatch(0, m.next() as u32), 3);
                tix_m_stop(0, SLICE / 4, 0);
            }
            ran[on1 as usize] += 1;
            on1 = tix_m_expire(1, SLICE, m.next() as u32);
        }
    }
    // Stride: 2% of the ideal plus a slice.
    for (i, &got) in ran.iter().enumerate() {
        let want = rounds as f64 * if i == 0 { 2.0 / 3.0 } else { 1.0 / 3.0 };
        let bound = 0.02 * want + 1.0;
        assert!(
            (got as f64 - want).abs() <= bound,
            "hog {i} ran {got} slices, ideal {want:.0} ± {bound:.0} ({ran:?})"
        );
    }
}

/// The model on 2 CPUs with `n` tasks of value 1,000, the floor's mode
/// (0 off, 1 key_on_cpu's, 2 the lag bank for every draw).
///
/// # Safety
/// See above; the caller holds MODEL.
unsafe fn two_cpus_of_equal_tasks(stride: bool, floor: i32, n: i32) {
    tix_m_reset(stride as i32, SLICE, 1, 2);
    tix_m_set_floor(floor);
    for i in 0..n {
        tix_m_set_value(i, 1_000);
    }
}

/// Rounds (a slice on each of 2 CPUs) until a task pinned to CPU 0 runs,
/// after a hog pinned to each CPU ran `pinned` rounds and two new unpinned
/// hogs started, all of value 1,000; `lift`: the shared time is lifted as
/// main.bpf.c's guard look does, every 16 rounds (62.5 ms of 4 ms slices);
/// `floor`: shared keys are weighed as each CPU weighs them (key_on_cpu).
fn rounds_until_pinned_runs(stride: bool, lift: bool, floor: bool, pinned: u64) -> u64 {
    let mut m = Mix(15);
    // SAFETY: see above; the caller holds MODEL.
    unsafe {
        two_cpus_of_equal_tasks(stride, floor as i32, 5);
        tix_m_set_cpus(0, 0b01);
        tix_m_set_cpus(1, 0b10);
        tix_m_set_cpus(4, 0b01);
        tix_m_wake(0);
        tix_m_wake(1);
        tix_m_dispatch(0, m.next() as u32);
        tix_m_dispatch(1, m.next() as u32);
        for r in 1..=pinned {
            tix_m_expire(0, SLICE, m.next() as u32);
            tix_m_expire(1, SLICE, m.next() as u32);
            if lift && r % 16 == 0 {
                tix_m_lift();
            }
        }
        // The pinned hogs exit; two unpinned ones start, and CPU 0's own
        // task (a per-CPU kthread, say) wakes in CPU 0's frame.
        tix_m_stop(0, SLICE, 0);
        tix_m_stop(1, SLICE, 0);
        tix_m_spawn(2);
        tix_m_spawn(3);
        tix_m_wake(2);
        tix_m_wake(3);
        tix_m_wake(4);
        let mut on = [
            tix_m_dispatch(0, m.next() as u32),
            tix_m_dispatch(1, m.next() as u32),
        ];
        for r in 1..=100_000u64 {
            if on[0] == 4 {
                return r;
            }
            on[0] = tix_m_expire(0, SLICE, m.next() as u32);
            on[1] = tix_m_expire(1, SLICE, m.next() as u32);
            if lift && r % 16 == 0 {
                tix_m_lift();
            }
        }
        100_000
    }
}

#[test]
fn a_pinned_load_leaves_no_cpu_behind_the_shared_frame() {
    // After 2,000 rounds of a hog pinned to each CPU, each CPU's time stands
    // 2,000 slices' cost ahead, the shared time where it was. New unpinned
    // hogs start at the shared time and, without the lift, win every
    // decision on CPU 0 until their keys pass CPU 0's: CPU 0's own task
    // waits about 2,000 rounds, 8 s (in the VM, until the starvation
    // guards). With the lift the shared time trails the least CPU time by
    // 16 rounds at most, and the waker's lag (4 slices) puts it ahead of
    // new hogs keyed there: stride, within 16 + 4 rounds, plus 4 for hogs
    // queued at equal keys. Lottery: the two CPUs' times are sums of 2,000
    // Exp(1) costs each, so they part by sqrt(2 x 2,000) = 63 slices' cost
    // (one sd), and the new hogs, keyed at the lesser, take that many
    // rounds to pass CPU 0's if it is the greater: 24 + 4 sd. The lift
    // is checked with the per-decision floor off (which covers this case
    // too, checked below with the lift off: the new hogs are weighed on
    // CPU 0 no further behind its time than their first draws' lag, none,
    // so the waker, 4 slices of lag behind that time, is ahead of both:
    // it runs at CPU 0's next decision or, queued behind a tie, the one
    // after; 4 rounds either policy).
    let _g = MODEL.lock().unwrap();
    let pinned = 2_000u64;
    for stride in [true, false] {
        let lift = rounds_until_pinned_runs(stride, true, false, pinned);
        let floor = rounds_until_pinned_runs(stride, false, true, pinned);
        let neither = rounds_until_pinned_runs(stride, false, false, pinned);
        let bound = if stride {
            24
        } else {
            24 + (4.0 * (2.0 * pinned as f64).sqrt()) as u64
        };
        assert!(
            lift <= bound,
            "stride {stride}: CPU 0's task waited {lift} rounds with the lift (bound {bound})"
        );
        let fbound = 4;
        assert!(
            floor <= fbound,
            "stride {stride}: CPU 0's task waited {floor} rounds with the floor (bound {fbound})"
        );
        assert!(
            neither >= pinned / 2,
            "stride {stride}: with neither it waited {neither} rounds: the check cannot tell"
        );
    }
}

/// A hog pinned to CPU 0 runs `alone` rounds with CPU 1 idle, then two
/// unpinned hogs start (all of value 1,000) and run `after` rounds on both
/// CPUs: the round in which the pinned hog first runs again after a new
/// hog displaced it (`after` + 1: never), and the slices each of the three
/// got over those rounds.
fn pinned_beside_an_idle_cpu(stride: bool, floor: i32, alone: u64, after: u64) -> (u64, [u64; 3]) {
    let mut m = Mix(16);
    let mut ran = [0u64; 3];
    let mut first = after + 1;
    let mut displaced = false;
    // SAFETY: see above; the caller holds MODEL.
    unsafe {
        two_cpus_of_equal_tasks(stride, floor, 3);
        tix_m_set_cpus(0, 0b01);
        tix_m_wake(0);
        tix_m_dispatch(0, m.next() as u32);
        for r in 1..=alone {
            tix_m_expire(0, SLICE, m.next() as u32);
            // The guard look lifts nothing here (CPU 1 never moved), but
            // it runs in scx_tix, so it runs here.
            if r % 16 == 0 {
                tix_m_lift();
            }
        }
        tix_m_spawn(1);
        tix_m_spawn(2);
        tix_m_wake(1);
        tix_m_wake(2);
        let mut on = [0, tix_m_dispatch(1, m.next() as u32)];
        for r in 1..=after {
            on[0] = tix_m_expire(0, SLICE, m.next() as u32);
            on[1] = tix_m_expire(1, SLICE, m.next() as u32);
            for &t in &on {
                if t >= 0 {
                    ran[t as usize] += 1;
                }
            }
            if on[0] != 0 {
                displaced = true;
            } else if displaced && first > after {
                first = r;
            }
            if r % 16 == 0 {
                tix_m_lift();
            }
        }
    }
    (first, ran)
}

#[test]
fn a_pinned_load_beside_an_idle_cpu_keeps_its_share() {
    // 2,000 rounds of the pinned hog alone move CPU 0's time 2,000 slices'
    // cost ahead while the shared and CPU 1's stand still, so the lift
    // never acts. The two new hogs, keyed at the shared time, are weighed
    // on CPU 0 no further behind its time than their draws' lag: a new
    // task's first draw is a wake-up's, with no sleep to earn lag, so they
    // start level with the pinned hog (a run behind it). Stride: the
    // pinned hog runs again within 2 rounds plus ties (4). Lottery: on CPU
    // 0 it then races the shared head at equal rates, losing each decision
    // with P about 1/2: 12 lost in a row has P 2.4e-4, so 2 + 12. (Floored
    // by the 32-slice lag bank for every draw, the rule's first form, it
    // ran again after 35 and 33 rounds.) Then 3 hogs on 2 CPUs: 2/3 of a
    // CPU each, 4,000 slices of 6,000 rounds. Stride within 2% plus 32
    // slices (a lag bank) for the start; lottery 4 binomial sd of 12,000
    // slices at 1/3 (207) plus the same 32. Without the floor the pinned
    // hog waits about the 2,000 rounds it ran alone, and the checks fail.
    let _g = MODEL.lock().unwrap();
    let (alone, after) = (2_000u64, 6_000u64);
    for stride in [true, false] {
        let (first, ran) = pinned_beside_an_idle_cpu(stride, 1, alone, after);
        let bound = if stride { 4 } else { 2 + 12 };
        assert!(
            first <= bound,
            "stride {stride}: the pinned hog ran again in round {first} (bound {bound}; {ran:?})"
        );
        let want = after as f64 * 2.0 / 3.0;
        let room = if stride {
            0.02 * want + 32.0
        } else {
            let (n, p) = (2.0 * after as f64, 1.0 / 3.0);
            4.0 * (n * p * (1.0 - p)).sqrt() + 32.0
        };
        for (i, &got) in ran.iter().enumerate() {
            assert!(
                (got as f64 - want).abs() <= room,
                "stride {stride}: hog {i} ran {got} slices, ideal {want:.0} ± {room:.0} ({ran:?})"
            );
        }
        let (banked, _) = pinned_beside_an_idle_cpu(stride, 2, alone, after);
        assert!(
            banked >= 16,
            "stride {stride}: floored by the lag bank it ran again in round {banked}: the check cannot tell the forms apart"
        );
        let (off, ran_off) = pinned_beside_an_idle_cpu(stride, 0, alone, after);
        assert!(
            off >= alone / 2,
            "stride {stride}: without the floor the pinned hog ran again in round {off} ({ran_off:?}): the check cannot tell"
        );
    }
}

#[test]
fn a_light_task_waits_about_starve_ns_at_most() {
    // Eight hogs of value 10,000 and one of value 1 on 2 CPUs: the light
    // one's fair share (1/80,001) would have it wait minutes between
    // slices. The lead cap holds its key within what the virtual time gains
    // in starve_ns (500 ms, 125 slices) with the frame's 2 CPUs serving:
    // 250 slices' cost, reached in 125 rounds. Bounds: stride, 125 rounds
    // plus 8 (the hogs queued at the same keys ahead of it); lottery, the
    // time is a sum of 250 exponential costs, whose sd is sqrt(250) = 16
    // costs (8 rounds): 4 sd more, 157 + 8.
    let _g = MODEL.lock().unwrap();
    for stride in [true, false] {
        let mut m = Mix(13);
        let (mut last, mut worst, mut runs) = (0u64, 0u64, 0u64);
        // SAFETY: see above; MODEL is held.
        unsafe {
            tix_m_reset(stride as i32, SLICE, 1, 2);
            for i in 0..9 {
                tix_m_set_value(i, if i == 8 { 1 } else { 10_000 });
                tix_m_wake(i);
            }
            let mut on = dispatch_all(2, &mut m);
            for r in 1..=5_000u64 {
                expire_all(&mut on, &mut m);
                for _ in on.iter().filter(|&&t| t == 8) {
                    worst = worst.max(r - last);
                    last = r;
                    runs += 1;
                }
            }
        }
        let bound = if stride { 133 } else { 165 };
        assert!(runs >= 5_000 / bound, "stride {stride}: ran {runs} times");
        assert!(worst <= bound, "stride {stride}: waited {worst} rounds");
    }
}

#[test]
fn a_task_moved_between_cpus_while_waiting_is_reframed() {
    // CPU 0 runs two pinned tasks of value 10 (its time runs fast), CPU 1
    // two of value 10,000 (slow). After 2,000 slices one of CPU 0's tasks,
    // waiting, is re-pinned to CPU 1 (stress-ng's affinity workers do this).
    // Its key, from CPU 0's frame, is far ahead of CPU 1's time; kept as is
    // it would wait until CPU 1 caught up (the kernel's watchdog ejected
    // scx_tix for a wait of 11.7 s). Brought into CPU 1's frame it runs
    // within about starve_ns: 125 slices, plus 8 of margin.
    let _g = MODEL.lock().unwrap();
    for stride in [true, false] {
        let mut m = Mix(14);
        let mut waited = None;
        // SAFETY: see above; MODEL is held.
        unsafe {
            tix_m_reset(stride as i32, SLICE, 1, 2);
            for (i, (v, mask)) in [(10, 1), (10, 1), (10_000, 2), (10_000, 2)]
                .iter()
                .enumerate()
            {
                tix_m_set_value(i as i32, *v);
                tix_m_set_cpus(i as i32, *mask);
                tix_m_wake(i as i32);
            }
            let mut on = dispatch_all(2, &mut m);
            for _ in 0..2_000 {
                expire_all(&mut on, &mut m);
            }
            let moved = if on[0] == 0 { 1 } else { 0 };
            tix_m_set_cpus(moved, 2);
            for r in 1..=400u64 {
                expire_all(&mut on, &mut m);
                if on[1] == moved {
                    waited = Some(r);
                    break;
                }
            }
        }
        let w = waited.unwrap_or(u64::MAX);
        assert!(
            w <= 133,
            "stride {stride}: the moved task waited {w} slices"
        );
    }
}

/// Where a kernel thread woken behind a herd runs (its place among the
/// dispatches on CPU 0 after it woke, 1 = next), with main.bpf.c's
/// kernel_wake or without it. 2 CPUs under stride: hogs 0 and 1 run while
/// the time advances, then 61 tasks of value 10 that slept long wake at
/// once (each keyed its wake cap below the time), then task 63 of value
/// 1000 (keyed about the time).
fn kernel_thread_place(kernel: bool) -> usize {
    // SAFETY: plain integer code over the static model, guarded by MODEL
    // in the callers.
    unsafe {
        tix_m_reset(1, SLICE, 1, 2);
        for i in 0..64 {
            tix_m_set_value(i, if i < 2 || i == 63 { 1000 } else { 10 });
        }
        tix_m_set_kernel(63, kernel as i32);
        tix_m_wake(0);
        tix_m_wake(1);
        assert_eq!(tix_m_dispatch(0, 0), 0);
        assert_eq!(tix_m_dispatch(1, 0), 1);
        for _ in 0..200 {
            assert_eq!(tix_m_expire(0, SLICE, 0), 0);
            assert_eq!(tix_m_expire(1, SLICE, 0), 1);
        }
        tix_m_set_slept(10_000_000_000);
        for i in 2..=63 {
            tix_m_wake(i);
        }
        // CPU 0's hog is cut by a slice end; each task run after it blocks.
        tix_m_stop(0, SLICE, 1);
        for place in 1..=64 {
            let t = tix_m_dispatch(0, 0);
            if t == 63 {
                return place;
            }
            assert!(t >= 0, "CPU 0 found nothing to run");
            tix_m_stop(0, SLICE / 10, (t < 2) as i32);
        }
        usize::MAX
    }
}

#[test]
fn a_woken_kernel_thread_runs_before_a_herd() {
    let _g = MODEL.lock().unwrap();
    let with = kernel_thread_place(true);
    let without = kernel_thread_place(false);
    assert_eq!(with, 1, "kernel thread's place with kernel_wake");
    // Without the rule it waits for (nearly) the whole herd of 61.
    assert!(without > 50, "without kernel_wake it ran {without}th");
}

/// A task that needs a run of `run` ns every period, sleeping `slept` ns
/// between, beside `hogs` equal hogs on 2 CPUs (pinned to CPU 0 with
/// `mask` 1, free with 3), for `periods` periods: how many slice ends it
/// waited past its first, as a histogram of 0, 1, 2 and more. No wake-up
/// preemption in the model: each step is one slice end on every CPU.
/// `level`: the wake level (`--wake-level`) on or off.
#[allow(clippy::too_many_arguments)]
fn periodic_waits(
    stride: i32,
    hogs: i32,
    seed: u64,
    mask: u64,
    slept: u64,
    run: u64,
    rate: u64,
    level: bool,
) -> [u32; 4] {
    let mut m = Mix(seed);
    let mut hist = [0u32; 4];
    let w = hogs;
    // SAFETY: see above; callers hold MODEL.
    unsafe {
        hogs_and_a_waker(stride, hogs, slept, mask, rate);
        tix_m_set_wake_level(level as i32);
        let mut on = dispatch_all(2, &mut m);
        for _ in 0..20_000 {
            // The sleep is 2 slice ends of the hogs (what T gains then),
            // whatever `slept` the wake lag is computed from.
            for _ in 0..2 {
                expire_all(&mut on, &mut m);
            }
            tix_m_wake(w);
            let mut waited = 0usize;
            expire_all(&mut on, &mut m);
            while !on.contains(&w) {
                waited += 1;
                assert!(waited < 1_000, "the periodic task never ran");
                expire_all(&mut on, &mut m);
            }
            let c = on.iter().position(|&t| t == w).unwrap();
            tix_m_stop(c as i32, run, 0);
            on[c] = tix_m_dispatch(c as i32, m.next() as u32);
            hist[waited.min(3)] += 1;
        }
    }
    hist
}

/// Why a 1 ms-every-10 ms task misses periods under the lottery and not
/// under stride (vm/bench, beside 4 hogs on 2 vCPUs: 213 and 232 of
/// 20,000 missed unpinned / pinned, stride 4 and 1, the default 75 and
/// 101). Traced in the guest, its runs took 0.6-0.7 of a slice and it
/// slept about 1.9 slices; its late periods waited 7-38 ms with no run
/// while each CPU's hog kept its CPU at its slice ends. Its woken key is
/// its last run's E * run / value above where it started, floored at T
/// less the credit of 1.9 own slices: a draw of E above about 1.9 / 0.6
/// minus what T gained puts it behind the hogs: here it waited past its
/// first slice end in 3.6-4.1% of periods, past two in 2.0-2.4%, at wake
/// rate 1 (`--wake-rate 1`, the lottery's rule before rate 2). With the
/// credit earned twice as fast (rate 2) it needs E about twice as large:
/// 0.3-0.4% and 0.2%; the lottery's own rate, 4, is held to the same bound
/// (the credit's cap, 4 slices, binds here from rate 3 on).
/// Stride has no draw: never late. Fixed seeds, so each figure is fixed;
/// the bounds say which side of the effect each lands on.
#[test]
fn a_short_sleepers_late_periods_are_its_own_draw() {
    let _g = MODEL.lock().unwrap();
    let slept = SLICE * 19 / 10;
    let run = SLICE * 65 / 100;
    for mask in [1u64, 3] {
        for seed in [3, 4] {
            let r1 = periodic_waits(0, 4, seed, mask, slept, run, 1, false);
            let r2 = periodic_waits(0, 4, seed, mask, slept, run, 0, false);
            let st = periodic_waits(1, 4, seed, mask, slept, run, 0, false);
            let late = |h: [u32; 4]| h[1] + h[2] + h[3];
            eprintln!("mask {mask} seed {seed}: rate 1 {r1:?}, own rate {r2:?}, stride {st:?}");
            assert!(late(r1) >= 40, "mask {mask} seed {seed}: rate 1 {r1:?}");
            assert!(
                4 * late(r2) <= late(r1),
                "mask {mask} seed {seed}: own rate {r2:?} against {r1:?}"
            );
            assert_eq!(late(st), 0, "mask {mask} seed {seed}: stride {st:?}");
        }
    }
}

/// An unpinned waker with cyclictest's figures in the guest (sleeps of
/// about 0.75 ms against 3.5 ms slices; a probe measured its credit at p50
/// 0.12 of a hog's run and its runs at 250 µs) beside 4 unpinned hogs on 2
/// CPUs: the late first slice ends that remain are its own draw against
/// its credit, as for the pinned waker, and each doubling of the wake rate
/// cuts them: pooled over three seeds, late past its first slice end in
/// 588 of 60,000 periods at rate 1, 90 at rate 2, 2 at rate 4 (the
/// lottery's own); stride, never. In the guest the lottery's unpinned p99
/// beside 4 hogs was 1.94x the default's over a boot at rate 2 and 1.55x
/// at 4 (docs/kernel-results.md, "The lottery's wake rate"), so what is
/// left there is more than these draws (1 in 10^4 here). Fixed seeds:
/// each figure is fixed; the bounds say which side of each halving lands.
#[test]
fn an_unpinned_wakers_late_slice_ends_fall_with_the_wake_rate() {
    let _g = MODEL.lock().unwrap();
    let (slept, run) = (SLICE / 8, SLICE / 16);
    let late = |stride: i32, rate: u64| -> u32 {
        [3, 4, 5]
            .iter()
            .map(|&seed| {
                let h = periodic_waits(stride, 4, seed, 3, slept, run, rate, false);
                h[1] + h[2] + h[3]
            })
            .sum()
    };
    let (r1, r2, own) = (late(0, 1), late(0, 2), late(0, 0));
    let st = late(1, 0);
    eprintln!("late of 60,000: rate 1 {r1}, rate 2 {r2}, own rate {own}, stride {st}");
    assert!(r1 >= 300, "rate 1: {r1}");
    assert!(4 * r2 <= r1, "rate 2: {r2} against rate 1's {r1}");
    assert!(
        10 * own <= r2 && own <= 12,
        "own rate: {own} against rate 2's {r2}"
    );
    assert_eq!(st, 0, "stride: {st}");
}

/// The wake level never makes a waker later: 2 or 4 unpinned hogs on 2
/// CPUs and an unpinned waker with cyclictest's figures (as
/// `an_unpinned_wakers_late_slice_ends_fall_with_the_wake_rate`), three
/// seeds each, late at its first slice end no more often with the level
/// on than off. The model's waker is seldom late either way (lottery: 1
/// and 2 of 60,000 off, 0 and 2 on; stride never): what the level is for,
/// runners that lag T while the host delays ticks and kicks, is not in
/// the model.
#[test]
fn the_wake_level_against_late_slice_ends() {
    let _g = MODEL.lock().unwrap();
    let (slept, run) = (SLICE / 8, SLICE / 16);
    for hogs in [2, 4] {
        for stride in [0, 1] {
            let late = |level: bool| -> u32 {
                [3, 4, 5]
                    .iter()
                    .map(|&seed| {
                        let h = periodic_waits(stride, hogs, seed, 3, slept, run, 0, level);
                        h[1] + h[2] + h[3]
                    })
                    .sum()
            };
            let (off, on) = (late(false), late(true));
            eprintln!("{hogs} hogs, stride {stride}: late of 60,000: level off {off}, on {on}");
            assert!(
                on <= off,
                "{hogs} hogs, stride {stride}: level on {on}, off {off}"
            );
        }
    }
}

/// A rule scx_tix does not have yet, tried in the model: a waking task
/// keeps the lag it had when it blocked, so its floor is its own key
/// moved on by what T gained while it slept (EEVDF keeps a sleeper's lag
/// the same way), not T less its credit, whichever is lower, and never
/// below the bank. The free rewaker of
/// `a_free_rewakers_share_and_the_floor_at_t`, with no credit, then gets
/// its water-filled ideal (4 binomial sd plus one, 2,500 slices per CPU),
/// and the unpinned waker of
/// `an_unpinned_wakers_late_slice_ends_fall_with_the_wake_rate` at wake
/// rate 1 is late no more often than under today's floor (251 of 60,000
/// against 588).
#[test]
fn keeping_the_lag_at_a_block_restores_a_free_rewakers_share() {
    use std::sync::atomic::Ordering::Relaxed;
    let _g = MODEL.lock().unwrap();
    let rounds = 2_500u64;
    let lead = tix_core::vtime::PINNED_LEAD;
    let late = |keep: bool| -> u32 {
        KEEP_LAG.store(keep, Relaxed);
        let n = [3, 4, 5]
            .iter()
            .map(|&seed| {
                let h = periodic_waits(0, 4, seed, 3, SLICE / 8, SLICE / 16, 1, false);
                h[1] + h[2] + h[3]
            })
            .sum();
        KEEP_LAG.store(false, Relaxed);
        n
    };
    let (floored, kept) = (late(false), late(true));
    eprintln!("late of 60,000 at rate 1: floor at T {floored}, lag kept {kept}");
    assert!(
        kept <= floored,
        "lag kept: {kept} late, floor at T: {floored}"
    );
    for (hogs, due) in [(2usize, 2.0 / 3.0), (3, 0.5)] {
        let (want, bound) = rewaker_due(false, due, rounds);
        KEEP_LAG.store(true, Relaxed);
        let (got, rest) = rewaker_share(false, hogs, 3, 0, lead, false, rounds, 21 + hogs as u64);
        KEEP_LAG.store(false, Relaxed);
        eprintln!("{hogs} hogs, lag kept, no credit: {got} slices of {rounds}, due {want:.0} ± {bound:.0}");
        assert!(
            (got as f64 - want).abs() <= bound,
            "{hogs} hogs, lag kept: the rewaker got {got} slices, due {want:.0} ± {bound:.1} (hogs {rest})"
        );
    }
}
