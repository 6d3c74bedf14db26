# A hostile local user against the rules and the control plane (issue 14):
# a user namespace, a socket handed to a child around a setuid exec, 200
# idle connections, a trickle, floods that never read, a 100 MB request.
# Bypasses change nothing; other users are served in under a second; the
# daemon's memory stays bounded.

tix_start
check "hostile: attached" $?
B=$(hog any bob)
A=$(hog any alice)
lrenice "$B" 300 >/dev/null

# 1. A user namespace gives alice every capability, over her namespace only.
inside=$(as alice "unshare -Ur id -u" 2>&1)
diag "alice> unshare -Ur id -u: $inside"
[ "$inside" = 0 ]; check "unshare -Ur makes alice root of a user namespace" $?
as alice "unshare -Ur lrenice $B 7" 2>/tmp/err.out; r=$?
diag "alice> unshare -Ur lrenice $B 7: $(cat /tmp/err.out)"
[ $r != 0 ] && grep -q "not permitted" /tmp/err.out && [ "$(ltix -p "$B")" = 300 ]
check "unshare -Ur: alice cannot set bob's tickets (still 300)" $?
as alice "unshare -Ur lsetbase -u alice 10000" 2>/dev/null; r=$?
[ $r != 0 ] && [ "$(ltix -u alice)" = 1000 ]; check "unshare -Ur: alice cannot raise her base (still 1000)" $?
as alice "unshare -Ur lsetbase -u bob 100" 2>/dev/null; r=$?
[ $r != 0 ] && [ "$(ltix -u bob)" = 1000 ]; check "unshare -Ur: alice cannot lower bob's base" $?
as alice "unshare -Ur tix policy stride" 2>/dev/null; r=$?
[ $r != 0 ] && tix status | grep -q "policy: lottery"; check "unshare -Ur: alice cannot switch the policy" $?

# 2. A socket connected by alice, written by her child while the parent
#    runs a setuid-root program (which does hold CAP_SYS_NICE).
cp /opt/tix/bin/ctl-abuse /tmp/suid-abuse && chown 0:0 /tmp/suid-abuse && chmod 4755 /tmp/suid-abuse
su -s /bin/sh alice -c "exec /tmp/suid-abuse sleep 3" &
S=$!
usleep 800000
caps=$(awk '/^CapEff:/ { print $2 }' /proc/"$S"/status 2>/dev/null)
diag "setuid copy (pid $S): $(tr '\0' ' ' </proc/"$S"/cmdline 2>/dev/null), CapEff $caps"
[ -n "$caps" ] && [ "$caps" != 0000000000000000 ]; check "the setuid copy runs with capabilities" $?
wait $S 2>/dev/null
out=$(as alice "ctl-abuse handoff $B 7 /tmp/suid-abuse" 2>&1)
diag "alice> ctl-abuse handoff: $out"
echo "$out" | grep -q "not_permitted" && [ "$(ltix -p "$B")" = 300 ]
check "a child writing on its setuid parent's connection gains nothing" $?

# 3. Bob stalls: three floods that never read, a 1 byte/s trickle, then
#    200 idle connections (past his 16, refused). Alice is timed twice:
#    one request's round trip in-process (the daemon's service), and her
#    tools as programs (which under TCG also pay for starting a process;
#    their bound is their quiet time plus one second).
stop "$A" "$B"
A=$(as alice "sleep 300 >/dev/null 2>&1 & echo \$!")
# ms_as USER CMD: run CMD as USER; print "STATUS MS" timed inside USER's shell.
ms_as() {
    as "$1" "a=\$(awk '{ printf \"%.0f\", \$1 * 1000 }' /proc/uptime); $2 >/dev/null 2>&1; r=\$?;
        b=\$(awk '{ printf \"%.0f\", \$1 * 1000 }' /proc/uptime); echo \$r \$((b - a))"
}
CMDS="lrenice_${A}_400 ltix_-p_${A} lnice_-p_200_true ltix_-u_alice"
quiet=""
for c in $CMDS; do
    set -- $(ms_as alice "$(echo "$c" | tr _ ' ')")
    quiet="$quiet $2"
done
diag "alice's tools, quiet: ms$quiet"
rss0=$(rss_kb "$TIX_DPID")
for f in 1 2 3; do as bob "ctl-abuse flood 20" >/tmp/flood$f.out 2>&1 & done
as bob "ctl-abuse trickle 25" >/tmp/trickle.out 2>&1 &
T=$!
sleep 1
as bob "ctl-abuse idle 200 25" >/tmp/idle.out 2>&1 &
I=$!
sleep 3
set -- $(as alice "ctl-abuse ask '{\"op\":\"set_tickets\",\"pid\":$A,\"tickets\":350}'")
diag "alice's set_tickets round trip while bob stalls: $*"
[ "${1:-99999}" -lt 1000 ] && echo "$*" | grep -q '"tickets":350'; check "alice's request answered in < 1 s under bob's stall ($1 ms)" $?
i=1
for c in $CMDS; do
    q=$(echo $quiet | cut -d' ' -f$i)
    i=$((i + 1))
    cmd=$(echo "$c" | tr _ ' ')
    set -- $(ms_as alice "$cmd")
    diag "alice> $cmd while bob stalls: status $1, $2 ms (quiet $q ms)"
    [ "$1" = 0 ] && [ "$2" -lt $((q + 1000)) ]; check "alice's '$cmd' completes under bob's stall within its quiet time + 1 s" $?
done
[ "$(ltix -p "$A")" = 400 ]; check "alice's setting took effect" $?
thr=$(awk '/^Threads:/ { print $2 }' /proc/"$TIX_DPID"/status)
diag "daemon threads under the stall: $thr"
[ "$thr" -le 24 ]; check "bob holds at most 16 connections (daemon threads $thr <= 24)" $?
wait $I $T 2>/dev/null
diag "bob's clients: $(cat /tmp/idle.out) | $(cat /tmp/trickle.out) | $(cat /tmp/flood1.out)"
grep -q "not completed within" /tmp/trickle.out; check "the trickle is cut off with an error" $?
grep -q "refused\|connected" /tmp/idle.out && [ -n "$(grep -o '[0-9]* connected' /tmp/idle.out)" ]; check "the idle client ran" $?

# 4. A 100 MB request line.
out=$(as bob "ctl-abuse big 100" 2>&1)
diag "bob> ctl-abuse big 100: $out"
echo "$out" | grep -q "longer than 65536 bytes"; check "a 100 MB request is refused at 64 KiB" $?
sleep 1
rss1=$(rss_kb "$TIX_DPID")
diag "daemon RSS: $rss0 KiB before the abuse, $rss1 KiB after"
[ $((rss1 - rss0)) -lt 20480 ]; check "daemon memory stays bounded (grew $((rss1 - rss0)) KiB < 20 MiB)" $?
tix status >/dev/null; check "the daemon still serves after the abuse" $?
[ "$(sched_state)" = enabled ]; check "scx_tix still attached" $?
stop "$A"
tix_stop
