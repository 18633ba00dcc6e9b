#!/bin/bash
# Inode flags (chattr/lsattr: FS_IOC_GETFLAGS/SETFLAGS, and the
# FS_IOC_FSGETXATTR pair) on the mount as on the disk below: append-only
# files take appends but not overwrites, immutable directories take no new
# names, lsattr shows what chattr set; an ioctl the mount does not forward
# says ENOTTY, as for a file that has none.
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: chattr +a/+i needs root"; exit 77; }
command -v chattr >/dev/null && command -v lsattr >/dev/null || { echo "skip: no chattr"; exit 77; }

run() ( # DIR: one line per step (in a subshell: failures are results here)
	set +e
	d=$1
	mkdir "$d/d"
	echo x >"$d/f"
	r() { if "$@" 2>/dev/null; then echo "ok: ${*//$d/}"; else echo "refused: ${*//$d/}"; fi; }
	r chattr +a "$d/f"
	lsattr "$d/f" 2>&1 | awk '{ print "lsattr f: " $1 }'
	r sh -c "echo y >>'$d/f'"
	r sh -c "echo z >'$d/f'"
	r rm -f "$d/f"
	r chattr -a "$d/f"
	r chattr +i "$d/d"
	lsattr -d "$d/d" 2>&1 | awk '{ print "lsattr d: " $1 }'
	r touch "$d/d/new"
	r chattr -i "$d/d"
	r touch "$d/d/new"
	python3 - "$d/f" <<'PY'
import array, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.ioctl(fd, 0x1234)
    print("unknown ioctl: ok")
except OSError as e:
    print("unknown ioctl:", e.strerror)
FS_IOC_FSGETXATTR = 0x801C581F
buf = array.array("B", bytes(28))
try:
    fcntl.ioctl(fd, FS_IOC_FSGETXATTR, buf, True)
    print("fsgetxattr: ok, xflags %d" % int.from_bytes(buf[0:4].tobytes(), "little"))
except OSError as e:
    print("fsgetxattr:", e.strerror)
PY
	cat "$d/f"
)
fs_run_both run
grep -q "^ok: chattr +a" "$WORK/native.out" || { echo "skip: the disk below takes no inode flags"; exit 77; }
fs_diff_both "inode flags"
umount "$WORK/tree"
echo PASS
