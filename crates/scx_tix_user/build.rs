// scx_rustland_core ships the BPF half (it queues every task to user space
// and dispatches what user space sends back); its builder writes that BPF
// source and the Rust connector (src/bpf.rs) into this crate, then builds
// the skeleton with scx_cargo. The generated files are not ours and are
// not committed (.gitignore).
fn main() {
    scx_rustland_core::RustLandBuilder::new()
        .expect("BPF builder (is clang installed? set BPF_CLANG)")
        .build()
        .expect("building the scx_rustland_core BPF program");
}
