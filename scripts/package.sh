#!/usr/bin/env bash
# Builds the Debian package of tix from a release build: scx_tix, scx_tix_user, tix and
# its aliases (lnice, lrenice, lsetbase, ltix and the Mach commands mkcur
# … fundx), the systemd unit (tix.service, flags from /etc/default/tix),
# /etc/tix/tix.toml as a conffile, man pages and shell completions
# generated from the clap definitions, and tix-lock's C library
# (/usr/include/tix_lock.h, libtix_lock.a and .so). Then checks it: the package's
# fields and files, and the unit with systemd-analyze verify against the
# package's own tree.
#
# usage: scripts/package.sh [--no-build] [--out DIR]     (default DIR: target/deb)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
build=1
out=target/deb
while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) build=0; shift ;;
        --out) [ $# -ge 2 ] || { echo "package: --out needs a directory" >&2; exit 2; }; out=$2; shift 2 ;;
        *) echo "package: unknown argument '$1' (usage: scripts/package.sh [--no-build] [--out DIR])" >&2; exit 2 ;;
    esac
done
target=${CARGO_TARGET_DIR:-$repo/target}
[ "$build" = 0 ] || cargo build --release --locked -p scx_tix -p scx_tix_user -p tix -p tix-lock >&2
for b in scx_tix scx_tix_user tix libtix_lock.a libtix_lock.so; do
    [ -f "$target/release/$b" ] || { echo "package: $target/release/$b missing (build first)" >&2; exit 1; }
done
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || { echo "package: no version in Cargo.toml" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/tix_${version}_amd64
install -d "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/default" "$root/etc/tix" \
    "$root/usr/share/man/man1" "$root/usr/share/man/man8" "$root/usr/share/bash-completion/completions" \
    "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d" "$root/usr/share/doc/tix"
install -m 0755 -s "$target/release/scx_tix" "$target/release/scx_tix_user" "$target/release/tix" "$root/usr/bin/"
for a in lnice lrenice lsetbase ltix mkcur rmcur fund unfund mktkt rmtkt lscur lstkt fundx; do ln -s tix "$root/usr/bin/$a"; done
install -m 0644 packaging/tix.service "$root/lib/systemd/system/tix.service"
install -m 0644 packaging/default-tix "$root/etc/default/tix"
install -m 0644 packaging/tix.toml "$root/etc/tix/tix.toml"
"$target/release/tix" man --out "$root/usr/share/man/man1"
"$target/release/scx_tix" --help >/dev/null
"$target/release/scx_tix" --man >"$root/usr/share/man/man8/scx_tix.8"
gzip -9n "$root"/usr/share/man/man1/*.1 "$root/usr/share/man/man8/scx_tix.8"
"$target/release/tix" completions bash >"$root/usr/share/bash-completion/completions/tix"
"$target/release/tix" completions zsh >"$root/usr/share/zsh/vendor-completions/_tix"
"$target/release/tix" completions fish >"$root/usr/share/fish/vendor_completions.d/tix.fish"
install -m 0644 README.md "$root/usr/share/doc/tix/README.md"
# The scenario files, for `tix sim run` and `tix sim kernel`.
install -d "$root/usr/share/tix/scenarios"
install -m 0644 crates/tix-sim/scenarios/*.toml "$root/usr/share/tix/scenarios/"
libdir=$root/usr/lib/x86_64-linux-gnu
install -d "$root/usr/include" "$libdir"
install -m 0644 crates/tix-lock/include/tix_lock.h "$root/usr/include/"
install -m 0644 "$target/release/libtix_lock.a" "$target/release/libtix_lock.so" "$libdir/"
strip --strip-debug "$libdir/libtix_lock.a" "$libdir/libtix_lock.so"
sed "s/@VERSION@/$version/" packaging/control >"$root/DEBIAN/control"
echo "Installed-Size: $(du -sk "$root" | cut -f1)" >>"$root/DEBIAN/control"
install -m 0644 packaging/conffiles "$root/DEBIAN/conffiles"
mkdir -p "$out"
deb=$out/tix_${version}_amd64.deb
# gzip members: busybox's dpkg (the VM guest's) reads those.
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null

# Checks: fields, files, the unit.
info=$(dpkg-deb --field "$deb" Package Version Architecture)
[ "$info" = "Package: tix
Version: $version
Architecture: amd64" ] || { echo "package: unexpected fields: $info" >&2; exit 1; }
files=$(dpkg-deb --contents "$deb" | awk '{ print $6 }')
for f in ./usr/bin/scx_tix ./usr/bin/scx_tix_user ./usr/bin/tix ./usr/bin/lnice ./usr/bin/ltix ./usr/bin/mkcur ./usr/bin/fundx ./lib/systemd/system/tix.service \
    ./etc/default/tix ./etc/tix/tix.toml ./usr/share/man/man1/tix.1.gz ./usr/share/man/man1/tix-status.1.gz ./usr/share/man/man8/scx_tix.8.gz \
    ./usr/share/bash-completion/completions/tix ./usr/include/tix_lock.h ./usr/share/tix/scenarios/kernel-gr3.toml \
    ./usr/lib/x86_64-linux-gnu/libtix_lock.a ./usr/lib/x86_64-linux-gnu/libtix_lock.so; do
    echo "$files" | grep -qx -- "$f" || { echo "package: $f missing from $deb" >&2; exit 1; }
done
[ "$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)" = "/etc/default/tix
/etc/tix/tix.toml" ] || { echo "package: conffiles are not /etc/default/tix and /etc/tix/tix.toml" >&2; exit 1; }
check=$(mktemp -d)
trap 'rm -rf "$stage" "$check"' EXIT
dpkg-deb -x "$deb" "$check"
# The installed header and shared library build and run a C program.
lib=$check/usr/lib/x86_64-linux-gnu
cc -O2 -std=c11 -D_GNU_SOURCE -I "$check/usr/include" crates/tix-lock/examples/fig11.c -L "$lib" -ltix_lock -lm \
    -o "$check/fig11" && LD_LIBRARY_PATH=$lib "$check/fig11" 0.3 1 1 | grep -q '^misuse refused' ||
    { echo "package: fig11 does not build or run against the packaged tix_lock.h and libtix_lock.so" >&2; exit 1; }
if command -v systemd-analyze >/dev/null; then
    # Verified inside the package's own tree (its ExecStart exists there),
    # with the host's targets and slices beside it for the default
    # dependencies; the man page it names is checked in the list above.
    cp -n /lib/systemd/system/*.target /lib/systemd/system/*.slice "$check/lib/systemd/system/" 2>/dev/null || true
    systemd-analyze verify --man=no --root="$check" /lib/systemd/system/tix.service ||
        { echo "package: systemd-analyze verify failed on tix.service" >&2; exit 1; }
else
    echo "package: systemd-analyze not found; unit not verified" >&2
    exit 1
fi
echo "$deb"
