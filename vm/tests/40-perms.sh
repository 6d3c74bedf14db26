# Permissions as a real unprivileged user (Zepp's set_process_tkts and
# set_base_tkts rules): alice cannot set bob's process tickets nor raise her
# base above the default; refused requests change nothing; root can.

as_alice() { su -s /bin/sh alice -c "export PATH=$PATH TIX_SOCKET=/run/tix.sock; $*"; }

tix_start
check "perms: attached" $?
B=$(hog 1 bob)
AL=$(hog 1 alice)
before=$(ltix -p "$B")
as_alice "lrenice $B 500" 2>/tmp/err.out; r=$?
diag "alice> lrenice $B 500: $(cat /tmp/err.out)"
[ $r != 0 ] && grep -q "not permitted" /tmp/err.out; check "alice cannot set bob's process tickets" $?
[ "$(ltix -p "$B")" = "$before" ]; check "bob's tickets unchanged" $?
as_alice "lrenice $AL 700" >/dev/null; check "alice sets her own process tickets" $?
[ "$(ltix -p "$AL")" = 700 ]; check "alice's process now holds 700" $?
as_alice "lsetbase -u alice 2000" 2>/tmp/err.out; r=$?
diag "alice> lsetbase -u alice 2000: $(cat /tmp/err.out)"
[ $r != 0 ] && grep -q "not permitted" /tmp/err.out; check "alice cannot raise her base above the default" $?
[ "$(ltix -u alice)" = 1000 ]; check "alice's base unchanged" $?
as_alice "lsetbase -u bob 500" 2>/dev/null; [ $? != 0 ]; check "alice cannot change bob's base" $?
as_alice "lsetbase -u alice 500" >/dev/null; check "alice may lower her own base" $?
[ "$(ltix -u alice)" = 500 ]; check "alice's base now 500" $?
lsetbase -u alice 2000 >/dev/null && [ "$(ltix -u alice)" = 2000 ]; check "root raises alice's base above the default" $?
lrenice "$B" 300 >/dev/null && [ "$(ltix -p "$B")" = 300 ]; check "root sets bob's process tickets" $?
lrenice "$B" 0 2>/dev/null; [ $? != 0 ] && [ "$(ltix -p "$B")" = 300 ]; check "out of range tickets refused, unchanged" $?
lrenice 999999 5 2>/tmp/err.out; [ $? != 0 ] && grep -q "no such process" /tmp/err.out; check "no such pid is a clear error" $?
ltix -u nosuchuser 2>/tmp/err.out; [ $? != 0 ] && grep -q "no such user" /tmp/err.out; check "no such user is a clear error" $?
as_alice "tix policy stride" 2>/dev/null; [ $? != 0 ]; check "alice cannot switch the policy" $?
# lnice: a child inherits the tickets lnice gave it.
lnice -p 250 sh -c 'sleep 2' &
LN=$!
usleep 300000
[ "$(ltix -p "$LN")" = 250 ]; check "lnice -p 250 runs the command with 250 tickets" $?
kill "$LN" 2>/dev/null
# Kernel threads are a user of their own (tix top's UID "kernel", uid
# 4294967295): root may set that user's base by name, alice may not (an
# amount she could give herself), and the kernel threads' rows in tix top
# carry it.
as_alice "lsetbase -u kernel 500" 2>/tmp/err.out; r=$?
diag "alice> lsetbase -u kernel 500: $(cat /tmp/err.out)"
[ $r != 0 ] && [ "$(ltix -u kernel)" = 1000 ]; check "alice cannot change the kernel threads' base" $?
lsetbase -u kernel 2000 >/dev/null && [ "$(ltix -u kernel)" = 2000 ] && [ "$(ltix -u 4294967295)" = 2000 ]
check "root sets the kernel threads' base by name" $?
# (a row's keys come sorted: base first, uid near the end)
tix top --once --json --interval 0.2 2>/dev/null | grep -o '{"base":[^}]*}' | grep '"uid":4294967295,' >/tmp/kt.json
nk=$(wc -l </tmp/kt.json)
n2k=$(grep -c '"base":2000,' /tmp/kt.json)
diag "kernel threads in tix top: $nk, of which $n2k with base 2000; $(head -n 1 /tmp/kt.json)"
[ "$nk" -gt 0 ] && [ "$n2k" = "$nk" ]; check "the kernel threads' rows in tix top carry base 2000" $?
stop "$B" "$AL"
tix_stop
