# User insulation (Zepp Fig. 32-38): alice runs 1 hog, bob 10, all on CPU 1,
# equal base tickets -> alice's hog gets 50% (bob's 10 split the other half).
# Then bob's base is doubled -> alice 1/3. Lottery, 10 s each: at most
# ~2500 draws; bound max(3 points, 4 sd) over the lotteries the hogs won
# in the window (lottery_tol, draws_during).

tix_start --policy lottery
check "insulation: attached" $?
AL=$(hog 1 alice)
BOBS=""
for i in 1 2 3 4 5 6 7 8 9 10; do BOBS="$BOBS $(hog 1 bob)"; done
sleep 0.5
draws_during 10 "$AL $BOBS" measure_shares 10 "$AL" $BOBS
sa=$(share_of "$OUT")
diag "alice 1 hog vs bob 10, equal base: alice share $sa (target 0.5; $DRAWS lotteries, stalled $STALLED)"
t=$(lottery_tol 0.5 10 "$DRAWS" "$STALL_SQ"); near "$sa" 0.5 "$t"; check "equal base: alice's one hog gets 50% +-$t" $?
lsetbase -u bob 2000 >/dev/null; check "root doubles bob's base" $?
sleep 0.2
draws_during 10 "$AL $BOBS" measure_shares 10 "$AL" $BOBS
sa=$(share_of "$OUT")
diag "bob base doubled: alice share $sa (target 0.3333; $DRAWS lotteries, stalled $STALLED)"
t=$(lottery_tol 0.3333 10 "$DRAWS" "$STALL_SQ"); near "$sa" 0.3333 "$t"; check "bob's base doubled: alice gets 33% +-$t" $?
tix top --once --active >/tmp/top.out 2>&1; r=$?
sed -n '1,14p' /tmp/top.out | sed 's/^/#   /'
[ $r = 0 ] && grep -q "$AL" /tmp/top.out; check "tix top --once lists the hogs" $?
tix top --once --json --sort error --interval 0.3 >/tmp/top.json 2>&1
grep -q "\"pid\":$AL," /tmp/top.json && grep -q '"expected":' /tmp/top.json
check "tix top --once --json gives a row per task" $?

# The live view in a terminal (tmux, 120x40): header, table, the selected
# task's quantum-use histogram; s changes the order, q leaves.
export TERM=xterm LC_ALL=C.UTF-8
tmux new-session -d -s top -x 120 -y 40 "tix top --interval 0.5 --sort error --active"
sleep 3
tmux capture-pane -p -t top >/tmp/top.screen 2>&1
sed -n '1,12p;30,40p' /tmp/top.screen | sed 's/^/#   | /'
grep -q "policy lottery" /tmp/top.screen && grep -q "expected vs measured" /tmp/top.screen &&
    grep -q " $AL " /tmp/top.screen && grep -q "quantum use of" /tmp/top.screen &&
    grep -q "100%" /tmp/top.screen
check "tix top renders live: status, the table with the hogs, a quantum-use histogram" $?
tmux send-keys -t top s
sleep 1.5
tmux capture-pane -p -t top | grep -q "sort: measured"
check "tix top: s changes the order (share error -> measured)" $?
tmux has-session -t top 2>/dev/null
r=$?
tmux send-keys -t top q
sleep 1
[ $r = 0 ] && ! tmux has-session -t top 2>/dev/null
check "tix top: q leaves (the session ran until then)" $?
tmux kill-server 2>/dev/null
export TERM=dumb
unset LC_ALL
stop "$AL" $BOBS
tix_stop
