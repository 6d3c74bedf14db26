# Stress (the scx CI's check): stress-ng --aggressive with CPU and fork
# workers and affinity pinning for 60 s while attached -> never ejected;
# then a load that grows 10,000-fold beside waiting tasks.
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

# A load that grows under a waiting task (main.bpf.c, aged_serve): three
# hogs in a cgroup of cpu.weight 1 run alone, then six in a cgroup of
# weight 10000 join them. A lo hog waiting at that moment holds a key
# capped against the light load; at the new one its turn came minutes
# later, and the kernel's watchdog ejected scx_tix ("sh[1106] failed to
# run for 12.528s") before the per-task guard. Each lo hog must run in
# each of six 2 s windows. The test shell waits in the heavy cgroup, so
# its own wake-ups keep the windows near 2 s.
CG=/sys/fs/cgroup
echo +cpu >"$CG/cgroup.subtree_control" 2>/dev/null
mkdir -p "$CG/tix-lo" "$CG/tix-hi" && echo 1 >"$CG/tix-lo/cpu.weight" && echo 10000 >"$CG/tix-hi/cpu.weight"
check "growth: cgroups of cpu.weight 1 and 10000" $?
LO=""
for i in 1 2 3; do _p=$(hog any); echo "$_p" >"$CG/tix-lo/cgroup.procs"; LO="$LO $_p"; done
sleep 2
echo $$ >"$CG/tix-hi/cgroup.procs"
HI=""
for i in 1 2 3 4 5 6; do _p=$(hog any); echo "$_p" >"$CG/tix-hi/cgroup.procs"; HI="$HI $_p"; done
# shellcheck disable=SC2086
_b0=$(snap_ns $LO)
_miss=0
for _w in 1 2 3 4 5 6; do
    sleep 2
    # shellcheck disable=SC2086
    _b1=$(snap_ns $LO)
    diag "window $_w: the weight-1 hogs ran $(echo "$_b0 $_b1" | awk '{ printf "%.1f %.1f %.1f ms", ($4 - $1) / 1e6, ($5 - $2) / 1e6, ($6 - $3) / 1e6 }')"
    echo "$_b0 $_b1" | awk '{ exit !($4 > $1 && $5 > $2 && $6 > $3) }' || _miss=$((_miss + 1))
    _b0=$_b1
done
echo $$ >"$CG/cgroup.procs"
[ "$_miss" = 0 ]; check "growth: each weight-1 hog ran in every window beside 10,000x the weight ($_miss missed)" $?
[ "$(sched_state)" = enabled ] && kill -0 "$TIX_DPID"; check "growth: still attached" $?
diag "$(tix status | grep '^decisions:')"
stop $LO $HI
sleep 0.5
rmdir "$CG/tix-lo" "$CG/tix-hi"
tix_stop
grep -q "detached on signal" "$TIX_LOG"; check "stress: clean detach, no ejection" $?
