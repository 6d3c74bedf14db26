#!/usr/bin/env bash
# Fetch a Debian kernel built with sched_ext (CONFIG_SCHED_CLASS_EXT=y) into
# the VM cache, using a private apt configuration: the host's apt sources,
# lists and preferences are read (to find its mirror) but never changed.
#
# usage: vm/fetch-kernel.sh [--refresh]
#   --refresh   resolve the newest kernel again even if one is cached
# env:   TIX_VM_CACHE   cache folder (default /var/cache/tix-vm)
#        TIX_VM_SUITES  suites to try in order (default "sid trixie-backports")
#        TIX_VM_MIRROR  Debian mirror URI (default: derived from the host's apt sources)
# Prints the kernel version on stdout; progress goes to stderr.
# Beside vmlinuz and its config, the cache keeps the few modules the tests
# load (TIX_VM_MODULES, decompressed, with their dependencies' order) in
# kernel/VER/modules: the guest has no disk, so the block tests need
# null_blk and BFQ.
set -euo pipefail
# shellcheck source=vm/common.sh
. "$(dirname "$0")/common.sh"

refresh=0
for a in "$@"; do
    case "$a" in
        --refresh) refresh=1 ;;
        -h | --help)
            sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *) vm_die "unknown argument '$a' (try --help)" ;;
    esac
done

mkdir -p "$TIX_VM_CACHE"
# Concurrent runs (several test jobs on a fresh cache) would fight over apt's
# list lock; the second waits here and then finds the kernel cached.
if command -v flock >/dev/null; then
    exec 9>"$TIX_VM_CACHE/.fetch.lock"
    flock 9
fi

# A cached kernel means no network access at all.
if [ "$refresh" = 0 ]; then
    ver=$(vm_current_kernel)
    if [ -n "$ver" ] && [ -f "$TIX_VM_CACHE/kernel/$ver/modules/.complete" ]; then
        vm_log "kernel $ver (cached in $TIX_VM_CACHE/kernel/$ver)"
        printf '%s\n' "$ver"
        exit 0
    fi
fi

for tool in apt-get apt-cache dpkg-deb; do
    command -v "$tool" >/dev/null || vm_die "'$tool' not found: this script needs a Debian-family host"
done

# The mirror is whatever the host already uses for Debian's main archive:
# deb822 files first, then one-line sources.list entries. Security and
# update mirrors do not carry sid or backports, so they are skipped.
derive_mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && uris != "" && suites != "" && suites !~ /-security/) {
                    split(uris, u, " "); for (i in u) if (u[i] !~ /security/) { print u[i]; exit }
                }
                types = ""; uris = ""; suites = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            tolower($1) == "types:" { $1 = ""; types = $0 }
            tolower($1) == "uris:" { $1 = ""; uris = $0 }
            tolower($1) == "suites:" { $1 = ""; suites = $0 }
            tolower($1) == "enabled:" && tolower($2) == "no" { types = "" }
            END { flush() }
        ' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk '
            $1 != "deb" { next }
            { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } }
            $(i) !~ /security/ && $(i + 1) !~ /-security/ { print $(i); exit }
        ' "$f"
    done
}

