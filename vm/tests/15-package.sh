# The Debian package installed as an operator installs it (dpkg; here
# busybox's, with --force-depends as the guest has no dpkg database) and
# the daemon started exactly as tix.service starts it: its EnvironmentFile
# sourced, its ExecStart line run.

deb=/opt/tix/tix.deb
[ -f "$deb" ]; check "the package is in the guest (scripts/package.sh builds it)" $?
mkdir -p /var/lib/dpkg/info /var/lib/dpkg/updates
[ -f /var/lib/dpkg/status ] || : >/var/lib/dpkg/status
dpkg -i --force-depends "$deb" >/tmp/dpkg.out 2>&1; r=$?
sed 's/^/#   /' /tmp/dpkg.out | head -5
check "dpkg -i installs the package" $r
[ -x /usr/bin/scx_tix ] && [ -x /usr/bin/tix ] && [ "$(readlink /usr/bin/lnice)" = tix ] &&
    [ -f /etc/tix/tix.toml ] && [ -f /etc/default/tix ] && [ -f /lib/systemd/system/tix.service ]
check "binaries, aliases, conffiles and the unit are installed" $?
exec_start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/tix.service)
diag "ExecStart=$exec_start; $(grep '^TIX_FLAGS' /etc/default/tix)"
(
    set -a
    . /etc/default/tix
    set +a
    eval "exec $exec_start"
) >/tmp/unit.log 2>&1 &
unit_pid=$!
wait_attach "$unit_pid" 180000; r=$?
[ $r = 0 ] || sed 's/^/#   /' /tmp/unit.log | tail -5
check "scx_tix started as tix.service starts it attaches" $r
/usr/bin/tix status --socket /run/tix.sock >/dev/null 2>&1; check "the installed tix reaches it" $?
kill -TERM "$unit_pid"
wait "$unit_pid"; r=$?
wait_state disabled 2000 && [ $r = 0 ]; check "it detaches and exits 0 on SIGTERM (systemctl stop)" $?
