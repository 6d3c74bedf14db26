#!/usr/bin/env bash
# Host driver of scx_tix's in-guest tests: builds the release binaries, boots
# the sched_ext kernel (vm/run.sh) and runs vm/tests/[0-9]*.sh in guest
# shells; exits non-zero if any boot reported a failure ("N passed, N
# failed" per boot, and a table of every boot at the end).
#
# usage: vm/tests/run.sh [--only PATTERN] [--second-kernel] [--lanes N]
#                        [--boot 'KERNEL CPUS PATTERN']... [vm/run.sh options]
#   --only PATTERN    run only the test files whose name matches (shell glob)
#   --second-kernel   also run the attach and multiprocessor files on the
#                     other sched_ext kernel Debian ships (trixie-backports),
#                     from a cache of its own so the first stays selected
#   --lanes N         guests running at once (default: the host's CPUs, at
#                     most 2); each is one TCG thread, so one host CPU each
#   --boot SPEC       boot exactly this (repeatable, replaces the plan the
#                     options above make): KERNEL main or second, CPUS,
#                     PATTERN, e.g. --boot 'second 4 [16]0-*.sh'
# env: CARGO_TARGET_DIR (default target/), TIX_SKIP_BUILD=1 to reuse binaries already built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=vm/common.sh
. "$repo/vm/common.sh"
only='[0-9]*.sh'
second=0
lanes=$(nproc 2>/dev/null || echo 1)
[ "$lanes" -gt 2 ] && lanes=2
vmopts=()
boots=()
while [ $# -gt 0 ]; do
    case "$1" in
        --only | --lanes | --boot)
            [ $# -ge 2 ] || { echo "vm/tests/run.sh: $1 needs a value" >&2; exit 2; }
            case "$1" in
                --only) only="$2" ;;
                --lanes) lanes="$2" ;;
                *)
                    read -r _k _c _p <<<"$2"
                    case "$_k:$_c:$_p" in
                        main:[1-9]:?* | second:[1-9]:?*) boots+=("$_k $_c $_p") ;;
                        *) echo "vm/tests/run.sh: --boot wants 'main|second CPUS PATTERN', got '$2'" >&2; exit 2 ;;
                    esac
                    ;;
            esac
            shift 2
            ;;
        --second-kernel)
            second=1
            shift
            ;;
        *)
            vmopts+=("$1")
            shift
            ;;
    esac
done
case "$lanes" in '' | *[!0-9]* | 0) echo "vm/tests/run.sh: --lanes must be a positive integer, got '$lanes'" >&2; exit 2 ;; esac
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

