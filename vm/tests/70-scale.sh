# Scale and table limits (issue 15 item 5): 10,000 tasks and a fork/clone
# storm without ejection or leaked process entries; a table made small with
# --max-tasks fills, says so, and the processes it turns away run at value
# 1 (never more than they would get if counted); once entries free up, new
# processes are counted again.

# tix status publishes the scheduler's counters once a second.
states() { tix status | awk '/^process states:/ { print $3 }'; }
lost_states() { tix status | awk '/^tables full:/ { gsub(",", ""); print $5 }'; }

# 1,000 currencies (tix mkcur/fund), restored from the state file as a
# restart would: chains of 8 (c1 <- c2 <- ... <- c8, c9 <- ...), each
# funded with 100 from the one above, the chains' heads from their owner's
# own. c17..c80 are bob's (64, the most an unprivileged owner may make),
# the rest root's.
mkdir -p /var/lib/tix
awk 'BEGIN { printf "{\"currencies\":["
    for (i = 1; i <= 1000; i++)
        printf "%s{\"id\":%d,\"name\":\"c%d\",\"owner\":%d,\"parent\":%d,\"amount\":100}", (i > 1 ? "," : ""), i, i, (i >= 17 && i <= 80 ? 1002 : 0), ((i - 1) % 8 ? i - 1 : 0)
    printf "]}\n" }' >/var/lib/tix/state.json
TIX_KEEP_STATE=1 tix_start
check "scale: attached" $?
ncur=$(tix lscur --json | grep -o '"name"' | wc -l)
diag "currencies restored: $ncur"
[ "$ncur" = 1000 ]; check "1,000 currencies restored from the state file" $?
seq0=$(cat /sys/kernel/sched_ext/enable_seq 2>/dev/null)
sleep 2
# pstart PID: PID's start time (stat field 22; the name before it may hold
# spaces, so counted from the ")" that ends it), empty once PID is gone or
# a zombie (its threads have left the scheduler, and so may its entry).
pstart() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '$1 != "Z" { print $20 }'; }
# procs: "PID:STARTTIME" of every process now, to tell later which of them
# have ended (a pid reused since has another start time).
procs() {
    for _d in /proc/[0-9]*; do
        _st=$(pstart "${_d#/proc/}")
        [ -n "$_st" ] && echo "${_d#/proc/}:$_st"
    done
}
# ended LIST: how many processes of procs' LIST are gone.
ended() {
    _n=0
    for _e in $1; do
        [ "$(pstart "${_e%%:*}")" = "${_e#*:}" ] || _n=$((_n + 1))
    done
    echo "$_n"
}
# To a file: in $(...) the list would hold the subshell, which ends at once.
procs >/tmp/p0.list
p0=$(cat /tmp/p0.list)
s0=$(states)
[ "${s0:-0}" -gt 0 ]; check "the processes present at attach hold state entries ($s0)" $?
diag "process states at start: $s0"

# bob's 100 processes of 100 threads, each thread waking every 10 s, from
# the file sleepers.go to sleepers.stop (at most WAKE_S seconds; it only
# bounds the waking, which lasts as long as the checks beside it).
# - vm-load makes every thread first, parked on a condition variable: a
#   slow host took over 80 s to create them among threads already waking,
#   and the first processes ended before the last began (9,127 alive at
#   once). Parked, 15-36 s here. Creation is polled up to 300 s;
#   /proc/loadavg's 4th field counts the threads alive.
# - 1,000 wake-ups a second, not 2,000: at 2,000 a slow host's guest was
#   overloaded, wake-ups arriving faster than its two emulated CPUs
#   served them. Wakers keyed with their credit below T start without
#   moving T, so a task keyed at T (the daemon, this shell, a client)
#   waited behind the backlog at each of its wake-ups: a tix fund took
#   8.4 s here and 44.8 s in a CI run, past the client's 10 s,
#   and the checks took 711 s (docs/kernel-results.md).
# - The sleepers are bob's, as a user's load would be: root's, they shared
#   root's base with the daemon, this shell and the clients (Zepp's rule).
#   bob's 10^4 threads exceed the kernel's default RLIMIT_NPROC
#   (max_threads / 2, 8,192 at 2 GiB), which su keeps: raised here, as root.
WAKE_S=900
rm -f /tmp/sleepers.go /tmp/sleepers.stop
ulimit -u unlimited
su -s /bin/sh bob -c "exec vm-load sleepers 100 100 10000 $WAKE_S /tmp/sleepers.go /tmp/sleepers.stop" >/tmp/sleepers.out 2>&1 &
SL=$!
t0=$(now_ms)
while [ $(($(now_ms) - t0)) -lt 300000 ] && kill -0 $SL 2>/dev/null; do
    grep -q "threads up" /tmp/sleepers.out && break
    sleep 1
