# Proportional share on every CPU of the guest, tasks unpinned (issue 15):
# each task's CPU time against the water-filled ideal (each task capped at
# one CPU, the excess of an infeasible weight handed to the rest; tix-core
# waterfill.rs, repeated in awk below). The hogs run as alice with base
# 10000, as in 20-rates.sh, so her runnable ticket sum is exactly theirs.
#
# Bounds, per task's share p of the hogs' summed CPU time over SECS:
#  - stride: 2% of p (the target), plus 0.004 for the endpoints: a running
#    task's time is brought up to date only at a tick, and single-threaded
#    TCG delays the other vCPUs' ticks, so each snapshot can miss up to
#    ~10 ms of a task's time (0.004 of 2 CPUs x 10 s is 80 ms).
#  - lottery: 4 binomial sd of a proportion over n draws, plus the same
#    0.004. n is the number of lotteries the tasks actually won in the
#    window (tix top's WINS), not one per 4 ms slice per CPU: under TCG a
#    vCPU's ticks come late and a run lasts several slices (~16 ms on 4
#    vCPUs), fewer still on a busy host, and each run is one draw. On 4+
#    CPUs the window is 20 s (10 s holds ~2,500 lotteries there).
# A task capped at one CPU (the 800 of 100:100:800 on 2 CPUs, the 400s on
# 4) is held to a lower bound only: it must get at least its CPU. It gets
# more of the hogs' sum than 1/N because the guest's own work (the daemon,
# tix top, this script's sampling; 0.46-0.73 CPU-s of 20 under TCG,
# measured as the 800's excess in eight runs: .5115-.5193) falls on the
# CPUs the capped task leaves, not on its own; that is no error of the
# proportional split. The uncapped tasks are held to the two-sided bound
# on their shares renormalised to the uncapped tasks' ideal sum: what the
# guest's work took from them is taken from all of them alike.
# On 2 CPUs the sets are 100:100:100:300 and 100:100:800; on 4 and more,
# 100,100,200,200,400,400.

# waterfill CPUS W...: each weight's ideal share of the machine (line 1)
# and whether it is capped at one CPU (line 2).
waterfill() {
    _n=$1
    shift
    echo "$*" | awk -v n="$_n" '{
        k = NF; left = n
        for (i = 1; i <= k; i++) { w[i] = $i; cap[i] = 0 }
        do {
            tot = 0; changed = 0
            for (i = 1; i <= k; i++) if (!cap[i]) tot += w[i]
            for (i = 1; i <= k; i++)
                if (!cap[i] && w[i] * left > tot) { cap[i] = 1; left--; changed = 1 }
        } while (changed && left > 0)
        for (i = 1; i <= k; i++)
            printf "%.5f%s", (cap[i] ? 1 : (tot > 0 ? w[i] * left / tot : 0)) / n, (i < k ? " " : "\n")
        for (i = 1; i <= k; i++) printf "%d%s", cap[i], (i < k ? " " : "\n")
    }'
}

# share_tol POLICY P N: the bound of a share P measured over N lotteries.
share_tol() {
    if [ "$1" = stride ]; then
        awk -v p="$2" 'BEGIN { printf "%.4f\n", 0.02 * p + 0.004 }'
    else
        awk -v s="$(binom_sd "$2" "$3")" 'BEGIN { printf "%.4f\n", 4 * s + 0.004 }'
    fi
}

# top_tol P N SPAN_MS: how far tix top's measured share P may sit from
# schedstat's. Both windows last SECS and lie inside the SPAN_MS from
# tix top's start to both ends, so they differ in at most D = 2 (SPAN -
# SECS) s; over those the share fluctuates like a binomial of the N
# lotteries scaled to D (sd sqrt(D / SECS) x binom_sd(P, N)). Bound: 4 of
# those sd plus .008 (display rounding and the runs in progress at either
# end). A fixed .008 failed once on a host that ran the guest 2.7x slower
# (.0102 apart), where tix top starts and answers later.
top_tol() {
    _d=$(awk -v s="$3" -v w="$SECS" 'BEGIN { d = 2 * (s / 1000 - w); printf "%.3f\n", (d > 0.001 ? d : 0.001) }')
    awk -v s="$(binom_sd "$1" "$(awk -v n="$2" -v w="$SECS" -v d="$_d" 'BEGIN { printf "%.0f\n", n * w / d }')")" \
        'BEGIN { printf "%.4f\n", 0.008 + 4 * s }'
}

NCPU=$(nproc)
SECS=10
[ "$NCPU" -ge 4 ] && SECS=20

