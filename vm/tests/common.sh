# Helpers shared by scx_tix's in-guest tests (busybox ash; sourced).

TIX_LOG=/tmp/scx_tix.log
TIX_DPID=

# tix_start ARGS...: start the daemon, wait until attached and serving.
# Each test file starts from defaults (the state file of an earlier test is
# removed) unless TIX_KEEP_STATE=1, as a restart test needs.
tix_start() {
    _ts0=$(now_ms)
    [ "${TIX_KEEP_STATE:-0}" = 1 ] || rm -f /var/lib/tix/state.json
    : >"$TIX_LOG"
    scx_tix "$@" >>"$TIX_LOG" 2>&1 &
    TIX_DPID=$!
    wait_state enabled 180000 || { diag "scx_tix did not attach:"; tail -5 "$TIX_LOG" | sed 's/^/#   /'; return 1; }
    _i=0
    while ! tix status >/dev/null 2>&1; do
        _i=$((_i + 1))
        [ $_i -gt 200 ] && return 1
        usleep 20000
    done
    # Time to attach and serve, summed per file by guest-main.sh.
    TIX_STARTS=$((${TIX_STARTS:-0} + 1))
    TIX_START_MS=$((${TIX_START_MS:-0} + $(now_ms) - _ts0))
    return 0
}

# tix_stop: SIGTERM the daemon and wait for it; if it had already exited
# (ejected by the kernel), show why.
tix_stop() {
    [ -n "$TIX_DPID" ] || return 0
    if ! kill -0 "$TIX_DPID" 2>/dev/null; then
        diag "scx_tix had exited:"
        grep -v '^ *$' "$TIX_LOG" | head -12 | sed 's/^/#   /'
    fi
    kill -TERM "$TIX_DPID" 2>/dev/null
    wait "$TIX_DPID" 2>/dev/null
    TIX_DPID=
}

tix_stop_quietly() { tix_stop >/dev/null 2>&1 || true; }

# ratio_of OUT: CPU ratio first/second from measure_shares' output.
ratio_of() { echo "$1" | awk 'NR == 1 { a = $2 } NR == 2 { b = $2 } END { printf "%.4f\n", (b > 0 ? a / b : 0) }'; }

# share_of OUT: share of the first pid.
share_of() { echo "$1" | awk 'NR == 1 { print $3 }'; }

# binom_sd P N: one binomial sd of a proportion P over N draws (N < 1
# counts as 1), to 6 decimals. The guest's busybox awk has no math
# library: sqrt by Newton's method.
binom_sd() {
    awk -v p="$1" -v n="$2" 'BEGIN { if (n < 1) n = 1; v = p * (1 - p) / n; s = v + 1
        for (i = 0; i < 60; i++) s = (s + v / s) / 2
        printf "%.6f\n", s }'
}

