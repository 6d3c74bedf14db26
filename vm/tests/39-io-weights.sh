# One currency, two resources (seed 001 §6): with --fund-io, a user's base
# funds her user-UID.slice at the block layer (io.bfq.weight = base / 10)
# as it does on the CPU. Two users' readers share one disk under BFQ, then
# their hogs share CPU 1, under the same bases (alice 3000, bob 1000: .75
# of each resource to alice).
#
# The disk is null_blk (the guest has none): requests complete on a timer
# 2 ms after they are issued. BFQ's weights act between sibling cgroups, as
# systemd's user slices are, and only while the device is the bottleneck:
# each reader (dd, O_DIRECT, 4 KiB) has one request out, and between a
# completion and its next request it must be woken and run. With 200 µs
# completions the readers, not the disk, set the pace under TCG: one
# clean-clone run gave .5734 instead of .75 at 7.5 MB/s. So the device is
# slow (2 ms), BFQ idles up to 20 ms for the queue it serves (a reader's
# wake-up under TCG takes a few ms; p99 7.6 ms in vm/bench) and does not
# weight-raise (low_latency 0).
#
# Bounds. BFQ serves a queue a budget at a time; its budget is held to 256
# sectors (32 requests): with the auto-tuned budget (thousands of
# requests) 8 s held only a few dozen turns and an equal-weight run read
# .5732. With 32-request budgets the readers take hundreds of turns, and
# one turn more or less moves the share by under a point: 4 points is
# the bound (the default scheduler's run with equal weights gives the
# device's own evenness beside it). Stride's CPU shares: 2 points, as in
# 35-linux-rights.sh.

CG=/sys/fs/cgroup
IOD=/dev/nullb0

io_setup() {
    for _m in $(cat /lib/modules/tix/order 2>/dev/null); do
        grep -q "^$_m " /proc/modules || insmod "/lib/modules/tix/$_m.ko" || return 1
    done
    grep -q '^null_blk ' /proc/modules || insmod /lib/modules/tix/null_blk.ko nr_devices=1 gb=512 bs=4096 \
        queue_mode=2 irqmode=2 completion_nsec=2000000 hw_queue_depth=32 || return 1
    [ -b "$IOD" ] || return 1
    echo bfq >/sys/block/nullb0/queue/scheduler || return 1
    _t=/sys/block/nullb0/queue/iosched
    echo 20 >"$_t/slice_idle" && echo 0 >"$_t/low_latency" && echo 256 >"$_t/max_budget" || return 1
    chmod 0444 "$IOD"
    echo "+io +cpu" >"$CG/cgroup.subtree_control" || return 1
    mkdir -p "$CG/user.slice"
    echo "+io +cpu" >"$CG/user.slice/cgroup.subtree_control" || return 1
    mkdir -p "$CG/user.slice/user-1001.slice" "$CG/user.slice/user-1002.slice"
}
io_setup
check "null_blk under BFQ, with the io controller in user.slice" $?

# slice_bytes UID: bytes read by the slice's tasks so far.
slice_bytes() {
    sed -n 's/.* rbytes=\([0-9]*\).*/\1/p' "$CG/user.slice/user-$1.slice/io.stat" | awk '{ s += $1 } END { print s + 0 }'
}
# slice_weight UID: the slice's BFQ default weight.
slice_weight() { awk 'NR == 1 { print $NF }' "$CG/user.slice/user-$1.slice/io.bfq.weight"; }

# in_slice USER UID COMMAND: run COMMAND as USER in their slice; prints the pid.
in_slice() {
    su -s /bin/sh "$1" -c "exec $3" </dev/null >/dev/null 2>&1 &
    _p=$!
    echo "$_p" >"$CG/user.slice/user-$2.slice/cgroup.procs"
    echo "$_p"
}

# io_share SECS: alice's share of the two readers' bytes over SECS.
io_share() {
    _ra=$(in_slice alice 1001 "dd if=$IOD of=/dev/null bs=4k iflag=direct")
    _rb=$(in_slice bob 1002 "dd if=$IOD of=/dev/null bs=4k iflag=direct skip=20000000")
    sleep 2
    _a0=$(slice_bytes 1001)
    _b0=$(slice_bytes 1002)
    sleep "$1"
    _a1=$(slice_bytes 1001)
    _b1=$(slice_bytes 1002)
    stop "$_ra" "$_rb"
    awk -v a=$((_a1 - _a0)) -v b=$((_b1 - _b0)) -v s="$1" \
        'BEGIN { printf "%.4f %.1f\n", (a + b > 0 ? a / (a + b) : 0), (a + b) / s / 1e6 }'
}

out=$(io_share 8)
diag "default scheduler, equal weights: alice $(echo "$out" | cut -d' ' -f1) of $(echo "$out" | cut -d' ' -f2) MB/s"
near "$(echo "$out" | cut -d' ' -f1)" 0.5 0.04
check "equal io weights share the disk evenly (no tix)" $?

# bob's delegated subtree, with a folder named after alice's slice: never
# funded (it is bob's, not systemd's).
mkdir -p "$CG/bobtree"
echo "+io" >"$CG/bobtree/cgroup.subtree_control"
chown 1002:1002 "$CG/bobtree" "$CG/bobtree/cgroup.procs" "$CG/bobtree/cgroup.subtree_control"
su -s /bin/sh bob -c "mkdir $CG/bobtree/user-1001.slice"

tix_start --policy stride --fund-io || check "scx_tix --fund-io attached" 1
lsetbase -u alice 3000 >/dev/null && lsetbase -u bob 1000 >/dev/null
check "root sets alice's base to 3000 and bob's to 1000" $?
sleep 1.5
diag "io.bfq.weight: alice $(slice_weight 1001), bob $(slice_weight 1002)"
[ "$(slice_weight 1001)" = 300 ] && [ "$(slice_weight 1002)" = 100 ]
check "the bases fund the slices' io.bfq.weight (300, 100)" $?
[ "$(awk 'NR == 1 { print $NF }' "$CG/bobtree/user-1001.slice/io.bfq.weight")" = 100 ]
check "a folder bob named user-1001.slice is left alone" $?
grep -q 'io: .*user-1001.slice/io.bfq.weight: 300' "$TIX_LOG"
check "the daemon logs what it wrote" $?

out=$(io_share 8)
diag "stride, bases 3000:1000: alice $(echo "$out" | cut -d' ' -f1) of $(echo "$out" | cut -d' ' -f2) MB/s (ideal .75)"
near "$(echo "$out" | cut -d' ' -f1)" 0.75 0.04
check "alice's reader gets .75 of the disk" $?

ha=$(in_slice alice 1001 "taskset 2 sh -c 'while :; do :; done'")
hb=$(in_slice bob 1002 "taskset 2 sh -c 'while :; do :; done'")
sleep 0.5
sh_out=$(measure_shares 8 "$ha" "$hb")
cpu_a=$(echo "$sh_out" | awk 'NR == 1 { print $3 }')
stop "$ha" "$hb"
diag "stride, bases 3000:1000: alice's hog $cpu_a of CPU 1 (ideal .75)"
near "$cpu_a" 0.75 0.02
check "the same bases give alice's hog .75 of the CPU" $?

lsetbase -u alice 5000 >/dev/null
sleep 1.5
[ "$(slice_weight 1001)" = 500 ]
check "a new base reaches the disk within the daemon's second" $?

tix_stop
[ "$(slice_weight 1001)" = 100 ] && [ "$(slice_weight 1002)" = 100 ]
check "the weights before tix come back when scx_tix stops" $?
rmdir "$CG/bobtree/user-1001.slice" "$CG/bobtree" 2>/dev/null
