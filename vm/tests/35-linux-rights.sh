# Linux's own rights under tix (tix_core::cgroup): nice and cgroup v2
# cpu.weight are currencies, so with no tix settings the shares are the
# default scheduler's. Each case runs under the default scheduler first
# (no sched_ext), then under stride and lottery (one attach each for all
# the cases), in the same boot; the checks compare each with the ideal
# (the kernel's weights), and the diag lines show the default's own figure
# beside it.
#
# Bounds. Stride is deterministic: 2 points of the ideal (its error is about
# a slice, 3.5 ms in 8 s, well under a point), plus 4 sd of the stalls the
# window counted, at most 2 points more (stride_tol in common.sh: a busy
# host's stalls go to whichever hog held the vCPU). Lottery pinned to one CPU:
# about 250 draws a second, so a share p over 8 s has binomial sd
# sqrt(p(1-p)/2000); the bound is max(3 points, 4 sd), as in 20-rates.sh.
# Unpinned on 2 CPUs a lottery share is two such processes added: the same
# bound on each CPU's half is wider than the sum's, so it stands.
#
# The hogs run as alice (nothing else of hers runs); the cgroups live under
# /sys/fs/cgroup/tix-t. Groups are measured by the CPU time of all their
# tasks.

CG=/sys/fs/cgroup
echo +cpu >"$CG/cgroup.subtree_control" 2>/dev/null
mkdir -p "$CG/tix-t"
echo +cpu >"$CG/tix-t/cgroup.subtree_control"
check "the cpu controller is enabled in the test tree" $?

# nhog CPU NICE [CGROUP]: an alice hog at nice NICE pinned to CPU (any: free),
# moved into CGROUP (a path under tix-t) before it runs long.
nhog() {
    if [ "$1" = any ]; then _pin=""; else _pin="taskset $(printf '%x' $((1 << $1)))"; fi
    su -s /bin/sh alice -c "exec $_pin sh -c 'while :; do :; done'" </dev/null >/dev/null 2>&1 &
    _p=$!
    # busybox has renice but no nice; nice is per thread, and the hog has one.
    [ "$2" = 0 ] || renice -n "$2" -p "$_p" >/dev/null
    [ -n "${3:-}" ] && echo "$_p" >"$CG/tix-t/$3/cgroup.procs"
    echo "$_p"
}

# vmproc THREADS CGROUP: a VM-shaped process (THREADS spinning threads).
vmproc() {
    su -s /bin/sh alice -c "exec /opt/tix/bin/vm-load spin $1" </dev/null >/dev/null 2>&1 &
    _p=$!
    echo "$_p" >"$CG/tix-t/$2/cgroup.procs"
    echo "$_p"
}

mkcg() { # PATH WEIGHT
    mkdir -p "$CG/tix-t/$1" && echo "$2" >"$CG/tix-t/$1/cpu.weight"
}

# group_shares SECS "PIDS;PIDS;...": each group's share of the groups' CPU.
group_shares() {
    _secs=$1
    _before=""
    _groups=$(echo "$2" | tr ';' ' ')
    _all=$(echo "$2" | tr ';' ' ' | tr ',' ' ')
    for _p in $_all; do _before="$_before $(cpu_ns "$_p" || echo 0)"; done
    sleep "$_secs"
    _after=""
    for _p in $_all; do _after="$_after $(cpu_ns "$_p" || echo 0)"; done
    echo "$2|$_before|$_after" | awk -F'|' '{
        ng = split($1, g, ";"); split($2, b, " "); split($3, a, " "); k = 0
        for (i = 1; i <= ng; i++) { n = split(g[i], m, ","); t[i] = 0
            for (j = 1; j <= n; j++) { k++; t[i] += a[k] - b[k] } s += t[i] }
        for (i = 1; i <= ng; i++) printf "%s%.4f", (i > 1 ? " " : ""), (s > 0 ? t[i] / s : 0)
        printf "\n" }'
}

# Each case: case_NAME, a setup that sets $GROUPS ("pid,pid;pid"), and its
# ideal shares (add_case). Every case runs under the default scheduler
# first, then under stride, then under lottery, each policy attached once
# for all the cases (an attach costs seconds under TCG).
CASES=""
add_case() { # NAME IDEAL...
    CASES="$CASES $1"
    _n=$1
    shift
    eval "ideal_$_n=\"\$*\""
}

