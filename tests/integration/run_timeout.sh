#!/bin/bash
# shellcheck disable=SC2016,SC2088,SC2015 # job text is single-quoted on purpose
# A timeout kills the whole tree: the shell, its background children,
# setsid'd (daemonized) grandchildren and processes that ignore TERM.
. "$(dirname "$0")/run_lib.sh"

alive() {
	# a pid that is still a running sleep of ours (not a reused pid)
	[ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q "sleep 10[0-9][0-9]" &&
		! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

d="$T/pids"
mkdir -p "$d"
script="sleep 1001 & echo \$! > $d/bg
setsid sleep 1002 & echo \$! > $d/setsid
(setsid bash -c 'sleep 1003 & echo \$! > $d/double; wait' &)
bash -c 'trap \"\" TERM; echo \$\$ > $d/stubborn; sleep 1004; :' &
sleep 1000"
start=$(date +%s%N)
rc=0
"$HCTL" run --timeout 1 -- "$script" >"$T/out" 2>"$T/err" || rc=$?
end=$(date +%s%N)
[ "$rc" = 124 ] || fail "exit code $rc, want 124 ($(cat "$T/err"))"
grep -q "timed out after 1 s" "$T/err" || fail "no timeout message: $(cat "$T/err")"
ms=$(((end - start) / 1000000))
[ "$ms" -lt 8000 ] || fail "took $ms ms"
for f in bg setsid double stubborn; do
	[ -s "$d/$f" ] || fail "the job did not record $f"
	pid=$(cat "$d/$f")
	TEST_PIDS+=("$pid")
	if alive "$pid"; then
		fail "$f (pid $pid) survived the timeout"
	fi
	kill -0 "$pid" 2>/dev/null && fail "$f (pid $pid) still exists"
done
pass "timeout after ${ms} ms killed bg, setsid, double-forked and TERM-ignoring processes"

# A job that exits normally leaves nothing running behind it either.
rc=0
"$HCTL" run -- "setsid sleep 1005 & echo \$! > $d/left; echo done" >"$T/out" || rc=$?
[ "$rc" = 0 ] && grep -q "done" "$T/out" || fail "normal job: rc $rc"
pid=$(cat "$d/left")
TEST_PIDS+=("$pid")
kill -0 "$pid" 2>/dev/null && fail "a daemonized leftover (pid $pid) survived the job"
pass "leftover daemon of a finished job was killed"

# --json reports the timeout.
out=$("$HCTL" run --json --timeout 0.3 -- 'sleep 1006' || true)
python3 - "$out" <<'PY' || fail "json timeout report: $out"
import json, sys
o = json.loads(sys.argv[1])
assert o["timed_out"] is True and o["exit_code"] == 124, o
assert 0.25 < o["duration"] < 5, o
PY
pass "--json reports timed_out and exit_code 124"

# TERM to the runner takes the job's tree down with it.
"$HCTL" run -- "setsid sleep 1007 & echo \$! > $d/int; sleep 1008" >"$T/out" 2>"$T/err" &
hpid=$!
TEST_PIDS+=("$hpid")
for _ in $(seq 100); do [ -s "$d/int" ] && break; sleep 0.05; done
[ -s "$d/int" ] || fail "the interrupted job did not start"
kill -TERM "$hpid"
rc=0
wait "$hpid" || rc=$?
[ "$rc" = 143 ] || fail "runner killed by TERM: exit $rc, want 143"
pid=$(cat "$d/int")
TEST_PIDS+=("$pid")
kill -0 "$pid" 2>/dev/null && fail "the job's daemon (pid $pid) outlived the runner"
grep -q "interrupted by signal 15" "$T/err" || fail "no interruption message: $(cat "$T/err")"
pass "TERM to hermesctl killed the job's tree and exited 143"

# A reader that stops early does not leave the job running.
start=$(date +%s)
line=$(timeout 20 "$HCTL" run -- 'echo $$ > '"$d/yes"'; exec yes' | head -n 1 || true)
[ "$line" = y ] || fail "yes | head: got '$line'"
pid=$(cat "$d/yes")
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$pid" 2>/dev/null && fail "yes (pid $pid) still runs after its reader left"
pass "closed stdout: the job ends (SIGPIPE), hermesctl finishes in $(( $(date +%s) - start )) s"

# The runner killed outright (SIGKILL: none of its cleanup runs): its
# guard still ends the job and what the job started in its session.
"$HCTL" run -- 'sleep 300 & echo $! > '"$d/kchild"'; echo $$ > '"$d/kjob"'; wait' &
runner=$!
TEST_PIDS+=("$runner")
for _ in $(seq 100); do [ -s "$d/kchild" ] && [ -s "$d/kjob" ] && break; sleep 0.05; done
[ -s "$d/kchild" ] || fail "the job did not start its child"
kill -KILL "$runner"
wait "$runner" 2>/dev/null || true
for p in "$(cat "$d/kjob")" "$(cat "$d/kchild")"; do
	for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$p" 2>/dev/null && { kill -KILL "$p"; fail "pid $p of the job outlived a SIGKILLed runner"; }
done
pass "SIGKILL to hermesctl: the guard ended the job and its child"
