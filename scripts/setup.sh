#!/usr/bin/env bash
# Installs what tix needs on a fresh Debian 12 (bookworm) machine, as root.
# Idempotent: a second run with everything present changes nothing and makes
# no network access beyond what cargo needs for a clean build.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build: clang-19 compiles the BPF side (bookworm's default clang is too old for
# current scx headers); libelf/zlib/pkg-config for libbpf-sys; gcc links and
# compiles tix-lock's C example.
# VM harness: qemu (TCG), busybox-static + cpio for the guest's initramfs,
# xz-utils to unpack the kernel's modules the block tests load.
# scx_tix_user links libseccomp (scx_rustland_core refuses mmap after start).
# Guest workloads: linux-perf (perf bench), stress-ng, rt-tests (cyclictest);
# bpftool reads the kernel's per-program BPF statistics for vm/bench;
# systemd's systemd-analyze verifies the package's unit (scripts/package.sh).
PKGS=(clang-19 llvm-19 libelf-dev zlib1g-dev libseccomp-dev pkg-config make gcc libc6-dev
      qemu-system-x86 busybox-static cpio xz-utils linux-perf stress-ng rt-tests
      bpftool tmux systemd fonts-dejavu-core)

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "setup: need root to install: ${missing[*]}" >&2
        exit 1
    fi
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
    # shellcheck disable=SC1091
    [[ -f "$HOME/.cargo/env" ]] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found: install a Rust toolchain (rustup, stable >= 1.85) first" >&2
    exit 1
fi
for c in rustfmt clippy; do
    if ! cargo "${c/rustfmt/fmt}" --version >/dev/null 2>&1; then
        rustup component add "$c" >/dev/null 2>&1 || { echo "setup: cargo $c missing" >&2; exit 1; }
    fi
done

# The sched_ext kernel for the VM (cached; no host apt sources are touched).
if [[ -x vm/fetch-kernel.sh ]]; then
    bash vm/fetch-kernel.sh
fi
echo "setup: done"
