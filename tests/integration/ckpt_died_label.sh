#!/bin/bash
# The checkpoint a mount takes of what it finds says why it was needed:
# after a daemon killed with -9 it says the daemon died (its last changes
# were never checkpointed), after a clean unmount "changes made while
# unmounted".
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config
echo one >"$TREE/a.txt"

# hermesctl mount, as a user does; the daemon is remembered for the trap
DAEMON_PID=""
dl_mount() {
	local out
	out=$("$HCTL" mount "$TREE" 2>&1) || t_fail "hermesctl mount failed: $out"
	DAEMON_PID=$(sed -n 's/.*"pid":[[:space:]]*\([0-9]*\).*/\1/p' "${SOCK%.sock}.json")
	[ -n "$DAEMON_PID" ] || t_fail "no daemon pid in the registry after mount"
	T_MOUNTS+=("$TREE")
	T_PIDS+=("$DAEMON_PID")
	t_wait_for 60 ckpt_baseline_done || t_fail "the mount's checkpoint did not finish"
}
newest() { git --git-dir="$STORE" log -1 --format=%s; }

dl_mount
[ "$(newest)" = baseline ] || t_check_fail "first mount: '$(newest)'"
echo two >>"$TREE/a.txt" # in the daemon's dirty set only
kill -KILL "$DAEMON_PID" || t_fail "cannot kill the daemon"
t_wait_for 10 t_pid_gone "$DAEMON_PID" || t_log "daemon $DAEMON_PID not reaped yet"
out=$("$HCTL" umount "$TREE" 2>&1) || t_fail "hermesctl umount of the dead mount: $out"

echo three >>"$TREE/a.txt"
dl_mount
want="changes since the last checkpoint (the daemon died)"
[ "$(newest)" = "$want" ] || t_check_fail "after kill -9: '$(newest)', want '$want'"
[ "$(git --git-dir="$STORE" show HEAD:a.txt)" = $'one\ntwo\nthree' ] ||
	t_check_fail "that checkpoint lacks the changes"
out=$("$HCTL" rollback -C "$TREE" 2>&1) || t_fail "rollback list: $out"
printf '%s\n' "$out" | grep -q 'the daemon died' || t_check_fail "the list does not say it: $out"

echo mounted >>"$TREE/a.txt"
out=$("$HCTL" umount "$TREE" 2>&1) || t_fail "hermesctl umount: $out"
t_wait_for 10 t_pid_gone "$DAEMON_PID" || t_fail "the daemon did not exit after umount"
[ "$(newest)" = unmount ] || t_check_fail "clean unmount: '$(newest)'"
echo four >>"$TREE/a.txt"
dl_mount
want="changes made while unmounted"
[ "$(newest)" = "$want" ] || t_check_fail "after a clean unmount: '$(newest)', want '$want'"
out=$("$HCTL" umount "$TREE" 2>&1) || t_fail "hermesctl umount: $out"
t_pass
