#!/bin/bash
# With every file kept as a file handle (-o fd_budget=0, what big trees get
# past half the fd limit), files replaced by rename read back right: the
# disk reuses inode numbers, and a stale handle must never reach a reader.
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: file handles need root"; exit 77; }

# twice: with the fds of recently used files kept open for reuse (the
# default), and reopened from the handle for every op (handle_fds=0)
for opts in fd_budget=0 fd_budget=0,handle_fds=0; do
src=$WORK/proj-${opts//[=,]/-}
mkdir -p "$src"
fs_mount "$src" -o "$opts"
bad=0
for i in $(seq 1000); do
	echo "$i" >"$src/tmp"
	mv "$src/tmp" "$src/target"
	got=$(cat "$src/target" 2>&1) || true
	[ "$got" = "$i" ] || { bad=$((bad + 1)); echo "round $i: read '$got'" >&2; }
	ln "$src/target" "$src/link$((i % 3))" 2>/dev/null || true
	rm -f "$src/link$(((i + 1) % 3))"
done
[ "$bad" = 0 ] || fail "-o $opts: $bad of 1000 reads after replace-by-rename went wrong"
# an unlinked file that is still open keeps working through its handle
exec 8<>"$src/target"
rm "$src/target"
echo more >&8
chmod 600 /proc/self/fd/8 || fail "-o $opts: fchmod-like chmod of an open unlinked file failed"
exec 8>&-
umount "$src"
done
fs_check_log
echo "ok: handle-only inodes survive inode-number reuse"