# run_cases SCHED: every case under SCHED (default: no sched_ext; stride or
# lottery: scx_tix, attached by the caller).
run_cases() {
    _sched=$1
    for _name in $CASES; do
        eval "_ideal=\$ideal_$_name"
        "case_$_name"
        sleep 0.5
        draws_during 8 "$(echo "$GROUPS" | tr ';,' '  ')" group_shares 8 "$GROUPS"
        _sh=$OUT
        stop $(echo "$GROUPS" | tr ';,' '  ')
        if [ "$_sched" = default ]; then
            eval "def_$_name=\"\$_sh\""
            diag "$_name: default scheduler shares $_sh (ideal $_ideal)"
            continue
        fi
        eval "_def=\$def_$_name"
        _ok=0
        _i=1
        for _t in $_ideal; do
            _s=$(echo "$_sh" | awk -v i=$_i '{ print $i }')
            if [ "$_sched" = stride ]; then _tol=$(stride_tol "$_t" 8 "$STALL_SQ"); else _tol=$(lottery_tol "$_t" 8 "$DRAWS" "$STALL_SQ"); fi
            near "$_s" "$_t" "$_tol" || _ok=1
            _i=$((_i + 1))
        done
        diag "$_name: $_sched shares $_sh (ideal $_ideal; default $_def$([ "$_sched" = lottery ] && echo "; $DRAWS lotteries"); stalled $STALLED)"
        check "$_name under $_sched: every share within its bound of the ideal" $_ok
    done
}

# nice 0 against nice 10 and nice 5, one CPU: 1024/(1024+110), 1024/(1024+335).
case_nice10() { GROUPS="$(nhog 1 0);$(nhog 1 10)"; }
add_case nice10 0.9030 0.0970
case_nice5() { GROUPS="$(nhog 1 0);$(nhog 1 5)"; }
add_case nice5 0.7535 0.2465

# cpu.weight 100 against 900, one hog in each, one CPU.
mkcg a 100
mkcg b 900
case_weight() { GROUPS="$(nhog 1 0 a);$(nhog 1 0 b)"; }
add_case weight 0.1000 0.9000

# A two-level tree, one CPU: p (100) holds p1 (100) and p2 (300); q (200).
# p gets 1/3, split 1:3 inside: p1 1/12, p2 3/12, q 8/12.
mkcg p 100
echo +cpu >"$CG/tix-t/p/cgroup.subtree_control"
mkcg p/p1 100
mkcg p/p2 300
mkcg q 200
case_tree() { GROUPS="$(nhog 1 0 p/p1);$(nhog 1 0 p/p2);$(nhog 1 0 q)"; }
add_case tree 0.0833 0.2500 0.6667

# Unpinned on 2 CPUs: cpu.weight 100:900 with two hogs in each cgroup. a's
# 0.2 CPU and b's 1.8 CPUs are both feasible (b's hogs take 0.9 CPU each).
case_weightfree() { GROUPS="$(nhog any 0 a),$(nhog any 0 a);$(nhog any 0 b),$(nhog any 0 b)"; }
add_case weightfree 0.1000 0.9000

# Unpinned: two hogs at nice 0, two at nice 5: 2*1024/(2*1024+2*335) each way.
case_nicefree() { GROUPS="$(nhog any 0),$(nhog any 0);$(nhog any 5),$(nhog any 5)"; }
add_case nicefree 0.7535 0.2465

# Samih's VM weights: a 4-thread VM-shaped process in a cgroup of weight 300
# against a single-threaded one in a cgroup of weight 100, unpinned on 2
# CPUs. The VM's threads compete as one funded currency: 3/4 of the
# machine (1.5 CPUs, feasible for 4 threads), the single thread 1/4.
mkcg vm 300
mkcg one 100
case_vm() { GROUPS="$(vmproc 4 vm);$(nhog any 0 one)"; }
add_case vm 0.7500 0.2500

