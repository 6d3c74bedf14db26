# Samih Ch. 4 on the real kernel: per-CPU queues (scx_tix_user --balance),
# balanced each 100 ms period by CFS's rule as the thesis models it or by
# his shuttle process (tix_core::shuttle), 2 vCPUs, stride on each CPU.
#
# Fig. 4.1's shape: T1 at nice 0 (weight 100) starts first and is placed
# alone on one CPU; T2-T5 go to the other. The thesis's weights (1024 and
# 4 x 335: nice 5) put the imbalance 3% under CFS's threshold in
# sched_ext's weights (16 against half of 33), where any short task
# passing by tips it; nice 6 (27 each, loads 100 : 108) is the same case
# with room: CFS's imbalance, 4, is far under half a weight (13.5), so it
# never moves anything and T1 keeps a whole CPU while the four share the
# other (.5 and .125 of the five hogs' time; GPS would give T1 .962 of a
# CPU). The shuttle (the lightest of the four, ties to the lowest pid)
# spends every other period beside T1: T1 gets (1 + 100/127)/2 = .894 of
# a CPU (.447 of the five), the shuttle (.25 + 27/127)/2 = .231 (.116),
# the three others (.25 + .333)/2 = .292 (.146).
#
# Bounds. Stride on each CPU is exact to a slice; the guest's own work
# (the backend, the sampling, the shell) runs beside the hogs, and a move
# takes effect at the task's next slice end. T1 under cfs: a CPU of its
# own, at least .5 (1 - 2w)/(1 - w) - .01 of the five (w below; a slow
# host's run read .4679 with w .0702, where a fixed .47 was asserted).
# Under the shuttle T1 is held to .03 under its share with CFS's rule in
# the same boot (GPS-ward, the thesis's direction) and to .447 as the
# guest's own work allows: with w the part of both CPUs' time that went
# to neither hog (the backend, a user-space scheduler, costs more the
# slower the host), T1 gets .447 (1 - 2w)/(1 - w) if all of it ran on
# T1's CPU and .447/(1 - w) if none did; less .027 and plus .018 for a
# move taking up to a 4 ms slice of a 100 ms period and a guest task
# counted as load for a period shifting where the shuttle sits (nine
# runs, quiet and busy hosts, gave T1 .4224-.4504; a slow CI host .3789).
# The three non-shuttles: mean .125 +- .012 under cfs, .146 +- .012 under
# the shuttle. The shuttle itself is not held to .116: it shares T1's CPU
# every other period, and what T1 loses there to moves (the .027 above:
# a slice more where it was, then the front of T1's policy as a new
# client, cores.rs) it gains, plus a quantum ahead at each join on the
# other CPU (4 ms in 200 ms, .01 of the five). With w as for T1 it gets
# .116 (1 - 2w)/(1 - w) - .018 to .116/(1 - w) + .037 (eight runs read
# .128-.160 with w .04-.10; a slow CI host .1629 with w .1039, where a
# fixed .16 was asserted).

# fig41 RULE: T1 then T2..T5 (each niced before the next starts), 8 s;
# prints "T1 T2 T3 T4 T5" shares, "w W" and the backend's last balance
# line.
fig41() {
    user_start --policy stride --slice-us 4000 --balance "$1" --stats 1 || { echo "0 0 0 0 0 no-attach"; return; }
    _p=$(sh -c 'exec sh -c "while :; do :; done"' </dev/null >/dev/null 2>&1 & echo $!)
    sleep 0.3
    for _k in 2 3 4 5; do
        _q=$(sh -c 'renice -n 6 -p $$ >/dev/null; exec sh -c "while :; do :; done"' </dev/null >/dev/null 2>&1 & echo $!)
        _p="$_p $_q"
        sleep 0.3
    done
    sleep 1
    # The five hogs' CPU times and the guest's clock (/proc/uptime) in one
    # read at each end: the shares of the five, then "w W", the part of
    # the two CPUs' time that went to anything else (the backend itself,
    # the sampler, the shell).
    _f="/proc/uptime"
    for _q in $_p; do _f="$_f /proc/$_q/schedstat"; done
    # shellcheck disable=SC2086 # a list of files
    _b=$(cat $_f | awk '{ printf "%s ", $1 }')
    sleep 8
    # shellcheck disable=SC2086
    _s=$(cat $_f | awk -v b="$_b" '{ a[NR] = $1 } END {
        split(b, z, " "); d = (a[1] - z[1]) * 1e9
        for (i = 2; i <= NR; i++) { h[i] = a[i] - z[i]; s += h[i] }
        for (i = 2; i <= NR; i++) printf "%.4f ", (s > 0 ? h[i] / s : 0)
        printf "w %.4f ", (d > 0 ? 1 - s / (2 * d) : 0) }')
    # shellcheck disable=SC2086
    stop $_p
    _l=$(grep "balance" "$U_LOG" | tail -n 1 | sed "s/^scx_tix_user: //; s/ | .*//")
    user_stop
    # Each CPU's decision cost and the dispatches the kernel bounced to
    # another CPU than ours (affinity, migrate_disable()), from the last
    # stats lines.
    _d=$(grep -E "\| cpu [0-9]+: " "$U_LOG" | tail -n 2 | awk '{ for (i = 1; i < NF; i++) { if ($i == "decision") d = d " " $(i + 1); if ($i == "bounced") b = b " " $(i + 1) } } END { printf "decision-ns%s bounced%s", d, b }')
    echo "$_s$_l $_d"
}

