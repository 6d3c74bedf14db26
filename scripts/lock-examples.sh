#!/usr/bin/env bash
# Builds tix-lock's example programs into target/release/examples: the Rust
# lock-inversion (processes sharing a lock, lending through the daemon) and
# the C fig11 (include/tix_lock.h against the static library).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
cargo build --release --locked -p tix-lock --lib --example lock-inversion
cc -O2 -s -Wall -Wextra -Werror -std=c11 -D_GNU_SOURCE -I crates/tix-lock/include \
    crates/tix-lock/examples/fig11.c "$target/release/libtix_lock.a" -lpthread -ldl -lm \
    -o "$target/release/examples/fig11"
