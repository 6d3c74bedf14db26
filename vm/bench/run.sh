#!/usr/bin/env bash
# Scheduler benchmarks in ONE VM boot, printed (never asserted) as ratios
# against the kernel's default scheduler measured in the same boot:
#   - `perf bench sched messaging` and rt-tests' `hackbench -g G -l L*10`
#     total times (mean of --reps runs each; throughput)
#   - wake-up latency of a periodic non-RT task (cyclictest without -p, 1 ms
#     period) beside --hogs unpinned CPU hogs: mean and p99 over the samples
#     of --reps runs, with the measuring thread unpinned (cyclictest_free:
#     without -a this cyclictest pins it to CPU 0) and pinned to CPU 0 (-a 0)
#   - deadlines met by a task that needs 1 ms of CPU every 10 ms (vm-load
#     periodic, which spins without PAUSE: under single-threaded TCG a
#     PAUSE hands the vCPU's turn away and its task is billed the wait)
#     beside the same hogs, unpinned and pinned to CPU 0: the fraction met
#     and the count missed over the periods of --reps runs
#   - the scheduler's own part of a wake-up: from the kernel's
#     sched_waking of cyclictest's thread to its switch-in (perf record -a
#     of one run of secs beside the hogs, the thread on CPU 0 as cyclictest
#     places it without -a). cyclictest's latency
#     also counts the timer interrupt's delivery, which under
#     single-threaded TCG waits for the other vCPU's turn and dominates
#   - the BPF callbacks' cost: run time per call from the kernel's BPF
#     statistics (kernel.bpf_stats_enabled, read with bpftool) over all of
#     the above, and scx_tix's per-task starvation guard on its own (its
#     looks timed by scx_tix, from tix status) per dispatch call
#   - the user-space backend's decision time per dispatch (its own timing,
#     the last stats line it prints)
# for: default, scx_tix --policy lottery, scx_tix --policy stride,
# scx_wvtime (a minimal weighted virtual-time scheduler, the BPF peer), and
# tix-core's GR3 and stride run from user space (scx_tix_user, on
# scx_rustland_core: every decision crosses to user space and back).
# --peer REV adds scx_tix's lottery as built from an earlier commit REV
# (e.g. 01815bb, the last with Zepp's fixed two-level formula before
# currencies and cgroups), as row scx_tix@REV-lottery; --scheds picks the
# rows measured (default: all but the peer, which --peer adds);
# lottery-cut and stride-cut are scx_tix with --wake-cut (deferred
# wake-up cuts), lottery-level and stride-level with --wake-level (a
# woken task level with the runner furthest behind), lottery-rateN and
# stride-rateN (N 1 to 4) with
# --wake-rate N (wake credit earned N own slices per slice slept; by
# default the lottery's is 4, stride's 1), lottery-leadN and stride-leadN
# (N 0 to 4) with --pinned-lead N (own runs a pinned task leads unpinned
# ones by at its CPU's decisions; default 1, 0 keys alone), to weigh those
# options in one boot.
#
# --rounds K repeats the whole cycle (default, then each of --scheds) K
# times in the boot and pools every measurement over the rounds, so that a
# rare event (a missed deadline) is counted often enough to compare, and a
# host that slows during the boot weighs on every row alike. --boots K
# runs the whole benchmark in K boots one after another and, after each
# boot's own tables, pools every boot's samples (vm/bench/pool.sh): a
# lottery's tail moved by 2x between boots, more than any change weighed
# in one. --measure
# picks the measurements (throughput: messaging and hackbench; latency:
# cyclictest; deadlines; wake: the traced wake-up to run); the BPF costs
# come with any of them.
#
# usage: vm/bench/run.sh [--cpus N] [--reps R] [--secs S] [--hogs H] [--groups G]
#                        [--loops L] [--rounds K] [--boots K] [--no-build] [--timeout SECS]
#                        [--scheds "lottery stride lottery-cut stride-cut lottery-rate1 stride-rate2
#                                   lottery-lead0 stride-lead0
#                                   wvtime user-gr3 user-stride"]
#                        [--peer REV]
#                        [--measure "throughput latency deadlines wake"]
#                        [--accel single|multi]
#   defaults: --cpus 2 --reps 3 --secs 10 --hogs <cpus> --groups 2 --loops 50
#   --rounds 1 --boots 1 --measure "throughput latency deadlines wake" --accel single
# TCG timings are slow and noisy: compare only rows of one run.
# --accel: QEMU's TCG with one host thread for all vCPUs (single, the
# default) or one per vCPU (multi). Single emulates the vCPUs in turns, and
# the guest's clock runs on while a vCPU waits for its turn: the task on it
# is charged that time (a 50 us wake-up can be billed a whole 4 ms tick and
# cut at it), which dominates the latency and deadline tails. Multi has
# no such turns (closer to hardware for latency) but needs a host CPU per
# vCPU, and once crashed a guest on a second attach (int3 in
# task_should_scx during fork).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)

