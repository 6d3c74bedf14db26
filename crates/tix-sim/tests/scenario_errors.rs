//! Bad scenarios give one typed error naming the file, the field and what
//! was expected — never a panic.

use tix_sim::scenario::parse;
use tix_sim::SimError;

fn err(text: &str) -> (String, String, String) {
    match parse("bad.toml", text) {
        Err(SimError::Scenario {
            file,
            field,
            expected,
        }) => (file, field, expected),
        other => panic!("expected a scenario error, got {other:?}"),
    }
}

const SIM: &str = "[sim]\nalgo = \"stride\"\nduration_s = 1\n";

#[test]
fn missing_sim_table() {
    let (f, field, _) = err("[[client]]\nname = \"a\"\n");
    assert_eq!(f, "bad.toml");
    assert_eq!(field, "sim");
}

#[test]
fn syntax_error_names_the_file() {
    let (f, field, exp) = err("[sim\nalgo = 1");
    assert_eq!((f.as_str(), field.as_str()), ("bad.toml", "(syntax)"));
    assert!(exp.contains("valid TOML"), "{exp}");
}

#[test]
fn unknown_policy() {
    let (_, field, exp) = err("[sim]\nalgo = \"nope\"\nduration_s = 1\n[[client]]\nname = \"a\"\n");
    assert_eq!(field, "sim.algo");
    assert!(exp.contains("gr3") && exp.contains("lottery"), "{exp}");
}

#[test]
fn wrong_type_and_unknown_field() {
    let (_, field, exp) = err(&format!(
        "{SIM}[[client]]\nname = \"a\"\ntickets = \"many\"\n"
    ));
    assert_eq!(field, "client[0].tickets");
    assert!(exp.contains("non-negative integer"));
    let (_, field, exp) = err(&format!("{SIM}[[client]]\nname = \"a\"\ntikets = 3\n"));
    assert_eq!(field, "client[0].tikets");
    assert!(exp.contains("known fields"));
}

#[test]
fn behaviour_needs_its_lengths() {
    let (_, field, _) = err(&format!(
        "{SIM}[[client]]\nname = \"a\"\nbehaviour = \"io\"\nblock_ms = 3\n"
    ));
    assert_eq!(field, "client[0].run_ms");
    let (_, field, exp) = err(&format!(
        "{SIM}[[client]]\nname = \"a\"\nbehaviour = \"io\"\nrun = {{ dist = \"gauss\", mean_ms = 1 }}\nblock_ms = 1\n"
    ));
    assert_eq!(field, "client[0].run.dist");
    assert!(exp.contains("exp"));
    let (_, field, _) = err(&format!(
        "{SIM}[[client]]\nname = \"a\"\nbehaviour = \"periodic\"\nwork_ms = 1\n"
    ));
    assert_eq!(field, "client[0].period_ms");
}

#[test]
fn references_must_exist() {
    let (_, field, exp) = err(&format!(
        "{SIM}[[client]]\nname = \"a\"\n[[event]]\nat_s = 0\naction = \"exit\"\nclient = \"b\"\n"
    ));
    assert_eq!(field, "event[0].client");
    assert!(exp.contains("'b'"));
    let (_, field, _) = err(&format!(
        "{SIM}[[user]]\nname = \"u\"\n[[client]]\nname = \"a\"\nuser = \"v\"\n"
    ));
    assert_eq!(field, "client[0].user");
    let (_, field, _) = err(&format!(
        "{SIM}[[client]]\nname = \"a\"\n[[client]]\nname = \"a\"\n"
    ));
    assert_eq!(field, "client[1].name");
}

#[test]
fn ranges_are_checked() {
    let (_, field, _) = err("[sim]\nalgo = \"rr\"\nduration_s = 0\n[[client]]\nname = \"a\"\n");
    assert_eq!(field, "sim.duration_s");
    let (_, field, _) =
        err("[sim]\nalgo = \"rr\"\nduration_s = 1\ncpus = 0\n[[client]]\nname = \"a\"\n");
    assert_eq!(field, "sim.cpus");
    let (_, field, _) = err(&format!("{SIM}[[client]]\nname = \"a\"\ncpu = 3\n"));
    assert_eq!(field, "client[0].cpu");
    let (_, field, _) = err(&format!(
        "{SIM}[[client]]\nname = \"a\"\ntickets = 8589934593\n"
    ));
    assert_eq!(field, "client[0].tickets");
    let (_, field, _) =
        err("[sim]\nalgo = \"rr\"\nduration_s = 1\nbalance = \"cfs\"\n[[client]]\nname = \"a\"\n");
    assert_eq!(field, "sim.balance");
    let (_, field, _) = err(&format!(
        "{SIM}[[user]]\nname = \"u\"\nbase = 5\n[[client]]\nname = \"a\"\nuser = \"u\"\n"
    ));
    assert_eq!(field, "user[0].base");
}

#[test]
fn every_shipped_example_parses_and_runs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) == Some("toml") {
            let sys =
                tix_sim::scenario::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let r = tix_sim::engine::simulate(sys).unwrap();
            assert!(r.quanta > 0, "{}", p.display());
            n += 1;
        }
    }
    assert!(n >= 3, "examples found: {n}");
}

