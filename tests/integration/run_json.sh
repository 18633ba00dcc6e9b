#!/bin/bash
# shellcheck disable=SC2016,SC2088,SC2015 # job text is single-quoted on purpose
# --json prints one object with the documented fields and types; the
# process exit code still follows the command; argv vs bash -c; -C.
. "$(dirname "$0")/run_lib.sh"

mkdir -p "$T/work"
rc=0
out=$("$HCTL" run --json -C "$T/work" -- 'pwd; echo err >&2; exit 7') || rc=$?
[ "$rc" = 7 ] || fail "exit code $rc, want 7"
python3 - "$out" "$T/work" <<'PY' || fail "shape: $out"
import json, sys
o = json.loads(sys.argv[1])
want = {"exit_code": int, "signal": int, "stdout": str, "stderr": str, "duration": float,
        "truncated": bool, "timed_out": bool, "blocked": bool}
for k, t in want.items():
    assert k in o, k
    assert isinstance(o[k], t) or (t is float and isinstance(o[k], int)), (k, o[k])
assert o["exit_code"] == 7 and o["stdout"] == sys.argv[2] + "\n" and o["stderr"] == "err\n", o
assert o["blocked"] is False and o["timed_out"] is False and o["truncated"] is False
assert 0 <= o["duration"] < 5
PY
[ "$(echo "$out" | wc -l)" = 1 ] || fail "more than one line"
pass "--json: one object, fields and types, exit code 7 passed through"

# Several words run as argv (no shell): the $ stays literal.
out=$("$HCTL" run -- printf '%s|' 'a b' '$HOME')
[ "$out" = 'a b|$HOME|' ] || fail "argv mode: $out"
out=$("$HCTL" run -- 'printf "%s|" $((1+2))')
[ "$out" = '3|' ] || fail "bash -c mode: $out"
out=$(env -i HERMES_HOME="$HERMES_HOME" HOME="$T" "$HCTL" run -- 'echo $PATH')
case "$out" in *:/usr/bin:*) ;; *) fail "no PATH: got '$out'" ;; esac
pass "one word runs under bash -c, several as argv; a missing PATH gets the standard one"

# Binary output stays valid JSON; signals are reported.
out=$("$HCTL" run --json -- 'printf "\377\000ok"; kill -USR1 $$' || true)
python3 - "$out" <<'PY' || fail "binary/signal: $out"
import json, sys, signal
o = json.loads(sys.argv[1])
assert o["stdout"].endswith("ok"), o
assert o["signal"] == signal.SIGUSR1 and o["exit_code"] == 128 + signal.SIGUSR1, o
PY
pass "binary output is valid JSON; death by signal reported"

rc=0
"$HCTL" run --backend docker -- true 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "unknown backend 'docker' (available: local)" "$T/err" ||
	fail "unknown backend: rc $rc $(cat "$T/err")"
rc=0
"$HCTL" run -- no-such-command-xyz 2>"$T/err" || rc=$?
[ "$rc" = 127 ] || fail "missing command: rc $rc"
rc=0
"$HCTL" run -C "$T/nope" -- true 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "working directory" "$T/err" || fail "bad -C: $rc $(cat "$T/err")"
out=$("$HCTL" run -- 'read x; echo "got[$x]"')
[ "$out" = "got[]" ] || fail "stdin is not closed: $out"
# (ls writes to a file, not a pipe: the shell would hold the pipe's ends
# while ls reads its descriptors)
out=$("$HCTL" run -C "$T/work" -- 'readlink /proc/$$/fd/0; ls /proc/$$/fd >fds.txt; tr "\n" " " <fds.txt' 7>"$T/leak")
[ "$out" = "/dev/null
0 1 2 " ] || fail "the job inherited descriptors: $out"
pass "errors: unknown backend lists available, 127, bad -C; stdin /dev/null, no stray fds"

# closed standard descriptors, an absurd timeout, strict UTF-8, a command
# that starts with a dash
out=$("$HCTL" run --json -- 'echo hi' <&-) || fail "stdin closed: rc $?"
printf '%s' "$out" | grep -q '"stdout":"hi\\n"' || fail "stdin closed: $out"
"$HCTL" run -- 'echo hi' >&- 2>/dev/null || fail "stdout closed: rc $?"
rc=0
"$HCTL" run --timeout inf -- true 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "at most" "$T/err" || fail "--timeout inf: rc $rc $(cat "$T/err")"
"$HCTL" run --json -- "printf '\\355\\240\\200 \\364\\220\\200\\200 \\340\\200\\200 ok'" |
	python3 -c 'import sys, json; o = json.loads(sys.stdin.buffer.read().decode("utf-8")); assert o["stdout"].endswith(" ok"), o' ||
	fail "--json output is not strict UTF-8"
rc=0
"$HCTL" run -- --help >/dev/null 2>"$T/err" || rc=$?
[ "$rc" = 127 ] || fail "a command starting with a dash went to bash as an option: rc $rc $(cat "$T/err")"
pass "closed stdio, --timeout cap, strict UTF-8, a dash-command"

# errors before the job runs are JSON too with --json
rc=0
out=$("$HCTL" run --json -C /etc/hostname -- true 2>"$T/err") || rc=$?
[ "$rc" = 1 ] || fail "-C a file: rc $rc"
python3 -c 'import json,sys; o=json.loads(sys.argv[1]); assert "not a directory" in o["error"] and o["exit_code"] is None, o' "$out" ||
	fail "-C a file with --json: $out"
pass "--json: an error before the job ran is a JSON object with the reason"

# a --json among the command's own words is the command's: no object of
# ours after its output when it fails
out=$("$HCTL" run sh -c 'echo out; exit 3' --json 2>/dev/null) && fail "exit 3 expected"
[ "$out" = out ] || fail "a --json of the command added output of ours: $out"
pass "a --json among the command's words is left to the command"
