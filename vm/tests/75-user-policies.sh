# tix-core's own policy objects scheduling real tasks from user space
# (scx_tix_user, scx_rustland_core; issue 17 item 1), and the safety that
# comes with it: a killed or stopped backend is ejected by the kernel.
#
# One CPU (CPU 1 taken offline before attaching; nothing is attached while
# it goes, so no scheduler sees the hotplug): three unpinned hogs at nice
# -5, -3 and 0 carry sched_ext weights 305, 194 and 100 (the kernel's
# 3121, 1991, 1024 scaled to 100 at nice 0, rounded). Slice 4 ms, ending at
# the next 4 ms tick.
#  - deterministic policies: each hog's share of the three within 1% of
#    its weight's share plus 0.005 over an 8 s window: the policies'
#    service error is a few quanta (under .002 of 2,000), and each of the
#    two snapshots can miss ~10 ms of a running hog's time under TCG
#    (measure_fit, common.sh): 20 ms of 8 s is .0025 of a share, doubled
#    for the sum it is divided by.
#  - lottery: 4 binomial sd of the share over the turns the hogs were
#    dealt in the window, plus the same 0.005.
# A host that does not run the vCPU for a while (a busy host under TCG)
# bills the stall to whichever hog ran. The shell repays such debt (its
# header), but a stall late in the window is repaid after it and one just
# before it inside it: either moves a share by at most the stalled time
# over the hogs' time. The shell counts that time (runs more than a
# quantum past their turns, and debt forgiven past its cap) from attach
# to exit, which covers the window; every bound here gets that room,
# which is ~0 on a quiet host. CI once read stride's 100 at .1869 (.1669
# due) on a busy host, before the shell repaid more than 64 ms of a stall.
# GR3's cycles in the trace of turns (the policy's picks, which order the
# queue): every window of 599 consecutive hog turns (one "cycle" of 305 +
# 194 + 100 quanta) holds each hog's weight to within 6 dispatches, where
# lottery's windows spread by tens (26-43 in three runs). GR3 §4's error
# bound for a static set grows with the number of groups, here three (the
# library's simulator table shows at most 3.6 quanta on skewed sets): 4.
# The set is not static: the guest's own short tasks (the shell's sleep
# and cat, daemons) join the policy as clients of weight 100 for a turn or
# two, and one in the 100's group lifts that group above the 194's and
# reorders the group list while it stays; a clean-clone run with the other
# CI guest beside it read 5 (268 such turns among 2,730), quiet runs 2-3.
# 4 + 2 for those joins.
#
# Two CPUs, unpinned: one nice -5 hog (305) and three at nice 0: the big
# one's ideal is a whole CPU (.5 of the machine, water-filled), the others
# .1667 each. The shell's host model gives it its CPU less a quantum per
# cut run of 16 (crates/scx_tix_user/src/policy.rs): asserted at least
# .465 of the machine (16/17 of a CPU, less the snapshots' .005) and at
# most .514, and the three 100s served alike, within 5 points of each
# other (they are dealt equal turns, but a run's length under TCG varies
# by a late tick; the clean-clone run of d85998a saw 3.3 points under
# WF2Q+). It had got .36-.375 until a task's turns that came due while it
# waited joined its next run; measured since: .492-.496.

. /usr/share/tix/tests/common.sh

nice_hog() { # NICE: an unpinned busy loop reniced to NICE (the guest's
    # busybox has renice, not nice); prints its pid
    sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
    renice -n "$1" -p $! >/dev/null
    echo $!
}

# shares_ok OUT TARGETS TOL_ABS: every pid's share within its target +- tol
# (TOL_ABS is the extra absolute allowance, the relative 1% is added here).
shares_ok() {
    echo "$1" | awk -v t="$2" -v e="$3" -v rel="${4:-0.01}" '
        BEGIN { n = split(t, want, " ") }
        { i++; d = $3 - want[i]; if (d < 0) d = -d; if (d > want[i] * rel + e) bad = 1 }
        END { exit (bad || i != n) }'
}

