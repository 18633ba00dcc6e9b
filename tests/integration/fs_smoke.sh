#!/bin/bash
# Mount a tree in place, change it through the mount, unmount: the changes
# are on the disk, the registry record and socket come and go with the mount.
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"

src=$WORK/proj
mkdir -p "$src/sub"
echo "before" >"$src/a.txt"
exec 9<"$src/a.txt" # opened before the mount: keeps seeing the disk below

fs_mount "$src"
fs_is_mounted "$src" || fail "no hermesfs mount at $src after hermesfs returned"
id=$(printf '%s' "$src" | sha256sum | cut -c1-16)
[ -f "$HERMES_HOME/run/$id.json" ] || fail "no registry record"
[ -S "$HERMES_HOME/run/$id.sock" ] || fail "no control socket"
[ "$(stat -c %a "$HERMES_HOME/run/$id.sock")" = 600 ] || fail "control socket is not 0600"

[ "$(cat "$src/a.txt")" = before ] || fail "cannot read through the mount"
echo "after" >"$src/a.txt"
echo "new" >"$src/sub/b.txt"
mkdir "$src/dir"
ln -s a.txt "$src/link"
mv "$src/sub/b.txt" "$src/dir/c.txt"
[ "$(cat "$src/dir/c.txt")" = new ] || fail "renamed file lost its content"
[ "$(readlink "$src/link")" = a.txt ] || fail "symlink target differs"
# the fd opened before the mount reads the same file (it is the disk below)
[ "$(cat <&9)" = after ] || fail "a pre-mount fd does not see the write through the mount"

umount "$src"
fs_is_mounted "$src" && fail "still mounted after umount"
for _ in $(seq 50); do [ -e "$HERMES_HOME/run/$id.json" ] || break; sleep 0.1; done
[ -e "$HERMES_HOME/run/$id.json" ] && fail "registry record left after a clean unmount"
[ -e "$HERMES_HOME/run/$id.sock" ] && fail "control socket left after a clean unmount"

# written through to the directory below
[ "$(cat "$src/a.txt")" = after ] || fail "write did not reach the disk"
[ "$(cat "$src/dir/c.txt")" = new ] || fail "rename did not reach the disk"
{ [ -d "$src/dir" ] && [ -L "$src/link" ]; } || fail "mkdir/symlink did not reach the disk"
grep -q "mounted $src on $src" "$HERMES_HOME/logs/$id.log" || fail "daemon log lacks the mount line"

# SIGTERM unmounts cleanly too
fs_mount "$src"
pid=$(fs_pid_of "$src")
kill -TERM "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "daemon still running 5 s after SIGTERM"
fs_is_mounted "$src" && fail "still mounted after SIGTERM"
[ -e "$HERMES_HOME/run/$id.json" ] && fail "registry record left after SIGTERM"
[ "$(cat "$src/a.txt")" = after ] || fail "tree unreadable after SIGTERM"
fs_check_log
echo "ok: mounted in place, wrote through, unmounted cleanly (umount and SIGTERM)"
