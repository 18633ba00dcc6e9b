#!/bin/bash
# 8 threads write (append to a log, then replace a_i and b_i with the same
# counter) while turns flip every few milliseconds over the control socket
# and through hermesctl: no write is lost, nothing deadlocks (everything is
# bounded by timeouts), and every checkpoint is a state the tree really had
# (the invariant in ckpt_concurrent.py, checked on every commit with git).
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config
SECONDS_RUN=${CKPT_CONCURRENT_SECONDS:-12}
NTHREADS=8
HELPER=$SRC/tests/integration/ckpt_concurrent.py
ckpt_mount

# a slower second source of turns: the CLI, as a runner would use it
(
	while [ ! -e "$T/stop" ]; do
		"$HCTL" turn -m "cli turn" -C "$TREE" || echo "hermesctl turn failed: $?" >>"$T/cli.err"
		sleep 0.05
	done
) &
cli=$!
t_on_cleanup "kill $cli"

rc=0
timeout $((SECONDS_RUN + 60)) python3 "$HELPER" run "$TREE" "$SOCK" "$SECONDS_RUN" "$NTHREADS" \
	>"$T/run.json" || rc=$?
: >"$T/stop"
wait "$cli"
[ "$rc" = 124 ] && t_fail "writers still running $((SECONDS_RUN + 60)) s after start: deadlock"
[ "$rc" = 0 ] || t_check_fail "writers or the turn flipper failed (status $rc)"
[ -s "$T/cli.err" ] && t_check_fail "hermesctl turn failed: $(head -n 3 "$T/cli.err")"
final=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({"counts": d["counts"], "turns": d["turns"]}))' "$T/run.json") ||
	t_fail "the writers printed no result"
t_log "run: $final"

# no lost write: every counter and every log line is there, by path (and,
# checked with the store below, in each turn's checkpoint)
check_final() {
	python3 - "$1" "$final" <<'PY'
import json, os, sys
tree, final = sys.argv[1], json.loads(sys.argv[2])
bad = 0
for i, c in enumerate(final["counts"]):
    rd = lambda n: open(os.path.join(tree, n), "rb").read()
    want_log = b"".join(b"%08d\n" % k for k in range(1, c + 1))
    if rd("a_%d" % i) != b"%d\n" % c or rd("b_%d" % i) != b"%d\n" % c or rd("log_%d" % i) != want_log:
        print("thread %d: final state is not counter %d" % (i, c), file=sys.stderr)
        bad = 1
sys.exit(bad)
PY
}
check_final "$TREE" || t_check_fail "lost writes through the mount"
timeout 30 "$HCTL" status "$TREE" >/dev/null || t_check_fail "status does not answer after the run"
[ "$(ckpt_status 'c["checkpoint_failures"]')" = 0 ] ||
	t_check_fail "checkpoint failures: $(ckpt_status 'c.get("last_error")')"
t_umount "$TREE"
check_final "$TREE" || t_check_fail "lost writes on disk after unmount"

# every checkpoint is a real state; the newest is the final tree
git --git-dir="$STORE" fsck --no-progress >"$T/fsck.out" 2>&1 ||
	t_check_fail "git fsck of the store: $(head -n 5 "$T/fsck.out")"
timeout 300 python3 "$HELPER" check "$STORE" "$NTHREADS" "$T/run.json" >"$T/check.json" ||
	t_check_fail "a checkpoint shows a state the tree never had (above)"
t_log "check: $(cat "$T/check.json")"
commits=$(ckpt_count)
[ "$commits" -ge 20 ] || t_check_fail "only $commits checkpoints in $SECONDS_RUN s of flipping turns: the test proves little"
t_pass