# lottery_tol P SECS [DRAWS [STALL_SQ]]: max(0.03, 4 sd) of a share P
# measured over SECS of one CPU, the sd of DRAWS lotteries (binomial)
# and of the stalls billed to the hogs: a stretch of e ms the host did
# not run the vCPU goes to the task on it, P of the time to this one,
# and moves its share by e (1 - P) / W or -e P / W (W = SECS of CPU), a
# variance of P (1 - P) e^2 / W^2; summed, P (1 - P) STALL_SQ / W^2
# (STALL_SQ: their squares in ms^2). Many short stretches (TCG's turns)
# add little; one long one (a busy host) adds about its length. DRAWS
# and STALL_SQ come from draws_during. Without DRAWS (the default
# scheduler, tix top not answering): 250*SECS, one lottery per 4 ms
# slice, a ceiling (pinned hogs won 220 a second in a quiet guest). A
# measured DRAWS under 25 a second (a lottery per ten slices) counts as
# 25 a second: a scheduler that draws that seldom is itself at fault,
# and the bound must not widen to excuse it. Why the stalls: a
# clean-clone CI (two guests on two cores) once read a pinned Fig. 3
# share 4.5 binomial sd off. The stalls' variance is capped at the
# draws': the stall count is scx_tix's own, and a fault that let runs
# outlast their slices would be counted as stalls, so it may widen a
# bound by sqrt(2) at most. Measured (491fc87), the stalls' part was
# under a tenth of the draws' in every window (squares up to 4,575 ms^2
# over 10 s against about 2,000 draws), and the failure above needed
# a quarter.
lottery_tol() {
    _n=${3:-$((250 * $2))}
    [ "$_n" -lt $((25 * $2)) ] && _n=$((25 * $2))
    # Both variances are P (1 - P) over a count: binom_sd of their
    # harmonic sum, 1 / (1 / DRAWS + min(STALL_SQ / W^2, 1 / DRAWS)).
    _n=$(awk -v n="$_n" -v q="${4:-0}" -v w="$(($2 * 1000))" 'BEGIN { v = q / (w * w); if (v > 1 / n) v = 1 / n
        printf "%.6f\n", 1 / (1 / n + v) }')
    awk -v s="$(binom_sd "$1" "$_n")" 'BEGIN { s *= 4; if (s < 0.03) s = 0.03; printf "%.4f\n", s }'
}

# stride_tol P SECS [STALL_SQ]: 2 points for a share P over SECS of one
# CPU, plus 4 sd of the stalls billed to the hogs (the same variance as
# lottery_tol's, P (1 - P) STALL_SQ / W^2): stride itself is exact to a
# slice, but a stretch the host did not run the vCPU goes to whichever
# hog held it. A clean-clone CI on a busy host (its Fig. 3 window counted
# 2,207 ms stalled) read a loan's share .6373 of .6667 where a quiet
# guest reads .6660. The stalls' part is capped at 2 points, as
# lottery_tol caps its own: the count is scx_tix's, and a fault that let
# runs outlast their slices must not widen its own bound without limit.
# The stalls' sd is binom_sd's with n = W^2 / STALL_SQ.
stride_tol() {
    _s=0
    [ "${3:-0}" -gt 0 ] && _s=$(binom_sd "$1" "$(awk -v w="$(($2 * 1000))" -v q="$3" 'BEGIN { printf "%.6f\n", w * w / q }')")
    awk -v s="$_s" 'BEGIN { s *= 4; if (s > 0.02) s = 0.02; printf "%.4f\n", 0.02 + s }'
}

# near VALUE TARGET TOL: |VALUE - TARGET| <= TOL (absolute).
near() { awk -v v="$1" -v t="$2" -v e="$3" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(d <= e) }'; }

# snap_ns PID...: CPU time (ns) of each single-threaded PID, read by ONE cat
# so the samples are near-simultaneous (separate reads fork per pid, and
# under TCG the gap between them skews short windows by tens of ms).
snap_ns() {
    _f=""
    for _p in "$@"; do _f="$_f /proc/$_p/schedstat"; done
    cat $_f 2>/dev/null | awk '{ printf "%s ", $1 } END { print "" }'
}

# measure_snap SECS PID...: like lib.sh's measure_shares ("PID NS SHARE").
measure_snap() {
    _secs=$1
    shift
    _b=$(snap_ns "$@")
    sleep "$_secs"
    snap_diff "$*" "$_b" "$(snap_ns "$@")"
}

