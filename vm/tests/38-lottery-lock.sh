# Lottery locks for real programs (seed 001 §6.1, Fig. 10 and 11), under
# scx_tix's lottery on 2 vCPUs, unpinned.
# Fig. 11: eight threads of one program in groups A and B funded 2:1 take a
# tix-lock mutex through its C interface (fig11): each release's draw is a
# Bernoulli trial with the A waiters' share of the funding, so the draws A
# wins lie within 4 sd of the sum of those shares; A acquires more often and
# waits less (the seed: 1.80:1 acquisitions, waits 1:2.11).
# Fig. 10: alice's L (100 tickets) holds a lock shared with her H (4000)
# and computes 300 ms beside three 1000-ticket hogs; H waits with funding
# 3000. Unlent, L's ideal share is 2 x 100/3100 = .065 of a CPU; lent, H's
# 3000 move to L while H waits: 2 x 3100/6100 > 1, so one whole CPU. Bounds:
# lent >= .6 and at least 4x unlent (ideal ratio 15), wide for a busy host.

as_alice() { su -s /bin/sh alice -c "export PATH=$PATH; $*"; }

tix_start --policy lottery
check "lock: attached" $?

out=$(as_alice "fig11 10 50 50")
r=$?
echo "$out" | sed 's/^/# fig11: /'
echo "$out" | grep -q '^misuse refused'
check "lock: misuse through the C interface is refused (EPERM, EINVAL, EDEADLK)" $((r + $?))
echo "$out" | awk '/^draws/ { d = $5 - $7; if (d < 0) d = -d; ok = ($9 > 2 && d < 4 * $9) } END { exit !ok }'
check "lock: the draws A won are within 4 sd of their funding's expectation" $?
echo "$out" | awk '/^A acq/ { a = $3; wa = $6 } /^B acq/ { b = $3; wb = $6 }
    END { if (b > 0 && wa > 0) printf "# fig11: acquisitions A:B = %.2f:1, waits A:B = 1:%.2f (seed 1.80:1, 1:2.11)\n", a / b, wb / wa; exit !(a > b && wa < wb) }'
check "lock: group A (2x funding) acquires more often and waits less" $?

hogs=""
for _i in 1 2 3; do
    hogs="$hogs $(su -s /bin/sh alice -c "export PATH=$PATH; exec lnice -p 1000 sh -c 'while :; do :; done'" </dev/null >/dev/null 2>&1 & echo $!)"
done
sleep 0.5
unlent=$(as_alice "lock-inversion 300 100 4000 3000 nolend")
lent=$(as_alice "lock-inversion 300 100 4000 3000 lend")
echo "$unlent" | sed 's/^/# unlent: /'
echo "$lent" | sed 's/^/# lent: /'
loans=$(tix loans)
# shellcheck disable=SC2086
stop $hogs
su_=$(echo "$unlent" | awk '/^holder/ { print $NF }')
sl_=$(echo "$lent" | awk '/^holder/ { print $NF }')
echo "$lent" | grep -q '^lent 1 refused 0'
lent_ok=$?
awk -v u="$su_" -v l="$sl_" 'BEGIN { exit !(u > 0 && l >= 0.6 && l >= 4 * u) }'
check "lock: a waiter's lent tickets speed the holder ($su_ -> $sl_ of a CPU; ideal .065 -> 1)" $((lent_ok + $?))
[ -z "$loans" ]
check "lock: every loan came back when the waiter took the lock" $?
tix_stop
