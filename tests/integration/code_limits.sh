#!/bin/bash
# hermesctl code: each limit hit exactly (tool calls, timeout with the whole
# process tree killed, stdout cap with the full output spilled, stderr cap),
# the project and strict modes with a real virtualenv, unknown tools.
. "$(dirname "$0")/run_lib.sh"
command -v python3 >/dev/null || exit 77
TREE=$T/tree
mkdir -p "$TREE"
printf 'one\ntwo\n' >"$TREE/f.txt"
code() { "$HCTL" code -C "$TREE" --json "$@"; }
jget() { python3 -c "import json,sys; o=json.load(sys.stdin); print($1)"; }

# the tool-call budget: calls past it answer an error, the script goes on
cat >"$T/calls.py" <<'PY'
from hermes_tools import read_file
for i in range(5):
    r = read_file("f.txt")
    print(i, "error" in r, r.get("error", r.get("total_lines")))
print("done")
PY
out=$(code --max-tool-calls 3 "$T/calls.py")
[ "$(jget 'o["tool_calls_made"]' <<<"$out")" = 3 ] || fail "tool calls: $out"
grep -q '^3 True Tool call limit reached (3). No more tool calls allowed in this execution.$' <<<"$(jget 'o["output"]' <<<"$out")" ||
	fail "the 4th call: $out"
grep -q '^done$' <<<"$(jget 'o["output"]' <<<"$out")" || fail "the script stopped at the limit: $out"
[ "$(jget 'o["status"]' <<<"$out")" = success ] || fail "status: $out"
pass "the 4th of 3 tool calls answers the limit and the script goes on"

# timeout: the script and the process it started are killed
cat >"$T/slow.py" <<PY
import subprocess, time
p = subprocess.Popen(["sleep", "60"])
open("$T/child.pid", "w").write(str(p.pid))
time.sleep(60)
PY
t0=$(date +%s)
rc=0
out=$(code --timeout 1 "$T/slow.py") || rc=$?
[ "$rc" = 124 ] || fail "timeout exit status $rc: $out"
[ "$(jget 'o["status"]' <<<"$out")" = timeout ] || fail "status: $out"
grep -q '^Script timed out after 1s and was killed.$' <<<"$(jget 'o["error"]' <<<"$out")" || fail "error: $out"
[ $(($(date +%s) - t0)) -lt 15 ] || fail "the timeout took $(($(date +%s) - t0)) s"
child=$(cat "$T/child.pid")
sleep 0.2
kill -0 "$child" 2>/dev/null && fail "the script's child $child outlived the timeout"
pass "timeout: status timeout, exit 124, the script's child killed too"

# stdout: 20,000 head + 30,000 tail kept, all of it spilled aside
cat >"$T/loud.py" <<'PY'
import sys
for i in range(20000):
    sys.stdout.write(f"{i:09d}\n")
sys.stderr.write("e" * 30000)
PY
out=$(code "$T/loud.py")
python3 - "$out" <<'PY' || fail "output caps: ${out:0:300}"
import json, os, sys
o = json.loads(sys.argv[1])
out = o["output"]
assert o["stdout_bytes"] == 200000 and o["stdout_omitted"] == 150000, o
assert out.startswith("000000000\n") and out.endswith("000019999\n"), out[-40:]
assert "[OUTPUT TRUNCATED - 150,000 bytes omitted out of 200,000 total]" in out, out[19990:20200]
head, tail = out.split("\n\n... [OUTPUT TRUNCATED")[0], out.rsplit("] ...\n\n", 1)[1]
assert len(head) == 20000 and len(tail) == 30000, (len(head), len(tail))
assert o["stderr_bytes"] == 30000 and len(o["stderr"]) < 10200, o["stderr_bytes"]
spill = o["stdout_spill_path"]
data = open(spill).read()
assert len(data) == 200000 and data.endswith("000019999\n"), len(data)
os.unlink(spill)
PY
pass "stdout kept as 20,000 + 30,000 bytes with the notice, the whole in the spill file; stderr head only"

# unknown tools are refused with the list
cat >"$T/unknown.py" <<'PY'
import hermes_tools
print(hermes_tools._call("rm_rf", {"path": "/"}))
PY
out=$(code "$T/unknown.py")
grep -q "Tool 'rm_rf' is not available in execute_code. Available: read_file, write_file, patch, search_files, terminal" <<<"$(jget 'o["output"]' <<<"$out")" ||
	fail "unknown tool: $out"
pass "an unknown tool is refused with the list of available ones"

# modes: a virtualenv of the tree holding a package only it has
python3 -m venv --without-pip "$TREE/.venv" || fail "python3 -m venv"
site=$("$TREE/.venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo 'WHERE = "venv"' >"$site/onlyvenv.py"
printf 'import onlyvenv, sys\nprint(onlyvenv.WHERE, sys.prefix)\n' >"$T/venv.py"
out=$(code "$T/venv.py")
[ "$(jget 'o["output"].split()[0]' <<<"$out")" = venv ] || fail "project mode: $out"
[ "$(jget 'o["python"]' <<<"$out")" = "$TREE/.venv/bin/python" ] || fail "interpreter: $out"
rc=0
out=$(code --mode strict "$T/venv.py") || rc=$?
[ "$(jget 'o["status"]' <<<"$out")" = error ] || fail "strict mode imported the tree's package: $out"
grep -q "No module named 'onlyvenv'" <<<"$(jget 'o["error"]' <<<"$out")" || fail "strict error: $out"
printf 'import os\nprint(os.getcwd())\nprint(sorted(os.listdir(".")))\n' >"$T/where.py"
out=$(code --mode strict "$T/where.py")
grep -q "^\['hermes_tools.py', 'rpc.sock', 'script.py'\]$" <<<"$(jget 'o["output"]' <<<"$out")" ||
	fail "strict mode's directory: $out"
pass "project mode runs the tree's virtualenv; strict mode a private directory and the system python3"

# write_file and patch replace a file whole: mode and owner stay, no
# temporary is left beside it
if [ "$(id -u)" = 0 ]; then
	printf 'a\n' >"$TREE/owned.txt"
	chmod 0640 "$TREE/owned.txt"
	chown 65534:65534 "$TREE/owned.txt"
	printf 'from hermes_tools import write_file, patch\nwrite_file("owned.txt", "b\\n")\nprint(patch("owned.txt", "b", "c"))\n' >"$T/own.py"
	out=$(code "$T/own.py")
	[ "$(stat -c '%a %u:%g' "$TREE/owned.txt")" = "640 65534:65534" ] ||
		fail "write_file changed mode or owner: $(stat -c '%a %u:%g' "$TREE/owned.txt") $out"
	[ "$(cat "$TREE/owned.txt")" = c ] || fail "owned.txt: $(cat "$TREE/owned.txt") $out"
	ls -A "$TREE" | grep -q '^\.hermes-tmp' && fail "a temporary was left: $(ls -A "$TREE")"
	pass "write_file and patch keep the file's mode and owner"
fi

# bad input
rc=0
"$HCTL" code -C "$TREE" "$T/none.py" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "cannot read $T/none.py" "$T/err" || fail "a missing script: $rc $(cat "$T/err")"
rc=0
"$HCTL" code --mode lax - </dev/null 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "project or strict" "$T/err" || fail "a bad mode: $rc $(cat "$T/err")"
pass "bad input: clear errors"