done
n=$(awk '{ split($4, a, "/"); print a[2] }' /proc/loadavg)
diag "$(grep "threads up" /tmp/sleepers.out || echo "sleepers not all up after $(($(now_ms) - t0)) ms")"
diag "tasks alive: $n; $(tix status | grep '^decisions:')"
[ "$n" -ge 10000 ]; check "10,000 tasks alive at once ($n)" $?
s1=$(states)
g1=$(ended "$p0")
n0=$(wc -l </tmp/p0.list)
diag "process states with the sleepers: $s1 ($g1 of the $n0 processes present at the start have ended)"
# Every live process holds an entry (tix_init_task makes one per tgid), so
# the floor is the start's processes still alive plus the 100 sleepers;
# others started since only add. The floor counts processes, not the
# start's entries: those held short-lived ones (the tix client reading
# them, a guest daemon's child) that a run saw end unseen, 67 -> 166.
[ "$s1" -ge $((n0 - g1 + 100)) ]; check "each sleeper process holds a state entry ($n0 - $g1 ended + 100 <= $s1)" $?

# Currencies at this scale: the 100 sleeper processes hold tickets in
# bob's c17..c80 (c17 + i mod 64); two of root's hogs hold theirs in c1 and c9 (heads of chains no sleeper
# uses), so under stride their CPU ratio is c1's funding to c9's, 1:1, and
# 1:3 once c9 is funded with 300 (the change must reach the next draws:
# the 3 s after it are measured, as the rate fitted to 30 samples of both
# hogs by measure_fit: two snapshots read 1.1342 once with a release
# build beside the guest, the hogs' runs made long and late by 10^4
# waking threads). Bounds: 10% of the ratio (stride's 2% per share,
# widened for 10^4 waking threads beside), plus 4 SE of the fit, which
# widens a window a stall bent. Not every stall: with QEMU stopped 250 ms
# every 3 s (vm/host-stall.sh) a fit read .2838 against .3333 +- .047, a
# stop before the window repaid inside it. Then the time per
# change as a client sees it (socket, rules, scheduler table, state file)
# for fund against lrenice, 5 of each, in this boot (20 of each took
# 320 s of a slow run).
tix policy stride >/dev/null
diag "sleepers' parent: $(cat /proc/$SL/comm 2>/dev/null) (uid $(awk '/^Uid:/ { print $2 }' /proc/$SL/status 2>/dev/null))"
i=0
for p in $(grep -l "^PPid:[[:space:]]*$SL\$" /proc/[0-9]*/status 2>/dev/null | cut -d/ -f3); do
    tix mktkt "$p" 50.c$((17 + i % 64)) >/dev/null || diag "mktkt $p 50.c$((17 + i % 64)) refused"
    i=$((i + 1))
done
held=$(tix lstkt | awk '$3 ~ /^c[0-9]+$/' | wc -l)
diag "sleeper processes holding tickets in a currency: $held"
# The waking starts here; the threads' phases spread over 10 s.
touch /tmp/sleepers.go
tgo=$(now_ms)
sleep 10
H1=$(hog 1); H2=$(hog 1)
tix mktkt "$H1" 100.c1 >/dev/null && tix mktkt "$H2" 100.c9 >/dev/null
sleep 0.5
f1=$(measure_fit 3 "$H1" "$H2")
# The measure starts once the daemon holds the fund: a client that gets
# no answer within its 10 s (a slow host) leaves the request to be carried
# out later, and the window would miss it. Polled up to 120 s.
tix fund c9 300 >/dev/null || diag "tix fund c9 300: no answer in time; waiting for the daemon to carry it out"
t0=$(now_ms)
while [ $(($(now_ms) - t0)) -lt 120000 ]; do
    tix lscur --json 2>/dev/null | grep -o '"name":"c9",[^}]*' | grep -q '"amount":300[,}]' && break
    sleep 1