# measure_fit SECS PID_A PID_B: the two hogs' CPU-time ratio as a rate, for
# stride's 1% checks. Samples both schedstats every 0.1 s for SECS from a
# sampler pinned to CPU 0 (the hogs' CPU 1 sees none of it) and fits A's
# cumulative time against A+B's by least squares; prints "RATIO SHARE
# ENDPOINT_RATIO SAMPLES SHARE_SE", SHARE_SE the fitted share's standard
# error from the fit's residuals.
# Why not two snapshots: a running task's sum_exec_runtime is brought up to
# date only at a tick or a switch, and single-threaded TCG delays vCPU 1's
# ticks while vCPU 0 runs, so either endpoint can be off by a whole late
# slice. At 10:1 the small hog gets ~0.9 s in 10 s and one 7 ms error is
# 0.8% of it; CI saw 9.846 once. Those errors are bounded and do not add up,
# so over ~100 samples they average out of the slope, while a scheduler that
# gives the wrong rate moves the slope exactly as much as the endpoints.
# SHARE_SE: stride's cumulative times sit on the line within a slice (a
# residual of ~2 ms, SE ~1e-4 of a share), so the SE is negligible unless
# something bent the line during the window: a stall of the host (one run
# charged tens of ms of its guest clock) puts a step in it that the fit
# sees as residuals. Checks add 4 SE to their bound, so a window the
# measurement itself shows disturbed gets the room the disturbance took,
# while a wrong rate (a straight line of the wrong slope) gets none.
measure_fit() {
    _n=$(($1 * 10))
    _f=/tmp/tix-fit.$$
    taskset 1 sh -c "i=0; while [ \$i -lt $_n ]; do cat /proc/$2/schedstat /proc/$3/schedstat; usleep 100000; i=\$((i + 1)); done" >"$_f" 2>/dev/null
    awk 'NR % 2 == 1 { a = $1; next }
        { b = $1; n++; x = a + b
          if (n == 1) { a0 = a; b0 = b; x0 = x }
          dx = x - x0; da = a - a0; X[n] = dx; A[n] = da
          sx += dx; sa += da; sxx += dx * dx; sxa += dx * da; al = a; bl = b }
        END {
          if (n < 3) { print "0 0 0 " n " 0"; exit }
          s = (n * sxa - sx * sa) / (n * sxx - sx * sx)
          c = (sa - s * sx) / n
          for (i = 1; i <= n; i++) { r = A[i] - c - s * X[i]; ssr += r * r }
          v = (ssr / (n - 2)) / (sxx - sx * sx / n); se = v + 1e-12
          # busybox awk has no sqrt: Newton steps from above
          if (se < 1) se = 1
          for (i = 0; i < 80; i++) se = (se + v / se) / 2
          e = (bl > b0 ? (al - a0) / (bl - b0) : 0)
          printf "%.4f %.4f %.4f %d %.5f\n", (s < 1 ? s / (1 - s) : 0), s, e, n, se }' "$_f"
    rm -f "$_f"
}

# fit_ok FIT R: the fitted share of measure_fit's output FIT within 1% of
# the smaller of the two ideal shares (R:1 -> r/(r+1), 1/(r+1); "within 1%
# of R:1" for the hog with the least time, the tighter reading) plus 4 of
# the fit's SEs. At 2:1 the bound is .0033 of a share (1.5% of the ratio).
fit_ok() {
    echo "$1" | awk -v r="$2" '{ t = r / (r + 1); m = (t < 1 - t ? t : 1 - t)
        d = $2 - t; if (d < 0) d = -d; exit !($4 >= 3 && d <= 0.01 * m + 4 * $5) }'
}

# as USER CMD: run the shell command CMD as USER with the tools on PATH.
as() {
    _u=$1
    shift
    su -s /bin/sh "$_u" -c "export PATH=$PATH TIX_SOCKET=/run/tix.sock; $*"
}

# wins_sum PID... <TOP: the lotteries these tasks won since they started
# (the WINS column of `tix top` output on stdin).
wins_sum() {
    awk -v l=" $* " '$1 ~ /^[0-9]+$/ && index(l, " " $1 " ") { n += $10 } END { printf "%d\n", n }'
}

# wins_scaled SECS PID... <TOP: wins_sum scaled to a window of SECS that
# began 0.5 s after the tasks: the n of a lottery bound.
wins_scaled() {
    _s=$1
    shift
    wins_sum "$@" | awk -v s="$_s" '{ printf "%d\n", $1 * s / (s + 0.5) }'
}

