#!/bin/bash
# A tree over checkpoints.max_files (issue 14, item 3) is told the truth and
# costs nothing: mount, status and rollback give the one reason, with what
# to do; turns and writes then trigger no scan and no failure (the store is
# not counted again); `hermesctl checkpoint` after .hermesignore excludes
# enough, or after the cap is raised, turns checkpoints on without a
# remount. A remount of a tree still over the cap says the same at once.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config "turn_idle_ms: 0" "max_files: 2000"
python3 - "$TREE" <<'PY'
import os, sys
for d in range(5):
    os.makedirs(os.path.join(sys.argv[1], "d%d" % d))
    for i in range(500):
        open(os.path.join(sys.argv[1], "d%d" % d, "f%d" % i), "w").write("x")
PY
"$HCTL" mount "$TREE" >"$T/mount.out" 2>"$T/mount.err" || t_fail "mount failed: $(cat "$T/mount.err")"
t_on_cleanup "'$HCTL' umount '$TREE' >/dev/null 2>&1"
reason=$(ckpt_status_json | python3 -c '
import json, sys
ck = json.load(sys.stdin)["mounts"][0]["checkpoints"]
assert ck["enabled"] is False and ck.get("over_cap") is True, ck
print(ck["reason"])') || t_fail "status --json does not say checkpoints are off: $(ckpt_status_json)"
case $reason in
*"more than 2000 files"*".hermesignore"*"hermesctl checkpoint"*) ;;
*) t_fail "the reason does not say why and what to do: $reason" ;;
esac
grep -qF "$reason" "$T/mount.err" || t_check_fail "mount said otherwise: $(cat "$T/mount.out" "$T/mount.err")"
grep -q "scan.*running\|checkpoints on" "$T/mount.out" && t_check_fail "mount claims checkpoints: $(cat "$T/mount.out")"
"$HCTL" status "$TREE" >"$T/status.out"
grep -qF "checkpoints OFF: $reason" "$T/status.out" || t_check_fail "status said otherwise: $(cat "$T/status.out")"
grep -q "checkpoints on\|FAILURES" "$T/status.out" && t_check_fail "status contradicts itself: $(cat "$T/status.out")"
"$HCTL" rollback -C "$TREE" >"$T/rb.out" 2>&1
grep -qF "($reason)" "$T/rb.out" || t_check_fail "rollback said otherwise: $(cat "$T/rb.out")"

# turns and writes: no scan, no failure, nothing waits
for i in 1 2 3 4 5; do
	ckpt_turn "turn $i"
	echo "$i" >"$TREE/w$i"
done
"$HCTL" status --json "$TREE" | python3 -c '
import json, sys
ck = json.load(sys.stdin)["mounts"][0]["checkpoints"]
assert ck["enabled"] is False and not ck.get("checkpoint_failures"), ck' ||
	t_check_fail "turns over the cap failed or scanned: $("$HCTL" status "$TREE")"