# wband R SHARE LESS MORE: "lo hi" for a share SHARE of the five with the
# guest's own part w (field 7 of fig41's line R) all on the task's CPU,
# SHARE (1 - 2w)/(1 - w) - LESS, or none of it, SHARE/(1 - w) + MORE.
wband() {
    echo "$1" | awk -v s="$2" -v l="$3" -v m="$4" '{ w = $7; printf "%.4f %.4f", s * (1 - 2 * w) / (1 - w) - l, s / (1 - w) + m }'
}

r=$(fig41 cfs)
t1_cfs=$(echo "$r" | cut -d' ' -f1)
diag "cfs: shares T1..T5 $(echo "$r" | cut -d' ' -f1-5) (under CFS .5 .125 .125 .125 .125); $(echo "$r" | cut -d' ' -f6-)"
# T1 alone on its CPU: .5 of the five with no guest work, .5 (1 - 2w)/(1 - w)
# with all of it on T1's CPU (w as under the shuttle below), less .01.
lo=$(wband "$r" 0.5 0.01 0)
lo=${lo% *}
echo "$r" | awk -v lo="$lo" '{ m = ($2 + $3 + $4 + $5) / 4; exit !($1 >= lo && m >= 0.113 && m <= 0.137) }'
check "cfs: the imbalance is under half a weight, T1 keeps a CPU (>= $lo with the guest's own part w), the four share the other" $?
# Which tasks CFS's rule moves depends on the guest's own passing work
# (a sampler counted for two periods moves a hog); that it never shuttles
# does not.
echo "$r" | grep -Eq 'shuttle-moves 0 shuttle - '
check "cfs: no shuttle (CFS's rule alone)" $?

r=$(fig41 shuttle)
diag "shuttle: shares T1..T5 $(echo "$r" | cut -d' ' -f1-5) (ideal .447, shuttle .116, others .146); $(echo "$r" | cut -d' ' -f6-)"
# The shuttle is the lowest-pid light task: T2.
b=$(wband "$r" 0.447 0.027 0.018)
bs=$(wband "$r" 0.116 0.018 0.037)
echo "$r" | awk -v c="$t1_cfs" -v lo="${b% *}" -v hi="${b#* }" -v slo="${bs% *}" -v shi="${bs#* }" '{ m = ($3 + $4 + $5) / 3; exit !($1 >= lo && $1 <= hi && $1 <= c - 0.03 && m >= 0.134 && m <= 0.158 && $2 >= slo && $2 <= shi) }'
check "shuttle: T1 $b (.447 with the guest's own part w of the CPUs on T1's CPU or on the other) and .03 under its share with CFS's rule (GPS-ward), the shuttle $bs, the three others .146 +- .012" $?
echo "$r" | awk '{ for (i = 1; i < NF; i++) if ($i == "shuttle-moves") exit !($(i + 1) >= 40); exit 1 }'
check "shuttle: the shuttle moved every period (>= 40 moves in ~10 s)" $?

# Stirred (stir, common.sh), shared queue and per-CPU queues, 20 ms
# periods so the balancer moves tasks meanwhile. Before the backend read
# /proc off its loop (probe.rs), 7 stirs of 8 ended in the kernel's 5 s
# watchdog with the loop in D state.
stir shared user --policy stride --slice-us 4000 --stats 1
stir per-CPU user --policy stride --slice-us 4000 --balance shuttle --balance-ms 20 --stats 1
