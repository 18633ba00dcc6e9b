# shellcheck shell=bash
# Shared setup for the hermesfs daemon tests (sourced, not run). Gives each
# test a private $HERMES_HOME and work dir, and a trap that unmounts and
# stops only the daemons this test started.
set -euo pipefail

HERMESFS=${BUILD:?BUILD is not set}/fs/hermesfs
[ -c /dev/fuse ] || { echo "skip: no /dev/fuse"; exit 77; }
[ "$(id -u)" = 0 ] || command -v fusermount3 >/dev/null || { echo "skip: cannot mount FUSE"; exit 77; }

WORK=$(mktemp -d /tmp/hermesfs-test.XXXXXX)
export HERMES_HOME=$WORK/home
mkdir -p "$HERMES_HOME"
FS_MOUNTS=()

fs_cleanup() {
	local m pid i pids=()
	set +e
	cd / || true
	for m in "${FS_MOUNTS[@]}"; do
		pid=$(fs_pid_of "$m" 2>/dev/null)
		if fs_is_mounted "$m"; then
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
		fi
		if [ -n "$pid" ]; then
			kill "$pid" 2>/dev/null
			pids+=("$pid")
		fi
	done
	# A daemon still exiting writes its log and run record under $WORK:
	# wait for it (a sanitizer build takes a while), or rm races with it.
	for pid in "${pids[@]}"; do
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	done
	if findmnt -rn -o TARGET | grep -q "^$WORK/"; then
		echo "leaving $WORK: still mounted below it" >&2
	else
		rm -rf "$WORK" 2>/dev/null || { sleep 0.5; rm -rf "$WORK"; }
	fi
}
trap fs_cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# The daemon pid of a mount, from its registry record.
fs_pid_of() {
	local id
	id=$(printf '%s' "$1" | sha256sum | cut -c1-16)
	sed -n 's/.*"pid":[[:space:]]*\([0-9]*\).*/\1/p' "$HERMES_HOME/run/$id.json"
}

# fs_mount SOURCE [MOUNTPOINT] [options...]: the last of the two paths is
# what gets unmounted at exit.
fs_mount() {
	if [ $# -ge 2 ] && [ "${2#-}" = "$2" ]; then
		FS_MOUNTS+=("$(realpath "$2")")
	else
		FS_MOUNTS+=("$(realpath "$1")")
	fi
	"$HERMESFS" "$@"
}

# Fail when the daemon log holds a sanitizer report.
fs_check_log() {
	if grep -E -l 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' \
		"$HERMES_HOME"/logs/*.log 2>/dev/null; then
		cat "$HERMES_HOME"/logs/*.log >&2
		fail "sanitizer report in the daemon log"
	fi
}

# Is there a hermesfs mount (live or dead) at this exact path?
fs_is_mounted() {
	awk -v m="$1" '$5 == m { sub(/.* - /, ""); print $1 }' /proc/self/mountinfo |
		grep -qx 'fuse.hermesfs'
}

# fs_run_both FUNC: FUNC DIR on a plain directory ($WORK/native) and on a
# mount of a sibling ($WORK/tree), both on the same disk, each transcript
# (stdout and stderr) in $WORK/native.out and $WORK/mount.out; the mount's
# is shown. Check what the test needs of them, then fs_diff_both.
fs_run_both() {
	mkdir -p "$WORK/native" "$WORK/tree"
	chmod 0755 "$WORK" "$WORK/native" "$WORK/tree"
	"$1" "$WORK/native" >"$WORK/native.out" 2>&1 || true
	fs_mount "$WORK/tree"
	"$1" "$WORK/tree" >"$WORK/mount.out" 2>&1 || true
	cat "$WORK/mount.out"
}

# fs_diff_both WHAT: the two transcripts must be the same
fs_diff_both() {
	diff -u "$WORK/native.out" "$WORK/mount.out" || fail "$1 on the mount differs from the disk"
}
