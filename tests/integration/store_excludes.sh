#!/bin/bash
# Exclusions and caps: .hermesignore (gitignore syntax) and config
# checkpoints.exclude; new files over max_file_size_mb left out with a note;
# a baseline over max_files refused with a clear message and checkpoints off
# for the tree (shown by status) until the tree is trimmed.
# shellcheck source=tests/integration/store_lib.sh
. "$SRC/tests/integration/store_lib.sh"
command -v git >/dev/null || exit 77
cat >"$HERMES_HOME/config.yaml" <<'CFG'
checkpoints:
  max_file_size_mb: 1
  max_files: 20
  exclude:
    - "*.tmpdata"
    - "/private/"
CFG
cd "$TREE"
mkdir -p src gen/deep private sub/private
printf '# generated\ngen/\n*.bak\n!keep.bak\n' >.hermesignore
echo a >src/a.c
echo g >gen/deep/out.c
echo b >x.bak
echo k >keep.bak
echo t >scratch.tmpdata
echo p >private/p.txt
echo s >sub/private/s.txt
head -c 1500000 /dev/urandom >big.dat
expect 0 checkpoint -m base
echo "$OUT" | grep -q 'too big, left out: big.dat' || fail "no note about the big file: $OUT"
G=(git --git-dir="$(store_dir)")
files=$("${G[@]}" ls-tree -r --name-only HEAD | sort | tr '\n' ' ')
[ "$files" = ".hermesignore keep.bak src/a.c sub/private/s.txt " ] || fail "tracked: $files"
# (1.4 MB: rounded down to "1 MB" it read as under the 1 MB cap)
"${G[@]}" log -1 --format=%B | grep -q '^Hermes-Skipped: big.dat (1.4 MB)$' || fail "no Skipped trailer"
expect 0 rollback
echo "$OUT" | grep -q base || fail "list"
echo "$OUT" | grep -q 'left out (over checkpoints.max_file_size_mb): big.dat (1.4 MB)' ||
	fail "the list does not say big.dat was left out: $OUT"
ok ".hermesignore, config excludes and the size cap (with a note)"

# a file already tracked may grow past the cap
echo small >grow.dat
expect 0 checkpoint -m small
head -c 1500000 /dev/urandom >grow.dat
expect 0 checkpoint -m grown
[ "$("${G[@]}" cat-file -s HEAD:grow.dat)" = 1500000 ] || fail "tracked file over the cap dropped"
ok "the cap applies to new files only"

# excluded paths are not touched by a restore
echo changed >gen/deep/out.c
echo changed >x.bak
expect 0 rollback 3
if [ "$(cat gen/deep/out.c)" != changed ] || [ "$(cat x.bak)" != changed ]; then
	fail "ignored files touched"
fi
[ -f big.dat ] || fail "the big untracked file was removed"
ok "restore leaves ignored and untracked-by-cap files alone"

# max_files on a fresh tree
TREE=$WORK/many
mkdir -p "$TREE/lots"
for i in $(seq 1 30); do echo "$i" >"$TREE/lots/$i.txt"; done
expect 4 checkpoint -C "$TREE"
echo "$ERR" | grep -q 'more than 20 files' || fail "max_files message: $ERR"
[ "$(echo "$ERR" | wc -l)" = 1 ] || fail "not one line: $ERR"
expect 0 checkpoints status
echo "$OUT" | grep "$TREE" | grep -q 'so it has no checkpoints; exclude big folders' || fail "status does not show it: $OUT"
echo "lots/" >"$TREE/.hermesignore"
expect 0 checkpoint -C "$TREE"
expect 0 checkpoints status
echo "$OUT" | grep "$TREE" | grep -q 'checkpoints are off' && fail "still off: $OUT"
ok "max_files: refused with a message, shown by status, lifted once excluded"
