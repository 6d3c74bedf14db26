#!/usr/bin/env bash
# Host driver of scx_tix's in-guest tests: builds the release binaries, boots
# the sched_ext kernel once (vm/run.sh) and runs every vm/tests/[0-9]*.sh in
# one guest shell; exits with the guest's status ("N passed, N failed").
#
# usage: vm/tests/run.sh [--only PATTERN] [vm/run.sh options]
#   --only PATTERN   run only the test files whose name matches (shell glob)
# env: CARGO_TARGET_DIR (default target/), TIX_SKIP_BUILD=1 to reuse binaries already built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
only='[0-9]*.sh'
vmopts=()
while [ $# -gt 0 ]; do
    case "$1" in
        --only)
            [ $# -ge 2 ] || { echo "vm/tests/run.sh: --only needs a pattern" >&2; exit 2; }
            only="$2"
            shift 2
            ;;
        *)
            vmopts+=("$1")
            shift
            ;;
    esac
done
target=${CARGO_TARGET_DIR:-$repo/target}
# One TCG thread for all vCPUs: with multi-threaded TCG a vCPU can run a
# stale translation of kernel text that another vCPU just live-patched
# (static keys flip when a sched_ext scheduler attaches), and the guest
# dies with "Oops: int3" in task_should_scx during fork. Seen here on the
# second attach of a boot; single-threaded TCG has no such window.
export TIX_VM_ACCEL=${TIX_VM_ACCEL:-tcg,thread=single}
if [ "${TIX_SKIP_BUILD:-0}" != 1 ]; then
    (cd "$repo" && cargo build --release -p scx_tix -p scx_tix_user -p tix && cargo build --release -p tix-ctl --example ctl-abuse --example vm-load &&
        bash scripts/lock-examples.sh && bash scripts/package.sh --no-build >/dev/null)
fi
for b in scx_tix scx_tix_user tix examples/ctl-abuse examples/vm-load examples/fig11 examples/lock-inversion; do
    [ -x "$target/release/$b" ] || { echo "vm/tests/run.sh: $target/release/$b missing" >&2; exit 2; }
done

# The Debian package, for 15-package.sh (which fails without it).
deb=$(ls "$target"/deb/tix_*_amd64.deb 2>/dev/null | tail -n 1)
debadd=()
[ -n "$deb" ] && debadd=(--add "$deb:/opt/tix/tix.deb")

# boot CPUS PATTERN: one guest with CPUS vCPUs running the matching files.
boot() {
    "$repo/vm/run.sh" --cpus "$1" --timeout 1200 \
        --add "$target/release/scx_tix:/opt/tix/bin/scx_tix" \
        --add "$target/release/scx_tix_user:/opt/tix/bin/scx_tix_user" \
        --add "$target/release/tix:/opt/tix/bin/tix" \
        --add "$target/release/examples/ctl-abuse:/opt/tix/bin/ctl-abuse" \
        --add "$target/release/examples/vm-load:/opt/tix/bin/vm-load" \
        --add "$target/release/examples/fig11:/opt/tix/bin/fig11" \
        --add "$target/release/examples/lock-inversion:/opt/tix/bin/lock-inversion" \
        --add "$here:/usr/share/tix/tests" \
        --add "$repo/crates/tix-sim/scenarios:/usr/share/tix/scenarios" \
        ${debadd[@]+"${debadd[@]}"} ${vmopts[@]+"${vmopts[@]}"} -- \
        "TIX_ONLY='$2' . /usr/share/tix/tests/guest-main.sh"
}
# Every file on 2 vCPUs, in four boots of at most 20 min each (the whole
# suite takes ~40 min under TCG; the 3x files alone ~15); the
# multiprocessor file again on 4 (a fifth boot, as single-threaded TCG
# runs 4 vCPUs at a quarter speed each).
rc=0
if [ "$only" = '[0-9]*.sh' ]; then
    boot 2 '[0-2]*.sh' || rc=$?
    boot 2 '3*.sh' || rc=$?
    boot 2 '[4-6]*.sh' || rc=$?
    boot 2 '[7-9]*.sh' || rc=$?
else
    boot 2 "$only" || rc=$?
fi
# shellcheck disable=SC2254
case 60-smp.sh in
    $only) boot 4 '60-smp.sh' || rc=$? ;;
esac
exit $rc