done
f2=$(measure_fit 3 "$H1" "$H2")
r1=${f1%% *}
r2=${f2%% *}
# 4 SE of the fitted ratio s/(1-s) (SE of s over (1-s)^2) join each bound,
# as in fit_ok: a stall of the host steps the line and widens the SE.
e1=$(echo "$f1" | awk '{ printf "%.4f\n", 0.1 + 4 * $5 / ((1 - $2) * (1 - $2)) }')
e2=$(echo "$f2" | awk '{ printf "%.4f\n", 0.0333 + 4 * $5 / ((1 - $2) * (1 - $2)) }')
diag "hogs in c1 and c9 beside 10^4 threads: ratio $r1 (1 +- $e1), after tix fund c9 300 $r2 (.3333 +- $e2); fits: $f1 / $f2"
near "$r1" 1 "$e1" && near "$r2" 0.3333 "$e2"
check "with 1,000 currencies and 10^4 tasks, a fund reaches the shares in the next draws" $?
t0=$(now_ms)
for k in 1 2 3 4 5; do tix fund c9 $((300 + k)) >/dev/null; done
tf=$(($(now_ms) - t0))
t0=$(now_ms)
for k in 1 2 3 4 5; do lrenice "$H1" $((100 + k)) >/dev/null; done
tr=$(($(now_ms) - t0))
diag "time per change seen by a client: fund $((tf / 5)) ms, lrenice $((tr / 5)) ms (5 each; ratio $(awk -v a="$tf" -v b="$tr" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'))"
stop "$H1" "$H2"
tix policy lottery >/dev/null
tin=$(($(now_ms) - tgo))
touch /tmp/sleepers.stop
diag "the sleepers woke for $tin ms, the checks above beside them"
[ "$tin" -lt $((WAKE_S * 1000)) ]; check "the currency checks ran beside the waking threads" $?
wait "$SL"
r=$?
diag "$(tail -1 /tmp/sleepers.out); woke: $(awk '/woke/ { s += $4 } END { print s }' /tmp/sleepers.out) times"
[ "$r" = 0 ]; check "the sleepers ran to the end" $?
[ "$(sched_state)" = enabled ] && kill -0 "$TIX_DPID"; check "10,000 tasks: still attached" $?

vm-load forkstorm 15 >/tmp/forkstorm.out 2>&1
r=$?
diag "$(cat /tmp/forkstorm.out)"
[ "$r" = 0 ]; check "fork/clone storm ran" $?
[ "$(sched_state)" = enabled ] && kill -0 "$TIX_DPID"; check "fork/clone storm: still attached" $?
[ "$(cat /sys/kernel/sched_ext/enable_seq 2>/dev/null)" = "$seq0" ]; check "no re-attach happened" $?
sleep 1
s2=$(states)
diag "process states after: $s2 (start $s0)"
# Daemons of the guest may have started or ended a few processes meanwhile.
[ "$s2" -le $((s0 + 8)) ]; check "no process entry leaked by 10^4 threads and the storm ($s0 -> $s2)" $?
tix_stop
grep -q "detached on signal" "$TIX_LOG"; check "scale: clean detach" $?

# Native scx_tix stirred (stir, common.sh; the same stir as the user-space
# backend's in 79): lottery and stride, one shared DSQ with partial
# affinities flipping under the hogs.
stir "scx_tix lottery" native --policy lottery
stir "scx_tix stride" native --policy stride

# A table of 256 entries.
tix_start --max-tasks 256
check "--max-tasks 256: attached" $?
T=$(hog 0 alice)
sleep 2
diag "$(tix status | grep '^process states:')"
[ "$(lost_states)" = 0 ]; check "before filling, every process is counted (T among them)" $?
i=0
SP=""
while [ $i -lt 300 ]; do
    su -s /bin/sh alice -c 'exec sleep 120' </dev/null >/dev/null 2>&1 &
    SP="$SP $!"
    i=$((i + 1))
done
sleep 3
U=$(hog 0 alice)
sleep 2
diag "$(tix status | grep -E '^(process states|tables full):')"
l=$(lost_states)
[ "${l:-0}" -gt 0 ]; check "a full process table is counted ($l turned away)" $?
grep -q "process state table full (256 entries" "$TIX_LOG"; check "and logged" $?
diag "$(grep 'table full' "$TIX_LOG" | head -2)"
out=$(measure_snap 5 "$T" "$U")
diag "$out"
su=$(echo "$out" | awk 'NR == 2 { print $3 }')
# Value 1 against alice's counted process (value ~ her base): U waits
# about starve_ns (500 ms) between slices, ~1% of the CPU; 0.10 leaves room
# for a busy host.
near "$su" 0 0.10; check "an untracked process runs at value 1 (share $su of CPU 0, counted one $(echo "$out" | awk 'NR == 1 { print $3 }'))" $?
[ "$(sched_state)" = enabled ] && kill -0 "$TIX_DPID"; check "full tables: still attached" $?
# Killed and reaped (a zombie keeps its pid, and its entry, until then).
stop $SP "$U"
wait $SP "$U" 2>/dev/null
sleep 2
diag "after the sleepers: $(tix status | grep -E '^(process states|tables full):' | tr '\n' ' ')"
W=$(hog 0 alice)
sleep 1
draws_during 5 "$T $W" measure_snap 5 "$T" "$W"
out=$OUT
diag "$out ($DRAWS lotteries, stalled $STALLED)"
sw=$(echo "$out" | awk 'NR == 2 { print $3 }')
tol=$(lottery_tol 0.5 5 "$DRAWS" "$STALL_SQ")
near "$sw" 0.5 "$tol"; check "entries freed: a new process is counted again (share $sw, 0.5 +- $tol)" $?
stop "$T" "$W"
tix_stop
