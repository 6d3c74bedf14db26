// Builds the BPF program (skeleton + bindgen of intf.h) with scx_cargo, and
// compiles rules.h for the host so tests can compare it with tix-core.
fn main() {
    scx_cargo::BpfBuilder::new()
        .expect("BPF builder (is clang installed? set BPF_CLANG)")
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .build()
        .expect("building the BPF program");
    // The benchmark peer (src/bin/scx_wvtime.rs): its own object and skeleton.
    scx_cargo::BpfBuilder::new()
        .expect("BPF builder (is clang installed? set BPF_CLANG)")
        .enable_skel("src/bpf/wvtime.bpf.c", "wvtime")
        .build()
        .expect("building the peer BPF program");

    // Host copy of the integer rules: exported wrappers, linked only into the
    // test that checks them against tix_core (unused symbols are dropped
    // from the daemon binary).
    cc::Build::new()
        .file("src/bpf/rules_host.c")
        .file("src/bpf/model_host.c")
        .file("src/bpf/rules_host_bounded.c")
        .include("src/bpf")
        .warnings(true)
        .compile("tix_rules_host");
    println!("cargo:rerun-if-changed=src/bpf/rules_host.c");
    println!("cargo:rerun-if-changed=src/bpf/model_host.c");
    println!("cargo:rerun-if-changed=src/bpf/rules_host_bounded.c");
    println!("cargo:rerun-if-changed=src/bpf/rules.h");
    println!("cargo:rerun-if-changed=src/bpf/rights.bpf.h");
    println!("cargo:rerun-if-changed=src/bpf/vtime.bpf.h");
    println!("cargo:rerun-if-changed=src/bpf/preempt.bpf.h");
    println!("cargo:rerun-if-changed=src/bpf/cgroups.bpf.h");
}
