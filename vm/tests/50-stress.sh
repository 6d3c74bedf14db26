# Stress (the scx CI's check): stress-ng --aggressive with CPU and fork
# workers and affinity pinning for 60 s while attached -> never ejected.
N=$(nproc)
tix_start
check "stress: attached" $?
seq0=$(cat /sys/kernel/sched_ext/enable_seq 2>/dev/null)
stress-ng -t 60 --aggressive -c "$N" -f "$N" --affinity "$N" --affinity-pin >/tmp/stress.out 2>&1
r=$?
diag "stress-ng exit $r: $(tail -1 /tmp/stress.out)"
[ "$(sched_state)" = enabled ] && kill -0 "$TIX_DPID"; check "stress 60 s: still attached" $?
[ "$(cat /sys/kernel/sched_ext/enable_seq 2>/dev/null)" = "$seq0" ]; check "stress: no re-attach happened" $?
tix status | sed 's/^/#   /'
tix_stop
grep -q "detached on signal" "$TIX_LOG"; check "stress: clean detach, no ejection" $?
