# Nothing lost across a restart (issue 14): settings recorded before their
# answer survive kill -9 of the daemon; the stale socket is replaced; a
# process whose pid was reused while the daemon was down does not inherit.

tix_start
check "restart: attached" $?
A=$(hog any alice)
B=$(hog any bob)
as alice "lrenice $A 700" >/dev/null
lrenice "$B" 300 >/dev/null
lsetbase -u alice 500 >/dev/null
lsetbase -u bob 4000 >/dev/null
tix policy stride >/dev/null
# The child sleeps past the restart even on a slow host: a 120 s sleep
# ended before its check once there ("no such process" after the second
# attach).
lnice -p 250 sh -c 'sh -c "sleep 900" & wait' &
L=$!
sleep 2
C=$(child_of "$L")
diag "lnice $L, its child $C holds $(ltix -p "$C")"
[ -n "$C" ] && [ "$(ltix -p "$C")" = 250 ]; check "a forked child inherits lnice's 250" $?
sh -c 'while :; do :; done' &
V=$!
lrenice "$V" 900 >/dev/null
sleep 2   # the daemon folds inherited tickets into its record every second

kill -9 "$TIX_DPID"
wait "$TIX_DPID" 2>/dev/null
TIX_DPID=
wait_state disabled 5000; check "kill -9 detaches the scheduler" $?
[ -S /run/tix.sock ]; check "the dead daemon left its socket" $?
kill -9 "$V"
wait "$V" 2>/dev/null
echo $((V - 1)) >/proc/sys/kernel/ns_last_pid
sh -c 'while :; do :; done' &
V2=$!
diag "pid $V reused: new process $V2"
[ "$V2" = "$V" ]; check "the killed process's pid is reused" $?

TIX_KEEP_STATE=1
tix_start
check "the daemon starts again over the stale socket" $?
TIX_KEEP_STATE=0
diag "$(grep restored "$TIX_LOG")"
[ "$(ltix -p "$A")" = 700 ]; check "alice's process tickets restored (700)" $?
[ "$(ltix -p "$B")" = 300 ]; check "bob's process tickets restored (300)" $?
[ "$(ltix -p "$C")" = 250 ]; check "the inherited tickets restored (250)" $?
[ "$(ltix -u alice)" = 500 ] && [ "$(ltix -u bob)" = 4000 ]; check "bases restored (500, 4000)" $?
tix status | grep -q "policy: stride"; check "policy restored (stride)" $?
[ "$(ltix -p "$V2")" = 100 ]; check "the reused pid holds the default, not 900" $?
stop "$A" "$B" "$V2" "$L" "$C"
pkill -f "sleep 900" 2>/dev/null
tix_stop