# The boots, longest first (the order lanes take them in, so the longest
# does not start last): "KERNEL CPUS PATTERN", KERNEL main or second. Every
# file on 2 vCPUs in four boots of at most 30 min each (the 7x-9x files
# take 15-22 min under TCG in a CI run, the 3x files ~13); the
# multiprocessor files (60-smp, 61-frames) again on 4 (single-threaded
# TCG runs 4 vCPUs at a quarter speed each). sched_ext kernels differ from
# release to release (kfunc names, DSQ semantics), so attach and the multiprocessor checks run
# again on the second kernel, in one boot on 4 vCPUs: its 2-vCPU cases
# (100:100:100:300, 100:100:800, a pinned task beside free ones) run on
# the first kernel only, which saves a boot of ~400 s.
plan=()
if [ ${#boots[@]} -gt 0 ]; then
    plan=("${boots[@]}")
elif [ "$only" = '[0-9]*.sh' ]; then
    plan+=("main 2 [7-9]*.sh" "main 2 [4-6]*.sh" "main 2 3*.sh")
    [ "$second" = 1 ] && plan+=("second 4 [16]0-*.sh")
    plan+=("main 4 6[01]-*.sh")
    plan+=("main 2 [0-2]*.sh")
else
    plan+=("main 2 $only")
    [ "$second" = 1 ] && plan+=("second 2 $only")
    # shellcheck disable=SC2254
    case 60-smp.sh in
        $only)
            plan+=("main 4 60-smp.sh")
            [ "$second" = 1 ] && plan+=("second 4 60-smp.sh")
            ;;
    esac
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tix-vm-tests.XXXXXX")
lane_pids=()
cleanup() {
    for p in ${lane_pids[@]+"${lane_pids[@]}"}; do kill -TERM "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# boot I: run plan[I] in one guest; its console goes to $work/I.log and a
# line "I RC SECONDS" to $work/I.rc.
boot() {
    local kernel cpus pat t0 rc=0
    read -r kernel cpus pat <<<"${plan[$1]}"
    local env=(TIX_VM_CACHE="$TIX_VM_CACHE")
    [ "$kernel" = second ] && env=(TIX_VM_CACHE="$TIX_VM_CACHE/second" TIX_VM_SUITES=trixie-backports)
    t0=$(date +%s)
    env "${env[@]}" "$repo/vm/run.sh" --cpus "$cpus" --timeout 1800 \
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
        "TIX_ONLY='$pat' . /usr/share/tix/tests/guest-main.sh" >"$work/$1.log" 2>&1 || rc=$?
    echo "$1 $rc $(($(date +%s) - t0))" >"$work/$1.rc"
}

# counts I: "PASSED FAILED" from boot I's summary line (0 0 if it has none).
counts() {
    sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\1 \2/p' "$work/$1.log" | tail -n 1 | grep . || echo "0 0"
}

# A lane takes the next boot not yet taken until none is left. The next
# index is kept in a file under a lock, so lanes never take the same boot.
echo 0 >"$work/next"
take() {
    local i
    exec 8>>"$work/next.lock"
    flock 8
    i=$(cat "$work/next")
    echo $((i + 1)) >"$work/next"
    flock -u 8
    exec 8>&-
    echo "$i"
}
lane() {
    local i
    while :; do
        i=$(take)
        [ "$i" -lt "${#plan[@]}" ] || return 0
        echo "tix-vm-tests: lane $1 boots ${plan[$i]}" >&2
        boot "$i"
        read -r _ rc secs <"$work/$i.rc"
        echo "tix-vm-tests: lane $1 done ${plan[$i]}: exit $rc, $(counts "$i" | awk '{ print $1 " passed, " $2 " failed" }'), ${secs} s" >&2
    done
}
t_all=$(date +%s)
[ "$lanes" -gt "${#plan[@]}" ] && lanes=${#plan[@]}
for l in $(seq 1 "$lanes"); do
    lane "$l" &
    lane_pids+=($!)
done
for p in "${lane_pids[@]}"; do wait "$p" || true; done
lane_pids=()

# Every boot's console in plan order, then one table.
rc=0
pass=0
fail=0
for i in "${!plan[@]}"; do
    printf '\n# ==== boot %d: %s\n' "$i" "${plan[$i]}"
    cat "$work/$i.log" 2>/dev/null || true
done
printf '\n# ==== %d boots in %d lanes, %d s in all\n' "${#plan[@]}" "$lanes" $(($(date +%s) - t_all))
for i in "${!plan[@]}"; do
    if [ -f "$work/$i.rc" ]; then read -r _ brc secs <"$work/$i.rc"; else brc=125 secs=0; fi
    read -r p f <<<"$(counts "$i")"
    pass=$((pass + p))
    fail=$((fail + f))
    [ "$brc" = 0 ] || rc=1
    printf '# %-8s %d vCPUs %-14s exit %3s  %3d passed %2d failed  %4d s\n' \
        $(echo "${plan[$i]}" | awk '{ print $1, $2 }') "$(echo "${plan[$i]}" | cut -d' ' -f3-)" "$brc" "$p" "$f" "$secs"
done
echo "# all boots: $pass passed, $fail failed"
exit $rc
