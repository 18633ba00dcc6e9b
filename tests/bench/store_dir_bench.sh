#!/bin/bash
# One big directory: the checkpoint of 1 changed path, and of half the files
# deleted (given as changed paths, as the daemon gives them), in a directory
# of STORE_DIR_BENCH_FILES (default 100,000) files, against the same in a
# directory of STORE_DIR_BENCH_SMALL (default 1,000) and against `git add -A
# && git commit` (GIT_DIR/GIT_WORK_TREE on the same tree, same change), all
# in the same run. Prints times and ratios.
#   1 changed: store_bench_driver (in process, as the daemon), median of
#   STORE_DIR_BENCH_REPS (30) checkpoints, and their median CPU time.
#   deleted: one `hermesctl checkpoint --paths-from` (process start
#   included; printed beside it: the same command with nothing changed),
#   wall and CPU (user+sys) time.
#   BUILD (default ./build) is the meson build dir.
set -euo pipefail
BUILD=${BUILD:-$(pwd)/build}
HCTL=$BUILD/tools/hermesctl
DRIVER=$BUILD/tests/bench/store_bench_driver
BIG=${STORE_DIR_BENCH_FILES:-100000}
SMALL=${STORE_DIR_BENCH_SMALL:-1000}
REPS=${STORE_DIR_BENCH_REPS:-30}
WORK=$(mktemp -d "${STORE_BENCH_DIR:-/tmp}/store-dir-bench.XXXXXX")
# a background collection may still be writing into a store
cleanup() {
	local l
	for l in "$WORK"/*/home/checkpoints/*/gc.lock; do
		[ -e "$l" ] && flock "$l" true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
for f in "$HCTL" "$DRIVER"; do
	[ -x "$f" ] || { echo "build first: no $f" >&2; exit 1; }
done

now_ms() { python3 -c 'import time; print(f"{time.monotonic() * 1000:.3f}")'; }
calc() { python3 -c "print(f'{$1:.1f}')"; }
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.3g}' if b else 'inf')" "$1" "$2"; }
median() { LC_ALL=C sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
wait_gc() {
	local l
	for l in "$HERMES_HOME"/checkpoints/*/gc.lock; do
		[ -e "$l" ] && flock "$l" true
	done
	return 0
}
# git add -A && git commit on the tree, in ms (no auto gc: it would run
# detached, into the next measure)
git_commit_ms() {
	local t0 t1
	t0=$(now_ms)
	git -c gc.auto=0 add -A
	git -c gc.auto=0 -c user.name=b -c user.email=b@b commit -qm "$1"
	t1=$(now_ms)
	calc "$t1 - $t0"
}
# run a command; its wall and user+sys ms into WALL_MS and CPU_MS
timed() {
	local TIMEFORMAT='%3R %3U %3S' tf=$WORK/timed.out
	{ time "$@" >/dev/null; } 2>"$tf"
	read -r WALL_MS CPU_MS <<<"$(awk '{ printf "%.1f %.1f", $1 * 1000, ($2 + $3) * 1000 }' "$tf")"
}

# bench N: sets ONE_MS ONE_CPU ONE_GIT DEL_MS DEL_CPU DEL_FLOOR DEL_GIT
bench() {
	local n=$1 dir=$WORK/n$1 g
	export HERMES_HOME=$dir/home GIT_DIR=$dir/git.git GIT_WORK_TREE=$dir/tree
	mkdir -p "$HERMES_HOME" "$dir/tree/big"
	printf 'checkpoints:\n  max_files: 10000000\n  max_total_size_mb: 100000\n' \
		>"$HERMES_HOME/config.yaml"
	python3 - "$dir/tree/big" "$n" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(d, f"file{i}.c"), "w") as f:
        f.write(f"int f{i}(void) {{ return {i}; }}\n")
PY
	(cd "$dir/tree" && find big -type f | LC_ALL=C sort) >"$dir/files.txt"
	"$HCTL" checkpoint -C "$dir/tree" -m baseline >/dev/null
	git init -q
	git_commit_ms baseline >/dev/null
	wait_gc

	read -r ONE_MS _ _ ONE_CPU < <("$DRIVER" "$dir/tree" "$dir/files.txt" "$REPS" 1 7 edit)
	# the floor beside it: writing as many bytes as the directory's tree
	# into a new file (the page cache's cost, which on a VM whose free
	# memory goes back to the host is several times the copy's)
	local store tsize
	store=$(dirname "$(ls -d "$HERMES_HOME"/checkpoints/*/objects)")
	tsize=$(git --git-dir="$store" cat-file -s HEAD:big)
	WRITE_MS=$(python3 - "$dir" "$tsize" <<'PY'
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
buf, t = os.urandom(n), []
for i in range(11):
    p = os.path.join(d, f"floor{i}")
    t0 = time.monotonic()
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, buf)
    os.close(fd)
    t.append((time.monotonic() - t0) * 1000)
for i in range(11):
    os.unlink(os.path.join(d, f"floor{i}"))
print(f"{sorted(t)[5]:.3f}")
PY
)
	TREE_BYTES=$tsize
	wait_gc
	git_commit_ms "the driver's edits" >/dev/null
	g=()
	for i in 1 2 3 4 5; do
		echo "/* edit $i */" >>"$dir/tree/big/file$((i * 37 % n)).c"
		g+=("$(git_commit_ms "edit $i")")
	done
	ONE_GIT=$(printf '%s\n' "${g[@]}" | median)

	awk 'NR % 2 == 1' "$dir/files.txt" >"$dir/gone.txt"
	(cd "$dir/tree" && xargs rm <"$dir/gone.txt")
	wait_gc
	timed "$HCTL" checkpoint -C "$dir/tree" --paths-from "$dir/gone.txt" -m "delete half"
	DEL_MS=$WALL_MS DEL_CPU=$CPU_MS
	DEL_GIT=$(git_commit_ms "delete half")
	wait_gc
	sed -n 2p "$dir/files.txt" >"$dir/same.txt"
	timed "$HCTL" checkpoint -C "$dir/tree" --paths-from "$dir/same.txt"
	DEL_FLOOR=$WALL_MS
	unset GIT_DIR GIT_WORK_TREE
}

