#!/usr/bin/env bash
# Build the guest's busybox initramfs (uncompressed newc cpio) and print its path.
# The archive is cached under $TIX_VM_CACHE/initramfs, keyed by a digest of
# every input (this script, vm/guest, the tools, each --add), so an unchanged
# set of inputs is reused; vm/run.sh appends the per-run command separately.
#
# usage: vm/mkinitramfs.sh [--add HOST[:GUEST]]... [--force]
#   --add HOST[:GUEST]  copy a file or folder into the guest (default GUEST = HOST's
#                       absolute path); ELF binaries bring the libraries ldd lists, and
#                       an executable file is also linked into /usr/local/bin
#   --force             rebuild even if a cached archive matches
set -euo pipefail
# shellcheck source=vm/common.sh
. "$(dirname "$0")/common.sh"

adds=()
force=0
while [ $# -gt 0 ]; do
    case "$1" in
        --add)
            [ $# -ge 2 ] || vm_die "--add needs HOST[:GUEST]"
            adds+=("$2")
            shift 2
            ;;
        --force)
            force=1
            shift
            ;;
        -h | --help)
            sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *) vm_die "unknown argument '$1' (try --help)" ;;
    esac
done

command -v cpio >/dev/null || vm_die "cpio not found (apt-get install cpio)"
command -v ldd >/dev/null || vm_die "ldd not found"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || vm_die "busybox not found (apt-get install busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
    vm_die "$busybox is not static (apt-get install busybox-static)"

# Host tools the guest tests and benchmarks use, found on PATH.
tools=()
for t in stress-ng perf cyclictest hackbench bpftool tmux; do
    p=$(PATH=$PATH:/usr/sbin:/sbin command -v "$t" || true)
    [ -n "$p" ] || vm_die "'$t' not found on the host (apt-get install stress-ng linux-perf rt-tests bpftool tmux)"
    tools+=("$(readlink -f "$p")")
done

