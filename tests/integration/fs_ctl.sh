#!/bin/bash
# The control socket answers ping and status (with op counters that move
# when the tree is used) and names unknown ops in its error.
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }

src=$WORK/proj
mkdir -p "$src"
fs_mount "$src"
id=$(printf '%s' "$src" | sha256sum | cut -c1-16)
sock=$HERMES_HOME/run/$id.sock
echo data >"$src/f"
chmod 600 "$src/f"
cat "$src/f" >/dev/null

out=$(python3 - "$sock" "$src" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
def call(line):
    f.write(line + "\n"); f.flush()
    return json.loads(f.readline())
assert call('{"op":"ping"}') == {"ok": True}
st = call('{"op":"status"}')
assert st["ok"] is True, st
assert st["source"] == sys.argv[2] and st["mountpoint"] == sys.argv[2], st
assert st["ops"]["create"] >= 1 and st["ops"]["setattr"] >= 1, st["ops"]
assert isinstance(st["pid"], int) and st["uptime_s"] >= 0 and st["version"], st
bad = call('{"op":"frobnicate"}')
assert bad.get("ok") is False and bad.get("error") == "unknown op 'frobnicate'", bad
assert call('not json')["ok"] is False
# a checkpoint number may come as a JSON number: the same answer as its digits
n = call('{"op":"diff","spec":99999}')
t = call('{"op":"diff","spec":"99999"}')
assert n.get("ok") is False and n.get("error") == t.get("error") and "99999" in n["error"], (n, t)
print("pid", st["pid"])
PY
) || fail "control socket conversation failed"
pid=$(fs_pid_of "$src")
[ "$out" = "pid $pid" ] || fail "status pid '$out' differs from the registry's $pid"
umount "$src"
fs_check_log
echo "ok: control socket answers ping, status and unknown ops"
