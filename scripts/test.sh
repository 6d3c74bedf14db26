#!/usr/bin/env bash
# Runs every test of tix: formatting and lints, the Rust test suites (core
# worked examples, properties, simulator reproductions, BPF-mirror checks),
# the simulator report in quick mode, and the real scheduler's tests inside a
# QEMU guest running a sched_ext kernel. Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's header says how long the run has taken so far, to see where
# CI time goes.
t_start=$(date +%s)
step() { printf '\n== %s (at %d s)\n' "$*" $(($(date +%s) - t_start)); }

step "setup"
bash scripts/setup.sh
[[ -f "$HOME/.cargo/env" ]] && . "$HOME/.cargo/env"

# Build as a user would on a fresh machine: no BPF_CLANG exported, and a
# `clang` on PATH that fails, so nothing compiles only because this machine
# happens to have an unversioned clang (.cargo/config.toml names clang-19,
# which setup.sh installs). Every cargo command below runs this way.
unset BPF_CLANG
shim=$(mktemp -d)
trap 'rm -rf "$shim"' EXIT
printf '#!/bin/sh\necho "clang: hidden by scripts/test.sh (the build must not need an unversioned clang)" >&2\nexit 127\n' >"$shim/clang"
chmod +x "$shim/clang"
export PATH="$shim:$PATH"

step "build (release, as the README's first command builds)"
cargo build --release --locked -p scx_tix -p scx_tix_user -p tix

step "format"
cargo fmt --all -- --check

step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "unit, property and reproduction tests"
cargo test --workspace --locked

step "tix-lock's C interface on real threads (fig11: misuse refused, draws by funding)"
bash scripts/lock-examples.sh
out=$(./target/release/examples/fig11 3 5 5)
echo "$out"
# "draws N A won W expected E sd S": W within 4 sd of E (a sum of Bernoulli
# trials, one per release with waiters).
echo "$out" | awk '/^draws/ { d = $5 - $7; if (d < 0) d = -d; ok = ($9 > 2 && d < 4 * $9) } END { exit !ok }'

step "Debian package (fields, files, systemd-analyze verify)"
bash scripts/package.sh --no-build

step "simulator report (quick)"
# The binary the build step made: building `-p tix` alone here would
# resolve other features and recompile its dependencies (90 s on a 2-core
# CI host).
test -x target/release/tix
# With the saved replays of the simulator beside the kernel: the page
# fails if one no longer parses or no longer agrees within its bound.
./target/release/tix sim report --quick --out out/report --kernel docs/kernel/sim-vs-kernel.jsonl
test -s out/report/index.html
grep -q 'id="sim-vs-kernel"' out/report/index.html

step "the VM tests' statistical bounds (common.sh under busybox sh, as in the guest, and bash)"
sh vm/tests/check-bounds.sh
sh vm/tests/check-bounds.sh bash

step "vm/bench/pool.sh (pooling the benchmark over boots) against samples sorted the long way"
bash vm/bench/check-pool.sh

step "kernel scheduler in sched_ext VMs (two kernels)"
# Every in-guest test on Debian's sid kernel; attach and the multiprocessor
# checks again on its trixie-backports kernel (sched_ext kernels differ from
# release to release: kfunc names, DSQ semantics). The boots share the
# host's CPUs in lanes, one single-threaded TCG guest per CPU.
bash vm/tests/run.sh --second-kernel
step "done"