cpus=2
reps=3
secs=10
hogs=""
groups=2
loops=50
build=1
timeout_s=""
scheds="lottery stride wvtime user-gr3 user-stride"
measure="throughput latency deadlines wake"
rounds=1
boots=1
peer=""
accel=""
cmdline="vm/bench/run.sh $*"
# words_in OPTION ALLOWED VALUES: every word of VALUES is one of ALLOWED.
words_in() {
    for x in $3; do
        case " $2 " in *" $x "*) ;; *)
            echo "bench: $1: unknown '$x' (one of: $2)" >&2
            exit 2
            ;;
        esac
    done
}
num() {
    case "$2" in '' | *[!0-9]* | 0)
        echo "bench: $1 must be a positive integer, got '$2'" >&2
        exit 2
        ;;
    esac
}
while [ $# -gt 0 ]; do
    case "$1" in
        --cpus | --reps | --secs | --hogs | --groups | --loops | --rounds | --boots | --timeout)
            [ $# -ge 2 ] || { echo "bench: $1 needs a value" >&2; exit 2; }
            num "$1" "$2"
            case "$1" in
                --cpus) cpus=$2 ;;
                --reps) reps=$2 ;;
                --secs) secs=$2 ;;
                --hogs) hogs=$2 ;;
                --groups) groups=$2 ;;
                --loops) loops=$2 ;;
                --rounds) rounds=$2 ;;
                --boots) boots=$2 ;;
                --timeout) timeout_s=$2 ;;
            esac
            shift 2
            ;;
        --no-build)
            build=0
            shift
            ;;
        --accel)
            [ $# -ge 2 ] || { echo "bench: $1 needs a value" >&2; exit 2; }
            case "$2" in single | multi) accel=$2 ;; *)
                echo "bench: --accel must be single or multi, got '$2'" >&2
                exit 2
                ;;
            esac
            shift 2
            ;;
        --measure)
            [ $# -ge 2 ] || { echo "bench: $1 needs a value" >&2; exit 2; }
            [ -n "$2" ] || { echo "bench: --measure needs at least one of: throughput latency deadlines wake" >&2; exit 2; }
            words_in --measure "throughput latency deadlines wake" "$2"
            measure=$2
            shift 2
            ;;
        --scheds | --peer)
            [ $# -ge 2 ] || { echo "bench: $1 needs a value" >&2; exit 2; }
            if [ "$1" = --scheds ]; then
                words_in --scheds "lottery stride lottery-cut stride-cut lottery-level stride-level lottery-rate1 stride-rate1 lottery-rate2 stride-rate2 lottery-rate3 stride-rate3 lottery-rate4 stride-rate4 lottery-lead0 stride-lead0 lottery-lead1 stride-lead1 lottery-lead2 stride-lead2 lottery-lead3 stride-lead3 lottery-lead4 stride-lead4 wvtime user-gr3 user-stride" "$2"
                scheds=$2
            else
                peer=$(git -C "$repo" rev-parse --short=7 --verify -q "$2^{commit}") ||
                    { echo "bench: --peer: '$2' is not a commit of this repository" >&2; exit 2; }
            fi
            shift 2
            ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "bench: unknown argument '$1' (try --help)" >&2
            exit 2
            ;;
    esac
done
hogs=${hogs:-$cpus}
if [ -n "$accel" ]; then
    export TIX_VM_ACCEL=tcg,thread=$accel
else
    export TIX_VM_ACCEL=${TIX_VM_ACCEL:-tcg,thread=single}
fi
# Budget per scheduler and round: an attach (60 s), messaging and hackbench
# (~8 s a run under TCG at the defaults), 2 x reps latency runs, 2 x reps
# deadline runs and a traced run of secs (its perf script takes about as
# long again), each if measured; half as much again for a slow host; plus
# boot.
per=60
case " $measure " in *" throughput "*) per=$((per + reps * groups * loops / 10)) ;; esac
case " $measure " in *" latency "*) per=$((per + 2 * reps * secs)) ;; esac
case " $measure " in *" deadlines "*) per=$((per + 2 * reps * secs)) ;; esac
case " $measure " in *" wake "*) per=$((per + 2 * secs)) ;; esac
nsched=1
for x in $scheds; do nsched=$((nsched + 1)); done
[ -z "$peer" ] || nsched=$((nsched + 1))
timeout_s=${timeout_s:-$((3 * rounds * nsched * per / 2 + 1200))}

