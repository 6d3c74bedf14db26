# Helpers shared by scx_tix's in-guest tests (busybox ash; sourced).

TIX_LOG=/tmp/scx_tix.log
TIX_DPID=

# tix_start ARGS...: start the daemon, wait until attached and serving.
tix_start() {
    : >"$TIX_LOG"
    scx_tix "$@" >>"$TIX_LOG" 2>&1 &
    TIX_DPID=$!
    wait_state enabled 180000 || { diag "scx_tix did not attach:"; tail -5 "$TIX_LOG" | sed 's/^/#   /'; return 1; }
    _i=0
    while ! tix status >/dev/null 2>&1; do
        _i=$((_i + 1))
        [ $_i -gt 200 ] && return 1
        usleep 20000
    done
    return 0
}

# tix_stop: SIGTERM the daemon and wait for it.
tix_stop() {
    [ -n "$TIX_DPID" ] || return 0
    kill -TERM "$TIX_DPID" 2>/dev/null
    wait "$TIX_DPID" 2>/dev/null
    TIX_DPID=
}

tix_stop_quietly() { tix_stop >/dev/null 2>&1 || true; }

# ratio_of OUT: CPU ratio first/second from measure_shares' output.
ratio_of() { echo "$1" | awk 'NR == 1 { a = $2 } NR == 2 { b = $2 } END { printf "%.4f\n", (b > 0 ? a / b : 0) }'; }

# share_of OUT: share of the first pid.
share_of() { echo "$1" | awk 'NR == 1 { print $3 }'; }

# near VALUE TARGET TOL: |VALUE - TARGET| <= TOL (absolute).
near() { awk -v v="$1" -v t="$2" -v e="$3" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(d <= e) }'; }
