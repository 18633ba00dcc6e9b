#!/bin/bash
# Editors' swap, backup and lock files (*.swp, *.swo, *~, .#*, #*#) are
# excluded by default: never in a checkpoint, and a restore neither removes
# nor overwrites them, even to a checkpoint that holds one (made before
# these defaults, here written with plain git).
# shellcheck source=tests/integration/store_lib.sh
. "$SRC/tests/integration/store_lib.sh"
command -v git >/dev/null || exit 77
cd "$TREE"
mkdir -p src
editor_files=(src/.f.txt.swp src/.f.txt.swo src/f.txt~ src/.#f.txt 'src/#f.txt#')
echo text >src/f.txt
echo kept >'src/#f.txt'
for f in "${editor_files[@]}"; do echo "live $f" >"$f"; done
expect 0 checkpoint -m base
G=(git --git-dir="$(store_dir)")
base=$("${G[@]}" rev-parse HEAD)
files=$("${G[@]}" ls-tree -r --name-only HEAD | sort | tr '\n' ' ')
[ "$files" = "src/#f.txt src/f.txt " ] || fail "tracked: $files"
ok "swap, backup and lock files are not checkpointed"

# a checkpoint as an older hermes wrote it: the tree plus a stale swap
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=hermes GIT_AUTHOR_EMAIL=hermes@local
export GIT_COMMITTER_NAME=hermes GIT_COMMITTER_EMAIL=hermes@local
stale=$(echo 'stale swap' | "${G[@]}" hash-object -w --stdin)
text=$("${G[@]}" rev-parse HEAD:src/f.txt)
hash=$("${G[@]}" rev-parse 'HEAD:src/#f.txt')
sub=$(printf '100644 blob %s\t#f.txt\n100644 blob %s\t.f.txt.swp\n100644 blob %s\tf.txt\n' \
	"$hash" "$stale" "$text" | "${G[@]}" mktree)
tree=$(printf '040000 tree %s\tsrc\n' "$sub" | "${G[@]}" mktree)
old=$(printf 'old\n\nHermes-Files: 3\n' | "${G[@]}" commit-tree "$tree" -p HEAD)
"${G[@]}" update-ref refs/heads/main "$old"

echo changed >src/f.txt
expect 0 rollback "$old"
[ "$(cat src/f.txt)" = text ] || fail "f.txt not restored"
for f in "${editor_files[@]}"; do
	[ "$(cat "$f" 2>&1)" = "live $f" ] || fail "$f touched by the restore: $(cat "$f" 2>&1)"
done
ok "a restore to a checkpoint holding a stale swap leaves the live one"

# restoring the base (which lacks them) removes none; with the editor
# gone, restoring the old checkpoint again brings no stale swap back
echo changed >src/f.txt
expect 0 rollback "$base"
for f in "${editor_files[@]}"; do
	[ "$(cat "$f" 2>&1)" = "live $f" ] || fail "$f touched by the restore: $(cat "$f" 2>&1)"
done
rm src/.f.txt.swp
echo changed >src/f.txt
expect 0 rollback "$old"
[ "$(cat src/f.txt)" = text ] || fail "f.txt not restored"
[ ! -e src/.f.txt.swp ] || fail "a restore brought a stale swap file back"
if "${G[@]}" log --format=%H | while read -r c; do
	[ "$c" = "$old" ] && continue
	"${G[@]}" ls-tree -r --name-only "$c"
done | grep -E '\.sw[po]$|~$|/\.#|/#.*#$'; then
	fail "a checkpoint holds an editor file"
fi
ok "a whole-tree restore removes no swap, backup or lock file"