# draws_during SECS "PID..." CMD...: runs CMD, a SECS-long measurement of
# the PIDs, and sets OUT to its output, DRAWS to the lotteries the PIDs
# won meanwhile (empty if tix top does not answer), STALL_SQ to the
# squares (ms^2) of the stalls scx_tix counted meanwhile (lottery_tol)
# and STALLED to a line saying both. Call it without $(...).
# Two tix top samples bracket CMD; the count is scaled by SECS over the
# bracket's span, so the tix top runs outside the window make it an
# undercount (a wider bound), never an overcount. The stalls are every
# CPU's, so wider than the window's own when both CPUs ran tasks.
draws_during() {
    _dd_s=$1
    _dd_p=$2
    shift 2
    _dd_z0=$(stall_counts)
    _dd_t0=$(awk '{ print $1 }' /proc/uptime)
    _dd_w0=$(tix top --once --interval 0.05 2>/dev/null | wins_sum $_dd_p)
    OUT=$("$@")
    _dd_w1=$(tix top --once --interval 0.05 2>/dev/null | wins_sum $_dd_p)
    _dd_t1=$(awk '{ print $1 }' /proc/uptime)
    DRAWS=$(awk -v a="$_dd_w0" -v b="$_dd_w1" -v s="$_dd_s" -v t0="$_dd_t0" -v t1="$_dd_t1" \
        'BEGIN { if (a == "" || b == "" || b <= a || t1 <= t0) exit; printf "%d\n", (b - a) * s / (t1 - t0) }')
    # tix status publishes its counters each second: wait for this window's.
    sleep 1.1
    _dd_z1=$(stall_counts)
    STALL_SQ=$(echo "$_dd_z0 $_dd_z1" | awk 'NF == 4 { print $4 - $2 }')
    STALLED=$(echo "$_dd_z0 $_dd_z1" | awk 'NF == 4 { printf "%d ms, %d ms^2\n", $3 - $1, $4 - $2 }')
}

# stall_counts: "MS SQ", the run time scx_tix counted as stalled (past a
# slice and a tick: the host did not run the vCPU) since it attached, and
# the sum of the stretches' squares (ms^2); empty if the daemon does not
# answer.
stall_counts() {
    tix status 2>/dev/null | awk '$1 == "stalled:" { print $2, $5 }'
}

# wins_in SECS PID...: wins_scaled from a fresh `tix top` sample.
wins_in() { tix top --once --interval 0.05 2>/dev/null | wins_scaled "$@"; }

# rss_kb PID: resident memory of PID in KiB.
rss_kb() { awk '/^VmRSS:/ { print $2 }' /proc/"$1"/status; }

# child_of PID: one child of PID (busybox here has no pgrep).
child_of() { grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null | head -n 1 | cut -d/ -f3; }

# scx_tix_user (tix-core's policies from user space), for 75-77:
U_LOG=/tmp/scx_tix_user.log
U_PID=

user_start() { # ARGS... (U_BIN=scx_tix starts it through scx_tix's hand-over)
    : >"$U_LOG"
    ${U_BIN:-scx_tix_user} "$@" >>"$U_LOG" 2>&1 &
    U_PID=$!
    wait_attach "$U_PID" 180000 || { diag "scx_tix_user did not attach:"; tail -5 "$U_LOG" | sed 's/^/#   /'; return 1; }
}

# user_stalled_ms: the time scx_tix_user's last counters line says the
# host stalled a run (stalled + forgiven ms, from attach to exit): a vCPU
# the host did not run bills that time to whichever task ran on it.
user_stalled_ms() {
    tail -n 1 "$U_LOG" | awk '{ for (i = 1; i < NF; i++) if ($i == "stalled" || $i == "forgiven") s += $(i + 1) } END { print s + 0 }'
}

user_stop() {
    [ -n "$U_PID" ] || return 0
    kill -TERM "$U_PID" 2>/dev/null
    wait "$U_PID" 2>/dev/null
    _rc=$?
    U_PID=
    wait_state disabled 60000
    return $_rc
}

