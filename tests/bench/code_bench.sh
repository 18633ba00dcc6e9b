#!/bin/bash
# hermesctl code: the round trip of one tool call (read_file of a small
# file) and of 50, against the same work done by the script in plain
# Python, and the fixed cost of `hermesctl code` on an empty script against
# `python3 -c pass` with the same interpreter, all in the same run.
#   BUILD (default ./build) is the meson build dir; CODE_BENCH_CALLS (2000)
#   single calls are timed, CODE_BENCH_RUNS (20) empty scripts.
set -euo pipefail
BUILD=${BUILD:-$(pwd)/build}
HCTL=$BUILD/tools/hermesctl
CALLS=${CODE_BENCH_CALLS:-2000}
RUNS=${CODE_BENCH_RUNS:-20}
[ -x "$HCTL" ] || { echo "build first: no $HCTL" >&2; exit 1; }
WORK=$(mktemp -d /tmp/code-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export HERMES_HOME=$WORK/home
mkdir -p "$HERMES_HOME" "$WORK/tree" "$WORK/bin"
# the real interpreter first on PATH (a pyenv shim costs tens of ms a start)
PY=$(python3 -c 'import sys; print(sys.executable)')
ln -s "$PY" "$WORK/bin/python3"
export PATH=$WORK/bin:$PATH
printf 'line %d\n' $(seq 20) >"$WORK/tree/small.txt"

cat >"$WORK/calls.py" <<PY
import time
from hermes_tools import read_file
def plain(path):
    with open(path) as f:
        lines = f.read().split("\n")
    return {"content": "".join(f"{i + 1:6d}|{l}\n" for i, l in enumerate(lines[:-1])),
            "total_lines": len(lines) - 1}
read_file("small.txt")  # the connection, the imports
def median(f, n):
    t = []
    for _ in range(n):
        t0 = time.perf_counter(); f(); t.append(time.perf_counter() - t0)
    return sorted(t)[n // 2] * 1e3
one = median(lambda: read_file("small.txt"), $CALLS)
one_plain = median(lambda: plain("small.txt"), $CALLS)
fifty = median(lambda: [read_file("small.txt") for _ in range(50)], 21)
fifty_plain = median(lambda: [plain("small.txt") for _ in range(50)], 21)
assert read_file("small.txt")["content"] == plain("small.txt")["content"]
print(f"{one:.4f} {one_plain:.4f} {fifty:.3f} {fifty_plain:.3f}")
PY
read -r ONE ONE_PLAIN FIFTY FIFTY_PLAIN < <("$HCTL" code -C "$WORK/tree" --max-tool-calls 1000000 "$WORK/calls.py")

: >"$WORK/empty.py"
FIXED=$(python3 - "$HCTL" "$WORK" "$RUNS" <<'PY'
import subprocess, sys, time
hctl, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
# the two alternate, so that a machine getting busier or quieter during
# the run weighs on both alike
cmds = [[hctl, "code", "-C", f"{work}/tree", f"{work}/empty.py"], ["python3", "-c", "pass"]]
t = [[], []]
for _ in range(runs):
    for k, cmd in enumerate(cmds):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        t[k].append(time.perf_counter() - t0)
code, py = (sorted(v)[runs // 2] * 1e3 for v in t)
print(f"{code:.2f} {py:.2f}")
PY
)
read -r CODE_MS PY_MS <<<"$FIXED"
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.3g}')" "$1" "$2"; }
printf 'hermesctl code (interpreter %s)\n' "$PY"
printf '  one tool call (read_file, 20 lines): %s ms median of %d; plain Python %s ms, ratio %s\n' \
	"$ONE" "$CALLS" "$ONE_PLAIN" "$(ratio "$ONE" "$ONE_PLAIN")"
printf '  50 tool calls: %s ms; plain Python %s ms, ratio %s\n' "$FIFTY" "$FIFTY_PLAIN" \
	"$(ratio "$FIFTY" "$FIFTY_PLAIN")"
printf '  empty script: %s ms median of %d; python3 -c pass %s ms: %s ms more, ratio %s\n' \
	"$CODE_MS" "$RUNS" "$PY_MS" "$(python3 -c "print(f'{$CODE_MS - $PY_MS:.2f}')")" \
	"$(ratio "$CODE_MS" "$PY_MS")"
printf '  load average now: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
