# Scale and table limits (issue 15 item 5): 10,000 tasks and a fork/clone
# storm without ejection or leaked process entries; a table made small with
# --max-tasks fills, says so, and the processes it turns away run at value
# 1 (never more than they would get if counted); once entries free up, new
# processes are counted again.

# tix status publishes the scheduler's counters once a second.
states() { tix status | awk '/^process states:/ { print $3 }'; }
lost_states() { tix status | awk '/^tables full:/ { gsub(",", ""); print $5 }'; }

tix_start
check "scale: attached" $?
seq0=$(cat /sys/kernel/sched_ext/enable_seq 2>/dev/null)
sleep 2
s0=$(states)
[ "${s0:-0}" -gt 0 ]; check "the processes present at attach hold state entries ($s0)" $?
diag "process states at start: $s0"

# 100 processes of 100 threads, each thread waking every 5 s (2,000
# wake-ups a second, what TCG's two emulated CPUs sustain). TCG creates
# threads slowly: poll up to 80 s for all of them (/proc/loadavg's 4th
# field counts the threads alive).
vm-load sleepers 100 100 5000 90 >/tmp/sleepers.out 2>&1 &
SL=$!
t0=$(now_ms)
n=0
while [ $(($(now_ms) - t0)) -lt 80000 ]; do
    sleep 2
    n=$(awk '{ split($4, a, "/"); print a[2] }' /proc/loadavg)
    [ "$n" -ge 10000 ] && break
done
diag "after $(($(now_ms) - t0)) ms:"
diag "tasks alive: $n; $(tix status | grep '^decisions:')"
[ "$n" -ge 10000 ]; check "10,000 tasks alive at once ($n)" $?
s1=$(states)
diag "process states with the sleepers: $s1"
[ "$s1" -ge $((s0 + 100)) ]; check "each sleeper process holds a state entry ($s0 -> $s1)" $?
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
out=$(measure_snap 5 "$T" "$W")
diag "$out"
sw=$(echo "$out" | awk 'NR == 2 { print $3 }')
tol=$(lottery_tol 0.5 5)
near "$sw" 0.5 "$tol"; check "entries freed: a new process is counted again (share $sw, 0.5 +- $tol)" $?
stop "$T" "$W"
tix_stop
