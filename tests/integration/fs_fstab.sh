#!/bin/bash
# /etc/fstab use, as its README line shows: mount(8) with a fuse.hermesfs
# line (here from a private fstab file, mount -T) mounts in place and on a
# separate mountpoint, with mount(8)'s own words (defaults, noauto, nofail,
# x-systemd.*) in the options; the mount is hermesfs's (type, record,
# writes through it), and `hermesctl umount` ends it.
set -u
. "$SRC/tests/integration/lib.sh"
t_need_fuse
t_need_root
t_need_cmd mount mount.fuse3 findmnt python3
t_init
HCTL=$BUILD/tools/hermesctl
# mount.fuse3 runs the type's program by name, through /bin/sh and PATH
mkdir -p "$T/bin"
ln -s "$HERMESFS" "$T/bin/hermesfs"
export PATH=$T/bin:$PATH

mkdir -p "$T/proj" "$T/src" "$T/mnt"
echo "on disk" >"$T/proj/a.txt"
echo "below" >"$T/src/b.txt"
cat >"$T/fstab" <<TAB
# a private fstab: the system's is not touched
$T/proj  $T/proj  fuse.hermesfs  defaults,noauto,nofail,x-systemd.automount  0 0
$T/src   $T/mnt   fuse.hermesfs  noauto,allow_other  0 0
TAB

for mp in "$T/proj" "$T/mnt"; do
	out=$(mount -T "$T/fstab" "$mp" 2>&1) || t_fail "mount -T fstab $mp failed: $out"
	T_MOUNTS+=("$mp")
	[ "$(findmnt -n -o FSTYPE --mountpoint "$mp" | tail -n 1)" = fuse.hermesfs ] ||
		t_fail "$mp is not a fuse.hermesfs mount: $(findmnt --mountpoint "$mp")"
	pid=$("$HCTL" status --json "$mp" | python3 -c 'import json,sys; print(json.load(sys.stdin)["mounts"][0]["pid"])') ||
		t_fail "hermesctl status has no record of $mp"
	T_PIDS+=("$pid")
done

t_expect_content "$T/proj/a.txt" "on disk"
echo "through fstab" >"$T/proj/c.txt"
t_expect_content "$T/mnt/b.txt" "below"
echo "on the mountpoint" >"$T/mnt/d.txt"
t_expect_content "$T/src/d.txt" "on the mountpoint"

for mp in "$T/proj" "$T/mnt"; do
	out=$("$HCTL" umount "$mp" 2>&1) || t_fail "hermesctl umount $mp: $out"
	t_is_mounted "$mp" && t_check_fail "$mp still mounted after hermesctl umount"
done
t_expect_content "$T/proj/c.txt" "through fstab"
t_pass
