#!/usr/bin/env bash
# Runs every test of tix: formatting and lints, the Rust test suites (core
# worked examples, properties, simulator reproductions, BPF-mirror checks),
# the simulator report in quick mode, and the real scheduler's tests inside a
# QEMU guest running a sched_ext kernel. Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export BPF_CLANG=${BPF_CLANG:-clang-19}

step() { printf '\n== %s\n' "$*"; }

step "setup"
bash scripts/setup.sh
[[ -f "$HOME/.cargo/env" ]] && . "$HOME/.cargo/env"

step "format"
cargo fmt --all -- --check

step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "unit, property and reproduction tests"
cargo test --workspace --locked

step "simulator report (quick)"
cargo build --release --locked -p tix
./target/release/tix sim report --quick --out out/report
test -s out/report/index.html

step "kernel scheduler in a sched_ext VM"
bash vm/tests/run.sh