# stir NAME user|native ARGS...: start scx_tix_user (user) or scx_tix
# (native) with ARGS and stir it: affinities flip under three hogs (a flip
# moves a task off the CPU it was queued on), 400 short processes fork and
# exit, a sleeper wakes every 2 ms, and this script reads the hogs' /proc
# files. Each of these tasks may hold a lock the scheduler's user space
# would wait on (an exec'ing task's, a /proc lookup's) while it waits to
# be scheduled, and a task whose affinity changes while it waits must be
# found by a CPU it may now run on. The scheduler must stay attached (an
# ejection ends its process with exit code 2, and the native daemon logs
# no "detached on signal"), and every hog must run (>= 0.5 s of CPU each).
stir() {
    _n=$1
    _k=$2
    shift 2
    if [ "$_k" = user ]; then
        user_start "$@" || diag "$_n: no attach"
    else
        tix_start "$@" || diag "$_n: no attach"
    fi
    h=""
    for _i in 1 2 3; do
        h="$h $(sh -c 'exec sh -c "while :; do :; done"' </dev/null >/dev/null 2>&1 & echo $!)"
    done
    # shellcheck disable=SC2086 # one pid each
    set -- $h
    (i=0; while [ $i -lt 60 ]; do taskset -p 1 "$1"; usleep 30000; taskset -p 2 "$1"; usleep 30000; taskset -p 3 "$2"; taskset -p 2 "$2"; usleep 20000; i=$((i + 1)); done) >/dev/null 2>&1 &
    flip=$!
    (i=0; while [ $i -lt 400 ]; do sh -c true; i=$((i + 1)); done) >/dev/null 2>&1 &
    forks=$!
    (i=0; while [ $i -lt 2000 ]; do usleep 2000; i=$((i + 1)); done) >/dev/null 2>&1 &
    sleeper=$!
    # shellcheck disable=SC2086 # one pid each
    r0=$(snap_ns $h)
    wait $flip $forks
    kill $sleeper 2>/dev/null
    # shellcheck disable=SC2086 # one pid each
    r1=$(snap_ns $h)
    state=$(cat /sys/kernel/sched_ext/state 2>/dev/null)
    # shellcheck disable=SC2086 # one pid each
    stop $h
    if [ "$_k" = user ]; then
        user_stop
        rc=$?
        _log=$U_LOG
        _more="$(grep -E "probes" "$U_LOG" | tail -n 1 | sed 's/^scx_tix_user: //; s/ | cpu.*//; s/ | policy.*//'); $(grep -E "bounced" "$U_LOG" | tail -n 2 | awk '{ for (i = 1; i < NF; i++) if ($i == "bounced") b = b " " $(i + 1) } END { printf "bounced%s", b }')"
    else
        rc=1
        kill -0 "$TIX_DPID" 2>/dev/null && rc=0
        tix_stop
        grep -q "detached on signal" "$TIX_LOG" || rc=2
        _log=$TIX_LOG
        _more="$(grep -c . "$TIX_LOG") log lines"
    fi
    ran=$(snap_diff "$h" "$r0" "$r1" | awk 'NR == 1 || $2 < m { m = $2 } END { printf "%.2f", m / 1e9 }')
    diag "$_n stirred: state $state, exit $rc, least CPU a hog got $ran s; $_more"
    [ "$state" = enabled ] && [ "$rc" = 0 ] || sed -n "/DEBUG DUMP/,\$p" "$_log" | grep -E "EXIT|^ *R |dsq_id|curr=" | head -n 40 | sed "s/^/#   /"
    [ "$state" = enabled ] && [ "$rc" = 0 ]
    check "$_n stirred: still attached while affinities flip, processes fork and a sleeper wakes; a clean exit" $?
    awk -v r="$ran" 'BEGIN { exit !(r >= 0.5) }'
    check "$_n stirred: every hog kept running (>= 0.5 s of CPU each)" $?
}