log=$(ls "$HERMES_HOME"/logs/*.log)
n=$(grep -c "checkpoint .*failed\|scanning the tree" "$log" || true)
[ "$n" = 0 ] || t_check_fail "the daemon tried $n checkpoints or scans over the cap: $(tail -5 "$log")"

# still over the cap: checkpoint refuses, says the same, exits 4
"$HCTL" checkpoint -C "$TREE" >"$T/ck.out" 2>&1
rc=$?
[ "$rc" = 4 ] || t_check_fail "checkpoint over the cap exited $rc: $(cat "$T/ck.out")"
grep -qF "$reason" "$T/ck.out" || t_check_fail "checkpoint said otherwise: $(cat "$T/ck.out")"

# a remount says it at once
"$HCTL" umount "$TREE" >/dev/null || t_fail "umount failed"
"$HCTL" mount "$TREE" >"$T/mount2.out" 2>"$T/mount2.err" || t_fail "remount failed"
grep -qF "$reason" "$T/mount2.err" || t_check_fail "the remount said otherwise: $(cat "$T/mount2.out" "$T/mount2.err")"

# a writer that opened its file while checkpoints were off keeps its
# handle across the resume: what it writes after must reach a checkpoint
mkfifo "$T/go"
python3 - "$TREE/d0/held.txt" "$T/go" <<'PY' &
import sys
f = open(sys.argv[1], "a", buffering=1)
f.write("before\n")
open(sys.argv[2]).read()   # wait for the resume
f.write("after\n")
f.close()
PY
held=$!
t_wait_for 5 sh -c "grep -qs before '$TREE/d0/held.txt'" || t_fail "the held writer did not start"

# the user acts: exclude enough, then checkpoint
printf 'd3/\nd4/\n' >"$TREE/.hermesignore"
"$HCTL" checkpoint -C "$TREE" >"$T/ck2.out" 2>&1 || t_fail "checkpoint under the cap failed: $(cat "$T/ck2.out")"
echo go >"$T/go"
wait "$held" || t_fail "the held writer failed"
"$HCTL" checkpoint -C "$TREE" >/dev/null 2>&1 || t_fail "the checkpoint after the held write failed"
git --git-dir="$STORE" show HEAD:d0/held.txt 2>/dev/null | grep -q after ||
	t_check_fail "a write through a handle opened while paused reached no checkpoint"
ckpt_status_json | python3 -c '
import json, sys
ck = json.load(sys.stdin)["mounts"][0]["checkpoints"]
assert ck["enabled"] is True, ck' || t_fail "checkpoints did not come on: $("$HCTL" status "$TREE")"
[ "$(ckpt_count)" -ge 1 ] || t_check_fail "no checkpoint after the resume"
git --git-dir="$STORE" ls-tree -r HEAD --name-only | grep -q "^d[34]/" && t_check_fail "d3/ or d4/ was checkpointed"
# and each turn's first change is checkpointed again
ckpt_turn "after"
echo changed >"$TREE/d0/f1"
ckpt_turn "after 2"
echo changed >"$TREE/d0/f2"
t_wait_for 10 sh -c "[ \$(git --git-dir='$STORE' rev-list --count HEAD) -ge 2 ]" ||
	t_check_fail "no checkpoint for the first change after the cap was met"

# over the cap again on a fresh store, then excludes in config.yaml
"$HCTL" umount "$TREE" >/dev/null || t_fail "umount failed"
rm -rf "$HERMES_HOME/checkpoints" "$TREE/.hermesignore"
"$HCTL" mount "$TREE" >/dev/null 2>"$T/mount4.err" || t_fail "mount 4 failed"
grep -qF "more than 2000 files" "$T/mount4.err" || t_check_fail "mount 4: $(cat "$T/mount4.err")"
ckpt_config "turn_idle_ms: 0" "max_files: 2000" "exclude: [d3/, d4/]"
"$HCTL" checkpoint -C "$TREE" >"$T/ck4.out" 2>&1 ||
	t_check_fail "checkpoint with excludes in config.yaml failed: $(cat "$T/ck4.out")"
ckpt_config "turn_idle_ms: 0" "max_files: 2000"

# over the cap again on a fresh store, then the cap raised in config
"$HCTL" umount "$TREE" >/dev/null || t_fail "umount failed"
rm -rf "$HERMES_HOME/checkpoints" "$TREE/.hermesignore"
"$HCTL" mount "$TREE" >/dev/null 2>"$T/mount3.err" || t_fail "mount 3 failed"
grep -qF "more than 2000 files" "$T/mount3.err" || t_check_fail "mount 3: $(cat "$T/mount3.err")"
ckpt_config "turn_idle_ms: 0" "max_files: 5000"
"$HCTL" checkpoint -C "$TREE" >"$T/ck3.out" 2>&1 || t_fail "checkpoint with the cap raised failed: $(cat "$T/ck3.out")"
grep -q "25[0-9][0-9] files" "$T/ck3.out" || t_check_fail "the checkpoint is not of the whole tree: $(cat "$T/ck3.out")"
"$HCTL" umount "$TREE" >/dev/null || t_fail "umount failed"
t_pass
