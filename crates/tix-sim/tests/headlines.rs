//! Each reproduction's headline within stated bounds. Seeds are fixed; the
//! statistical bounds are derived from the distribution in each test.

use tix_sim::report::Ctx;
use tix_sim::service_error::{error_run, sweep, ShareDist};

fn ctx_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tix-sim-test-{}-{name}", std::process::id()));
    for sub in ["plots", "scenarios"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    d
}

fn check(name: &str, f: fn(&Ctx) -> tix_sim::Result<tix_sim::report::Experiment>) {
    let d = ctx_dir(name);
    let cx = Ctx {
        out: &d,
        quick: true,
        progress: false,
    };
    let e = f(&cx).unwrap();
    let (ok, why) = e.agrees.clone().expect("a headline");
    assert!(ok, "{name}: {why}");
    for p in &e.plots {
        assert!(d.join(p).exists(), "{p}");
        assert!(d.join(p).with_extension("png").exists(), "{p}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn lottery_2_to_1_over_200_s_within_3_binomial_sd() {
    // Fig. 5: n = 2000 quanta of 100 ms; A's wins ~ Binomial(2000, 2/3):
    // mean 1333.3, sd √(2000·2/3·1/3) = 21.1, so |A − 1333.3| ≤ 63.2.
    let text = include_str!("../scenarios/waldspurger-fig5.toml");
    let r = tix_sim::engine::simulate(tix_sim::scenario::parse("fig5", text).unwrap()).unwrap();
    let a = r.clients[0].service_ns as f64 / 1e8;
    assert_eq!(r.quanta, 2000);
    assert!(
        (a - 2000.0 * 2.0 / 3.0).abs() <= 3.0 * (2000.0f64 * 2.0 / 9.0).sqrt(),
        "{a}"
    );
}

#[test]
fn gr3_worked_example_and_wrr() {
    // GR3 §4.2: shares 3, 2, 1 give B, A, A, B, A, C and −5/6 .. +2/3.
    let r = error_run("gr3", &[3, 2, 1], None, 1).unwrap();
    assert_eq!(r.picks, vec![1, 0, 0, 1, 0, 2]);
    assert!((r.min + 5.0 / 6.0).abs() < 1e-12 && (r.max - 2.0 / 3.0).abs() < 1e-12);
    // WRR: A, A, A, B, B, C with −1 .. +1.5 (§3).
    let w = error_run("wrr", &[3, 2, 1], None, 1).unwrap();
    assert_eq!(w.picks, vec![0, 0, 0, 1, 1, 2]);
    assert_eq!((w.min, w.max), (-1.0, 1.5));
}

#[test]
fn error_tracker_matches_brute_force() {
    // The O(1) tracker against E_A(0,t) from tix-core's metrics at every t.
    for (algo, shares) in [
        ("lottery", vec![7u64, 3, 1, 1]),
        ("srr", vec![10, 4, 3]),
        ("vtrr", vec![9, 5, 2, 2]),
    ] {
        let r = error_run(algo, &shares, Some(60), 4).unwrap();
        let total: u64 = shares.iter().sum();
        let mut got = vec![0u64; shares.len()];
        let (mut lo, mut hi) = (0.0f64, 0.0f64);
        for (t, &p) in r.picks.iter().enumerate() {
            got[p] += 1;
            for a in 0..shares.len() {
                let e = tix_core::metrics::service_error(
                    got[a] as f64,
                    (t + 1) as f64,
                    shares[a] as f64,
                    total as f64,
                );
                lo = lo.min(e);
                hi = hi.max(e);
            }
        }
        assert!(
            (lo - r.min).abs() < 1e-9 && (hi - r.max).abs() < 1e-9,
            "{algo}: {lo} {hi} vs {} {}",
            r.min,
            r.max
        );
    }
}

#[test]
fn gr3_skewed_max_error_below_4_quanta() {
    // The bound (the paper's skewed GR3 range is −1.3 .. +3.5).
    let p = sweep("gr3", 32, 2048, 60, ShareDist::Skewed, 7, &|_| {}).unwrap();
    assert!(p.avg_max < 4.0 && p.avg_min > -4.0, "{p:?}");
    // Random shares: within one quantum of the paper's −1.3 .. +1.2.
    let p = sweep("gr3", 32, 2048, 60, ShareDist::Random, 7, &|_| {}).unwrap();
    assert!(p.avg_max < 2.2 && p.avg_min > -2.3, "{p:?}");
}

#[test]
fn wf2q_stays_within_one_quantum() {
    // WF2Q's error is provably within −1 .. +1 (GR3 §5.1), for every set.
    let p = sweep("wf2q", 16, 1024, 40, ShareDist::Skewed, 5, &|_| {}).unwrap();
    assert!(
        p.worst_min >= -1.0 - 1e-9 && p.worst_max <= 1.0 + 1e-9,
        "{p:?}"
    );
}

#[test]
fn waldspurger_fig4_every_run_within_3_sd() {
    // Each run's smaller-task quanta ~ Binomial(n, 1/(r+1)): |z| ≤ 3.
    check("fig4", tix_sim::repro::waldspurger::fig4);
}

#[test]
fn waldspurger_fig9_currency_insulation() {
    // Per half, A's share of ~1500 quanta is Binomial(1500, 1/2): sd 19.4
    // quanta = 2.6%, so A:B within 0.9..1.1 is ≥ 3 sd; B1, B2's halving
    // (0.4..0.6) is ≥ 3 sd for their ~250 and ~500 quanta per half.
    check("fig9", tix_sim::repro::waldspurger::fig9);
}

#[test]
fn waldspurger_mutex_2_to_1() {
    // ~1200 acquisitions: A's fraction has sd ≈ √(0.65·0.35/1200) = 1.4%,
    // so the ratio 1.8 moves ≈ ±0.1 per sd; 1.5..2.2 is > 3 sd.
    check("mutex", |cx| Ok(tix_sim::repro::mutex::run(cx)?.remove(0)));
}

#[test]
fn zepp_rre_within_negative_binomial_band() {
    // P1's units when P2 completes: negative binomial, ±3 sd (see zepp.rs).
    check("zepp-rre", tix_sim::repro::zepp::rre_exp);
}

#[test]
fn zepp_ticket_change_and_users() {
    // 4:1 over ~830 slices then 1:1: ratios within 3.3..4.8 and 0.8..1.25
    // are beyond 3 sd of the binomial share estimates of those windows.
    check("zepp-change", tix_sim::repro::zepp::change_exp);
    check("zepp-users", tix_sim::repro::zepp::insulation_exp);
}

#[test]
fn samih_examples_twrs_and_shuttle() {
    check("samih-ch2", tix_sim::repro::samih::ch2);
    check("samih-twrs", tix_sim::repro::samih::twrs);
    check("samih-shuttle", tix_sim::repro::samih::shuttle);
}
