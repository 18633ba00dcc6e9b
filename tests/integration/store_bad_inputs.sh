#!/bin/bash
# Refusals: out-of-range N, malformed and ambiguous hashes, ../x, absolute
# paths, a symlink out of the tree, / and the home directory, no store, and
# a corrupted store. Each is a one-line error and a non-zero exit, never a
# crash.
# shellcheck source=tests/integration/store_lib.sh
. "$SRC/tests/integration/store_lib.sh"
printf 'checkpoints:\n  max_snapshots: 100000\n' >"$HERMES_HOME/config.yaml"
cd "$TREE"
expect 3 rollback 1
echo "$ERR" | grep -q 'no checkpoints' || fail "no store: $ERR"
ok "rollback without a store: exit 3"

echo a >f
expect 0 checkpoint -m one
echo b >f
expect 0 checkpoint -m two

one_line() { [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] || fail "not one line: $ERR"; }
expect 3 rollback 3; one_line
echo "$ERR" | grep -q 'use 1-2' || fail "out of range message: $ERR"
expect 3 rollback 0; one_line
expect 3 rollback diff 9; one_line
ok "out-of-range N: exit 3 with the valid range"

for bad in zzzz 12g45 abc 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0; do
	expect 2 rollback "$bad"; one_line
done
expect 2 rollback -- -abcd; one_line
expect 3 rollback deadbeef; one_line
echo "$ERR" | grep -q 'not found' || fail "unknown hash: $ERR"
ok "malformed hashes: exit 2; unknown hash: exit 3"

# extend the chain (plain git, fast) until two checkpoints share their
# first 4 hex digits
G=(git --git-dir="$(store_dir)")
tree=$("${G[@]}" rev-parse "HEAD^{tree}")
c=$("${G[@]}" rev-parse HEAD)
i=0
while :; do
	for _ in $(seq 1 100); do
		i=$((i + 1))
		c=$("${G[@]}" commit-tree "$tree" -p "$c" -m "filler $i")
	done
	"${G[@]}" update-ref refs/heads/main "$c"
	dup=$("${G[@]}" rev-list HEAD | cut -c1-4 | sort | uniq -d | head -1)
	[ -n "$dup" ] && break
	[ $i -lt 3000 ] || fail "no 4-digit collision in 3000 checkpoints"
done
expect 2 rollback "$dup"; one_line
echo "$ERR" | grep -q ambiguous || fail "ambiguous: $ERR"
ok "ambiguous hash prefix ($dup after $i checkpoints): exit 2"

expect 3 rollback diff 1 no-such-file.txt; one_line
echo "$ERR" | grep -q "no-such-file.txt: neither in checkpoint 1 nor in the tree" ||
	fail "diff of a path that does not exist: $ERR"
expect 4 rollback 1 ../x; one_line
expect 4 rollback 1 sub/../../x; one_line
expect 4 rollback 1 /etc/passwd; one_line # absolute: fine only inside the tree
echo "$ERR" | grep -q "not a path inside" || fail "absolute path outside: $ERR"
ln -s /etc out
expect 4 rollback 1 out/passwd; one_line
echo "$ERR" | grep -q symlink || fail "symlink message: $ERR"
ln -s ../../outside dangling
expect 4 rollback 1 dangling/x; one_line
[ "$(cat /etc/hostname 2>/dev/null || true)" = "$(cat /etc/hostname 2>/dev/null || true)" ]
ok "../x, absolute paths and symlinks out of the tree refused"

expect 3 rollback 2 no/such/file; one_line
ok "a path in no checkpoint: exit 3"

expect 4 checkpoint -C /; one_line
mkdir -p "$WORK/home2"
HOME=$WORK/home2 expect 4 checkpoint -C "$WORK/home2"; one_line
ok "/ and the home directory are refused"

D=$(store_dir)
flock "$D/gc.lock" true 2>/dev/null || true
# garbage over every object, packed or loose
for p in "$D"/objects/pack/*.pack; do
	chmod u+w "$p"
	size=$(stat -c %s "$p")
	head -c $((size - 32)) /dev/urandom | dd of="$p" bs=4096 seek=12 oflag=seek_bytes conv=notrunc status=none
done
for o in "$D"/objects/??/*; do
	[ -f "$o" ] || continue
	chmod u+w "$o"
	echo garbage >"$o"
done
expect 1 rollback
echo "$ERR" | grep -q . || fail "no message for a corrupted store"
expect 1 checkpoint -m after-corruption
echo 'not a hash' >"$D/refs/heads/main"
expect 1 rollback; one_line
ok "corrupted store: clear error, exit 1, no crash"
