# TWRS on the real kernel (scx_tix_user --twrs; Samih Ch. 3, Eq. 3.3;
# issue 17 item 2): a process of four spinning threads against a process of
# one, all at nice 0, scheduled by GR3 from user space.
#
# Thread-fair (no --twrs) the four threads are four clients of weight 100
# beside one: the lone thread's process gets .2 of the CPU. Under TWRS each
# of the four weighs 100 × (5 − 4) and the lone thread 100 × (5 − 1), so
# each process gets .5.
#
# One CPU (CPU 1 offline, as in 75-user-policies.sh). Thread-fair: the
# lone process within .03 of .2 (75's snapshot error and then some).
# TWRS: at least three quarters of the way from .2 to .5 (>= .425) and at
# most .53. Why not .5 +- .03: every task that wakes (the test's own sleep
# and cat, the guest's daemons) is a runnable thread until the shell finds
# it asleep, and while one counts N is 6 and the weights 200 (each of the
# four) against 500, moving the lone process toward 5/13 = .385 for those
# quanta; two runs measured .4703 and .4863, so such episodes covered 12
# and 26% of the window. The assertion is the behaviour: TWRS takes a
# process's advantage from its thread count nearly all away.
# Two CPUs, unpinned: the lone thread's ideal under TWRS is a whole CPU
# (.5 of the machine: its weight 400 of 800 is exactly one CPU's worth,
# the edge where the backend shortchanges an infeasible weight, see
# 75-user-policies.sh); measured .4872 and .4975, then .4161-.4351 while
# the backend's /proc helper waited behind the hogs' turns (sleepers stayed
# counted in N), .4798 and .4945 since it is dispatched at once. Asserted as on one CPU:
# thread-fair at most .25, TWRS .425-.53.

. /usr/share/tix/tests/common.sh

# proc_ns PID...: each process's CPU time (ns, all its threads), read by one
# grep so the processes are sampled together.
proc_ns() {
    _f=""
    for _p in "$@"; do _f="$_f /proc/$_p/task/*/schedstat"; done
    # shellcheck disable=SC2086 # the globs are meant to expand
    grep -H . $_f 2>/dev/null | awk -F'[/:]' -v l="$*" '
        { split($7, v, " "); s[$3] += v[1] }
        END { n = split(l, p, " "); for (i = 1; i <= n; i++) printf "%.0f ", s[p[i]]; print "" }'
}

# lone_share SECS MANY ONE: the share of process ONE in the two's CPU time.
lone_share() {
    _b=$(proc_ns "$2" "$3")
    sleep "$1"
    _a=$(proc_ns "$2" "$3")
    echo "$_b|$_a" | awk -F'|' '{ split($1, b, " "); split($2, a, " ")
        m = a[1] - b[1]; o = a[2] - b[2]; printf "%.4f\n", (m + o > 0 ? o / (m + o) : 0) }'
}

run_pair() { # ARGS...: attach with ARGS, run the pair 8 s, print the lone share
    user_start --policy gr3 --slice-us 4000 "$@" || { echo "0 no-attach"; return; }
    M=$(sh -c 'exec /opt/tix/bin/vm-load spin 4' </dev/null >/dev/null 2>&1 & echo $!)
    O=$(sh -c 'exec /opt/tix/bin/vm-load spin 1' </dev/null >/dev/null 2>&1 & echo $!)
    sleep 1
    _n=$(ls /proc/"$M"/task | wc -l)
    _s=$(lone_share 8 "$M" "$O")
    stop "$M" "$O"
    user_stop
    echo "$_s $_n $(tail -n 1 "$U_LOG" | sed 's/^scx_tix_user: //')"
}

echo 0 >/sys/devices/system/cpu/cpu1/online
diag "CPU 1 offline: $(cat /sys/devices/system/cpu/online) online"
for mode in thread twrs; do
    arg=
    [ "$mode" = twrs ] && arg=--twrs
    r=$(run_pair $arg)
    s=${r%% *}
    diag "one CPU, $mode: lone process $s; $(echo "$r" | cut -d' ' -f2-)"
    threads=$(echo "$r" | cut -d' ' -f2)
    if [ "$mode" = twrs ]; then
        [ "$threads" = 4 ] && awk -v s="$s" 'BEGIN { exit !(s >= 0.425 && s <= 0.53) }'
        check "one CPU, TWRS: 4 threads against 1, the lone process gets .425-.53 (ideal .5)" $?
    else
        [ "$threads" = 4 ] && near "$s" 0.2 0.03
        check "one CPU, thread-fair: 4 threads against 1, the lone process gets .2 (+-.03)" $?
    fi
done
echo 1 >/sys/devices/system/cpu/cpu1/online
diag "CPU 1 back: $(cat /sys/devices/system/cpu/online) online"

r0=$(run_pair)
# As a user starts it: scx_tix --policy gr3 --twrs hands over.
r1=$(U_BIN=scx_tix run_pair --twrs)
s0=${r0%% *}
s1=${r1%% *}
diag "two CPUs: lone process $s0 thread-fair, $s1 under TWRS (ideal .2 and .5)"
awk -v a="$s0" -v b="$s1" 'BEGIN { exit !(a <= 0.25 && b >= 0.425 && b <= 0.53) }'
check "two CPUs: TWRS lifts the lone process from thread-fair (<= .25) to .425-.53 of the machine" $?
