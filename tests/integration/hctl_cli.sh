#!/bin/bash
# hermesctl as a user drives it: --help on every subcommand; options after
# the path; refusals with the exit codes `hermesctl --help` documents;
# `mount` warns about processes that still see the disk below the tree;
# `status --json` of a live mount; `umount` of a mount whose daemon was
# killed (even once its pid is reused); `status` of a hermesfs mount that no
# record of this HERMES_HOME explains.
set -u
. "$SRC/tests/integration/lib.sh"
t_need_fuse
t_need_root
t_need_cmd python3 sleep
t_init
HCTL=$BUILD/tools/hermesctl
export HERMESFS_BIN=$BUILD/fs/hermesfs

# hctl_rc WANT ARGS...: run hermesctl, check its exit code, keep its output
hctl_rc() {
	local want=$1 rc=0
	shift
	OUT=$("$HCTL" "$@" 2>"$T/err") || rc=$?
	ERR=$(cat "$T/err")
	[ "$rc" = "$want" ] || t_check_fail "hermesctl $* exited $rc, want $want: $OUT $ERR"
	return 0
}

# remember the daemon hermesctl started (DAEMON), for the cleanup trap
hctl_track() {
	DAEMON=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' <<<"$1") ||
		t_fail "no pid in: $1"
	T_MOUNTS+=("$2")
	T_PIDS+=("$DAEMON")
}

# --help: every subcommand answers on stdout with its usage, exit 0
for sub in mount umount status turn checkpoint checkpoints rollback run; do
	hctl_rc 0 "$sub" --help
	case $OUT in
	"usage: hermesctl $sub"*) ;;
	*) t_check_fail "hermesctl $sub --help does not start with its usage: ${OUT:0:80}" ;;
	esac
done
hctl_rc 0 --help
case $OUT in
*"Exit codes:"*"4 "*"refused"*) ;;
*) t_check_fail "hermesctl --help does not document exit code 4" ;;
esac
hctl_rc 2 mount
hctl_rc 2 status --no-such-flag

# refusals, with the documented codes (3 no such tree, 4 refused)
P=$T/outer/proj
mkdir -p "$P/sub" "$T/fakehome"
echo x >"$T/file"
hctl_rc 4 mount /
HOME=$T/fakehome hctl_rc 4 mount "$T/fakehome"
hctl_rc 4 mount "$T" # holds $HERMES_HOME
hctl_rc 3 mount "$T/file"
hctl_rc 3 mount "$T/missing"
# usage errors say what was wrong; 'help COMMAND' is that command's --help
hctl_rc 2 umount --timeout abc "$T"
case $ERR in *"--timeout wants whole seconds"*) ;; *) t_check_fail "umount --timeout abc: $ERR" ;; esac
hctl_rc 2 mount a b c
case $ERR in *"not 3 paths"*) ;; *) t_check_fail "mount a b c: $ERR" ;; esac
hctl_rc 0 help mount
case $OUT in "usage: hermesctl mount"*) ;; *) t_check_fail "help mount: $OUT" ;; esac

# processes that see the disk below after an in-place mount: a shell with its
# working directory there, one holding a file open; one outside is not named
echo "before" >"$P/held.txt"
(cd "$P/sub" && exec sleep 300) &
cwd_pid=$!
T_PIDS+=("$cwd_pid")
sleep 300 <"$P/held.txt" &
fd_pid=$!
T_PIDS+=("$fd_pid")
sleep 300 &
out_pid=$!
T_PIDS+=("$out_pid")
# a Unix socket server bound in the tree (cwd outside): named as unreachable
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); time.sleep(300)' "$P/srv.sock" &
sock_pid=$!
T_PIDS+=("$sock_pid")
t_wait_for 10 test -S "$P/srv.sock" || t_fail "the socket server did not bind"
sleep 0.2
hctl_rc 0 mount "$P" --json # the option after the path
hctl_track "$OUT" "$P"
daemon=$DAEMON
t_is_mounted "$P" || t_fail "hermesctl mount returned before the mount was live"
printf '%s\n' "$ERR" | grep -q "pid $cwd_pid (sleep): working directory" ||
	t_check_fail "no warning about pid $cwd_pid in the tree: $ERR"
printf '%s\n' "$ERR" | grep -q "pid $fd_pid (sleep): open file" ||
	t_check_fail "no warning about pid $fd_pid holding a file: $ERR"
printf '%s\n' "$ERR" | grep -q "pid $out_pid " && t_check_fail "pid $out_pid outside the tree named: $ERR"
printf '%s\n' "$ERR" | grep -q "Unix sockets were bound under" &&
	printf '%s\n' "$ERR" | grep -qx "  $P/srv.sock" ||
	t_check_fail "no warning about the socket bound in the tree: $ERR"