target=${CARGO_TARGET_DIR:-$repo/target}
if [ "$build" = 1 ]; then
    echo "bench: building scx_tix, scx_wvtime, scx_tix_user, tix and vm-load (release)" >&2
    (cd "$repo" && cargo build --release -p scx_tix -p scx_tix_user -p tix &&
        cargo build --release -p tix-ctl --example vm-load) >&2 || { echo "bench: build failed" >&2; exit 1; }
fi
for b in scx_tix scx_wvtime scx_tix_user tix examples/vm-load; do
    [ -x "$target/release/$b" ] || { echo "bench: $target/release/$b missing" >&2; exit 1; }
done
# The peer: the commit's own tree (a detached worktree) and build, kept
# under the target folder for the next run.
peeradd=()
if [ -n "$peer" ]; then
    pbin="$target/peer/$peer/release/scx_tix"
    if [ ! -x "$pbin" ]; then
        src="$target/peer/src-$peer"
        [ -d "$src" ] || git -C "$repo" worktree add -f --detach "$src" "$peer" >&2 ||
            { echo "bench: cannot check out $peer" >&2; exit 1; }
        echo "bench: building scx_tix at $peer (release)" >&2
        (cd "$src" && CARGO_TARGET_DIR="$target/peer/$peer" cargo build --release -p scx_tix) >&2 ||
            { echo "bench: the build of $peer failed" >&2; exit 1; }
    fi
    peeradd=(--add "$pbin:/opt/tix/peer/scx_tix_peer")
    scheds="$scheds peer"
fi

read -r -d '' guest <<'GUEST' || true
set -u
. "$TIX_LIB"
log=/tmp/scx_tix-bench.log
# Raw measurements per scheduler label, pooled over every round: one
# folder per label, one file per measurement (run times, latency samples,
# "met all" per deadline run, wake-up delays).
raw=/tmp/bench-raw
daemon=""
hogs=""
# To stderr: a measurement's output is captured by $(...), and a message
# there would be lost with the subshell.
fail() {
    {
        echo "bench: error: $*"
        daemon_report bench "$daemon" "$log"
    } >&2
    [ -n "$daemon" ] && kill -TERM "$daemon" 2>/dev/null
    stop $hogs
    exit 1
}
rm -rf "$raw"
mkdir -p "$raw"
: >/tmp/labels
measures() { case " $B_MEASURE " in *" $1 "*) return 0 ;; esac; return 1; }
start_hogs() {
    hogs=""
    for i in $(seq "$B_HOGS"); do hogs="$hogs $(hog any)"; done
}
stop_hogs() {
    stop $hogs
    hogs=""
}

