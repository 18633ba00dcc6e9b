#!/bin/bash
# Retention: at most max_snapshots checkpoints (the oldest kept one becomes
# the root), and dropped checkpoints' objects really reclaimed: the store
# shrinks, and stays under max_total_size_mb after `checkpoints prune`.
# shellcheck source=tests/integration/store_lib.sh
. "$SRC/tests/integration/store_lib.sh"
command -v git >/dev/null || exit 77
printf 'checkpoints:\n  max_snapshots: 5\n  max_total_size_mb: 6\n' >"$HERMES_HOME/config.yaml"
cd "$TREE"
for i in $(seq 1 12); do
	echo "version $i" >f
	expect 0 checkpoint -m "step $i"
done
D=$(store_dir)
G=(git --git-dir="$D")
# bytes of the store; again if a background collection renamed a file
# under du
store_du() {
	local n
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		n=$(du -s -B1 "$D" 2>/dev/null | cut -f1) && [ -n "$n" ] && { echo "$n"; return; }
		sleep 0.2
	done
	du -s -B1 "$D" | cut -f1
}
[ "$("${G[@]}" rev-list --count HEAD)" = 5 ] || fail "chain has $("${G[@]}" rev-list --count HEAD) commits"
[ "$("${G[@]}" log --format=%s | tr '\n' ,)" = "step 12,step 11,step 10,step 9,step 8," ] ||
	fail "kept the wrong ones: $("${G[@]}" log --format=%s)"
[ "$("${G[@]}" rev-list --max-parents=0 HEAD | wc -l)" = 1 ] || fail "not one root"
[ "$("${G[@]}" show HEAD~4:f)" = "version 8" ] || fail "content of the oldest kept"
expect 0 rollback
[ "$(echo "$OUT" | grep -c 'step ')" = 5 ] || fail "list: $OUT"
ok "max_snapshots: newest 5 kept as a chain with one root"

# big incompressible files: each checkpoint adds ~2 MB
for i in $(seq 1 5); do
	head -c 2000000 /dev/urandom >big.bin.dat
	expect 0 checkpoint -m "big $i"
done
before=$(store_du)
expect 0 checkpoints prune
after=$(store_du)
[ "$after" -lt "$before" ] || fail "prune did not shrink the store: $before -> $after"
[ "$after" -le $((6 * 1024 * 1024)) ] || fail "store over the 6 MB cap after prune: $after"
[ "$("${G[@]}" show HEAD:big.bin.dat | cmp - big.bin.dat && echo same)" = same ] ||
	fail "newest checkpoint damaged by prune"
"${G[@]}" fsck --no-progress 2>&1 | grep -qi 'missing\|broken' && fail "fsck after prune"
ok "prune reclaims space: $before -> $after bytes, under the 6 MB cap"

# prune collects with --prune=now: it waits for a checkpoint in flight in
# another process (held here by its lock), whose objects no ref names yet
orphan=$(echo "in flight $RANDOM" | "${G[@]}" hash-object -w --stdin)
flock "$D/hermes-inflight" -c "sleep 2; git --git-dir='$D' cat-file -e $orphan && touch '$WORK/kept'" &
sleep 0.3
t0=$(date +%s%N)
expect 0 checkpoints prune
waited=$((($(date +%s%N) - t0) / 1000000))
wait
[ -e "$WORK/kept" ] || fail "prune deleted an object of a checkpoint in flight"
[ "$waited" -ge 1000 ] || fail "prune did not wait for the checkpoint in flight (${waited} ms)"
ok "prune waits for a checkpoint in flight in another process (${waited} ms)"

# churn: background collections keep the store bounded on their own (they
# spare loose objects younger than 10 s, which a checkpoint may be using;
# HERMES_GC_GRACE shortens that to 2 s here)
export HERMES_GC_GRACE=2
wait_gc() {
	for _ in $(seq 1 200); do
		sleep 0.1
		flock -n "$D/gc.lock" true && return 0
	done
	fail "background gc still running after 20 s"
}
for i in $(seq 1 12); do
	head -c 1500000 /dev/urandom >big.bin.dat
	expect 0 checkpoint -m "churn $i"
done
wait_gc
peak=$(store_du)
# a few quiet checkpoints later the garbage is old enough to go
for i in $(seq 1 10); do
	sleep 2.5
	echo "settle $i" >small
	expect 0 checkpoint -m "settle $i"
	wait_gc
	[ "$(store_du)" -le $((7 * 1024 * 1024)) ] && break
done
size=$(store_du)
[ "$size" -le $((7 * 1024 * 1024)) ] || fail "store at $size bytes (peak $peak) after churn"
pgrep -f "hermes-gc $D" >/dev/null && fail "a collection is left running"
ok "churn of 18 MB: peak $peak, then $size bytes without an explicit prune"