#[test]
fn currency_errors() {
    let (_, field, _) = err(&format!(
        "{SIM}[[currency]]\nname = \"c\"\nfrom = \"nope\"\namount = 5\n[[client]]\nname = \"a\"\n"
    ));
    assert_eq!(field, "currency[0].from");
    let (_, field, _) = err(&format!(
        "{SIM}[[currency]]\nname = \"c\"\n[[client]]\nname = \"a\"\n"
    ));
    assert_eq!(field, "currency[0].amount");
    let (_, field, _) = err(&format!(
        "{SIM}[[currency]]\nname = \"c\"\namount = 5\n[[client]]\nname = \"a\"\ncurrency = \"d\"\n"
    ));
    assert_eq!(field, "client[0].currency");
    let (_, field, _) = err(&format!(
        "{SIM}[[currency]]\nname = \"c\"\namount = 5\n[[user]]\nname = \"u\"\n[[client]]\nname = \"a\"\nuser = \"u\"\n"
    ));
    assert_eq!(field, "currency");
}

#[test]
fn an_io_loop_that_takes_no_time_is_refused() {
    let (_, field, exp) = err(&format!(
        "{SIM}[[client]]\nname = \"io\"\nbehaviour = \"io\"\nrun_ms = 0\nblock_ms = 0\n"
    ));
    assert_eq!(field, "client[0].run_ms");
    assert!(exp.contains("never ends"), "{exp}");
}

#[test]
fn quanta_and_periods_far_below_the_horizon_are_refused() {
    let (_, field, exp) = err(
        "[sim]\nalgo = \"stride\"\nduration_s = 100000\nquantum_ns = 1\n[[client]]\nname = \"a\"\n",
    );
    assert_eq!(field, "sim.quantum_ms");
    assert!(exp.contains("events"), "{exp}");
    let (_, field, _) = err(
        "[sim]\nalgo = \"stride\"\nduration_s = 100000\n[[client]]\nname = \"p\"\nbehaviour = \"periodic\"\nperiod_ns = 1\nwork_ns = 1\n",
    );
    assert_eq!(field, "client[0].period_ms");
}

#[test]
fn a_non_table_client_names_its_key() {
    let (_, field, exp) = err("client = [1, 2]\n[sim]\nalgo = \"stride\"\nduration_s = 1\n");
    assert_eq!(field, "client[0]");
    assert_eq!(exp, "a table ([[client]])");
}

#[test]
fn a_hundred_thousand_clients_build_and_run() {
    // O(n log n) building: quadratic name scans took minutes here.
    let sys = parse(
        "big.toml",
        &format!("{SIM}[[client]]\nname = \"c\"\ncount = 100000\n"),
    )
    .unwrap();
    assert_eq!(sys.clients.len(), 100_000);
    let r = tix_sim::engine::simulate(sys).unwrap();
    assert_eq!(r.clients.len(), 100_000);
}

#[test]
fn only_regular_files_of_bounded_size_are_read() {
    use tix_sim::scenario::load;
    for p in ["/dev/zero", "/dev/null", "/"] {
        let e = load(std::path::Path::new(p)).unwrap_err().to_string();
        assert!(e.contains(p) && e.contains("not a regular file"), "{e}");
    }
    let big = std::env::temp_dir().join(format!("tix-big-{}.toml", std::process::id()));
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(tix_sim::scenario::MAX_FILE_BYTES + 1).unwrap();
    let e = load(&big).unwrap_err().to_string();
    std::fs::remove_file(&big).unwrap();
    assert!(e.contains("bytes; a scenario is at most"), "{e}");
}

#[test]
fn calls_need_a_server_of_their_own() {
    let caller = "[[client]]\nname = \"c\"\nbehaviour = \"calls\"\nquery_ms = 5\n";
    let (_, field, _) = err(&format!("{SIM}{caller}"));
    assert_eq!(field, "client[0].server");
    let (_, field, exp) = err(&format!("{SIM}{caller}server = \"nope\"\n"));
    assert_eq!(field, "client[0].server");
    assert!(exp.contains("'nope' is not one"), "{exp}");
    let (_, _, exp) = err(&format!(
        "{SIM}{caller}server = \"h\"\n[[client]]\nname = \"h\"\n"
    ));
    assert!(exp.contains("behaviour = \"server\""), "{exp}");
    let two = format!(
        "{SIM}{caller}server = \"s\"\n[[client]]\nname = \"d\"\nbehaviour = \"calls\"\nquery_ms = 5\nserver = \"s\"\n\
         [[client]]\nname = \"s\"\ntickets = 0\nbehaviour = \"server\"\n"
    );
    let (_, field, exp) = err(&two);
    assert_eq!(field, "client[1].server");
    assert!(exp.contains("already has a caller"), "{exp}");
    let (_, field, _) = err(&format!(
        "{SIM}[[client]]\nname = \"c\"\nbehaviour = \"calls\"\nserver = \"s\"\nquery_ms = 0\n\
         [[client]]\nname = \"s\"\nbehaviour = \"server\"\n"
    ));
    assert_eq!(field, "client[0].query_ms");
}
