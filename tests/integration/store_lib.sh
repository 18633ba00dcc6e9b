# Shared setup for the store_*.sh tests: a temp HERMES_HOME and tree,
# cleaned up on exit; helpers to run hermesctl and to fail with a message.
# shellcheck shell=bash
set -euo pipefail
HCTL=$BUILD/tools/hermesctl
WORK=$(mktemp -d)
# A background collection started by a checkpoint may still be writing
# into a store: wait for its lock before removing everything, or rm races
# with it ("Directory not empty") and fails a test that passed.
store_lib_cleanup() {
	local l
	[ -z "${KEEP:-}" ] || return 0
	for l in "$WORK"/home/checkpoints/*/gc.lock; do
		[ -e "$l" ] && timeout 120 flock "$l" true
	done
	rm -rf "$WORK" 2>/dev/null || { sleep 0.5; rm -rf "$WORK"; }
}
trap store_lib_cleanup EXIT
export HERMES_HOME=$WORK/home
TREE=$WORK/tree
mkdir -p "$HERMES_HOME" "$TREE"
TREE=$(cd "$TREE" && pwd -P)
TESTS=0

fail() {
	echo "not ok: $*" >&2
	exit 1
}

ok() {
	TESTS=$((TESTS + 1))
	echo "ok $TESTS - $*"
}

# The store directory of $TREE (after the first checkpoint).
store_dir() {
	local id
	id=$(printf '%s' "$TREE" | sha256sum | cut -c1-16)
	echo "$HERMES_HOME/checkpoints/$id"
}

# Run hermesctl, expecting exit code $1; output in $OUT/$ERR.
expect() {
	local want=$1 rc=0
	shift
	# shellcheck disable=SC2034 # OUT is read by the sourcing test
	OUT=$("$HCTL" "$@" 2>"$WORK/err") || rc=$?
	ERR=$(cat "$WORK/err")
	[ "$rc" = "$want" ] || fail "hermesctl $* exited $rc, want $want (stderr: $ERR)"
	if [ "$rc" -ge 128 ]; then fail "hermesctl $* died of a signal"; fi
	if grep -q 'Sanitizer\|runtime error' "$WORK/err"; then fail "sanitizer report: $ERR"; fi
}
