#!/bin/bash
# A daemon killed with SIGKILL leaves a dead mount: reads fail with ENOTCONN
# ("Transport endpoint is not connected"), the disk below is intact, and an
# unmount clears it so the tree can be mounted again.
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"

src=$WORK/proj
mkdir -p "$src"
echo "kept" >"$src/a.txt"
fs_mount "$src"
echo "written" >"$src/b.txt"
pid=$(fs_pid_of "$src")
[ -n "$pid" ] || fail "no daemon pid in the registry"
kill -KILL "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done

rc=0
out=$(cat "$src/a.txt" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "read through a dead mount succeeded: $out"
printf '%s\n' "$out" | grep -q 'Transport endpoint is not connected' ||
	fail "dead mount gave '$out', expected ENOTCONN"
fs_is_mounted "$src" || fail "the dead mount vanished by itself"

# the same tree cannot be stacked on the dead mount
rc=0
out=$("$HERMESFS" "$src" 2>&1) || rc=$?
printf "%s\n" "$out" | grep -q "daemon died" || fail "mounting over a dead mount says: $out"
[ "$rc" = 1 ] || fail "mounting over a dead mount exited $rc"

umount "$src" || umount -l "$src"
fs_is_mounted "$src" && fail "still mounted after umount"
[ "$(cat "$src/a.txt")" = kept ] || fail "old file damaged"
[ "$(cat "$src/b.txt")" = written ] || fail "write before the crash lost"

# a stale registry record does not block a new mount
fs_mount "$src"
[ "$(cat "$src/b.txt")" = written ] || fail "remount does not read the tree"
umount "$src"
fs_check_log
echo "ok: crash gives ENOTCONN, unmount clears it, remount works"