# Summaries of a raw file (stdin): "mean p99 n" of latency samples; "mean
# p50 p99 n" of wake-up delays; "FRACTION MISSED" of deadline runs; the
# mean of run times.
lat_stats() {
    sort -n | awk '{ v[NR] = $1; s += $1 }
        END { if (NR == 0) exit 1; i = int(0.99 * NR); if (i < 0.99 * NR) i++
              printf "%.1f %d %d", s / NR, v[i], NR }'
}
wake_stats() {
    sort -n | awk '{ v[NR] = $1; s += $1 }
        END { if (NR == 0) exit 1; i = int(0.99 * NR); if (i < 0.99 * NR) i++
              printf "%.0f %.0f %.0f %d", s / NR, v[int((NR + 1) / 2)], v[i], NR }'
}
met_stats() { awk '{ m += $1; n += $2 } END { if (n == 0) exit 1; printf "%.4f %d", m / n, n - m }'; }
mean_stats() { awk '{ s += $1 } END { if (NR == 0) exit 1; printf "%.3f", s / NR }'; }

# cyclictest_free SECS: cyclictest's measuring thread unpinned; its
# samples on stdout. This cyclictest (rt-tests 2.x) pins thread #N to CPU
# #N when no -a is given (the guest shows Cpus_allowed_list 0 for the
# measuring thread, 0-1 for the process), so a run without -a is a run
# pinned to CPU 0. The thread's mask is reset to every CPU once it exists
# and the first second of samples, taken before or about the reset, is
# dropped; a thread still pinned after the reset fails the bench.
cyclictest_free() {
    _all=$(printf '%x' $(((1 << $(nproc)) - 1)))
    cyclictest -q -D "$(($1 + 1))" -i 1000 -t 1 -v >/tmp/cyclictest.raw 2>&1 &
    _cp=$!
    _i=0
    while [ "$(ls /proc/$_cp/task 2>/dev/null | wc -l)" -lt 2 ]; do
        _i=$((_i + 1))
        [ $_i -gt 500 ] && fail "cyclictest's measuring thread did not start"
        usleep 2000
    done
    usleep 20000
    for _t in /proc/$_cp/task/*; do
        taskset -p "$_all" "${_t##*/}" >/dev/null 2>&1 || fail "could not unpin cyclictest thread ${_t##*/}"
    done
    for _t in /proc/$_cp/task/*; do
        _m=$(awk '/^Cpus_allowed_list/ { print $2 }' "$_t/status")
        [ "$_m" = "0-$(($(nproc) - 1))" ] || fail "cyclictest thread ${_t##*/} still pinned ($_m)"
    done
    wait $_cp || fail "cyclictest (unpinned) failed"
    awk 'NF == 3 && $1 ~ /^[0-9]+:$/ && $2 + 0 >= 1000' /tmp/cyclictest.raw
}