kill "$cwd_pid" "$fd_pid" "$out_pid" "$sock_pid" 2>/dev/null
wait "$cwd_pid" "$fd_pid" "$out_pid" "$sock_pid" 2>/dev/null

# a directory inside the mount is not the mount: say which one is
hctl_rc 3 umount "$P/sub"
case $ERR in *"belongs to the hermesfs mount $P"*) ;; *) t_check_fail "umount of a subdirectory: $ERR" ;; esac
t_is_mounted "$P" || t_fail "umount of a subdirectory unmounted the tree"

# the same tree again, and a tree holding it: refused
hctl_rc 4 mount "$P"
hctl_rc 4 mount "$T/outer"
case $ERR in *"holds the hermesfs mount $P"*) ;; *) t_check_fail "refusal of $T/outer: $ERR" ;; esac

# status --json (option after the path) of the live mount
hctl_rc 0 status "$P" --json
JSON=$OUT python3 - "$P" "$daemon" <<'PY' || t_check_fail "status --json: $OUT"
import json, os, sys
d = json.loads(os.environ["JSON"])
m, = d["mounts"]
assert m["source"] == sys.argv[1] and m["mountpoint"] == sys.argv[1] and m["in_place"], m
assert m["pid"] == int(sys.argv[2]) and m["state"] == "ok" and m["registered"] is True, m
assert m["ops"]["getattr"] >= 1 and "checkpoints" in m, m
PY
hctl_rc 3 status "$T/missing-tree"
# a symlink to the tree names it too
ln -s "$P" "$T/link"
hctl_rc 0 status "$T/link"
case $OUT in *"ok "*"$P (in place)"*) ;; *) t_check_fail "status through a symlink: $OUT" ;; esac

# a hermesfs mount that another HERMES_HOME made: listed, unregistered
HERMES_HOME=$T/other-home hctl_rc 0 status --json
JSON=$OUT python3 - "$P" <<'PY' || t_check_fail "status from another HERMES_HOME: $OUT"
import json, os, sys
ms = [m for m in json.loads(os.environ["JSON"])["mounts"] if m["mountpoint"] == sys.argv[1]]
assert len(ms) == 1 and ms[0]["state"] == "unregistered" and ms[0]["registered"] is False, ms
assert ms[0]["source"] == sys.argv[1], ms
PY

# a read-only mount says checkpoints are off, and why
mkdir -p "$T/ro"
hctl_rc 0 mount -o ro "$T/ro" --json
hctl_track "$OUT" "$T/ro"
hctl_rc 0 status "$T/ro" --json
JSON=$OUT python3 - <<'PY' || t_check_fail "status of a read-only mount: $OUT"
import json, os
c = json.loads(os.environ["JSON"])["mounts"][0]["checkpoints"]
assert c["enabled"] is False and "read-only" in c["reason"], c
PY
hctl_rc 0 umount "$T/ro"

# kill -9 the daemon: status says dead (5), even once its pid belongs to
# another process; umount cleans up and the tree is the plain disk again
echo "through the mount" >"$P/after.txt"
kill -KILL "$daemon"
t_wait_for 10 t_pid_gone "$daemon" || t_log "daemon $daemon not reaped yet"
sleep 300 &
imposter=$!
T_PIDS+=("$imposter")
rec=$(grep -l "\"pid\":[[:space:]]*$daemon" "$HERMES_HOME"/run/*.json) || t_fail "no record of pid $daemon"
python3 - "$rec" "$imposter" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["pid"] = int(sys.argv[2])
r["started"] -= 120  # the daemon ran for two minutes before it died
json.dump(r, open(sys.argv[1], "w"))
PY
hctl_rc 5 status "$P"
case $OUT in *dead*) ;; *) t_check_fail "status of a killed daemon (pid reused) does not say dead: $OUT" ;; esac
hctl_rc 0 umount "$P"
t_is_mounted "$P" && t_check_fail "the dead mount is still there after hermesctl umount"
kill -0 "$imposter" 2>/dev/null || t_check_fail "hermesctl umount killed pid $imposter, not ours"
kill "$imposter"
wait "$imposter" 2>/dev/null
t_expect_content "$P/after.txt" "through the mount"
hctl_rc 0 status --json
# (status lists every hermesfs mount of the machine: only ours count)
left=$(printf '%s' "$OUT" | python3 -c '
import json, sys
t = sys.argv[1] + "/"
print(json.dumps([m for m in json.load(sys.stdin)["mounts"] if m["mountpoint"].startswith(t)]))' "$T")
[ "$left" = '[]' ] || t_check_fail "mounts left after umount: $left"
hctl_rc 3 umount "$P"
t_pass