# Resolve each --add into "host guest" pairs.
add_host=()
add_guest=()
for a in ${adds[@]+"${adds[@]}"}; do
    host=${a%%:*}
    guest=${a#*:}
    [ "$guest" = "$a" ] && guest=""
    [ -e "$host" ] || vm_die "--add: '$host' does not exist"
    host=$(readlink -f "$host")
    [ -n "$guest" ] || guest=$host
    case "$guest" in /*) ;; *) vm_die "--add: guest path '$guest' must be absolute" ;; esac
    add_host+=("$host")
    add_guest+=("$guest")
done

# Digest of all inputs: content of our own scripts, size+mtime of everything else.
key=$(
    {
        cat "$0" "$TIX_VM_DIR/common.sh"
        echo "strip=${TIX_VM_STRIP:-1}"
        find "$TIX_VM_DIR/guest" -type f -exec sha256sum {} + 2>/dev/null | sort
        stat -L -c '%n %s %Y' "$busybox" "${tools[@]}"
        for i in ${add_host[@]+"${!add_host[@]}"}; do
            printf 'add %s %s\n' "${add_host[$i]}" "${add_guest[$i]}"
            find -L "${add_host[$i]}" -printf '%P %s %T@\n' | sort
        done
    } | sha256sum | cut -c1-16
)
out_dir="$TIX_VM_CACHE/initramfs"
out="$out_dir/base-$key.cpio"
if [ "$force" = 0 ] && [ -s "$out" ]; then
    touch "$out"
    vm_log "initramfs $out (cached)"
    printf '%s\n' "$out"
    exit 0
fi
mkdir -p "$out_dir"

root=$(mktemp -d "$out_dir/root.XXXXXX")
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,lib,lib64,etc/tix,proc,sys,dev,tmp,run,root,home/alice,home/bob,mnt,usr/share/tix}
chmod 1777 "$root/tmp"
cp "$busybox" "$root/bin/busybox"
# Applet links first, so real tools copied later replace busybox's versions.
while read -r applet; do
    [ -e "$root/$applet" ] && continue
    mkdir -p "$root/$(dirname "$applet")"
    ln -s /bin/busybox "$root/$applet"
done < <("$busybox" --list-full)

# Copy an ELF binary's shared libraries (and loader) to their host paths.
copy_libs() {
    local lib
    for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*' | sort -u); do
        [ -e "$root$lib" ] && continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}
is_elf() { [ -f "$1" ] && [ "$(head -c4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

for t in "${tools[@]}"; do
    cp "$t" "$root/usr/bin/$(basename "$t")"
    copy_libs "$t"
done
# Terminal descriptions and the C.UTF-8 locale for tmux (tix top's screen
# test: tmux refuses to start without a UTF-8 locale).
[ -d /lib/terminfo ] && mkdir -p "$root/lib" && cp -a /lib/terminfo "$root/lib/"
[ -d /usr/lib/locale/C.utf8 ] && mkdir -p "$root/usr/lib/locale" && cp -a /usr/lib/locale/C.utf8 "$root/usr/lib/locale/"

for i in ${add_host[@]+"${!add_host[@]}"}; do
    h=${add_host[$i]}
    g=${add_guest[$i]}
    mkdir -p "$root$(dirname "$g")"
    if [ -d "$h" ]; then
        mkdir -p "$root$g"
        cp -a "$h/." "$root$g/"
        while IFS= read -r -d '' f; do
            is_elf "$f" && copy_libs "$f"
        done < <(find "$h" -type f -perm -u+x -print0)
    else
        rm -f "$root$g"
        cp -L "$h" "$root$g"
        if is_elf "$h"; then
            copy_libs "$h"
            # Debug info (half of a release build here) only slows the boot's
            # unpacking; symbols stay for backtraces. TIX_VM_STRIP=0 keeps it.
            if [ "${TIX_VM_STRIP:-1}" != 0 ] && command -v strip >/dev/null; then
                strip --strip-debug "$root$g" 2>/dev/null || true
            fi
        fi
        if [ -x "$h" ] && [ "$(dirname "$g")" != /usr/local/bin ]; then
            ln -sf "$g" "$root/usr/local/bin/$(basename "$g")"
        fi
    fi
done

cp -a "$TIX_VM_DIR/guest/." "$root/usr/share/tix/" 2>/dev/null || true

cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
alice:x:1001:1001:alice:/home/alice:/bin/sh
bob:x:1002:1002:bob:/home/bob:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
alice:x:1001:
bob:x:1002:
nogroup:x:65534:
EOF
printf 'root::0:0:99999:7:::\nalice:!:0:0:99999:7:::\nbob:!:0:0:99999:7:::\n' >"$root/etc/shadow"
chmod 600 "$root/etc/shadow"
printf 'passwd: files\ngroup: files\nshadow: files\n' >"$root/etc/nsswitch.conf"
echo tix-vm >"$root/etc/hostname"

cat >"$root/init" <<'EOF'
#!/bin/sh
# tix-vm guest init: mount the kernel filesystems, run /tix/cmd, report its
# exit status on a marker line the host looks for, then power off.
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
# The archive has no /dev/console node when built unprivileged; reopen it here.
exec </dev/console >/dev/console 2>&1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb TIX_LIB=/usr/share/tix/lib.sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# --add may have put files under /tmp: carry them into the new tmpfs.
mount -t tmpfs -o mode=1777 tmpfs /mnt
cp -a /tmp/. /mnt/ 2>/dev/null
mount -o move /mnt /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
hostname tix-vm
ip link set lo up 2>/dev/null
chown 1001:1001 /home/alice
chown 1002:1002 /home/bob
chmod 755 /home/alice /home/bob
if [ -x /usr/local/bin/tix ]; then
    for a in lnice lrenice lsetbase ltix mkcur rmcur fund unfund mktkt rmtkt lscur lstkt fundx; do
        [ -e /usr/local/bin/$a ] || ln -s tix /usr/local/bin/$a
    done
fi
cd /root
if [ -f /tix/cmd ]; then
    echo "@@tix-vm-start@@"
    sh -c "$(cat /tix/cmd)" </dev/null
    rc=$?
else
    echo "tix-vm: no /tix/cmd in the initramfs"
    rc=125
fi
echo "@@tix-vm-exit=$rc@@"
sync
poweroff -f
EOF
chmod 755 "$root/init"

if [ "$(id -u)" = 0 ]; then
    mknod -m 600 "$root/dev/console" c 5 1
    mknod -m 666 "$root/dev/null" c 1 3
fi

tmp="$out.tmp.$$"
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet >"$tmp")
mv "$tmp" "$out"
# Keep the five most recently used archives. Lanes of vm/tests/run.sh
# build at once and prune the same files: ls exits 2 when one named by the
# glob is gone before it looks, which under pipefail killed a boot.
ls -t "$out_dir"/base-*.cpio 2>/dev/null | tail -n +6 | xargs -r rm -f || true
vm_log "initramfs $out ($(du -h "$out" | cut -f1)) built"
printf '%s\n' "$out"
