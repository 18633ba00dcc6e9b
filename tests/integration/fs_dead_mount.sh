#!/bin/bash
# A mount whose daemon was killed is told apart from a live one even after
# its root was stat'ed (the kernel answers stat from its caches, so only a
# request that always reaches the daemon shows ENOTCONN): hermesfs says the
# daemon died, and from another $HERMES_HOME (no record of the mount, as
# for /etc/fstab mounts) hermesctl status says dead and exits 5, and
# hermesctl mount cleans it up and mounts again.
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"
HCTL=$BUILD/tools/hermesctl

P=$WORK/proj
mkdir -p "$P"
echo "kept" >"$P/f"
fs_mount "$P"
fs_is_mounted "$P" || fail "not mounted"
stat "$P" >/dev/null
cat "$P/f" >/dev/null
pid=$(fs_pid_of "$P")
[ -n "$pid" ] || fail "no daemon pid"
kill -KILL "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$pid" 2>/dev/null || fail "daemon $pid did not die"
stat "$P" >/dev/null 2>&1 && echo "note: stat of the dead mount's root still answers from the cache"

rc=0
out=$("$HERMESFS" "$P" 2>&1) || rc=$?
echo "hermesfs on the dead mount: rc $rc: $out"
[ "$rc" != 0 ] || fail "hermesfs mounted over a dead mount"
case $out in *"daemon died"*) ;; *) fail "hermesfs did not say the daemon died: $out" ;; esac

# from another HERMES_HOME: no record of this mount
export HERMES_HOME=$WORK/other-home
mkdir -p "$HERMES_HOME"
rc=0
out=$("$HCTL" status "$P" 2>&1) || rc=$?
echo "status: rc $rc: $out"
[ "$rc" = 5 ] || fail "status of a dead unregistered mount exited $rc, not 5"
case $out in *dead*) ;; *) fail "status does not say dead: $out" ;; esac
rc=0
out=$("$HCTL" status --json 2>&1) || rc=$?
JSON=$out python3 - "$P" <<'PY' || fail "status --json: $out"
import json, os, sys
ms = [m for m in json.loads(os.environ["JSON"])["mounts"] if m["mountpoint"] == sys.argv[1]]
assert len(ms) == 1 and ms[0]["state"] == "dead" and ms[0]["registered"] is False, ms
PY

rc=0
out=$("$HCTL" mount "$P" 2>&1) || rc=$?
echo "mount: rc $rc: $out"
[ "$rc" = 0 ] || fail "hermesctl mount did not recover the dead mount (rc $rc): $out"
case $out in *died*) ;; *) fail "hermesctl mount did not say it cleaned up: $out" ;; esac
[ "$(cat "$P/f")" = kept ] || fail "the tree's file is not readable through the new mount"
"$HCTL" status "$P" >/dev/null || fail "status after the recovery: rc $?"
"$HCTL" umount "$P" || fail "umount failed"
! fs_is_mounted "$P" || fail "still mounted after umount"

# a record without a mount (the daemon killed, the mount taken away by
# hand): status says stale and what to do, and gives no uptime
"$HCTL" mount "$P" >/dev/null 2>&1 || fail "mount again"
FS_MOUNTS+=("$P")
pid=$(sed -n 's/.*"pid":[[:space:]]*\([0-9]*\).*/\1/p' "$HERMES_HOME"/run/*.json)
kill -KILL "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
umount -l "$P"
rc=0
out=$("$HCTL" status "$P" 2>&1) || rc=$?
echo "status of a stale record: rc $rc: $out"
case $out in *stale*"no mount any more"*"hermesctl mount $P"*) ;; *) fail "status of a stale record: $out" ;; esac
out=$("$HCTL" status --json "$P" 2>&1) || true
JSON=$out python3 - <<'PY' || fail "status --json of a stale record: $out"
import json, os
m = json.loads(os.environ["JSON"])["mounts"][0]
assert m["state"] == "stale" and "uptime_s" not in m, m
PY
"$HCTL" umount "$P" >/dev/null || fail "umount of a stale record"
[ -z "$(ls "$HERMES_HOME"/run/*.json 2>/dev/null)" ] || fail "the stale record is still there"
echo "PASS"
