#!/usr/bin/env bash
# Boot the cached sched_ext kernel under QEMU (TCG) with the busybox initramfs,
# run one command in the guest as root, stream its output and exit with its
# exit status (124 if the timeout passes, 125 if the guest died without one).
#
# usage: vm/run.sh [--cpus N] [--mem SIZE] [--timeout SECS] [--add HOST[:GUEST]]... -- CMD...
#   --cpus N            guest CPUs (default 2)
#   --mem SIZE          guest memory, QEMU syntax (default 2G)
#   --timeout SECS      kill the VM after SECS seconds (default 600)
#   --add HOST[:GUEST]  copy a file/folder into the guest (see vm/mkinitramfs.sh)
#   CMD...              joined with spaces and run by the guest's sh -c (like ssh)
# Kernel command line: console=ttyS0 quiet panic=-1 tsc=reliable (under a busy
# host TCG's TSC fails the clocksource watchdog and the guest falls back to the
# slow, emulated HPET; TCG derives the TSC from the host clock, so it is sound).
# A guest that has not reached /init within TIX_VM_BOOT_WAIT seconds (default
# 180; a boot takes 3-10 s under TCG) is killed and booted again, up to twice;
# each boot has the whole --timeout.
# env: TIX_VM_CACHE (cache folder), TIX_VM_ACCEL (default tcg,thread=multi),
#      TIX_VM_APPEND (extra kernel command line), TIX_VM_LOG (also save the console here),
#      TIX_VM_BOOT_WAIT
# The guest has /usr/share/tix/lib.sh ($TIX_LIB), users alice (1001) and bob (1002).
set -euo pipefail
# shellcheck source=vm/common.sh
. "$(dirname "$0")/common.sh"

cpus=2
mem=2G
timeout_s=600
adds=()
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --cpus | --mem | --timeout | --add)
            [ $# -ge 2 ] || vm_die "$1 needs a value"
            case "$1" in
                --cpus) cpus=$2 ;;
                --mem) mem=$2 ;;
                --timeout) timeout_s=$2 ;;
                --add) adds+=(--add "$2") ;;
            esac
            shift 2
            ;;
        --)
            shift
            break
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *) vm_die "unknown argument '$1' (usage: vm/run.sh [options] -- CMD...)" ;;
    esac
done
[ $# -gt 0 ] || vm_die "no command given (usage: vm/run.sh [options] -- CMD...)"
case "$cpus" in '' | *[!0-9]* | 0) vm_die "--cpus must be a positive integer, got '$cpus'" ;; esac
case "$timeout_s" in '' | *[!0-9]* | 0) vm_die "--timeout must be a positive integer (seconds), got '$timeout_s'" ;; esac
case "$mem" in '' | *[!0-9MGmgKkTt]*) vm_die "--mem must look like 2G or 512M, got '$mem'" ;; esac
cmd="$*"

qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || vm_die "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"

ver=$("$TIX_VM_DIR/fetch-kernel.sh")
kernel="$TIX_VM_CACHE/kernel/$ver/vmlinuz"
# The kernel's own modules the tests load (fetch-kernel.sh keeps them).
[ -d "$TIX_VM_CACHE/kernel/$ver/modules" ] && adds+=(--add "$TIX_VM_CACHE/kernel/$ver/modules:/lib/modules/tix")
base=$("$TIX_VM_DIR/mkinitramfs.sh" ${adds[@]+"${adds[@]}"})

# The command travels as a second, tiny cpio archive appended to the cached
# one: the kernel unpacks concatenated archives in order.
work=$(mktemp -d "${TMPDIR:-/tmp}/tix-vm.XXXXXX")
qpid=""
cleanup() {
    [ -n "$qpid" ] && kill "$qpid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/root/tix"
printf '%s\n' "$cmd" >"$work/root/tix/cmd"
(cd "$work/root" && printf '%s\n' tix tix/cmd | cpio -o -H newc -R 0:0 --quiet >"$work/cmd.cpio")
cat "$base" "$work/cmd.cpio" >"$work/initrd.cpio"

log="$work/console.log"
summary=${cmd%%$'\n'*}
[ "$summary" = "$cmd" ] || summary="$summary ... ($(printf '%s\n' "$cmd" | wc -l) lines)"
[ -n "${TIX_VM_LOG:-}" ] && : >"$TIX_VM_LOG"
boot_wait=${TIX_VM_BOOT_WAIT:-180}
case "$boot_wait" in '' | *[!0-9]* | 0) vm_die "TIX_VM_BOOT_WAIT must be a positive integer (seconds), got '$boot_wait'" ;; esac
timed_out=0
boot_hung=0

