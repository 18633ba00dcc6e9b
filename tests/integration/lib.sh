# shellcheck shell=bash
# Shared helpers for the integration scripts: a private temp dir and
# HERMES_HOME, mounting hermesfs with a trap that always unmounts, waiting,
# sanitizer scans of everything the daemon printed, and running as nobody.
#
# Use: . "$SRC/tests/integration/lib.sh"; t_init; ... ; t_pass
# Exit codes: 0 pass, 1 fail, 77 skip (meson's convention).

set -u
set -o pipefail

: "${BUILD:?BUILD must point at the meson build dir}"
: "${SRC:?SRC must point at the source tree}"
# absolute, since the scripts change directory
BUILD=$(cd "$BUILD" && pwd) || exit 1
SRC=$(cd "$SRC" && pwd) || exit 1

HERMESFS=${HERMESFS:-$BUILD/fs/hermesfs}
T=""
T_MOUNTS=()     # mountpoints we mounted, unmounted by the trap
T_PIDS=()       # daemon pids we started, in the same order
T_LOGS=()       # files to scan for sanitizer reports
T_FAILED=0
T_ON_CLEANUP=() # commands run first by the trap (stop what the test started)
NOBODY_UID=65534
NOBODY_GID=65534

t_log() { printf '# %s\n' "$*" >&2; }

t_fail() {
	printf 'FAIL: %s\n' "$*" >&2
	T_FAILED=1
	exit 1
}

t_skip() {
	printf 'SKIP: %s\n' "$*" >&2
	exit 77
}

# Record a failure but keep going, so one run shows every difference.
t_check_fail() {
	printf 'FAIL: %s\n' "$*" >&2
	T_FAILED=1
}

t_need_root() { [ "$(id -u)" = 0 ] || t_skip "needs root"; }

t_need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || t_skip "needs $c"
	done
}

t_need_fuse() {
	[ -c /dev/fuse ] || t_skip "no /dev/fuse"
	t_need_cmd fusermount3
	[ -x "$HERMESFS" ] || t_fail "no daemon at $HERMESFS (build first)"
}

# A fresh world: $T (mode 0755 so uid 65534 can reach inside), HERMES_HOME
# below it, and the cleanup trap.
t_init() {
	T=$(mktemp -d /tmp/hermes-it.XXXXXX) || exit 1
	chmod 0755 "$T"
	export HERMES_HOME="$T/hermes-home"
	mkdir -p "$HERMES_HOME"
	trap t_cleanup EXIT
	trap 'exit 130' INT TERM
}

# Scan one file for sanitizer reports; print them and return 1 if any.
t_scan_file() {
	local f=$1
	[ -f "$f" ] || return 0
	if grep -Eq 'ERROR: [A-Za-z]*Sanitizer|runtime error:' "$f"; then
		printf 'sanitizer report in %s:\n' "$f" >&2
		grep -E -A 30 'ERROR: [A-Za-z]*Sanitizer|runtime error:' "$f" \
			| head -n 80 >&2
		return 1
	fi
	return 0
}

