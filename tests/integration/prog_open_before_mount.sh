#!/bin/bash
# Processes that had a file open, or their working directory, in the tree
# BEFORE it was mounted in place keep using the disk below (documented in
# ARCHITECTURE.md: they bypass the mount); a new open goes through the
# mount. Both see one file: no write from either side is lost.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
t_need_root
t_need_fuse
t_need_cmd findmnt stat
t_init

src=$T/src
mkdir -p "$src/sub"
printf 'line0\n' >"$src/log.txt"
printf 'r0\n' >"$src/read.txt"

# opened before the mount: a writer (append), a reader, and a process whose
# working directory is inside the tree
exec 7>>"$src/log.txt"
exec 8<"$src/read.txt"
(cd "$src/sub" && exec sleep 600) &
holder=$!
t_on_cleanup "kill $holder"
t_on_cleanup "exec 7>&- 8<&-"
# shellcheck disable=SC2317 # called through t_wait_for
holder_ready() { [ "$(cat "/proc/$holder/comm" 2>/dev/null)" = sleep ]; }
t_wait_for 5 holder_ready || t_fail "the holder process did not start"
lower_dev=$(stat -c %d "$src")

t_mount "$src"
mount_dev=$(stat -c %d "$src")
[ "$lower_dev" != "$mount_dev" ] || t_fail "the mount does not cover $src"

# the old working directory is still the directory below
[ "$(stat -L -c %d "/proc/$holder/cwd")" = "$lower_dev" ] ||
	t_check_fail "a pre-mount working directory moved onto the mount"
# a new open of the same path is on the mount
[ "$(stat -c %d "$src/log.txt")" = "$mount_dev" ] ||
	t_check_fail "a new open of $src/log.txt is not on the mount"

# writes from both sides, interleaved. The daemon cannot see a write made
# through a pre-mount fd; the kernel may serve cached attributes (size) of
# the file for up to the attribute timeout, so such a write must become
# visible through the mount within a few seconds, not at once.
# shellcheck disable=SC2317 # called through t_wait_for
has_content() { [ "$(cat "$1" 2>&1)" = "$2" ]; }
printf 'old-fd-1\n' >&7
if ! has_content "$src/log.txt" $'line0\nold-fd-1'; then
	t_log "note: a pre-mount fd's write is not visible at once through the mount"
	t_wait_for 3 has_content "$src/log.txt" $'line0\nold-fd-1' ||
		t_check_fail "a pre-mount fd's write is not visible through the mount after 3 s"
fi
printf 'mount-1\n' >>"$src/log.txt"
printf 'old-fd-2\n' >&7
t_wait_for 3 has_content "$src/log.txt" $'line0\nold-fd-1\nmount-1\nold-fd-2'
t_expect_content "$src/log.txt" $'line0\nold-fd-1\nmount-1\nold-fd-2'

# the pre-mount reader sees what is written through the mount
printf 'r1\n' >>"$src/read.txt"
[ "$(cat <&8)" = $'r0\nr1' ] || t_check_fail "a pre-mount reader misses a write made through the mount"

# a file created from the old working directory is on the disk and, when
# the name was not looked up through the mount before, visible through it
printf 'from-old-cwd\n' >"/proc/$holder/cwd/created.txt"
t_expect_content "$src/sub/created.txt" 'from-old-cwd'
# a file created through the mount is visible from the old working directory
printf 'from-mount\n' >"$src/sub/made-on-mount.txt"
t_expect_content "/proc/$holder/cwd/made-on-mount.txt" 'from-mount'

exec 7>&- 8<&-
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
cd "$T" || exit 1
t_umount "$src"

# nothing lost on the disk below
t_expect_content "$src/log.txt" $'line0\nold-fd-1\nmount-1\nold-fd-2'
t_expect_content "$src/read.txt" $'r0\nr1'
t_expect_content "$src/sub/created.txt" 'from-old-cwd'
t_expect_content "$src/sub/made-on-mount.txt" 'from-mount'
t_pass
