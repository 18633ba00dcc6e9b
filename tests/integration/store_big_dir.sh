#!/bin/bash
# A checkpoint of changed paths costs what changed, not what the directory
# holds: in a directory of 50,000 files (a tree of ~1.7 MB), deleting half
# of them, given as 25,000 changed paths as the daemon gives them, and then
# a change given as its directory (2 paths, as a safety checkpoint after a
# rm -r does) each checkpoint within seconds (each path used to re-read the
# directory's tree: 25,000 deletions took minutes). The store, read with
# plain git, holds exactly the files left.
# shellcheck source=tests/integration/store_lib.sh
. "$SRC/tests/integration/store_lib.sh"
command -v git >/dev/null || exit 77
command -v python3 >/dev/null || exit 77
N=50000
# generous for a loaded machine: each takes ~0.2-0.4 s here (2-3 s with a
# load average of 15), the first took ~45 s before
BOUND_MS=${STORE_BIG_DIR_BOUND_MS:-15000}
printf 'checkpoints:\n  max_files: 1000000\n  max_total_size_mb: 10000\n' >"$HERMES_HOME/config.yaml"
G=()

now_ms() { date +%s%3N; }

# checkpoint the paths in file $1 (as the daemon does), within BOUND_MS
timed_checkpoint() {
	local t0 t1 rc=0
	t0=$(now_ms)
	timeout $((BOUND_MS * 3 / 1000)) "$HCTL" checkpoint -C "$TREE" --paths-from "$1" \
		-m "$2" >"$WORK/out" 2>"$WORK/err" || rc=$?
	t1=$(now_ms)
	[ "$rc" = 124 ] && fail "$2: still running after $((BOUND_MS * 3 / 1000)) s"
	[ "$rc" = 0 ] || fail "$2: hermesctl checkpoint exited $rc: $(cat "$WORK/err")"
	ELAPSED=$((t1 - t0))
	[ "$ELAPSED" -le "$BOUND_MS" ] || fail "$2: took $ELAPSED ms, over $BOUND_MS ms"
}

mkdir "$TREE/big"
python3 - "$TREE/big" "$N" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(d, f"file{i}.txt"), "w") as f:
        f.write(f"line {i}\n")
PY
echo keep >"$TREE/other.txt"
expect 0 checkpoint -C "$TREE" -m baseline
G=(git --git-dir="$(store_dir)")
[ "$("${G[@]}" ls-tree HEAD big/ | wc -l)" = "$N" ] || fail "baseline lacks files"

# delete every even-numbered file, name them one by one
seq 0 2 $((N - 1)) | sed 's|^|big/file|; s|$|.txt|' >"$WORK/gone"
(cd "$TREE" && xargs rm <"$WORK/gone")
timed_checkpoint "$WORK/gone" "delete half"
[ "$("${G[@]}" log -1 --format=%s)" = "delete half" ] || fail "no checkpoint: $("${G[@]}" log -1 --format=%s)"
[ "$("${G[@]}" ls-tree HEAD big/ | wc -l)" = $((N / 2)) ] ||
	fail "the checkpoint holds $("${G[@]}" ls-tree HEAD big/ | wc -l) files, want $((N / 2))"
"${G[@]}" ls-tree --name-only HEAD big/ | grep -q '^big/file[0-9]*[02468]\.txt$' &&
	fail "a deleted file is still in the checkpoint"
[ "$("${G[@]}" show HEAD:big/file12345.txt)" = "line 12345" ] || fail "a kept file's content"
[ "$("${G[@]}" show HEAD:other.txt)" = keep ] || fail "a file elsewhere is gone"
"${G[@]}" log -1 --format=%b | grep -q "^Hermes-Files: $((N / 2))$" ||
	fail "counts: $("${G[@]}" log -1 --format=%b)"
"${G[@]}" log -1 --format=%b | grep -q "^Hermes-Deletions: $((N / 2))$" ||
	fail "counts: $("${G[@]}" log -1 --format=%b)"
ok "$((N / 2)) deletions in a directory of $N files: $ELAPSED ms, the files left in the store"

# a change given as its directory: every entry of it is looked at
rm "$TREE"/big/file1[0-9][0-9]1.txt
echo changed >"$TREE/big/file3.txt"
echo changed >"$TREE/other.txt"
printf 'big\nother.txt\n' >"$WORK/two"
timed_checkpoint "$WORK/two" "directory"
[ "$("${G[@]}" ls-tree HEAD big/ | wc -l)" = $((N / 2 - 100)) ] ||
	fail "the checkpoint holds $("${G[@]}" ls-tree HEAD big/ | wc -l) files, want $((N / 2 - 100))"
[ "$("${G[@]}" show HEAD:big/file3.txt)" = changed ] || fail "the changed file"
"${G[@]}" cat-file -e HEAD:big/file1231.txt 2>/dev/null && fail "a file removed is in the store"
[ "$("${G[@]}" diff --name-only HEAD~1 HEAD | wc -l)" = 102 ] ||
	fail "the checkpoint changed other paths: $("${G[@]}" diff --name-only HEAD~1 HEAD | head)"
ok "2 paths, one of them the directory: $ELAPSED ms"

"${G[@]}" fsck --no-progress >"$WORK/fsck" 2>&1 || fail "git fsck: $(cat "$WORK/fsck")"
ok "git fsck is clean"

# the directory's tree went into the store as a loose object (store_big.c:
# one stored block a chunk, no pack checksums); git and a restore read it
big_tree=$("${G[@]}" rev-parse HEAD:big)
[ -f "$(store_dir)/objects/${big_tree:0:2}/${big_tree:2}" ] ||
	fail "the big directory's tree is not a loose object"
"${G[@]}" cat-file -p "$big_tree" >"$WORK/loose" 2>&1 &&
	head -1 "$WORK/loose" | grep -q '[[:space:]]file1\.txt$' ||
	fail "git cannot read the loose tree: $(head -2 "$WORK/loose")"
rm -rf "$TREE/big"
expect 0 rollback -C "$TREE" 1
[ "$(find "$TREE/big" -type f | wc -l)" = $((N / 2 - 100)) ] ||
	fail "restored $(find "$TREE/big" -type f | wc -l) files, want $((N / 2 - 100))"
[ "$(cat "$TREE/big/file3.txt")" = changed ] || fail "a restored file's content"
ok "the big tree is a loose object that git and a restore read"
