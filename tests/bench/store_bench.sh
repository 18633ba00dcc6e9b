#!/bin/bash
# Store benchmark: one checkpoint after changing 1 and 10 files given the
# changed paths, against `git add -A && git commit` with GIT_DIR/GIT_WORK_TREE
# on the same tree in the same run; the first baseline against git's; disk
# use after 500 checkpoints of churn under a cap 30% above the baseline
# (peak and final against the cap). Prints ratios.
#   STORE_BENCH_FILES (default 60000), STORE_BENCH_MB (default 1000) scale it;
#   BUILD (default ./build) is the meson build dir.
set -euo pipefail
BUILD=${BUILD:-$(pwd)/build}
HCTL=$BUILD/tools/hermesctl
DRIVER=$BUILD/tests/bench/store_bench_driver
NFILES=${STORE_BENCH_FILES:-60000}
MB=${STORE_BENCH_MB:-1000}
CHURN=${STORE_BENCH_CHURN:-500}
WORK=$(mktemp -d "${STORE_BENCH_DIR:-/tmp}/store-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export HERMES_HOME=$WORK/home
TREE=$WORK/tree
mkdir -p "$HERMES_HOME" "$TREE"
# the tree is over the default 50,000-file baseline cap on purpose, and
# its ~600 MB store over the default 500 MB disk cap (the churn phase
# below sets a cap of its own)
printf 'checkpoints:\n  max_files: 10000000\n  max_total_size_mb: 100000\n' >"$HERMES_HOME/config.yaml"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

secs() { date +%s.%N; }
calc() { python3 -c "print($1)"; }
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.4g}' if b else 'inf')" "$1" "$2"; }
wait_gc() {
	local d
	for d in "$HERMES_HOME"/checkpoints/*/; do
		[ -f "$d/gc.lock" ] && flock "$d/gc.lock" true
	done
	return 0
}

echo "generating $NFILES files, ~$MB MB in $TREE"
python3 - "$TREE" "$NFILES" "$MB" <<'PY'
import os, random, sys
tree, n, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
avg = mb * 1024 * 1024 // n
rng = random.Random(1)
words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(2, 10))) for _ in range(5000)]
with open(os.path.join(os.path.dirname(tree), "files.txt"), "w") as fl:
    for i in range(n):
        d = f"pkg{i % 97}/mod{i % 613}"
        os.makedirs(os.path.join(tree, d), exist_ok=True)
        rel = f"{d}/file{i}.c"
        size = max(64, int(rng.expovariate(1 / avg)))
        out = bytearray()
        while len(out) < size:
            out += b" ".join(rng.choices(words, k=12)) + b";\n"
        with open(os.path.join(tree, rel), "wb") as f:
            f.write(out[:size])
        fl.write(rel + "\n")
PY
du -sh "$TREE" | sed 's/^/tree: /'
sync

# first baseline
t0=$(secs); "$HCTL" checkpoint -C "$TREE" -m baseline >/dev/null; t1=$(secs)
h_base=$(calc "$t1 - $t0")
wait_gc
GIT_DIR=$WORK/git.git GIT_WORK_TREE=$TREE git init -q
t0=$(secs)
GIT_DIR=$WORK/git.git GIT_WORK_TREE=$TREE git add -A
GIT_DIR=$WORK/git.git GIT_WORK_TREE=$TREE git -c user.name=b -c user.email=b@b commit -qm base
t1=$(secs)
g_base=$(calc "$t1 - $t0")
printf 'first baseline: hermes %.2f s, git add -A+commit %.2f s, ratio %s\n' "$h_base" "$g_base" "$(ratio "$h_base" "$g_base")"

# one checkpoint after changing 1 / 10 files, given the paths (in process)
for k in 1 10; do
	read -r med p90 max cpu < <("$DRIVER" "$TREE" "$WORK/files.txt" 50 "$k" 7 edit)
	wait_gc
	# git: same kind of change, 10 rounds
	gt=0
	for i in $(seq 1 10); do
		for j in $(seq 1 "$k"); do
			f=$(sed -n "$(( (i * 131 + j * 17) % NFILES + 1 ))p" "$WORK/files.txt")
			echo "change $i $j" >>"$TREE/$f"
		done
		t0=$(secs)
		GIT_DIR=$WORK/git.git GIT_WORK_TREE=$TREE git add -A
		GIT_DIR=$WORK/git.git GIT_WORK_TREE=$TREE git -c user.name=b -c user.email=b@b commit -qm "c$i"
		t1=$(secs)
		gt=$(calc "$gt + $t1 - $t0")
	done
	g_ms=$(calc "$gt * 100")
	printf '%2d changed file(s): store_checkpoint_paths median %s ms (p90 %s, max %s; CPU median %s ms); git add -A+commit %.1f ms; ratio %s\n' \
		"$k" "$med" "$p90" "$max" "$cpu" "$g_ms" "$(ratio "$med" "$g_ms")"
	printf '   load average now: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
done

# the same through the CLI: process start, config, store open included
f=$(sed -n 5p "$WORK/files.txt")
echo "cli change" >>"$TREE/$f"
echo "$f" >"$WORK/one.txt"
t0=$(secs); "$HCTL" checkpoint -C "$TREE" --paths-from "$WORK/one.txt" >/dev/null; t1=$(secs)
cli_ms=$(calc "($t1 - $t0) * 1000")
echo "cli again" >>"$TREE/$f"
t0=$(secs); "$HCTL" checkpoint -C "$TREE" >/dev/null; t1=$(secs)
scan_ms=$(calc "($t1 - $t0) * 1000")
printf 'hermesctl checkpoint --paths-from (1 file): %.1f ms; full scan with stat cache: %.1f ms (ratio to git add -A %s)\n' \
	"$cli_ms" "$scan_ms" "$(ratio "$scan_ms" "$g_ms")"

# disk after churn: CHURN checkpoints of 1-10 changed files, under a cap
# above the baseline (checkpoints.max_total_size_mb = baseline + 30%)
wait_gc
store=$HERMES_HOME/checkpoints/$(printf '%s' "$TREE" | sha256sum | cut -c1-16)
before=$(du -s -B1 "$store" | cut -f1)
cap_mb=$(( before * 13 / 10 / 1048576 + 1 ))
printf 'checkpoints:\n  max_files: 10000000\n  max_total_size_mb: %d\n' "$cap_mb" >"$HERMES_HOME/config.yaml"
peak=$before
for s in $(seq 1 10); do
	"$DRIVER" "$TREE" "$WORK/files.txt" $((CHURN / 10)) $(( (s % 10) + 1 )) "$s" rewrite >/dev/null
	b=$(du -sb "$store" | cut -f1)
	[ "$b" -gt "$peak" ] && peak=$b
done
wait_gc
sleep 11
"$DRIVER" "$TREE" "$WORK/files.txt" 1 1 99 rewrite >/dev/null
wait_gc
after=$(du -s -B1 "$store" | cut -f1)
tree_b=$(du -s -B1 "$TREE" | cut -f1)
git_b=$(du -s -B1 "$WORK/git.git" | cut -f1)
printf 'disk: store %.0f MB after baseline, %.0f MB after %d checkpoints of churn (%s checkpoints kept); tree %.0f MB; ratio store/tree %s; plain git repo (baseline + 20 commits) %.0f MB\n' \
	"$(calc "$before / 1048576")" "$(calc "$after / 1048576")" "$CHURN" \
	"$("$HCTL" rollback -C "$TREE" --json | grep -c '"number"')" \
	"$(calc "$tree_b / 1048576")" "$(ratio "$after" "$tree_b")" "$(calc "$git_b / 1048576")"
printf 'disk cap %d MB: peak (du -sb after each batch of %d checkpoints) %.1f MB = %s of the cap; final %.1f MB = %s of the cap\n' \
	"$cap_mb" $((CHURN / 10)) "$(calc "$peak / 1048576")" "$(ratio "$peak" $((cap_mb * 1048576)))" \
	"$(calc "$after / 1048576")" "$(ratio "$after" $((cap_mb * 1048576)))"
