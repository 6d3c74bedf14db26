# Attach and detach: state enabled with our ops name; after SIGTERM and after
# SIGKILL of the daemon, state disabled within 1 s and test processes alive.

h1=$(hog 0)
h2=$(hog 1)
tix_start
check "scx_tix attaches (state enabled)" $?
case "$(ops_name)" in tix*) r=0 ;; *) r=1 ;; esac
diag "ops: $(ops_name)"
check "ops name is tix" $r
grep -q "attached (lottery, .* at 4 per slice slept" "$TIX_LOG"
check "the lottery earns wake credit at its own rate, 4, unless told" $?
# The load's cost: the verifier's walk is most of an attach's time under
# TCG (234,206 instructions took 23-33 s, 56,291 took 4-9 s in an idle
# guest, 13-27 s here beside the two hogs). The budget
# catches a change that multiplies the paths it walks (a static helper
# with many exits carried into its caller) before it slows every attach.
ld=$(grep -o 'loaded in [0-9]* ms, [0-9]* instructions verified' "$TIX_LOG" | tail -n 1)
diag "load: $ld"
vi=$(echo "$ld" | awk '{ print $5 }')
[ -n "$vi" ] && [ "$vi" -gt 0 ] && [ "$vi" -le 100000 ]
check "the verifier walks at most 100,000 instructions over scx_tix's programs (${vi:-none})" $?
on_scx "$h1"; check "a hog is scheduled by sched_ext" $?
tix status >/tmp/status.out 2>&1; r=$?
sed 's/^/#   /' /tmp/status.out
[ $r = 0 ] && grep -q '^stalled: [0-9][0-9]* ms ' /tmp/status.out &&
    grep -q '^per-task guard: [0-9][0-9]* looks, [0-9][0-9]* us ' /tmp/status.out
check "tix status exits 0 while attached and reports the stalled run time and the guard's looks" $?
tix status --openmetrics >/tmp/status.prom 2>&1; r=$?
[ $r = 0 ] && grep -qx 'tix_attached 1' /tmp/status.prom && grep -q '^tix_decisions_total [0-9]' /tmp/status.prom &&
    grep -q '^tix_stalled_seconds_total [0-9]' /tmp/status.prom && grep -q '^tix_guard_scans_total [0-9]' /tmp/status.prom &&
    [ "$(tail -n 1 /tmp/status.prom)" = "# EOF" ]
check "tix status --openmetrics: attached, decisions counted, # EOF" $?
tix status --openmetrics --tasks >/tmp/status-tasks.prom 2>&1; r=$?
[ $r = 0 ] && grep -q "^tix_task_wins_total{pid=\"$h1\"," /tmp/status-tasks.prom &&
    grep -q '^tix_task_cpu_seconds_total{' /tmp/status-tasks.prom && grep -q '^tix_decisions_total ' /tmp/status-tasks.prom &&
    [ "$(tail -n 1 /tmp/status-tasks.prom)" = "# EOF" ]
check "tix status --openmetrics --tasks: per-task and global counters, # EOF" $?
# --monitor watches the running instance without attaching a second one.
timeout 3 scx_tix --monitor 1 >/tmp/monitor.out 2>/tmp/monitor.err
n=$(grep -c '"attached":true' /tmp/monitor.out)
diag "scx_tix --monitor 1 for 3 s: $n status lines; $(head -c 160 /tmp/monitor.out)"
[ "$n" -ge 2 ] && [ "$(sched_state)" = enabled ] && kill -0 "$TIX_DPID"
check "scx_tix --monitor prints the running instance's status each interval" $?
[ -S /var/run/scx/root/stats ]
check "the field's stats socket (scx_stats, /var/run/scx/root/stats) is served" $?

kill -TERM "$TIX_DPID"
wait_state disabled 1000; check "SIGTERM: disabled within 1 s" $?
wait "$TIX_DPID"; r=$?
check "SIGTERM: daemon exits 0 after a clean detach" $r
grep -q "detached on signal" "$TIX_LOG"; check "SIGTERM: daemon says why it detached" $?
TIX_DPID=
kill -0 "$h1" && kill -0 "$h2"; check "SIGTERM: test processes still alive" $?
tix status >/dev/null 2>&1; [ $? != 0 ]; check "tix status exits non-zero when detached" $?
ltix -u root 2>/tmp/err.out; r=$?
diag "$(cat /tmp/err.out)"
[ $r != 0 ] && grep -q "not running" /tmp/err.out; check "tools say the scheduler is not running" $?

# Also with the deferred wake-up cuts (--wake-cut: a per-CPU BPF timer,
# armed when a decision passes over a woken task), loaded on each kernel
# this file boots, beside a waker pinned with a hog so that they fire,
# and the wake credit earned at a rate of the caller's (--wake-rate 3),
# and with the wake level (--wake-level: a DSQ peek and a walk of the
# CPUs' runners in each wake-up's draw).
tix_start --stats 1 --exit-dump-len 65536 --wake-cut --wake-rate 3 --wake-level
check "re-attaches (with --stats 1 --exit-dump-len 65536 --wake-cut --wake-rate 3 --wake-level)" $?
grep -q "at 3 per slice slept, wake level" "$TIX_LOG"; check "--wake-rate 3 --wake-level: the attach line says so" $?
k0=$(tix status 2>/dev/null | sed -n 's/.*wake-up preemptions \([0-9]*\).*/\1/p')
cyclictest -q -D 3 -i 1000 -t 1 -a 0 >/dev/null 2>&1 &
cy=$!
sleep 3
wait "$cy"
n=$(grep -c '^{"attached":true' "$TIX_LOG")
[ "$n" -ge 2 ]; check "scx_tix --stats 1 prints a status line each second ($n in 3 s)" $?
k1=$(tix status 2>/dev/null | sed -n 's/.*wake-up preemptions \([0-9]*\).*/\1/p')
diag "wake-up preemptions (kicks, direct and deferred cuts) over the waker's 3 s: ${k0:-?} -> ${k1:-?}"
[ "$(sched_state)" = enabled ] && [ -n "$k1" ] && [ "$k1" -gt "${k0:-0}" ]
check "--wake-cut --wake-level: still attached after a pinned waker beside a hog, and its wake-ups preempted" $?
kill -KILL "$TIX_DPID"
wait_state disabled 1000; check "SIGKILL: disabled within 1 s" $?
wait "$TIX_DPID" 2>/dev/null
TIX_DPID=
kill -0 "$h1" && kill -0 "$h2"; check "SIGKILL: test processes still alive" $?
stop "$h1" "$h2"