# latency LABEL FILE [CYCLICTEST OPTIONS]: cyclictest's wake-up latency
# beside B_HOGS unpinned hogs, B_REPS runs, samples appended to FILE;
# prints this round's "mean p99 samples". No options: the measuring thread
# unpinned (cyclictest_free).
latency() {
    _l=$1
    _f=$2
    shift 2
    : >/tmp/cyclictest.all
    # --reps runs, samples pooled: one run's p99 moved by 1.5x between boots.
    for r in $(seq "$B_REPS"); do
        start_hogs
        # No -p: the measuring thread stays SCHED_OTHER, so sched_ext schedules it.
        if [ $# -eq 0 ]; then
            cyclictest_free "$B_SECS" >/tmp/cyclictest.out
        else
            cyclictest -q -D "$B_SECS" -i 1000 -t 1 -v "$@" >/tmp/cyclictest.out 2>&1 || fail "cyclictest $* failed under $_l"
        fi
        stop_hogs
        awk 'NF == 3 && $1 ~ /^[0-9]+:$/ { print $3 }' /tmp/cyclictest.out >>/tmp/cyclictest.all
    done
    cat /tmp/cyclictest.all >>"$_f"
    lat_stats </tmp/cyclictest.all || fail "no cyclictest samples ($*) under $_l"
}

# deadlines LABEL FILE [taskset MASK]: a task that needs 1 ms of CPU every
# 10 ms beside B_HOGS unpinned hogs, B_REPS runs, each run's "met periods"
# appended to FILE; prints this round's "FRACTION MISSED" (the fraction of
# periods met, the count missed). Pooled because a miss is rare (0-3 in
# 1,000 periods), and one run's count alone cannot tell two schedulers
# apart.
deadlines() {
    _l=$1
    _f=$2
    shift 2
    : >/tmp/deadlines.round
    for r in $(seq "$B_REPS"); do
        start_hogs
        _m=$("$@" vm-load periodic 1000 10000 "$B_SECS" 2>&1) || fail "vm-load periodic failed under $_l: $_m"
        stop_hogs
        # vm-load prints "met M of N".
        _x=$(echo "$_m" | awk '/^met / { print $2, $4 }')
        [ -n "$_x" ] || fail "vm-load periodic printed no 'met' line under $_l: $_m"
        echo "$_x" >>/tmp/deadlines.round
    done
    cat /tmp/deadlines.round >>"$_f"
    met_stats </tmp/deadlines.round
}

# wake_to_run LABEL FILE: the delay (us) from each sched_waking of
# cyclictest's thread to its next switch-in, over one run (thread on CPU 0,
# as cyclictest places it without -a) beside
# B_HOGS unpinned hogs, traced system-wide by perf; appended to FILE;
# prints this round's "mean p50 p99 n".
wake_to_run() {
    start_hogs
    perf record -a -q -o /tmp/wake.data -e sched:sched_waking -e sched:sched_switch -- \
        cyclictest -q -D "$B_SECS" -i 1000 -t 1 >/dev/null 2>&1 || fail "perf record of cyclictest failed under $1"
    stop_hogs
    # Fields: time: event: trace. A waking names its task in comm=; the
    # switch-in names it in next_comm=.
    perf script -i /tmp/wake.data -F time,event,trace 2>/dev/null | awk '
        { t = $1; sub(":", "", t) }
        $2 == "sched:sched_waking:" && $3 == "comm=cyclictest" { w = t; next }
        $2 == "sched:sched_switch:" && w != "" && index($0, "next_comm=cyclictest ") { print (t - w) * 1e6; w = "" }' \
        >/tmp/wake.round
    rm -f /tmp/wake.data
    cat /tmp/wake.round >>"$2"
    wake_stats </tmp/wake.round || fail "no wake-ups of cyclictest traced under $1"
}

# mean_of FILE CMD...: B_REPS runs of CMD, each printing one number,
# appended to FILE; prints this round's mean.
mean_of() {
    _f=$1
    shift
    : >/tmp/runs.round
    for r in $(seq "$B_REPS"); do
        _x=$("$@")
        [ -n "$_x" ] || return 1
        echo "$_x" >>/tmp/runs.round
    done
    cat /tmp/runs.round >>"$_f"
    mean_stats </tmp/runs.round
}
messaging_s() { perf bench sched messaging -g "$B_GROUPS" -l "$B_LOOPS" 2>&1 | awk '/Total time/ { print $3 }'; }
hackbench_s() { hackbench -g "$B_GROUPS" -l "$((B_LOOPS * 10))" 2>&1 | awk '/^Time:/ { print $2 }'; }

# bench LABEL: the measurements of --measure under whatever is attached
# now, this round's figures printed, the raw data kept for the tables.
bench() {
    _d=$raw/$1
    if [ ! -d "$_d" ]; then
        mkdir -p "$_d"
        echo "$1" >>/tmp/labels
    fi
    if measures throughput; then
        m=$(mean_of "$_d/msg" messaging_s) || fail "perf bench sched messaging failed under $1"
        h=$(mean_of "$_d/hack" hackbench_s) || fail "hackbench failed under $1"
        echo "bench: $1 messaging $m s, hackbench $h s"
    fi
    if measures latency; then
        lu=$(latency "$1" "$_d/lu") || exit 1
        lp=$(latency "$1" "$_d/lp" -a 0) || exit 1
        echo "bench: $1 wake-up latency mean/p99/samples: unpinned $lu, pinned to CPU 0 $lp"
    fi
    if measures deadlines; then
        du=$(deadlines "$1" "$_d/du" env) || exit 1
        dp=$(deadlines "$1" "$_d/dp" taskset 1) || exit 1
        echo "bench: $1 deadlines met/missed: unpinned $du, pinned to CPU 0 $dp"
    fi
    if measures wake; then
        wr=$(wake_to_run "$1" "$_d/wr") || exit 1
        echo "bench: $1 wake-up to run (us, mean/p50/p99/wake-ups): $wr"
    fi
}

[ "$(sched_state)" = disabled ] || fail "a sched_ext scheduler is already attached: $(ops_name)"
echo "bench: $(nproc) CPUs, kernel $(uname -r); measuring: $B_MEASURE; $B_ROUNDS round(s)"
echo 1 >/proc/sys/kernel/bpf_stats_enabled || fail "cannot enable kernel.bpf_stats_enabled"
: >/tmp/bpf-costs
: >/tmp/user-costs
: >/tmp/guard-costs
# Rounds interleave the schedulers (default, then each of --scheds, again),
# so a host that slows down during the boot weighs on every row alike.
for round in $(seq "$B_ROUNDS"); do
    echo "bench: round $round of $B_ROUNDS; default scheduler"
    bench default
    for sched in $B_SCHEDS; do
        if [ "$sched" = peer ]; then
            label=scx_tix@$B_PEER-lottery
            # Its own state: the current one's file has fields it predates.
            scx_tix_peer --policy lottery --fresh --state /tmp/peer-state.json >"$log" 2>&1 &
        elif [ "$sched" = wvtime ]; then
            label=scx_wvtime
            scx_wvtime >"$log" 2>&1 &
        elif [ "${sched%-level}" != "$sched" ]; then
            label=scx_tix-$sched
            scx_tix --policy "${sched%-level}" --wake-level >"$log" 2>&1 &
        elif [ "${sched%-cut}" != "$sched" ]; then
            label=scx_tix-$sched
            scx_tix --policy "${sched%-cut}" --wake-cut >"$log" 2>&1 &
        elif [ "${sched%-lead[0-4]}" != "$sched" ]; then
            label=scx_tix-$sched
            scx_tix --policy "${sched%-lead[0-4]}" --pinned-lead "${sched##*-lead}" >"$log" 2>&1 &
        elif [ "${sched%-rate[1-4]}" != "$sched" ]; then
            label=scx_tix-$sched
            scx_tix --policy "${sched%-rate[1-4]}" --wake-rate "${sched##*-rate}" >"$log" 2>&1 &
        elif [ "${sched#user-}" != "$sched" ]; then
            label=scx_tix_user-${sched#user-}
            scx_tix_user --policy "${sched#user-}" --stats 1 >"$log" 2>&1 &
        else
            label=scx_tix-$sched
            scx_tix --policy "$sched" >"$log" 2>&1 &
        fi
        daemon=$!
        wait_attach "$daemon" 300000 || fail "$label did not attach (waited up to 300 s)"
        echo "bench: $label attached ($(ops_name))"
        bench "$label"
        [ "$(sched_state)" = enabled ] || fail "$label was ejected during the benchmark"
        # Per program: "label callback run_time_ns run_cnt" (ops.* programs of
        # this scheduler, still loaded; struct_ops names carry the ops prefix).
        # Each attach loads them afresh: the tables sum over the rounds.
        bpftool prog show 2>/dev/null | awk -v l="$label" '
            { n = ""; t = ""; c = ""
              for (i = 1; i < NF; i++) {
                  if ($i == "name") n = $(i + 1)
                  if ($i == "run_time_ns") t = $(i + 1)
                  if ($i == "run_cnt") c = $(i + 1)
              }
              if (n ~ /^(tix|wvt|rustland)_/ && c != "") { sub(/^(tix|wvt|rustland)_/, "", n); print l, n, t, c } }' >>/tmp/bpf-costs
        grep -q "^$label " /tmp/bpf-costs || fail "no BPF statistics for $label (bpftool prog show)"
        case $sched in
            lottery | stride | peer)
                st=$(tix status 2>&1) && echo "$st" | sed 's/^/bench: tix status: /'
                # The per-task guard's looks and their time this attach
                # ("per-task guard: N looks, US us ..."; a build before the
                # count prints none), against this attach's dispatch line.
                g=$(echo "$st" | awk -v l="$label" '$1 == "per-task" && $2 == "guard:" { print l, $3, $5 }')
                [ -z "$g" ] ||
                    echo "$g $(awk -v l="$label" '$1 == l && $2 == "dispatch" { t = $3; c = $4 } END { printf "%.0f %.0f\n", t, c }' /tmp/bpf-costs)" >>/tmp/guard-costs
                ;;
            user-*)
                # "policy gr3 dispatches N picks N decision N ns/dispatch ...":
                # the backend's own timing of its decisions.
                d=$(grep 'decision' "$log" | tail -n 1 | sed 's/.*decision \([0-9]*\) ns.*/\1/')
                echo "bench: $label: $(grep 'decision' "$log" | tail -n 1)"
                echo "$label ${d:-0}" >>/tmp/user-costs
                ;;
        esac
        kill -TERM "$daemon"
        wait "$daemon" 2>/dev/null
        daemon=""
        wait_state disabled 2000 || fail "sched_ext still $(sched_state) 2 s after SIGTERM"
    done