# stall_room OUT: the stalled time the shell's last counters line reports
# (stalled + forgiven ms) over the hogs' time in measure_snap's OUT.
stall_room() {
    _s=$(user_stalled_ms)
    echo "$1" | awk -v s="$_s" '{ t += $2 } END { printf "%.4f\n", (t > 0 ? s * 1e6 / t : 1) }'
}

# --- bad input: one line, non-zero, nothing attached ---
out=$(scx_tix_user --policy nope 2>&1); rc=$?
diag "unknown policy: exit $rc: $out"
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && [ "$(sched_state)" = disabled ]
check "scx_tix_user: an unknown policy is refused in one line, nothing attached" $?
out=$(scx_tix_user --policy sjf 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'simulator-only' && [ "$(sched_state)" = disabled ]
check "scx_tix_user: sjf (needs burst lengths) is refused as simulator-only" $?
out=$(scx_tix --policy wrr 2>&1); rc=$?
diag "scx_tix --policy wrr: exit $rc: $out"
[ $rc -ne 0 ] && echo "$out" | grep -q 'watchdog' && [ "$(sched_state)" = disabled ]
check "scx_tix --policy wrr hands over and is refused (rounds outlast the watchdog)" $?
out=$(scx_tix --policy gr3 --config /etc/tix/tix.toml 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q -- '--config' && [ "$(sched_state)" = disabled ]
check "scx_tix --policy gr3 with a lottery-only option is refused in one line" $?

# --- one CPU ---
echo 0 >/sys/devices/system/cpu/cpu1/online
diag "CPU 1 offline: $(cat /sys/devices/system/cpu/online) online"
W="305 194 100"
TGT=$(echo "$W" | awk '{ s = $1 + $2 + $3; printf "%.4f %.4f %.4f\n", $1 / s, $2 / s, $3 / s }')
for pol in gr3 wf2q eevdf vtrr srr wfq stride lottery; do
    if ! user_start --policy "$pol" --slice-us 4000 --trace /tmp/trace.$pol; then
        check "$pol (user space): attached" 1
        continue
    fi
    A=$(nice_hog -5)
    B=$(nice_hog -3)
    C=$(nice_hog 0)
    sleep 1
    out=$(measure_snap 8 "$A" "$B" "$C")
    vmlck=$(awk '/^VmLck:/ { print $2 }' /proc/"$U_PID"/status)
    stop "$A" "$B" "$C"
    user_stop
    st=$?
    diag "$pol: shares $(echo "$out" | awk '{ printf "%s ", $3 }')(target $TGT); exit $st; locked $vmlck kB"
    diag "$pol: $(tail -n 1 "$U_LOG" | sed 's/^scx_tix_user: //')"
    room=$(stall_room "$out")
    # Weights the policy saw, from the trace (pid weight per dispatch).
    seen=$(awk -v a="$A" -v b="$B" -v c="$C" '$1 == a { wa = $2 } $1 == b { wb = $2 } $1 == c { wc = $2 }
        END { print wa + 0, wb + 0, wc + 0 }' /tmp/trace.$pol)
    [ "$seen" = "$W" ]
    check "$pol: the policy saw the nice weights $W (saw $seen)" $?
    if [ "$pol" = lottery ]; then
        n=$(awk -v a="$A" -v b="$B" -v c="$C" '$1 == a || $1 == b || $1 == c { n++ } END { print n + 0 }' /tmp/trace.$pol)
        n=$((n * 8 / 9))
        tol=$(awk -v s="$(binom_sd 0.5092 "$n")" -v r="$room" 'BEGIN { printf "%.4f\n", 4 * s + 0.005 + r }')
        shares_ok "$out" "$TGT" "$tol" 0
        check "lottery (user space): shares within 4 sd over ~$n draws + 0.005 + stalls $room = $tol" $?
    else
        shares_ok "$out" "$TGT" "$(awk -v r="$room" 'BEGIN { print 0.005 + r }')"
        check "$pol (user space): shares on one CPU within 1% + 0.005 + stalls $room of $TGT" $?
    fi
    if [ "$pol" = gr3 ] || [ "$pol" = lottery ]; then
        spread=$(awk -v a="$A" -v b="$B" -v c="$C" '
            $1 == a { s[++n] = 1 } $1 == b { s[++n] = 2 } $1 == c { s[++n] = 3 }
            END {
                w[1] = 305; w[2] = 194; w[3] = 100; m = 0
                for (i = 1; i <= n; i++) {
                    k[s[i]]++
                    if (i > 599) k[s[i - 599]]--
                    if (i >= 1199) for (j = 1; j <= 3; j++) { d = k[j] - w[j]; if (d < 0) d = -d; if (d > m) m = d }
                }
                print m, n }' /tmp/trace.$pol)
        diag "$pol: largest departure of a 599-turn window from 305/194/100: ${spread% *} (${spread#* } hog turns)"
        if [ "$pol" = gr3 ]; then
            [ "${spread#* }" -ge 1200 ] && [ "${spread% *}" -le 6 ]
            check "gr3 (user space): every 599-turn window of the trace within 6 of 305/194/100" $?
        fi
    fi
done
echo 1 >/sys/devices/system/cpu/cpu1/online
diag "CPU 1 back: $(cat /sys/devices/system/cpu/online) online"

# --- two CPUs, unpinned: an infeasible weight gets (nearly) one CPU ---
for pol in gr3 eevdf wf2q; do
    # GR3 through `scx_tix --policy gr3`, as a user starts it.
    bin=scx_tix_user
    [ "$pol" = gr3 ] && bin=scx_tix
    if ! U_BIN=$bin user_start --policy "$pol" --slice-us 4000; then
        check "$pol (user space, 2 CPUs): attached" 1
        continue
    fi
    A=$(nice_hog -5)
    B=$(nice_hog 0)
    C=$(nice_hog 0)
    D=$(nice_hog 0)
    sleep 1
    ops=$(ops_name)
    out=$(measure_snap 8 "$A" "$B" "$C" "$D")
    stop "$A" "$B" "$C" "$D"
    user_stop
    room=$(stall_room "$out")
    diag "$pol 2 CPUs ($bin, attached as $ops): shares $(echo "$out" | awk '{ printf "%s ", $3 }')(water-filled .5 .1667 .1667 .1667); stalls $room"
    echo "$out" | awk -v r="$room" '
        NR == 1 { a = $3 } NR > 1 { if (lo == "" || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
        END { exit !(a >= 0.465 - r && a <= 0.514 + r && hi - lo <= 0.05 + 2 * r) }'
    check "$pol (user space, 2 CPUs): the 305 gets its CPU (.465-.514 of the machine, + stalls); the 100s alike" $?
done

# --- safety: a dead or stopped backend means ejection, not a hung machine ---
user_start --policy gr3
A=$(hog any)
kill -KILL "$U_PID"
wait "$U_PID" 2>/dev/null
U_PID=
wait_state disabled 60000
ok=$?
b=$(cpu_ns "$A"); sleep 1; a=$(cpu_ns "$A")
diag "SIGKILL: state $(sched_state); the hog ran $(((a - b) / 1000000)) ms in the next second"
[ $ok -eq 0 ] && [ $((a - b)) -gt 300000000 ]
check "a killed backend: the kernel takes every task back, and they run" $?

user_start --policy gr3
t0=$(now_ms)
kill -STOP "$U_PID"
wait_state disabled 120000
ok=$?
t1=$(now_ms)
kill -CONT "$U_PID"
wait "$U_PID" 2>/dev/null
st=$?
U_PID=
b=$(cpu_ns "$A"); sleep 1; a=$(cpu_ns "$A")
stop "$A"
diag "SIGSTOP: ejected after $((t1 - t0)) ms; backend exit $st; the hog then ran $(((a - b) / 1000000)) ms in a second"
[ $ok -eq 0 ] && [ $((a - b)) -gt 300000000 ]
check "a stopped backend: the watchdog ejects it and the machine goes on" $?
