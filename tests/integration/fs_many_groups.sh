#!/bin/bash
# A caller in more than 256 supplementary groups (NGROUPS_MAX is 65536)
# makes entries with all of them, on the mount as on the disk: a directory
# writable only by its 300th group takes a new file, and a new file in a
# set-gid directory of that group gets the group.
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: no setpriv"; exit 77; }

groups=$(seq -s, 20001 20300)
last=20300
AS=(setpriv --reuid=65534 --regid=65534 "--groups=$groups")

run() { # DIR: what happened, one line each
	local d=$1
	mkdir -m 0070 "$d/g" && chown "0:$last" "$d/g"
	mkdir -m 2070 "$d/s" && chown "0:$last" "$d/s"
	if "${AS[@]}" touch "$d/g/f" 2>/dev/null; then echo "create in group dir: ok"; else echo "create in group dir: refused"; fi
	if "${AS[@]}" mkdir "$d/s/d" 2>/dev/null; then echo "mkdir in set-gid dir: ok"; else echo "mkdir in set-gid dir: refused"; fi
	stat -c '%n %u:%g' "$d/g/f" "$d/s/d" 2>&1 | sed "s|$d/||" || true
}
fs_run_both run
grep -q "create in group dir: ok" "$WORK/native.out" || fail "the disk refused the caller: the test proves nothing"
fs_diff_both "what a caller in 300 groups may do"
umount "$WORK/tree"
echo PASS
