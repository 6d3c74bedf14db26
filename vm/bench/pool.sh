#!/usr/bin/env bash
# Pools vm/bench's raw measurements over several boots: the `tixraw` lines
# each boot's guest prints (run times, deadline runs' "met:periods",
# latency samples as "value:count") from the console logs given, one log a
# boot. Prints the guest's table computed over every boot's samples
# together (the same statistics: means of run times, p99 as the
# ceil(0.99 n)-th smallest sample, fraction of periods met), then each
# boot's ratios to the default scheduler measured in that boot, which is
# what one boot alone can compare.
#
# Why pooled samples and not a mean of ratios: a tail event (a missed
# period, a p99 sample) is rare in one boot, and the rows of each boot are
# interleaved in rounds, so every row met the same hosts' moods; the
# per-boot rows show how far single boots spread.
#
# usage: vm/bench/pool.sh [--table] LOG...
#   --table   the pooled table alone (vm/bench/run.sh's table of each boot)
set -euo pipefail
table_only=0
[ "${1:-}" != --table ] || { table_only=1; shift; }
[ $# -ge 1 ] || { echo "pool: usage: vm/bench/pool.sh [--table] LOG..." >&2; exit 2; }
for f in "$@"; do
    [ -r "$f" ] || { echo "pool: cannot read '$f'" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One line per item: "KEY ITEM" where KEY is "B LABEL KIND" for boot B and
# "all LABEL KIND" for the pool; labels in the order they first appear.
b=0
for f in "$@"; do
    b=$((b + 1))
    grep -a '^tixraw ' "$f" | awk -v b="$b" '{ for (i = 4; i <= NF; i++) { print b, $2, $3, $i; print "all", $2, $3, $i } }' ||
        { echo "pool: no tixraw lines in '$f' (a boot that failed, or a build before they were printed)" >&2; exit 1; }
done >"$tmp/items"
grep -a -h '^tixraw ' "$@" | awk '!seen[$2]++ { print $2 }' >"$tmp/labels"
grep -qx default "$tmp/labels" || { echo "pool: no default scheduler rows to compare with" >&2; exit 1; }

# Per key: "KEY n mean p99" of latency histograms, "KEY met periods" of
# deadline runs, "KEY mean" of run times.
awk '$3 == "lu" || $3 == "lp" { split($4, a, ":"); print $1, $2, $3, a[1], a[2] }' "$tmp/items" |
    sort -k1,1 -k2,2 -k3,3 -k4,4n >"$tmp/lat"
awk '{ k = $1 " " $2 " " $3; n[k] += $5 }
     END { for (k in n) print k, n[k] }' "$tmp/lat" >"$tmp/lat-n"
awk 'NR == FNR { tot[$1 " " $2 " " $3] = $4; next }
     { k = $1 " " $2 " " $3
       if (k != cur) { if (cur != "") print cur, tot[cur], s / tot[cur], p; cur = k; c = 0; s = 0; p = ""
                       want = int(0.99 * tot[k]); if (want < 0.99 * tot[k]) want++ }
       s += $4 * $5
       if (p == "" && c + $5 >= want) p = $4
       c += $5 }
     END { if (cur != "") print cur, tot[cur], s / tot[cur], p }' "$tmp/lat-n" "$tmp/lat" >"$tmp/lat-stats"
awk '$3 == "du" || $3 == "dp" { split($4, a, ":"); k = $1 " " $2 " " $3; m[k] += a[1]; n[k] += a[2] }
     END { for (k in m) print k, m[k], n[k] }' "$tmp/items" >"$tmp/met-stats"
awk '$3 == "msg" || $3 == "hack" { k = $1 " " $2 " " $3; s[k] += $4; n[k]++ }
     END { for (k in s) print k, s[k] / n[k] }' "$tmp/items" >"$tmp/run-stats"

# get B LABEL KIND FIELD: one statistic, or "-".
get() {
    awk -v k="$1 $2 $3" -v f="$4" '$1 " " $2 " " $3 == k { print $f; found = 1; exit } END { if (!found) print "-" }' \
        "$tmp/lat-stats" "$tmp/met-stats" "$tmp/run-stats"
}
row() { # B LABEL: the fields of the guest's table
    printf '%s %s %s %s %s %s %s %s %s %s %s %s\n' "$2" \
        "$(get "$1" "$2" msg 4)" "$(get "$1" "$2" hack 4)" \
        "$(get "$1" "$2" lu 5)" "$(get "$1" "$2" lu 6)" "$(get "$1" "$2" lu 4)" \
        "$(get "$1" "$2" lp 5)" "$(get "$1" "$2" lp 6)" "$(get "$1" "$2" lp 4)" \
        "$(get "$1" "$2" du 4)" "$(get "$1" "$2" du 5)" \
        "$(get "$1" "$2" dp 4) $(get "$1" "$2" dp 5)"
}
# The default first, as in the guest's table.
{ echo default; grep -vx default "$tmp/labels"; } >"$tmp/order"

[ "$table_only" = 1 ] || { echo "Pooled over $# boot(s): every sample of every boot together."; echo; }
echo "| scheduler | messaging (s) | vs default | hackbench (s) | vs default | wake-up mean (us) | vs default | p99 (us) | vs default | pinned: mean | vs default | pinned: p99 | vs default | deadlines met (missed), unpinned | pinned |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
while read -r l; do row all "$l"; done <"$tmp/order" | awk '
    function v(x, f) { return x == "-" ? "-" : sprintf(f, x) }
    function r(x, y) { return x == "-" || y == "-" || y == 0 ? "-" : sprintf("%.2f", x / y) }
    function d(m, n) { return m == "-" ? "-" : sprintf("%.4f (%d)", m / n, n - m) }
    NR == 1 { m0 = $2; h0 = $3; l0 = $4; p0 = $5; lp0 = $7; pp0 = $8 }
    { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
      $1, v($2, "%.3f"), r($2, m0), v($3, "%.3f"), r($3, h0), v($4, "%.1f"), r($4, l0), v($5, "%d"), r($5, p0),
      v($7, "%.1f"), r($7, lp0), v($8, "%d"), r($8, pp0), d($10, $11), d($12, $13) }'

[ "$table_only" = 0 ] || exit 0
echo
echo "Each boot alone: ratios to that boot's default; periods missed (the default's in brackets)."
echo
echo "| boot | scheduler | messaging | hackbench | p99 unpinned | p99 pinned | missed unpinned | missed pinned |"
echo "|---|---|---|---|---|---|---|---|"
for i in $(seq "$#"); do
    while read -r l; do row "$i" "$l"; done <"$tmp/order" | awk -v b="$i" '
        function r(x, y) { return x == "-" || y == "-" || y == 0 ? "-" : sprintf("%.2f", x / y) }
        function miss(m, n) { return m == "-" ? "-" : n - m }
        NR == 1 { m0 = $2; h0 = $3; p0 = $5; pp0 = $8; du0 = miss($10, $11); dp0 = miss($12, $13); next }
        { printf "| %d | %s | %s | %s | %s | %s | %s (%s) | %s (%s) |\n", b, $1, r($2, m0), r($3, h0), r($5, p0), r($8, pp0),
          miss($10, $11), du0, miss($12, $13), dp0 }'
done
