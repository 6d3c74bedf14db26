#!/usr/bin/env bash
# Checks vm/bench/pool.sh on samples made here: two boots' logs in the
# guest's tixraw form, the pooled mean, p99 and deadline counts and one
# boot's ratios compared with figures taken another way (every sample
# written out, sorted, and the ceil(0.99 n)-th line read). Also: a log
# without raw lines is refused. Runs on the host, no VM.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
checks=0
ok() { # NAME GOT WANT
    checks=$((checks + 1))
    if [ "$2" = "$3" ]; then echo "ok: $1 ($2)"; else echo "FAIL: $1: got '$2', want '$3'"; fails=$((fails + 1)); fi
}

# samples SEED N SCALE: N latencies (us), exponential above 40 us, seeded.
samples() { awk -v s="$1" -v n="$2" -v m="$3" 'BEGIN { srand(s); for (i = 0; i < n; i++) print int(-log(1 - rand()) * m + 40) }'; }
for b in 1 2; do
    for l in default scx_tix-lottery; do
        d=$tmp/$b/$l
        mkdir -p "$d"
        samples "$b${#l}1" 3000 500 >"$d/lu"
        samples "$b${#l}2" 2500 800 >"$d/lp"
        printf '1.%d\n1.%d\n' "$b" "${#l}" >"$d/msg"
        printf '4.%d\n' "$b" >"$d/hack"
        printf '%d 1000\n' $((995 + b)) $((990 + ${#l} % 7)) >"$d/du"
        printf '%d 1000\n' $((1000 - b)) >"$d/dp"
    done
    {
        echo "console noise before the tables"
        for l in default scx_tix-lottery; do
            d=$tmp/$b/$l
            for k in lu lp; do
                # Histogram lines of at most 400 pairs, as the guest prints them.
                sort -n "$d/$k" | uniq -c | awk -v h="tixraw $l $k" '{ s = s " " $2 ":" $1; if (++n == 400) { print h s; s = ""; n = 0 } } END { if (n) print h s }'
            done
            echo "tixraw $l msg $(tr '\n' ' ' <"$d/msg")"
            echo "tixraw $l hack $(tr '\n' ' ' <"$d/hack")"
            echo "tixraw $l du $(awk '{ printf "%s:%s ", $1, $2 }' "$d/du")"
            echo "tixraw $l dp $(awk '{ printf "%s:%s ", $1, $2 }' "$d/dp")"
        done
        # A label measured in nothing --measure picked: its bare line.
        echo "tixraw scx_wvtime"
    } >"$tmp/boot-$b.log"
done

out=$(bash "$here/pool.sh" "$tmp/boot-1.log" "$tmp/boot-2.log")
echo "$out"
# p99 the long way: every sample, sorted, the ceil(0.99 n)-th.
p99() {
    n=$(cat "$@" | wc -l)
    i=$(awk -v n="$n" 'BEGIN { i = int(0.99 * n); if (i < 0.99 * n) i++; print i }')
    cat "$@" | sort -n | sed -n "${i}p"
}
mean() { cat "$@" | awk '{ s += $1 } END { printf "%.1f", s / NR }'; }
cell() { echo "$out" | awk -F' *[|] *' -v l="$1" -v c="$2" '$2 == l && !done { print $(c + 1); done = 1 }'; }
for l in default scx_tix-lottery; do
    ok "$l pooled p99 unpinned" "$(cell "$l" 8)" "$(p99 "$tmp"/[12]/"$l"/lu)"
    ok "$l pooled p99 pinned" "$(cell "$l" 12)" "$(p99 "$tmp"/[12]/"$l"/lp)"
    ok "$l pooled mean unpinned" "$(cell "$l" 6)" "$(mean "$tmp"/[12]/"$l"/lu)"
    ok "$l pooled messaging" "$(cell "$l" 2)" "$(cat "$tmp"/[12]/"$l"/msg | awk '{ s += $1 } END { printf "%.3f", s / NR }')"
    ok "$l pooled deadlines unpinned" "$(cell "$l" 14)" \
        "$(cat "$tmp"/[12]/"$l"/du | awk '{ m += $1; n += $2 } END { printf "%.4f (%d)", m / n, n - m }')"
done
want=$(awk -v a="$(p99 "$tmp/1/scx_tix-lottery/lp")" -v b="$(p99 "$tmp/1/default/lp")" 'BEGIN { printf "%.2f", a / b }')
got=$(echo "$out" | awk -F' *[|] *' '$2 == "1" && $3 == "scx_tix-lottery" { print $7 }')
ok "boot 1 alone: the lottery's pinned p99 over the default's" "$got" "$want"
missed() { awk '{ m += $2 - $1 } END { print m }' "$1"; }
got=$(echo "$out" | awk -F' *[|] *' '$2 == "2" && $3 == "scx_tix-lottery" { print $8 }')
ok "boot 2 alone: periods missed unpinned, the default's beside" "$got" \
    "$(missed "$tmp/2/scx_tix-lottery/du") ($(missed "$tmp/2/default/du"))"

ok "a label with nothing measured gets a row of dashes" \
    "$(echo "$out" | awk -F' *[|] *' '$2 == "scx_wvtime" { print $3, $9, $15, $16 }')" "- - - -"
tab=$(bash "$here/pool.sh" --table "$tmp/boot-1.log")
ok "--table: the table alone, one boot's p99 unpinned" \
    "$(echo "$tab" | grep -c 'Each boot alone\|Pooled over') $(echo "$tab" | awk -F' *[|] *' '$2 == "default" { print $9 }')" \
    "0 $(p99 "$tmp/1/default/lu")"

echo "console noise only" >"$tmp/empty.log"
if bash "$here/pool.sh" "$tmp/boot-1.log" "$tmp/empty.log" >/dev/null 2>"$tmp/err"; then
    ok "a boot without raw lines is refused" "accepted" "refused"
else
    echo "(pool.sh said: $(cat "$tmp/err"))"
    ok "a boot without raw lines is refused" "refused" "refused"
fi
echo "$((checks - fails)) passed, $fails failed"
[ "$fails" = 0 ]
