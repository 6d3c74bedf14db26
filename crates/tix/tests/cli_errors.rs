//! Bad command lines get one clear line on stderr and a non-zero exit,
//! never a panic, a hang or an allocation the machine cannot give.

use std::path::PathBuf;
use std::process::Command;

fn tix(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tix"))
        .args(args)
        .output()
        .expect("run tix");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn refused(args: &[&str], says: &str) {
    let (code, err) = tix(args);
    assert_ne!(code, 0, "{args:?} exited 0");
    assert!(err.contains(says), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tix-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn sizes_and_counts_are_bounded_before_allocating() {
    let sweep = [
        "sim",
        "sweep",
        "--algo",
        "gr3",
        "--clients",
        "4",
        "--total",
        "40",
        "--runs",
    ];
    refused(&[&sweep[..], &["18446744073709551615"]].concat(), "--runs");
    refused(&[&sweep[..], &["1000000000"]].concat(), "--runs");
    refused(&[&sweep[..], &["0"]].concat(), "--runs");
    refused(&["sim", "bench", "--clients", "1000000000"], "--clients");
    refused(&["sim", "bench", "--clients", "0"], "--clients");
    refused(&["sim", "bench", "--quanta", "0"], "--quanta");
    refused(
        &[
            "sim", "error", "--algo", "gr3", "--shares", "3,2,1", "--quanta", "0",
        ],
        "--quanta",
    );
}

#[test]
fn report_refuses_unknown_families_and_unwritable_plots() {
    let d = tmp("report");
    let out = d.to_str().unwrap();
    refused(
        &["sim", "report", "--quick", "--only", "nope", "--out", out],
        "names no reproduction",
    );
    assert!(
        std::fs::read_dir(&d).unwrap().next().is_none(),
        "nothing written"
    );
    // Saved kernel replays that are missing or not replays.
    let bad = std::env::temp_dir().join(format!("tix-cli-replays-{}", std::process::id()));
    std::fs::write(&bad, "{\"algo\": \"gr3\"}\n").unwrap();
    for (replays, says) in [
        ("/nonexistent.jsonl", "/nonexistent.jsonl"),
        (bad.to_str().unwrap(), ":1: not a saved replay"),
    ] {
        refused(
            &[
                "sim", "report", "--quick", "--out", out, "--kernel", replays,
            ],
            says,
        );
    }
    std::fs::remove_file(&bad).unwrap();
    assert!(
        std::fs::read_dir(&d).unwrap().next().is_none(),
        "nothing written"
    );
    // plots/ is a file: nothing can be written under it.
    std::fs::write(d.join("plots"), "").unwrap();
    refused(
        &["sim", "report", "--quick", "--only", "zepp", "--out", out],
        "plots",
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn scenario_files_and_outputs_name_their_paths() {
    refused(
        &["sim", "run", "/dev/zero"],
        "/dev/zero: not a regular file",
    );
    let d = tmp("csv");
    let sc = d.join("s.toml");
    std::fs::write(
        &sc,
        "[sim]\nalgo = \"stride\"\nduration_s = 1\n[[client]]\nname = \"a\"\n",
    )
    .unwrap();
    // The csv folder is a file: the error names the path, nothing is left.
    let blocked = d.join("out");
    std::fs::write(&blocked, "").unwrap();
    let target = blocked.join("csv");
    refused(
        &[
            "sim",
            "run",
            sc.to_str().unwrap(),
            "--csv",
            target.to_str().unwrap(),
        ],
        target.to_str().unwrap(),
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn status_without_a_scheduler_says_so_in_every_format() {
    let sock = tmp("status").join("none.sock");
    let sock = sock.to_str().unwrap();
    let run = |extra: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_tix"))
            .args(["status", "--socket", sock, extra])
            .output()
            .expect("run tix");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = run("--openmetrics");
    assert_eq!(code, Some(1));
    assert!(out.lines().any(|l| l == "tix_attached 0"), "{out}");
    assert!(out.ends_with("# EOF\n"), "{out}");
    let (code, out) = run("--json");
    assert_eq!(code, Some(1));
    assert_eq!(out.trim(), r#"{"attached":false}"#);
    let (code, err) = tix(&["status", "--json", "--openmetrics"]);
    assert_ne!(code, 0);
    assert!(err.starts_with("error: the argument"), "{err}");
}

#[test]
fn completions_and_man_pages_come_from_the_command_definitions() {
    let out = Command::new(env!("CARGO_BIN_EXE_tix"))
        .args(["completions", "bash"])
        .output()
        .expect("run tix");
    assert_eq!(out.status.code(), Some(0));
    let script = String::from_utf8_lossy(&out.stdout);
    for word in ["_tix()", "status", "openmetrics", "sim"] {
        assert!(
            script.contains(word),
            "{word} missing from the bash completion"
        );
    }
    let dir = tmp("man");
    let out = Command::new(env!("CARGO_BIN_EXE_tix"))
        .args(["man", "--out", dir.to_str().unwrap()])
        .output()
        .expect("run tix");
    assert_eq!(out.status.code(), Some(0));
    let page = std::fs::read_to_string(dir.join("tix-status.1")).unwrap();
    assert!(page.contains(".TH TIX-STATUS 1"), "{page}");
    assert!(page.contains("openmetrics"), "{page}");
    assert!(dir.join("tix.1").exists() && dir.join("tix-sim.1").exists());
    // A file where the directory should be: one clear line, exit 1.
    let file = dir.join("tix.1");
    refused(&["man", "--out", file.to_str().unwrap()], "creating");
    let (code, err) = tix(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("error: invalid value 'tcsh'"), "{err}");
}

#[test]
fn mach_commands_refuse_bad_amounts_and_names_before_asking() {
    // No daemon is asked: these fail in the argument check (the socket
    // points nowhere, so reaching it would say "not running").
    let refused_here = |args: &[&str], says: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_tix"))
            .args(args)
            .env("TIX_SOCKET", "/nonexistent/tix.sock")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    };
    refused_here(&["fund", "work", "0"], "funding must be 1..10000");
    refused_here(&["fund", "work", "abc"], "AMOUNT");
    refused_here(&["fund", "work", "5.bad.name"], "bad currency name");
    refused_here(&["mktkt", "1", "x3"], "AMOUNT");
    refused_here(&["mktkt", "x", "5"], "PID");
    refused_here(&["fundx", "5.no/slash", "true"], "bad currency name");
    refused_here(&["lscur"], "not running");
}

#[test]
fn mach_names_by_argv0_run_the_subcommands() {
    let d = tmp("argv0");
    let link = d.join("lscur");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_tix"), &link).unwrap();
    let out = Command::new(&link)
        .env("TIX_SOCKET", d.join("none.sock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains("not running"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_reader_that_stops_early_ends_tix_quietly() {
    // `tix … | grep -q x`: the reader is gone before tix writes. The read
    // end is closed before tix starts, so its first line meets EPIPE.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_tix"))
        .args(["sim", "error", "--algo", "stride", "--shares", "3,2,1"])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run tix");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(141), "{err}");
}
