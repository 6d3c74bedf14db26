//! scx_tix's command line without a kernel: `--monitor` of no running
//! instance, bad intervals and wake rates out of range get a clear error
//! and a non-zero exit.

use std::process::Command;

fn scx_tix(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_scx_tix"))
        .args(args)
        .output()
        .expect("run scx_tix");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn monitor_of_nothing_and_bad_intervals_are_refused() {
    let sock = std::env::temp_dir().join(format!("scx-tix-cli-{}.sock", std::process::id()));
    let (code, err) = scx_tix(&["--monitor", "1", "--socket", sock.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no running scx_tix to monitor"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for bad in ["0", "-1", "x", "100000"] {
        let (code, err) = scx_tix(&[&format!("--stats={bad}")]);
        assert_ne!(code, 0, "--stats {bad}");
        assert!(err.contains("expected seconds"), "--stats {bad}: {err}");
    }
    let (code, err) = scx_tix(&["--stats", "1", "--monitor", "1"]);
    assert_ne!(code, 0);
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn a_wake_rate_outside_one_to_sixteen_is_refused() {
    for bad in ["0", "17", "-1", "x", "18446744073709551616"] {
        let (code, err) = scx_tix(&[&format!("--wake-rate={bad}")]);
        assert_ne!(code, 0, "--wake-rate {bad}");
        assert!(err.contains("--wake-rate"), "--wake-rate {bad}: {err}");
    }
}
