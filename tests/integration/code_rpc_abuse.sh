#!/bin/bash
# hermesctl code's RPC never crashes, hangs or acts for the wrong caller:
# malformed JSON, a wrong token, a line over 16 MiB, a connection closed in
# the middle of a call, 1,000 calls at once from 50 threads, another run's
# socket; and the script sees no secret of hermesctl's environment, neither
# in its own nor through /proc of any ancestor.
. "$(dirname "$0")/run_lib.sh"
command -v python3 >/dev/null || exit 77
TREE=$T/tree
mkdir -p "$TREE"
printf 'one\ntwo\n' >"$TREE/f.txt"
jget() { python3 -c "import json,sys; o=json.load(sys.stdin); print($1)"; }

cat >"$T/abuse.py" <<'PY'
import json, os, socket, threading
path, token = os.environ["HERMES_RPC_SOCKET"], os.environ["HERMES_RPC_TOKEN"]

def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s, s.makefile("rb")

def ask(line):
    s, f = conn()
    s.sendall(line)
    r = f.readline()
    s.close()
    return json.loads(r) if r else None

# malformed JSON, a JSON array, no token, a wrong token, args not an object
print("malformed", ask(b"{not json\n")["error"])
print("array", ask(b"[1,2]\n")["error"])
print("notoken", ask(json.dumps({"id": 1, "tool": "read_file", "args": {"path": "f.txt"}}).encode() + b"\n")["error"])
s, f = conn()
s.sendall(json.dumps({"id": 2, "tool": "read_file", "args": {"path": "f.txt"}, "token": "0" * 64}).encode() + b"\n")
print("badtoken", json.loads(f.readline())["error"], "closed", f.readline() == b"")
print("badargs", ask(json.dumps({"id": 3, "tool": "read_file", "args": [1], "token": token}).encode() + b"\n")["error"])

# a 100 MB line: refused past 16 MiB, connection closed, nothing else hurt
s, f = conn()
chunk = b"x" * (1 << 20)
try:
    for _ in range(100):
        s.sendall(chunk)
except (BrokenPipeError, ConnectionResetError):
    pass
r = f.readline()
print("huge", json.loads(r)["error"] if r else "closed without answer")
s.close()

# a connection closed in the middle of a call
for tool, args in (("terminal", {"command": "sleep 0.3"}), ("read_file", {"path": "f.txt"})):
    s, f = conn()
    s.sendall(json.dumps({"id": 9, "tool": tool, "args": args, "token": token}).encode() + b"\n")
    s.close()

# 1,000 calls at once from 50 threads, each on its own connection,
# pipelined 20 deep: every answer names its request
bad = []
def worker(k):
    s, f = conn()
    s.sendall(b"".join(json.dumps({"id": k * 100 + i, "tool": "read_file",
                                    "args": {"path": "f.txt", "offset": 1 + i % 2},
                                    "token": token}).encode() + b"\n" for i in range(20)))
    for i in range(20):
        r = json.loads(f.readline())
        want = ["     1|one\n     2|two\n", "     2|two\n"][i % 2]
        if r.get("id") != k * 100 + i or r["result"]["content"] != want:
            bad.append(r)
    s.close()
ts = [threading.Thread(target=worker, args=(k,)) for k in range(50)]
for t in ts: t.start()
for t in ts: t.join()
print("concurrent", 1000, "bad", len(bad))

# the tools through the module still work afterwards
import hermes_tools
print("after", hermes_tools.read_file("f.txt")["total_lines"])
print("env", sorted(k for k in os.environ if "SECRET" in k or "KEY" in k or "TOKEN" in k))
PY
out=$(env MY_API_KEY=sk-secret-value OTHER_SECRET=x "$HCTL" code -C "$TREE" --json --max-tool-calls 2000 "$T/abuse.py") ||
	fail "the abuse script: $out"
o=$(jget 'o["output"]' <<<"$out")
for want in "malformed malformed request: not a JSON object" \
	"array malformed request: not a JSON object" \
	"notoken Unauthorized RPC request" \
	"badtoken Unauthorized RPC request closed True" \
	"badargs malformed request: args must be an object" \
	"huge request over 16 MiB: connection closed" \
	"concurrent 1000 bad 0" \
	"after 2" \
	"env ['HERMES_RPC_TOKEN']"; do
	grep -qxF "$want" <<<"$o" || fail "want '$want' in the output: $o $(jget 'o["error"]' <<<"$out")"
done
[ "$(jget 'o["status"]' <<<"$out")" = success ] || fail "status: $out"
pass "garbage, a wrong token, 100 MB, a closed call, 1,000 concurrent calls: answered, nothing broken"

# another run's socket: its token is not ours
cat >"$T/victim.py" <<PY
import os, time
open("$T/victim.sock", "w").write(os.environ["HERMES_RPC_SOCKET"])
time.sleep(3)
PY
"$HCTL" code -C "$TREE" --json "$T/victim.py" >"$T/victim.out" &
TEST_PIDS+=($!)
for _ in $(seq 100); do [ -s "$T/victim.sock" ] && break; sleep 0.05; done
cat >"$T/thief.py" <<PY
import json, os, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(open("$T/victim.sock").read())
s.sendall(json.dumps({"id": 1, "tool": "write_file", "args": {"path": "stolen.txt", "content": "x"},
                      "token": os.environ["HERMES_RPC_TOKEN"]}).encode() + b"\\n")
print(json.loads(s.makefile("rb").readline()).get("error"))
PY
out=$("$HCTL" code -C "$TREE" --json "$T/thief.py")
[ "$(jget 'o["output"].strip()' <<<"$out")" = "Unauthorized RPC request" ] || fail "another run's socket: $out"
[ -e "$TREE/stolen.txt" ] && fail "a script acted through another run's socket"
wait
stat -c %a "$(dirname "$(cat "$T/victim.sock")")" 2>/dev/null && fail "the run's directory outlived it"
pass "another run's socket refuses our token; the run's directory is removed at its end"

# secrets: not in the script's environment, nor in /proc of any ancestor
cat >"$T/probe.py" <<'PY'
import os
val, seen, pid = "sk-secret-value", [], os.getpid()
if any(val in v for v in os.environ.values()):
    seen.append("env")
while pid > 1:
    try:
        if val.encode() in open(f"/proc/{pid}/environ", "rb").read():
            seen.append(f"proc {pid} {open(f'/proc/{pid}/comm').read().strip()}")
        pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except OSError:
        break
print("seen", seen)
PY
out=$(env MY_API_KEY=sk-secret-value "$HCTL" code -C "$TREE" --json "$T/probe.py")
[ "$(jget 'o["output"].strip()' <<<"$out")" = "seen []" ] || fail "a secret is visible: $out"
pass "no secret of hermesctl's environment reaches the script, by env or /proc"
