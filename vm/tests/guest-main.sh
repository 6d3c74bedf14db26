# In-guest entry of scx_tix's tests (busybox ash): tools on PATH, then every
# test file in order in this one shell (lib.sh's counters live here), then
# the "N passed, N failed" summary. Sourced by vm/tests/run.sh's command.
. "${TIX_LIB:-/usr/share/tix/lib.sh}"
TIX_TESTS=/usr/share/tix/tests
mkdir -p /usr/local/bin
for a in tix scx_tix ctl-abuse vm-load fig11 lock-inversion; do ln -sf /opt/tix/bin/$a /usr/local/bin/$a; done
for a in lnice lrenice lsetbase ltix; do ln -sf /opt/tix/bin/tix /usr/local/bin/$a; done
export PATH=/usr/local/bin:$PATH
. "$TIX_TESTS/common.sh"
diag "kernel $(uname -r), $(nproc) CPUs"
for t in $TIX_TESTS/${TIX_ONLY:-[0-9]*.sh}; do
    [ -f "$t" ] || continue
    # The name is kept apart: a sourced file may set t for its own use.
    _gm_name=$(basename "$t")
    diag "== $_gm_name"
    _gm_t0=$(now_ms)
    TIX_STARTS=0
    TIX_START_MS=0
    . "$t"
    tix_stop_quietly
    # Each file's time in the guest, and how much of it went to attaching
    # scx_tix (verifier and load under TCG), to see where a boot's time goes.
    diag "-- $_gm_name: $((($(now_ms) - _gm_t0) / 1000)) s, of which $((TIX_START_MS / 1000)) s in $TIX_STARTS attaches"
done
summary
