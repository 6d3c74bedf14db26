# shellcheck shell=bash
# Shared settings for the tix VM harness (sourced by vm/*.sh, never run).
# One cache folder holds the private apt state, the fetched kernel and the
# built initramfs, so the host's own apt configuration is never touched.

# shellcheck disable=SC2034 # used by the scripts that source this file
TIX_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# /var/cache/tix-vm needs root; an unprivileged developer falls back to
# their own cache rather than failing (an explicit TIX_VM_CACHE always wins).
if [ -z "${TIX_VM_CACHE:-}" ]; then
    if mkdir -p /var/cache/tix-vm 2>/dev/null && [ -w /var/cache/tix-vm ]; then
        TIX_VM_CACHE=/var/cache/tix-vm
    else
        TIX_VM_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/tix-vm"
    fi
fi
export TIX_VM_CACHE

vm_log() { printf 'tix-vm: %s\n' "$*" >&2; }
vm_die() {
    printf 'tix-vm: error: %s\n' "$*" >&2
    exit 1
}

# The kernel version currently selected in the cache, or nothing.
vm_current_kernel() {
    local f="$TIX_VM_CACHE/kernel/current"
    [ -f "$f" ] || return 0
    local ver
    ver=$(cat "$f")
    if [ -f "$TIX_VM_CACHE/kernel/$ver/vmlinuz" ] && [ -f "$TIX_VM_CACHE/kernel/$ver/config" ]; then
        printf '%s\n' "$ver"
    fi
}