# smp_run POLICY W...: one unpinned hog per weight, tickets = weight. While
# they run, `tix top` samples the same window: its MEASURED column (CPU
# time the BPF side charged, over interval x CPUs), as a share of the
# hogs' sum, must agree with schedstat's share, and on 4+ CPUs its EXPECTED column must water-fill
# (the 400s at exactly 25.0%: one CPU each; a plain value share would say
# 28.6%). Only the 400s are asserted, against the water-fill of every task
# tix top saw runnable at its sampling instant (its rows with an EXPECTED
# share, by VALUE): alone with the hogs, or beside one root task worth at
# most 1000 of alice's 10000, they are capped at 25.0%; with about 2000
# more runnable at that instant (23.8% in one run of 7cae6f4's tree, which
# asserted 25.0% and did not print the set; a root task and a kernel
# thread, the kernel's own currency, would be that much) the ideal itself
# is below one CPU. The diagnostics print the set.
smp_run() {
    _pol=$1
    shift
    _pids=""
    for _w in "$@"; do
        _p=$(hog any alice)
        lrenice "$_p" "$_w" >/dev/null
        _pids="$_pids $_p"
    done
    sleep 0.5
    _wf=$(waterfill "$NCPU" "$@")
    _ideal=$(echo "$_wf" | sed -n 1p)
    _capped=$(echo "$_wf" | sed -n 2p)
    _t0=$(now_ms)
    tix top --once --interval "$SECS" >/tmp/smp-top 2>&1 &
    _tp=$!
    _out=$(measure_snap "$SECS" $_pids)
    wait "$_tp"
    _span=$(($(now_ms) - _t0))
    _draws=$(wins_scaled "$SECS" $_pids </tmp/smp-top)
    # The values tix top water-filled: every runnable row's VALUE (counted
    # from the right: a COMM may hold a space).
    _rv=$(awk 'NR > 1 && $(NF - 2) ~ /%$/ { printf "%s ", $(NF - 3) }' /tmp/smp-top)
    _rvwf=$(waterfill "$NCPU" $_rv | sed -n 1p)
    # tix top's MEASURED is of interval x CPUs, schedstat's share of the
    # hogs' sum: compare both as shares of the hogs' sum, since a busy host
    # stretches the guest's CPU time past its wall time (the hogs used
    # 82.5 CPU-s of 80 beside another guest) and the two would differ by
    # that stretch alone.
    _tmsum=0
    for _p in $_pids; do
        _tmsum=$(awk -v p="$_p" -v s="$_tmsum" '$1 == p { sub("%", "", $9); s += $9 / 100 } END { print s }' /tmp/smp-top)
    done
    # The uncapped tasks' measured and ideal sums, to renormalise their
    # shares (see the header: what a capped task leaves goes to them).
    _us=$(printf '%s\n%s\n' "$_capped" "$_ideal" | awk -v got="$(echo "$_out" | awk '{ printf "%s ", $3 }')" '
        NR == 1 { n = split($0, c, " ") } NR == 2 { split($0, w, " ") }
        END { split(got, g, " "); for (i = 1; i <= n; i++) if (!c[i]) { gs += g[i]; ws += w[i] }
              printf "%.6f %.6f\n", gs, ws }')
    _ugot=${_us% *}
    _uwant=${_us#* }
    _i=0
    _fail=0
    _line=""
    _top=""
    for _w in "$@"; do
        _i=$((_i + 1))
        _got=$(echo "$_out" | awk -v i="$_i" 'NR == i { print $3 }')
        _pid=$(echo "$_out" | awk -v i="$_i" 'NR == i { print $1 }')
        _want=$(echo "$_ideal" | awk -v i="$_i" '{ print $i }')
        _cap=$(echo "$_capped" | awk -v i="$_i" '{ print $i }')
        _tol=$(share_tol "$_pol" "$_want" "$_draws")
        if [ "$_cap" = 1 ]; then
            awk -v g="$_got" -v w="$_want" -v e="$_tol" 'BEGIN { exit !(g >= w - e) }' || _fail=1
            _line="$_line $_w:$_got/$_want(capped)"
        else
            _norm=$(awk -v g="$_got" -v gs="$_ugot" -v ws="$_uwant" 'BEGIN { printf "%.4f", (gs > 0 ? g * ws / gs : 0) }')
            near "$_norm" "$_want" "$_tol" || _fail=1
            _line="$_line $_w:$_got->$_norm/$_want"
        fi
        # tix top's row: ... VALUE EXPECTED MEASURED WINS
        _te=$(awk -v p="$_pid" '$1 == p { sub("%", "", $8); print $8 / 100 }' /tmp/smp-top)
        _tm=$(awk -v p="$_pid" -v s="$_tmsum" '$1 == p { sub("%", "", $9); printf "%.4f\n", (s > 0 ? $9 / 100 / s : 0) }' /tmp/smp-top)
        _top="$_top $_w:$_te/$_tm"
        near "${_tm:-9}" "$_got" "$(top_tol "$_got" "$_draws" "$_span")" || _topfail=1
        if [ "$NCPU" -ge 4 ] && [ "$_w" = 400 ]; then
            # This hog's share in the water-fill of tix top's runnable set.
            _tv=$(awk -v p="$_pid" '$1 == p { print $7 }' /tmp/smp-top)
            _twant=$(printf '%s\n%s\n' "$_rv" "$_rvwf" | awk -v v="$_tv" '
                NR == 1 { n = split($0, a, " ") } NR == 2 { split($0, b, " ") }
                END { for (i = 1; i <= n; i++) if (a[i] == v) { print b[i]; exit } print 9 }')
            near "${_te:-9}" "$_twant" 0.005 || _topfail=1
            _top="$_top(ideal $_twant)"
        fi
    done
    _tot=$(echo "$_out" | awk '{ s += $2 } END { printf "%.2f", s / 1e9 }')
    diag "$_pol on $NCPU CPUs, tickets:share[->renormalised]/ideal$_line (hogs used ${_tot} CPU-s of $((NCPU * SECS)), $_draws lotteries won)"
    diag "tix top, tickets:expected/measured (of the hogs' sum)$_top; both windows within $_span ms; runnable values at its sample: $_rv"
    stop $_pids
    return $_fail
}

for pol in stride lottery; do
    tix_start --policy "$pol"
    check "smp $pol: attached" $?
    # After the start: a start wipes the saved settings.
    lsetbase -u alice 10000 >/dev/null
    check "smp $pol: alice's base 10000" $?
    if [ "$NCPU" -ge 4 ]; then
        _topfail=0
        smp_run "$pol" 100 100 200 200 400 400
        check "smp $pol: 100,100,200,200,400,400 unpinned on $NCPU CPUs at the ideal" $?
        check "smp $pol: tix top's measured shares agree with schedstat, its expected ones water-fill" $_topfail
    else
        smp_run "$pol" 100 100 100 300
        check "smp $pol: 100:100:100:300 unpinned on $NCPU CPUs at the ideal" $?
        smp_run "$pol" 100 100 800
        check "smp $pol: 100:100:800 unpinned on $NCPU CPUs at the ideal" $?
    fi

    # A task pinned to CPU 0 beside two free ones, equal tickets: 2/3 of a
    # CPU each on 2 CPUs (the pinned one's key is compared with the shared
    # queue's at every decision on CPU 0).
    if [ "$NCPU" -eq 2 ]; then
        P0=$(hog 0 alice)
        F1=$(hog any alice)
        F2=$(hog any alice)
        sleep 0.5
        out=$(measure_snap "$SECS" "$P0" "$F1" "$F2")
        tol=$(share_tol "$pol" 0.3333 "$(wins_in "$SECS" "$P0" "$F1" "$F2")")
        ok=0
        for s in $(echo "$out" | awk '{ print $3 }'); do near "$s" 0.3333 "$tol" || ok=1; done
        diag "$pol: pinned + 2 free, shares $(echo "$out" | awk '{ printf "%s ", $3 }')(ideal 0.3333 each, tol $tol)"
        check "smp $pol: a pinned task keeps its share beside free ones" $ok
        stop "$P0" "$F1" "$F2"
    fi

    # Two hogs allowed CPUs {0,1} beside two free hogs: a CPU each. A task
    # with partial affinity waits in the shared queue and any CPU it may use
    # takes it. (On 2 CPUs, {0,1} is every CPU: checked on 4.)
    if [ "$NCPU" -ge 4 ]; then
        R1=$(su -s /bin/sh alice -c "exec taskset 3 sh -c 'while :; do :; done'" </dev/null >/dev/null 2>&1 & echo $!)
        R2=$(su -s /bin/sh alice -c "exec taskset 3 sh -c 'while :; do :; done'" </dev/null >/dev/null 2>&1 & echo $!)
        sleep 0.5
        b1=$(cpu_ns "$R1"); b2=$(cpu_ns "$R2")
        sleep "$SECS"
        a1=$(cpu_ns "$R1"); a2=$(cpu_ns "$R2")
        c1=$(awk -v a="$a1" -v b="$b1" -v t="$SECS" 'BEGIN { printf "%.3f", (a - b) / 1e9 / t }')
        c2=$(awk -v a="$a2" -v b="$b2" -v t="$SECS" 'BEGIN { printf "%.3f", (a - b) / 1e9 / t }')
        diag "$pol: two hogs allowed {0,1} on $NCPU CPUs: $c1 and $c2 CPU"
        awk -v a="$c1" -v b="$c2" 'BEGIN { exit !(a >= 0.95 && b >= 0.95) }'
        check "smp $pol: hogs allowed {0,1} get a CPU each (>= 0.95)" $?
        stop "$R1" "$R2"
    fi
    tix_stop
done

# Zepp's insulation, unpinned (2 CPUs): alice runs 1 hog, bob 8, equal
# bases; alice's hog (value 1000 against bob's 125 each) is worth a whole
# CPU, half the machine. Lottery: 4 sd of p = 0.5 over the lotteries held
# (at one per 4 ms slice, 250*10*2 draws, 0.028: the issue's +-0.03).
tix_start --policy lottery
check "smp insulation: attached" $?
AL=$(hog any alice)
BOBS=""
for i in 1 2 3 4 5 6 7 8; do BOBS="$BOBS $(hog any bob)"; done
sleep 0.5
out=$(measure_snap "$SECS" "$AL" $BOBS)
sa=$(share_of "$out")
want=$(awk -v n="$NCPU" 'BEGIN { printf "%.4f", 1 / n }')
tol=$(share_tol lottery "$want" "$(wins_in "$SECS" "$AL" $BOBS)")
diag "insulation unpinned on $NCPU CPUs: alice 1 hog $sa of the machine (ideal $want, tol $tol)"
near "$sa" "$want" "$tol"
check "smp insulation: alice's one hog gets one CPU of $NCPU" $?
stop "$AL" $BOBS
tix_stop

# Exit accounting: a process whose leader thread exits first (vm-load
# leader-exit: the leader calls pthread_exit, a second thread spins), then
# the whole process is killed. Its tickets must leave alice's runnable sum:
# her remaining hog against bob's, both on CPU 1, must get half (with the
# tickets leaked it would be worth 500 against 1000: a third).
tix_start --policy lottery
check "exit accounting: attached" $?
LX=$(su -s /bin/sh alice -c "exec taskset 2 /opt/tix/bin/vm-load leader-exit" </dev/null >/dev/null 2>&1 & echo $!)
B=$(hog 1 alice)
O=$(hog 1 bob)
sleep 1
st=$(awk '/^State:/ { print $2 }' /proc/"$LX"/status 2>/dev/null)
thr=""
for t in /proc/"$LX"/task/*; do
    [ "${t##*/}" = "$LX" ] || thr="$thr ${t##*/}:$(awk '/^State:/ { print $2 }' "$t"/status 2>/dev/null)"
done
diag "leader-exit process $LX: leader state $st, other threads$thr"
[ "$st" = Z ] && echo "$thr" | grep -q ':R'; check "the leader exited first, a thread still runs" $?
kill -9 "$LX"
sleep 0.5
draws_during "$SECS" "$B $O" measure_snap "$SECS" "$B" "$O"
sb=$(share_of "$OUT")
t=$(lottery_tol 0.5 "$SECS" "$DRAWS" "$STALL_SQ")
diag "after the leader-first process ended: alice's other hog $sb (target 0.5, tol $t)"
near "$sb" 0.5 "$t"; check "a leader-first exit leaves no tickets in the user's sum" $?
stop "$B" "$O"

# Fork inheritance: a process started by lnice with 300 tickets forks a
# child; the child holds 300 too (before, only the exec'd pid was read).
as alice "lnice -p 300 sh -c 'sh -c \"exec sleep 22\" & exec sleep 21'" </dev/null >/dev/null 2>&1 &
sleep 1
pid_of_cmd() { for _c in /proc/[0-9]*/cmdline; do [ "$(tr '\0' ' ' <"$_c" 2>/dev/null)" = "$1 " ] && { _d=${_c%/cmdline}; echo "${_d#/proc/}"; }; done; }
PAR=$(pid_of_cmd "sleep 21")
CH=$(pid_of_cmd "sleep 22")
tp=$(ltix -p "$PAR" 2>&1)
tc=$(ltix -p "$CH" 2>&1)
diag "lnice -p 300: parent $PAR holds $tp, forked child $CH (parent $(awk '/^PPid:/ { print $2 }' /proc/"$CH"/status)) holds $tc"
[ -n "$PAR" ] && [ -n "$CH" ] && [ "$tp" = 300 ] && [ "$tc" = 300 ]
check "a child forked under lnice -p 300 inherits 300 tickets" $?
stop $PAR $CH
tix_stop