mirror=${TIX_VM_MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(derive_mirror | head -n1)
fi
[ -n "$mirror" ] || vm_die "no Debian mirror found in /etc/apt/sources.list{,.d}; set TIX_VM_MIRROR=URI"
mirror=${mirror%/}
vm_log "mirror $mirror (from the host's apt sources)"

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=""
[ -f "$keyring" ] && signed="signed-by=$keyring "

apt_root="$TIX_VM_CACHE/apt"
deb_dir="$TIX_VM_CACHE/debs"
mkdir -p "$deb_dir"

# One private apt state per suite, so that a failed or stale suite cannot
# shadow another one's candidate versions.
apt_opts() {
    local d="$apt_root/$1"
    printf '%s\n' \
        -o "Dir::Etc::sourcelist=$d/sources.list" -o "Dir::Etc::sourceparts=-" \
        -o "Dir::Etc::preferences=$d/preferences" -o "Dir::Etc::preferencesparts=-" \
        -o "Dir::State::Lists=$d/lists" -o "Dir::State::status=$d/status" \
        -o "Dir::Cache=$d/cache" -o "Acquire::Languages=none" \
        -o "APT::Get::List-Cleanup=true"
    # apt drops to the _apt user for downloads; it cannot write into a root-owned cache.
    [ "$(id -u)" = 0 ] && printf '%s\n' -o "APT::Sandbox::User=root"
    return 0
}

try_suite() {
    local suite=$1 d="$apt_root/$1"
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
    : >"$d/status"
    : >"$d/preferences"
    printf 'deb [%starget=Packages] %s %s main\n' "$signed" "$mirror" "$suite" >"$d/sources.list"
    local -a opts
    mapfile -t opts < <(apt_opts "$suite")

    vm_log "apt-get update ($suite)"
    if ! apt-get -q "${opts[@]}" update >"$d/update.log" 2>&1; then
        vm_log "$suite: apt-get update failed (see $d/update.log)"
        return 1
    fi
    # linux-image-amd64 (meta) -> linux-image-<ver>-amd64 -> linux-binary-<ver>-amd64 (vmlinuz)
    #                                                      + linux-base-<ver>-amd64 (config)
    local ver
    ver=$(apt-cache "${opts[@]}" depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: linux-image-\(.*\)-amd64$/\1/p' | head -n1)
    if [ -z "$ver" ]; then
        vm_log "$suite: no linux-image-amd64 found"
        return 1
    fi
    vm_log "$suite: linux-image-amd64 -> $ver-amd64"

    local kdir="$TIX_VM_CACHE/kernel/$ver-amd64"
    local x="$TIX_VM_CACHE/extract.$$"
    rm -rf "$x"
    mkdir -p "$x"
    local -a pkgs
    if apt-cache "${opts[@]}" show "linux-binary-$ver-amd64" >/dev/null 2>&1; then
        pkgs=("linux-binary-$ver-amd64" "linux-base-$ver-amd64")
    else
        # Older packaging: the image package itself carries /boot/vmlinuz-* and /boot/config-*.
        pkgs=("linux-image-$ver-amd64")
    fi
    vm_log "$suite: downloading ${pkgs[*]}"
    if ! (cd "$deb_dir" && apt-get -q "${opts[@]}" download "${pkgs[@]}" >"$d/download.log" 2>&1); then
        vm_log "$suite: download failed (see $d/download.log)"
        rm -rf "$x"
        return 1
    fi
    local p deb
    for p in "${pkgs[@]}"; do
        deb=$(ls -t "$deb_dir/${p}_"*.deb 2>/dev/null | head -n1)
        [ -n "$deb" ] || {
            vm_log "$suite: $p was not downloaded"
            rm -rf "$x"
            return 1
        }
        dpkg-deb -x "$deb" "$x"
    done
    local vmlinuz config sysmap
    vmlinuz=$(ls "$x"/usr/lib/modules/*/vmlinuz "$x"/boot/vmlinuz-* 2>/dev/null | head -n1)
    config=$(ls "$x"/usr/lib/modules/*/config "$x"/boot/config-* 2>/dev/null | head -n1)
    sysmap=$(ls "$x"/usr/lib/modules/*/System.map "$x"/boot/System.map-* 2>/dev/null | head -n1 || true)
    if [ -z "$vmlinuz" ] || [ -z "$config" ]; then
        vm_log "$suite: package layout not understood (no vmlinuz or config)"
        rm -rf "$x"
        return 1
    fi
    if ! grep -qx 'CONFIG_SCHED_CLASS_EXT=y' "$config"; then
        vm_log "$suite: kernel $ver-amd64 lacks CONFIG_SCHED_CLASS_EXT=y"
        rm -rf "$x"
        return 1
    fi
    grep -qx 'CONFIG_DEBUG_INFO_BTF=y' "$config" ||
        vm_log "$suite: warning: kernel $ver-amd64 has no BTF; BPF schedulers will not load"
    rm -rf "$kdir"
    mkdir -p "$kdir"
    cp "$vmlinuz" "$kdir/vmlinuz"
    cp "$config" "$kdir/config"
    [ -n "$sysmap" ] && cp "$sysmap" "$kdir/System.map"
    printf '%s\n' "$suite" >"$kdir/suite"
    rm -rf "$x"
    fetch_modules "$suite" "$ver-amd64" || return 1
    printf '%s\n' "$ver-amd64" >"$TIX_VM_CACHE/kernel/current"
    vm_log "kernel $ver-amd64 from $suite, CONFIG_SCHED_CLASS_EXT=y, in $kdir"
    printf '%s\n' "$ver-amd64"
    return 0
}

# fetch_modules SUITE VER: the modules the tests load (TIX_VM_MODULES, by
# file name) into kernel/VER/modules, decompressed (busybox's insmod takes
# plain .ko files), plus a load order the guest follows. Newer packaging
# ships them in linux-modules-VER, older in linux-image-VER itself.
fetch_modules() {
    local suite=$1 ver=$2 kdir="$TIX_VM_CACHE/kernel/$2"
    local -a opts
    mapfile -t opts < <(apt_opts "$suite")
    local pkg="linux-modules-$ver"
    apt-cache "${opts[@]}" show "$pkg" >/dev/null 2>&1 || pkg="linux-image-$ver"
    vm_log "$suite: downloading $pkg (for ${TIX_VM_MODULES:-configfs null_blk bfq})"
    if ! (cd "$deb_dir" && apt-get -q "${opts[@]}" download "$pkg" >"$apt_root/$suite/modules.log" 2>&1); then
        vm_log "$suite: download of $pkg failed (see $apt_root/$suite/modules.log)"
        return 1
    fi
    local deb
    deb=$(ls -t "$deb_dir/${pkg}_"*.deb 2>/dev/null | head -n1)
    [ -n "$deb" ] || return 1
    local x="$TIX_VM_CACHE/modx.$$" m f
    rm -rf "$x" "$kdir/modules"
    mkdir -p "$x" "$kdir/modules"
    local -a pats=()
    for m in ${TIX_VM_MODULES:-configfs null_blk bfq}; do pats+=("*/$m.ko" "*/$m.ko.*"); done
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$x" --wildcards "${pats[@]}" 2>/dev/null || true
    for m in ${TIX_VM_MODULES:-configfs null_blk bfq}; do
        f=$(find "$x" -name "$m.ko*" | head -n1)
        if [ -z "$f" ]; then
            vm_log "$suite: $pkg has no module $m"
            rm -rf "$x"
            return 1
        fi
        case "$f" in
            *.xz) xz -dc "$f" >"$kdir/modules/$m.ko" ;;
            *.zst) zstd -qdc "$f" >"$kdir/modules/$m.ko" ;;
            *.gz) gzip -dc "$f" >"$kdir/modules/$m.ko" ;;
            *) cp "$f" "$kdir/modules/$m.ko" ;;
        esac
        printf '%s\n' "$m" >>"$kdir/modules/order"
    done
    rm -rf "$x"
    # The package is large and its modules are kept: the .deb is not.
    rm -f "$deb"
    : >"$kdir/modules/.complete"
    vm_log "$suite: modules ${TIX_VM_MODULES:-configfs null_blk bfq} in $kdir/modules"
}

# A cached kernel from before modules were kept: fetch its modules only.
if [ "$refresh" = 0 ]; then
    ver=$(vm_current_kernel)
    if [ -n "$ver" ]; then
        suite=$(cat "$TIX_VM_CACHE/kernel/$ver/suite" 2>/dev/null || true)
        if [ -n "$suite" ] && [ -f "$apt_root/$suite/sources.list" ] && fetch_modules "$suite" "$ver"; then
            printf '%s\n' "$ver"
            exit 0
        fi
        vm_log "kernel $ver: its modules could not be fetched; resolving the kernel again"
    fi
fi

for suite in ${TIX_VM_SUITES:-sid trixie-backports}; do
    if try_suite "$suite"; then
        exit 0
    fi
done
vm_die "no sched_ext-enabled kernel found in: ${TIX_VM_SUITES:-sid trixie-backports} (CONFIG_SCHED_CLASS_EXT=y required)"
