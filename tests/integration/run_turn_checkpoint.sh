#!/bin/bash
# shellcheck disable=SC2016,SC2088,SC2015 # job text is single-quoted on purpose
# Turn marking with a live mount: the job's --reason reaches the checkpoint
# taken before its first change. Skips (77) until hermesfs mounts and its
# daemon knows the "turn" op.
. "$(dirname "$0")/run_lib.sh"

[ -c /dev/fuse ] || { echo "# no /dev/fuse"; exit 77; }
tree="$T/tree"
mkdir -p "$tree/src"
echo old >"$tree/src/file"
tree=$(cd "$tree" && pwd -P)
id=$(printf %s "$tree" | sha256sum | cut -c1-16)
if ! "$HCTL" mount "$tree" >"$T/mount.log" 2>&1; then
	echo "# hermesctl mount does not work yet: $(head -1 "$T/mount.log")"
	exit 77
fi
trap '"$HCTL" umount "$tree" >/dev/null 2>&1 || true; run_cleanup' EXIT
# a change outside any turn first: the turn's checkpoint (the tree before
# its first change) then differs from the baseline (awaited: a change it
# scanned would be in it) and is a commit of its own
store="$HERMES_HOME/checkpoints/$id"
for _ in $(seq 200); do
	git --git-dir="$store" rev-parse -q --verify refs/heads/main >/dev/null 2>&1 && break
	sleep 0.05
done
echo mid >"$tree/src/file"
"$HCTL" run -d -C "$tree" --reason "agent edit 42" -- 'echo new > src/file' 2>"$T/err" ||
	fail "run in a mounted tree: $(cat "$T/err")"
if grep -q "does not support turns yet" "$T/err"; then
	echo "# the daemon does not implement turns yet"
	exit 77
fi
store="$HERMES_HOME/checkpoints/$id"
[ -d "$store" ] || fail "no store at $store"
git --git-dir="$store" log --format=%B --all | grep -q "agent edit 42" ||
	fail "no checkpoint carries the turn reason"
git --git-dir="$store" show "$(git --git-dir="$store" log --all --format=%H --grep "agent edit 42" | head -1):src/file" |
	grep -qx mid || fail "the checkpoint does not hold the file as it was before the job"
pass "a job in a mounted tree produced a checkpoint of the tree before it, with its reason"
