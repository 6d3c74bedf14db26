#!/bin/sh
# The VM tests' statistical bounds, checked on the host before any guest
# boots: binom_sd and lottery_tol (common.sh) decide every lottery verdict,
# stride_tol every pinned stride share's,
# and the guest runs them under busybox awk, with no math library. Each
# case is recomputed here by perl from the formula the helper states, and
# the helper's answer must match to its last printed decimal, under the
# shell given as $1 (default: busybox sh, as in the guest).
# usage: sh vm/tests/check-bounds.sh [SHELL...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
shell=${*:-busybox sh}
fail=0

# expect P SECS DRAWS STALL_SQ: what lottery_tol must print, by its comment:
# n = max(DRAWS, 25 SECS) (250 SECS without DRAWS), v = min(STALL_SQ / W^2,
# 1 / n) with W = 1000 SECS, tol = max(.03, 4 sqrt(P (1 - P) (1 / n + v))).
expect() {
    perl -e 'my ($p, $s, $d, $q) = @ARGV;
        my $n = $d eq "" ? 250 * $s : $d; $n = 25 * $s if $n < 25 * $s;
        my $w = 1000 * $s; my $v = $q / ($w * $w); $v = 1 / $n if $v > 1 / $n;
        my $t = 4 * sqrt($p * (1 - $p) * (1 / $n + $v)); $t = 0.03 if $t < 0.03;
        printf "%.4f\n", $t' "$1" "$2" "${3:-}" "${4:-0}"
}

# compare HELPER FORMULA ARGS...: common.sh's HELPER, run under $shell,
# against FORMULA's answer for the same ARGS.
compare() {
    _h=$1
    _e=$2
    shift 2
    got=$($shell -c ". '$here/common.sh' >/dev/null 2>&1; $_h $*")
    want=$($_e "$@")
    if [ "$got" = "$want" ]; then
        echo "ok   $_h $* = $got"
    else
        echo "FAIL $_h $* = $got, the formula gives $want"
        fail=1
    fi
}
check() { compare lottery_tol expect "$@"; }

# A pinned Fig. 3 window as measured (about 2,000 draws in 10 s) ...
check .2 10 2000
# ... with the stalls of a busy host (491fc87's largest unpinned squares) ...
check .2 10 2000 4575
# ... and with stalls past the cap: widened by sqrt(2) at most.
check .2 10 2000 1000000
# A scheduler that hardly draws gets no wider bound than 25 draws a second.
check .2 10 100
check .2 10 0
# No count (the default scheduler): 250 a second.
check .5 10
# Many draws: the .03 floor.
check .5 60 100000
# Unequal shares, short and long windows.
check .0833 10 500 800
check .75 5 900 20000

# The cap's point, in numbers: huge stall squares widen by sqrt(2) only.
a=$($shell -c ". '$here/common.sh' >/dev/null 2>&1; lottery_tol .2 10 2000")
b=$($shell -c ". '$here/common.sh' >/dev/null 2>&1; lottery_tol .2 10 2000 99999999999")
if perl -e 'exit !($ARGV[1] <= $ARGV[0] * sqrt(2) + 0.0001 && $ARGV[1] > $ARGV[0])' "$a" "$b"; then
    echo "ok   stall cap: $a -> $b (at most x1.4142)"
else
    echo "FAIL stall cap: $a -> $b (more than x1.4142, or not widened)"
    fail=1
fi

# expect_stride P SECS STALL_SQ: what stride_tol must print, by its comment:
# .02 + min(.02, 4 sqrt(P (1 - P) STALL_SQ) / W), W = 1000 SECS.
expect_stride() {
    perl -e 'my ($p, $s, $q) = @ARGV; my $w = 1000 * $s;
        my $t = 4 * sqrt($p * (1 - $p) * $q) / $w; $t = 0.02 if $t > 0.02;
        printf "%.4f\n", 0.02 + $t' "$1" "$2" "${3:-0}"
}
check_stride() { compare stride_tol expect_stride "$@"; }
# A quiet window: the 2 points alone.
check_stride .6667 4
check_stride .6667 4 0
# A busy host's stalls: 800 ms^2 in a 4 s loan window, 4,575 over 8 s.
check_stride .6667 4 800
check_stride .5 8 4575
# Stalls past the cap: 4 points at most.
check_stride .75 8 10000000
exit $fail