bench "$SMALL"
s_one=$ONE_MS s_cpu=$ONE_CPU s_one_git=$ONE_GIT s_del=$DEL_MS s_del_cpu=$DEL_CPU
s_del_git=$DEL_GIT
bench "$BIG"
big_write=$WRITE_MS big_bytes=$TREE_BYTES
printf 'directory of %d files (baseline: %d files; git add -A && git commit on the same tree)\n' \
	"$BIG" "$SMALL"
printf '  1 changed path:  %s ms median (CPU %s ms); at %d files %s ms (CPU %s ms), ratio %s; git %s ms, ratio %s\n' \
	"$ONE_MS" "$ONE_CPU" "$SMALL" "$s_one" "$s_cpu" "$(ratio "$ONE_MS" "$s_one")" \
	"$ONE_GIT" "$(ratio "$ONE_MS" "$ONE_GIT")"
printf '  floor: writing %d bytes (the size of the directory'"'"'s tree) into a new file: %s ms median; 1 changed path minus that: %s ms\n' \
	"$big_bytes" "$big_write" "$(calc "$ONE_MS - $big_write")"
printf '  %d deleted:  %s ms (CPU %s ms; hermesctl with nothing changed: %s ms); %d deleted at %d files %s ms (CPU %s ms), ratio %s; git %s ms, ratio %s\n' \
	$((BIG / 2)) "$DEL_MS" "$DEL_CPU" "$DEL_FLOOR" $((SMALL / 2)) "$SMALL" "$s_del" \
	"$s_del_cpu" "$(ratio "$DEL_MS" "$s_del")" "$DEL_GIT" "$(ratio "$DEL_MS" "$DEL_GIT")"
printf '  (git at %d files: 1 changed %s ms, %d deleted %s ms)\n' "$SMALL" "$s_one_git" \
	$((SMALL / 2)) "$s_del_git"
printf '  load average now: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