# boot: one QEMU run; sets qrc, timed_out when the deadline passes and
# boot_hung when /init was not reached in time.
boot() {
    : >"$log"
    local now started=0
    local deadline=$(($(date +%s) + timeout_s)) boot_deadline=$(($(date +%s) + boot_wait))
    boot_hung=0
    # QEMU writes the serial console to a file we follow, so the guest's output
    # streams while we keep QEMU's own pid for the timeout.
    "$qemu" -accel "${TIX_VM_ACCEL:-tcg,thread=multi}" -cpu max -smp "$cpus" -m "$mem" \
        -nographic -no-reboot -nodefaults -serial "file:$log" -monitor none \
        -kernel "$kernel" -initrd "$work/initrd.cpio" \
        -append "console=ttyS0 quiet panic=-1 tsc=reliable ${TIX_VM_APPEND:-}" \
        </dev/null >"$work/qemu.out" 2>&1 &
    qpid=$!
    # Firmware banners, terminal escapes and the start marker are noise; the
    # guest's lines pass as they come. tail exits when QEMU does.
    tail -n +1 -f --pid="$qpid" "$log" 2>/dev/null |
        sed -u -e 's/\r$//' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' \
            -e '/^SeaBIOS (version/d' -e '/^Booting from ROM/d' -e '/reboot: Power down$/d' \
            -e '/@@tix-vm-start@@/d' |
        tee -a ${TIX_VM_LOG:+"$TIX_VM_LOG"} &
    local tpid=$!
    while kill -0 "$qpid" 2>/dev/null; do
        now=$(date +%s)
        # Multi-threaded TCG on an oversubscribed host now and then leaves a
        # guest spinning in early boot with nothing on the console; such a
        # guest never ran the command, so booting it again loses nothing.
        if [ "$started" = 0 ] && grep -q '@@tix-vm-start@@' "$log"; then started=1; fi
        if [ "$started" = 0 ] && [ "$now" -ge "$boot_deadline" ]; then
            boot_hung=1
        elif [ "$now" -ge "$deadline" ]; then
            timed_out=1
        fi
        if [ "$boot_hung" = 1 ] || [ "$timed_out" = 1 ]; then
            kill "$qpid" 2>/dev/null || true
            sleep 1
            kill -9 "$qpid" 2>/dev/null || true
            break
        fi
        sleep 0.2
    done
    wait "$qpid" 2>/dev/null && qrc=0 || qrc=$?
    qpid=""
    wait "$tpid" 2>/dev/null || true
}

start=$(date +%s.%N)
for attempt in 1 2 3; do
    vm_log "booting $ver, $cpus CPUs, $mem, timeout ${timeout_s}s: $summary"
    boot
    [ "$timed_out" = 1 ] && break
    # A guest that died or hung before /init started the command (multi-
    # threaded TCG sometimes runs stale kernel text during boot, "Oops: int3")
    # is booted again; one that died later is reported, since the command ran.
    # (SeaBIOS's screen-clearing escapes can share the marker's line.)
    if grep -q '@@tix-vm-start@@' "$log"; then break; fi
    [ "$attempt" = 3 ] && break
    if [ "$boot_hung" = 1 ]; then
        vm_log "the guest did not reach /init within ${boot_wait}s; booting again"
    else
        vm_log "the guest kernel died during boot (QEMU exit $qrc); booting again"
    fi
done
elapsed=$(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')

if [ "$timed_out" = 1 ]; then
    echo "tix-vm: timeout: the guest did not finish within ${timeout_s}s; QEMU killed" >&2
    exit 124
fi
rc=$(sed -n 's/.*@@tix-vm-exit=\([0-9][0-9]*\)@@.*/\1/p' "$log" | tail -n1)
if [ -z "$rc" ] && [ "$boot_hung" = 1 ]; then
    echo "tix-vm: the guest did not reach /init within ${boot_wait}s in $attempt boots" >&2
    exit 125
elif [ -z "$rc" ]; then
    echo "tix-vm: the guest ended without reporting an exit status (QEMU exit $qrc, ${elapsed}s)" >&2
    sed 's/^/qemu: /' "$work/qemu.out" >&2
    exit 125
fi
vm_log "guest command exited $rc after ${elapsed}s"
exit "$rc"