# systemd's user slices: user.slice/user-UID.slice is the user's currency,
# funded by the user's base once one is set (else by its cpu.weight).
# alice's hog in her slice, bob's in his, one CPU: equal at first (weight
# 100 each), then 3:1 once alice's base is 3000 against bob's 1000. Run
# last under each policy: the bases stay set until the scheduler stops.
US=$CG/user.slice
mkdir -p "$US" && echo +cpu >"$US/cgroup.subtree_control" &&
    mkdir -p "$US/user-1001.slice" "$US/user-1002.slice"
user_slices() { # POLICY
    UA=$(nhog 1 0)
    echo "$UA" >"$US/user-1001.slice/cgroup.procs"
    UB=$(su -s /bin/sh bob -c "exec taskset 2 sh -c 'while :; do :; done'" </dev/null >/dev/null 2>&1 & echo $!)
    echo "$UB" >"$US/user-1002.slice/cgroup.procs"
    sleep 0.5
    draws_during 8 "$UA $UB" measure_snap 8 "$UA" "$UB"
    s1=$(echo "$OUT" | awk 'NR == 1 { print $3 }')
    n1=$DRAWS
    q1=$STALL_SQ
    d1=$STALLED
    lsetbase -u alice 3000 >/dev/null && lsetbase -u bob 1000 >/dev/null
    sleep 0.5
    draws_during 8 "$UA $UB" measure_snap 8 "$UA" "$UB"
    s2=$(echo "$OUT" | awk 'NR == 1 { print $3 }')
    if [ "$1" = stride ]; then t1=$(stride_tol 0.5 8 "$q1"); t2=$(stride_tol 0.75 8 "$STALL_SQ"); else t1=$(lottery_tol 0.5 8 "$n1" "$q1"); t2=$(lottery_tol 0.75 8 "$DRAWS" "$STALL_SQ"); fi
    diag "$1 user slices: alice's share $s1 (.5000) with no bases set, $s2 (.7500) with bases 3000 : 1000$([ "$1" = lottery ] && echo " ($n1, $DRAWS lotteries)") (stalled $d1; $STALLED)"
    near "$s1" 0.5 "$t1" && near "$s2" 0.75 "$t2"
    check "$1: a user's slice is funded by the user's base once set" $?
    stop "$UA" "$UB"
}

run_cases default
for pol in stride lottery; do
    if ! tix_start --policy "$pol"; then
        check "$pol attached" 1
        continue
    fi
    run_cases "$pol"
    user_slices "$pol"
    tix_stop
done
sleep 0.3
rmdir "$US/user-1001.slice" "$US/user-1002.slice" "$US" 2>/dev/null

# cgroup_exit: the tree can be removed while attached; the daemon keeps
# running and counts what is left.
tix_start --policy stride
ncg() { tix status | sed -n 's/^cgroups: \([0-9]*\) .*/\1/p'; }
# The status is published by the daemon's loop: wait for its first count.
_i=0
while n1=$(ncg) && [ "${n1:-0}" -lt 10 ] && [ $_i -lt 50 ]; do
    _i=$((_i + 1))
    sleep 0.1
done
for d in p/p1 p/p2 p q a b vm one; do rmdir "$CG/tix-t/$d"; done
# A removed cgroup's css is released after an RCU grace period: poll.
_i=0
while n2=$(ncg) && [ -n "$n1" ] && [ "$n2" != $((n1 - 8)) ] && [ $_i -lt 50 ]; do
    _i=$((_i + 1))
    sleep 0.1
done
diag "cgroups known to tix: $n1 with the test tree, $n2 after removing 8"
[ -n "$n1" ] && [ -n "$n2" ] && [ $((n1 - n2)) -eq 8 ]
check "removed cgroups leave tix's table (8 fewer entries)" $?

# cpu.max is not enforced: tix counts the cgroups that set it and says so.
mkdir -p "$CG/tix-t/capped"
echo "50000 100000" >"$CG/tix-t/capped/cpu.max"
sleep 1.5
q=$(tix status | sed -n 's/^cgroups: [0-9]* (\([0-9]*\) set cpu.max.*/\1/p')
grep -q "does not enforce cpu.max" "$TIX_LOG"
logged=$?
diag "cgroups with cpu.max: $q; daemon log: $(grep 'cpu.max' "$TIX_LOG" | head -1)"
[ "$q" = 1 ] && [ $logged -eq 0 ]
check "a cgroup's cpu.max is counted and logged as not enforced" $?
rmdir "$CG/tix-t/capped"
tix_stop
