# The simulator beside the kernel (issue 17 item 5): one scenario file,
# /usr/share/tix/scenarios/kernel-gr3.toml (four hogs, tickets 305, 194,
# 100, 100 = nice -5, -3, 0, 0, on 2 CPUs, 8 s), simulated by `tix sim
# kernel` in the same run that replays it as real processes under
# scx_tix_user with the file's policy; the file as shipped (gr3) and with
# its algo set to stride and to lottery.
#
# On one CPU (CPU 1 offline, the file's cpus set to 1) and on two.
# Bounds: GR3 and stride, each client's share of the four within 2 points
# of the simulator's (the issue's target; both sides are deterministic,
# and the snapshots' error under TCG is ~10 ms per running hog of 8-16 s
# of CPU time, .001). Lottery: 4 binomial sd of the simulator's share over
# the 2,000 quanta per CPU of 8 s, plus .005 for the snapshots. GR3 on two
# CPUs held the 305 within .5 points of the simulator once its runs reach
# 2N - 1 keys (crates/scx_tix_user/src/policy.rs, `reach`); at N keys it
# was 5 points short. Each replay is also printed as a "kernel-json" line,
# which scripts/kernel-replays.sh saves for `tix sim report --kernel`.
# Every bound also gets the time the shell counted as stalled by the host
# (user_stalled_ms, as in 75-user-policies.sh) over the hogs' CPU time
# (CPUS x 8 s): a stall is billed to whichever hog ran, and moves a share
# by at most that much; ~0 on a quiet host. A clean-clone run with the
# other CI guest beside read stride's 100 on two CPUs at .1666 (.1432 due).

. /usr/share/tix/tests/common.sh

SCEN=/usr/share/tix/scenarios/kernel-gr3.toml

# --- bad input: one line, non-zero ---
sed 's/^tickets = 305$/tickets = 300/' "$SCEN" >/tmp/bad.toml
out=$(tix sim kernel /tmp/bad.toml 2>&1); rc=$?
diag "tickets 300: exit $rc: $(echo "$out" | cut -c1-100)"
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q 'no nice level'
check "tix sim kernel: tickets that are no nice level's weight are refused in one line" $?
sed 's/^cpus = 2$/cpus = 1/' "$SCEN" >/tmp/bad.toml
out=$(tix sim kernel /tmp/bad.toml 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q 'CPUs online'
check "tix sim kernel: a CPU count other than the machine's is refused in one line" $?

# compare ALGO CPUS: simulate and replay the file with ALGO on CPUS CPUs;
# prints the table; returns 0 when every client is within its bound.
compare() {
    f=/tmp/scen.$1.$2.toml
    sed "s/^algo = \"gr3\"$/algo = \"$1\"/; s/^cpus = 2$/cpus = $2/" "$SCEN" >"$f"
    if ! user_start --policy "$1" --slice-us 4000; then
        diag "$1: scx_tix_user did not attach"
        return 1
    fi
    rm -f /tmp/replay.json
    out=$(tix sim kernel "$f" --json-out /tmp/replay.json 2>&1)
    rc=$?
    user_stop
    echo "$out" | sed 's/^/#   /'
    diag "$1 on $2: $(tail -n 1 "$U_LOG" | sed 's/^scx_tix_user: //')"
    room=$(awk -v s="$(user_stalled_ms)" -v n="$2" 'BEGIN { printf "%.4f", s / (n * 8000) }')
    # For the report's page (scripts/kernel-replays.sh collects these).
    [ -s /tmp/replay.json ] && diag "kernel-json $(cat /tmp/replay.json)"
    if [ "$1" = lottery ]; then
        tol=$(echo "$out" | awk 'NR > 2 { print $4 }' | while read -r p; do
            awk -v s="$(binom_sd "$p" $((2000 * $2)))" -v r="$room" 'BEGIN { printf "%.4f\n", 4 * s + 0.005 + r }'
        done | tr '\n' ' ')
    else
        tol=$(awk -v r="$room" 'BEGIN { t = 0.02 + r; printf "%.4f %.4f %.4f %.4f", t, t, t, t }')
    fi
    diag "$1 on $2: bounds $tol (stall room $room)"
    echo "$out" | awk -v t="$tol" '
        BEGIN { split(t, tol, " ") }
        NR > 2 { i++; d = $6; if (d < 0) d = -d; if (d > tol[i]) bad = 1 }
        END { exit (bad || i != 4) }' || return 1
    [ $rc -eq 0 ] && echo "$out" | head -n 1 | grep -q 'kernel scheduler: tix_user'
}

echo 0 >/sys/devices/system/cpu/cpu1/online
diag "CPU 1 offline: $(cat /sys/devices/system/cpu/online) online"
for algo in gr3 stride lottery; do
    compare "$algo" 1
    check "$algo, one CPU: simulator and kernel shares of one scenario within 2 points (lottery: 4 sd + .005)" $?
done
echo 1 >/sys/devices/system/cpu/cpu1/online
diag "CPU 1 back: $(cat /sys/devices/system/cpu/online) online"
for algo in gr3 stride lottery; do
    compare "$algo" 2
    check "$algo, two CPUs: simulator and kernel shares of one scenario within 2 points (lottery: 4 sd + .005)" $?
done