# Every daemon stderr we captured plus every log under HERMES_HOME.
t_scan_sanitizers() {
	local f bad=0
	for f in "${T_LOGS[@]}"; do
		t_scan_file "$f" || bad=1
	done
	if [ -n "$T" ] && [ -d "$HERMES_HOME/logs" ]; then
		for f in "$HERMES_HOME"/logs/*; do
			t_scan_file "$f" || bad=1
		done
	fi
	return $bad
}

t_is_mounted() {
	local fstype
	fstype=$(findmnt -n -o FSTYPE --mountpoint "$1" 2>/dev/null | tail -n 1)
	case $fstype in fuse*) return 0 ;; esac
	return 1
}

# Run a command until it succeeds or the timeout (seconds, may be a
# fraction) runs out.
t_wait_for() {
	local timeout=$1 i n
	shift
	n=$(awk -v t="$timeout" 'BEGIN { printf "%d", t * 20 }')
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	"$@"
}

# Mount SRC (in place) or SRC on MNT with hermesfs in the foreground,
# in the background of this shell, so that we own its pid and its stderr.
# Extra daemon options follow after --, e.g. t_mount src -- -o ro
t_mount() {
	local src=$1 mnt=${1} n pid errf
	shift
	if [ $# -gt 0 ] && [ "$1" != "--" ]; then
		mnt=$1
		shift
	fi
	[ "${1-}" = "--" ] && shift
	n=${#T_PIDS[@]}
	errf="$T/hermesfs.$n.stderr"
	if [ "$src" = "$mnt" ]; then
		"$HERMESFS" "$src" -f "$@" 2>"$errf" &
	else
		"$HERMESFS" "$src" "$mnt" -f "$@" 2>"$errf" &
	fi
	pid=$!
	T_PIDS+=("$pid")
	T_MOUNTS+=("$mnt")
	T_LOGS+=("$errf")
	if ! t_wait_for 10 t_is_mounted "$mnt"; then
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$errf" >&2
			t_fail "hermesfs exited before mounting $mnt"
		fi
		cat "$errf" >&2
		t_fail "hermesfs did not mount $mnt within 10 s"
	fi
	# shellcheck disable=SC2034 # read by the scripts
	T_DAEMON_PID=$pid
}

# Unmount MNT and wait for the daemon we started for it to exit.
t_umount() {
	local mnt=$1 i pid="" slot=""
	for i in "${!T_MOUNTS[@]}"; do
		if [ "${T_MOUNTS[$i]}" = "$mnt" ]; then
			pid=${T_PIDS[$i]}
			slot=$i
		fi
	done
	# forgotten only once unmounted: a busy mount stays the trap's to undo
	if t_is_mounted "$mnt"; then
		fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" ||
			t_fail "cannot unmount $mnt"
	fi
	[ -n "$slot" ] && T_MOUNTS[slot]=""
	[ -n "$pid" ] || return 0
	if ! t_wait_for 10 t_pid_gone "$pid"; then
		t_check_fail "hermesfs (pid $pid) still running 10 s after unmount"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	local rc=$?
	# 0 is a clean exit; anything else after a clean unmount is a bug.
	[ "$rc" = 0 ] || t_check_fail "hermesfs exited with status $rc after unmount"
	return 0
}

t_pid_gone() { ! kill -0 "$1" 2>/dev/null; }

# Register a command for the trap, e.g. to stop a helper process the test
# started; they run before the unmounts, newest first.
t_on_cleanup() { T_ON_CLEANUP+=("$1"); }

t_cleanup() {
	local rc=$? i mnt pid
	set +e
	cd / || true # a shell inside the mount would keep it busy
	for ((i = ${#T_ON_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${T_ON_CLEANUP[$i]}" >/dev/null 2>&1
	done
	for i in "${!T_MOUNTS[@]}"; do
		mnt=${T_MOUNTS[$i]}
		pid=${T_PIDS[$i]}
		[ -n "$mnt" ] || continue
		if t_is_mounted "$mnt"; then
			fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null ||
				umount -l "$mnt" 2>/dev/null
		fi
		if kill -0 "$pid" 2>/dev/null; then
			t_wait_for 5 t_pid_gone "$pid" || kill -KILL "$pid" 2>/dev/null
		fi
	done
	if ! t_scan_sanitizers; then
		rc=1
	fi
	[ "$T_FAILED" = 1 ] && [ "$rc" = 0 ] && rc=1
	if [ -n "$T" ] && [ -d "$T" ] && [ -z "${T_KEEP-}" ]; then
		# a background collection may still be writing into a store
		for i in "$T"/hermes-home/checkpoints/*/gc.lock; do
			[ -e "$i" ] && timeout 120 flock "$i" true
		done
		# Never follow into a mount that refused to go away.
		if ! findmnt -rn -o TARGET | grep -q "^$T/"; then
			rm -rf "$T"
		else
			printf 'leaving %s: still mounted below it\n' "$T" >&2
		fi
	fi
	exit "$rc"
}

t_pass() {
	[ "$T_FAILED" = 0 ] || exit 1
	exit 0
}

# Run a command as uid/gid 65534 with no supplementary groups.
t_as_nobody() {
	setpriv --reuid "$NOBODY_UID" --regid "$NOBODY_GID" --clear-groups -- "$@"
}

# Compare two files; print a unified diff and fail the test if they differ.
t_diff() {
	local what=$1 a=$2 b=$3
	if ! diff -u "$a" "$b" >&2; then
		t_check_fail "$what: differences above (- native, + mount)"
		return 1
	fi
	return 0
}

# A listing of a tree that a person would compare: type, mode, owner, size,
# link count and link target, never inode numbers or times.
t_stat_tree() {
	(cd "$1" && find . -mindepth 1 -printf '%y %m %u:%g %s %n %p -> %l\n' |
		sed 's/ -> $//' | LC_ALL=C sort)
}

# sha256 of every regular file in a tree, sorted by path.
t_hash_tree() {
	(cd "$1" && find . -type f -print0 | LC_ALL=C sort -z |
		xargs -0 -r sha256sum)
}

# user.* xattrs of every entry in a tree, sorted by path.
t_xattr_tree() {
	(cd "$1" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
		xargs -0 -r getfattr -h -d -m '^user\.' --absolute-names 2>/dev/null)
}

# Compare two trees as a user would: listing (types, modes, owners, sizes,
# link counts, symlink targets), file contents and user xattrs. Returns 1
# (and marks the test failed) on any difference.
t_compare_trees() {
	local what=$1 a=$2 b=$3 bad=0
	t_stat_tree "$a" >"$T/cmp.a.stat"
	t_stat_tree "$b" >"$T/cmp.b.stat"
	t_diff "$what: listing" "$T/cmp.a.stat" "$T/cmp.b.stat" || bad=1
	t_hash_tree "$a" >"$T/cmp.a.hash"
	t_hash_tree "$b" >"$T/cmp.b.hash"
	t_diff "$what: contents" "$T/cmp.a.hash" "$T/cmp.b.hash" || bad=1
	t_xattr_tree "$a" >"$T/cmp.a.xattr"
	t_xattr_tree "$b" >"$T/cmp.b.xattr"
	t_diff "$what: xattrs" "$T/cmp.a.xattr" "$T/cmp.b.xattr" || bad=1
	return $bad
}

# Fail unless file $1 holds exactly the text $2 (plus a final newline).
t_expect_content() {
	local f=$1 want=$2
	if [ "$(cat "$f" 2>&1)" != "$want" ]; then
		printf -- '--- want\n%s\n--- got\n' "$want" >&2
		cat "$f" >&2
		t_check_fail "$f does not hold the expected text"
		return 1
	fi
	return 0
}