done

# The main table (messaging, hackbench, latency, deadlines) is the
# host's: vm/bench/pool.sh computes it from the tixraw lines below, for
# one boot as for several. Here the traced wake-ups and the costs.
: >/tmp/wake-res
while read -r l; do
    [ -s "$raw/$l/wr" ] && echo "$l $(wake_stats <"$raw/$l/wr")" >>/tmp/wake-res
done </tmp/labels
if [ -s /tmp/wake-res ]; then
    echo
    echo "| scheduler | wake-up to run: mean (us) | vs default | p50 | vs default | p99 | vs default | wake-ups |"
    echo "|---|---|---|---|---|---|---|---|"
    awk 'NR == 1 { a = $2; b = $3; c = $4 }
         { printf "| %s | %d | %.2f | %d | %.2f | %d | %.2f | %d |\n", $1, $2, $2 / a, $3, $3 / b, $4, $4 / c, $5 }' /tmp/wake-res
fi
echo
# bpf-costs: label callback run_time_ns run_cnt, one line per attach. One
# row per callback: ns per call under each scheduler; the last row is all
# callbacks' time over all their calls.
labels=$(awk '!seen[$1]++ { printf "%s%s", (n++ ? " " : ""), $1 }' /tmp/bpf-costs)
echo "| callback |$(for l in $labels; do printf ' %s ns/call | calls |' "$l"; done)"
echo "|---|$(for l in $labels; do printf '%s' '---|---|'; done)"
awk -v labels="$labels" '{ t[$1 " " $2] += $3; c[$1 " " $2] += $4; cb[$2] = 1; T[$1] += $3; C[$1] += $4 }
     function cell(l, k) { return c[l " " k] > 0 ? sprintf("%.0f | %d", t[l " " k] / c[l " " k], c[l " " k]) : "- | 0" }
     END { n = split(labels, L, " ")
           for (k in cb) { row = "| " k; for (i = 1; i <= n; i++) row = row " | " cell(L[i], k); print row " |" }
           row = "| all callbacks"
           for (i = 1; i <= n; i++) row = row " | " (C[L[i]] > 0 ? sprintf("%.0f | %d", T[L[i]] / C[L[i]], C[L[i]]) : "- | 0")
           print row " |" }' /tmp/bpf-costs | sort
