#!/bin/bash
# shellcheck disable=SC2016,SC2088,SC2015 # job text is single-quoted on purpose
# Turn marking: a job whose directory is in a tree whose daemon is dead is
# refused; inside a live mount (when hermesfs can mount) the turn reason
# reaches the checkpoint store.
. "$(dirname "$0")/run_lib.sh"

tree="$T/tree"
mkdir -p "$tree/src" "$HERMES_HOME/run"
tree=$(cd "$tree" && pwd -P)
id=$(printf %s "$tree" | sha256sum | cut -c1-16)
sleep 0 &
dead=$!
wait "$dead"
cat >"$HERMES_HOME/run/$id.json" <<JSON
{"id":"$id","source":"$tree","mountpoint":"$tree","socket":"$HERMES_HOME/run/$id.sock",
 "log":"","pid":$dead,"started":0}
JSON
rc=0
"$HCTL" run -C "$tree/src" -- 'echo should-not-run' >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "dead daemon: exit $rc"
grep -q "daemon (pid $dead) is dead" "$T/err" || fail "message: $(cat "$T/err")"
[ -s "$T/out" ] && fail "the command ran"
rm "$HERMES_HOME/run/$id.json"
"$HCTL" run -C "$tree/src" -- true || fail "an unmounted tree must not matter"
pass "a tree with a dead daemon is an error; no registry entry is fine"

# With a real mount: needs hermesfs and /dev/fuse.
[ -c /dev/fuse ] || { echo "# no /dev/fuse"; exit 0; }
if ! "$HCTL" mount "$tree" >"$T/mount.log" 2>&1; then
	echo "# hermesctl mount does not work yet: live turn check skipped"
	exit 0
fi
TEST_MOUNT="$tree"
trap '"$HCTL" umount "$TEST_MOUNT" >/dev/null 2>&1 || true; run_cleanup' EXIT
"$HCTL" run -C "$tree" --reason "agent edit 42" -- 'echo new > src/file' || fail "run in a mounted tree"
store="$HERMES_HOME/checkpoints/$id"
[ -d "$store" ] || fail "no store at $store"
git --git-dir="$store" log --format=%B --all | grep -q "agent edit 42" ||
	fail "the checkpoint does not carry the turn reason"
pass "a job in a mounted tree produced a checkpoint with its reason"
