#!/bin/bash
# Runner overhead, measured against plain bash in the same run:
#   1. hermesctl run -- true        vs  bash -c true
#   2. 100 MB of output through it  vs  bash -c 'head -c 100000000 /dev/zero'
# Prints the best of three rounds' medians (wall) and CPU time per run, and
# their ratios. Uses hyperfine -N when installed, else a timed loop.
# usage: tests/bench/run_bench.sh [BUILD_DIR]   (default: ./build)
set -euo pipefail

BUILD=${1:-${BUILD:-build}}
HCTL=$(cd "$BUILD" && pwd)/tools/hermesctl
[ -x "$HCTL" ] || { echo "no $HCTL: build first" >&2; exit 1; }
T=$(mktemp -d /tmp/hermes-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
export HERMES_HOME="$T/hermes"
mkdir -p "$HERMES_HOME"
unset CI || true

# mean_ms RUNS CMD... : typical wall time of CMD in milliseconds: the lowest
# of three rounds' medians (hyperfine), so load from other work on the
# machine disturbs the comparison less.
mean_ms() {
	local runs=$1 best="" m
	shift
	for _ in 1 2 3; do
		if command -v hyperfine >/dev/null; then
			# hyperfine -N splits its command like a shell: quote each word
			hyperfine -N --warmup 3 --runs "$runs" --export-json "$T/h.json" \
				"$(printf '%q ' "$@")" >/dev/null 2>&1
			m=$(python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$T/h.json")
		else
			local start end
			for _ in 1 2 3; do "$@" >/dev/null 2>&1 || true; done
			start=$(date +%s%N)
			for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1 || true; done
			end=$(date +%s%N)
			m=$(python3 -c "print('%.3f' % (($end - $start) / 1e6 / $runs))")
		fi
		best=$(python3 -c "print(min(float('$m'), float('${best:-$m}')))")
	done
	echo "$best"
}

# cpu_ms RUNS CMD... : CPU time (user+sys, all processes) per run of CMD in
# milliseconds: what the runner costs the machine, whatever else runs on it.
cpu_ms() {
	python3 - "$@" <<'PY'
import os, resource, subprocess, sys
runs, cmd = int(sys.argv[1]), sys.argv[2:]
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for _ in range(3):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
start = cpu()
for _ in range(runs):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("%.3f" % ((cpu() - start) * 1000 / runs))
PY
}

report() {
	local name=$1 base=$2 ours=$3 unit=${4:-ms}
	python3 - "$name" "$base" "$ours" "$unit" <<'PY'
import sys
name, b, o, unit = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
print(f"{name:<40} baseline {b:9.3f} {unit}  hermesctl {o:9.3f} {unit}  ratio {o / b:5.2f}x  overhead {o - b:+8.3f} {unit}")
PY
}

tool=$(command -v hyperfine >/dev/null && echo "hyperfine -N" || echo "timed loop")
echo "runner benchmark ($tool), $(nproc) cores, $(date -u +%FT%TZ)"

b=$(mean_ms 200 bash -c true)
o=$(mean_ms 200 "$HCTL" run --home-mode real -- true)
report "trivial command (true), real HOME" "$b" "$o"
o2=$(mean_ms 200 "$HCTL" run --home-mode profile -- true)
report "trivial command, profile HOME" "$b" "$o2"
# an agent's environment holds secrets: the runner must hide them from the
# job's /proc/<ppid>/environ (both sides get the same variable)
b=$(mean_ms 200 env OPENAI_API_KEY=sk-bench bash -c true)
o2=$(mean_ms 200 env OPENAI_API_KEY=sk-bench "$HCTL" run --home-mode real -- true)
report "trivial command, a secret in the env" "$b" "$o2"
b=$(cpu_ms 200 bash -c true)
o=$(cpu_ms 200 "$HCTL" run --home-mode real -- true)
report "trivial command, CPU time, real HOME" "$b" "$o" "ms cpu"
o2=$(cpu_ms 200 "$HCTL" run --home-mode profile -- true)
report "trivial command, CPU time, profile HOME" "$b" "$o2" "ms cpu"

big='head -c 100000000 /dev/zero'
b=$(mean_ms 10 bash -c "$big")
o=$(mean_ms 10 "$HCTL" run -- "$big")
report "100 MB of output (kept 50 KB)" "$b" "$o"
b=$(mean_ms 10 bash -c "$big | cat")
report "100 MB, baseline through a pipe" "$b" "$o"
b=$(cpu_ms 5 bash -c "$big | cat")
o=$(cpu_ms 5 "$HCTL" run -- "$big")
report "100 MB, CPU time vs a pipe" "$b" "$o" "ms cpu"