if [ -s /tmp/guard-costs ]; then
    # label looks guard_us dispatch_ns dispatch_calls, one line per attach:
    # the guard's time spread over every dispatch call, and its part of
    # dispatch's run time (it runs inside dispatch).
    echo
    echo "| scheduler | per-task guard: looks | us per look | ns per dispatch call | of dispatch's run time |"
    echo "|---|---|---|---|---|"
    awk '{ n[$1] += $2; u[$1] += $3; t[$1] += $4; c[$1] += $5 }
         END { for (l in n) printf "| %s | %d | %.1f | %.1f | %.2f%% |\n", l, n[l], (n[l] ? u[l] / n[l] : 0),
               (c[l] ? u[l] * 1000 / c[l] : 0), (t[l] ? 100 * u[l] * 1000 / t[l] : 0) }' /tmp/guard-costs | sort
fi
echo
echo "| user-space backend | decision ns per dispatch (its own timing) |"
echo "|---|---|"
awk '{ printf "| %s | %d |\n", $1, $2 }' /tmp/user-costs 2>/dev/null
# The raw measurements, for vm/bench/pool.sh's tables (one boot or
# --boots): a bare line per label (its row, '-' where nothing was
# measured), then a line per label and measurement, run times as they
# are, deadline runs as "met:periods", latency samples as "value:count",
# 400 pairs a line.
while read -r l; do
    echo "tixraw $l"
    for k in msg hack du dp lu lp; do
        f=$raw/$l/$k
        [ -s "$f" ] || continue
        case $k in
            lu | lp) sort -n "$f" | uniq -c | awk -v h="tixraw $l $k" '{ s = s " " $2 ":" $1; if (++n == 400) { print h s; s = ""; n = 0 } } END { if (n) print h s }' ;;
            du | dp) awk -v h="tixraw $l $k" '{ s = s " " $1 ":" $2 } END { print h s }' "$f" ;;
            *) awk -v h="tixraw $l $k" '{ s = s " " $1 } END { print h s }' "$f" ;;
        esac
    done
done </tmp/labels
GUEST

# One boot per --boots, each its own console log; with more than one,
# vm/bench/pool.sh pools their raw measurements after the last.
logs=$(mktemp -d "${TMPDIR:-/tmp}/tix-bench.XXXXXX")
trap 'rm -rf "$logs"' EXIT
export TIX_VM_LOG
rc=0
failed=""
pooled=()
for boot in $(seq "$boots"); do
    TIX_VM_LOG=$logs/boot-$boot.log
    [ "$boots" = 1 ] || echo "bench: boot $boot of $boots" >&2
    set +e
    "$repo/vm/run.sh" --cpus "$cpus" --timeout "$timeout_s" \
        --add "$target/release/scx_tix" --add "$target/release/scx_wvtime" --add "$target/release/tix" \
        --add "$target/release/scx_tix_user" \
        --add "$target/release/examples/vm-load" ${peeradd[@]+"${peeradd[@]}"} -- \
        "B_REPS=$reps B_SECS=$secs B_HOGS=$hogs B_GROUPS=$groups B_LOOPS=$loops B_SCHEDS='$scheds' B_PEER=$peer B_ROUNDS=$rounds B_MEASURE='$measure'
$guest" | grep -av '^tixraw '
    # The raw lines stay in the boot's log for pool.sh, off the screen.
    rc=${PIPESTATUS[0]}
    set -e
    # A boot that fails (under multi-threaded TCG now and then an int3
    # oops where the kernel re-patches its text at a detach) is left out
    # of the pool; the others still count.
    if [ "$rc" != 0 ]; then
        echo "bench: boot $boot of $boots failed (exit $rc)" >&2
        failed="$failed $boot"
        continue
    fi
    pooled+=("$TIX_VM_LOG")
    echo
    [ "$boots" = 1 ] || echo "Boot $boot of $boots."
    echo "Benchmarks, one VM boot ($cpus CPUs, QEMU $TIX_VM_ACCEL), measuring $measure; $rounds round(s) of"
    echo "the default and each scheduler in turn, pooled: perf bench sched messaging -g $groups -l $loops and"
    echo "hackbench -g $groups -l $((loops * 10)) (mean of $reps runs a round each); cyclictest -i 1000 -t 1 (no -p; unpinned and -a 0;"
    echo "$reps runs of ${secs}s a round) and vm-load periodic 1000 10000 (unpinned and taskset 1; $reps runs of ${secs}s a round) beside $hogs unpinned hogs;"
    echo "BPF callbacks' run time per call (kernel.bpf_stats_enabled) over the whole run."
    echo "Command: $cmdline"
    echo
    bash "$repo/vm/bench/pool.sh" --table "$TIX_VM_LOG"
    grep '^|' "$TIX_VM_LOG"
done
if [ "$boots" -gt 1 ] && [ ${#pooled[@]} -gt 0 ]; then
    echo
    echo "Command: $cmdline"
    [ -z "$failed" ] || echo "Left out: boot(s)$failed, which failed."
    bash "$repo/vm/bench/pool.sh" "${pooled[@]}"
fi
[ "$boots" = 1 ] && exit "$rc"
[ -z "$failed" ] || { echo "bench: boot(s)$failed of $boots failed" >&2; exit 1; }
exit 0
