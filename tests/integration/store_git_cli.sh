#!/bin/bash
# The store is a bare repository the plain git CLI reads: one commit per
# checkpoint with reason and counts, contents, exec bits and symlinks as in
# the tree, excluded paths absent, and the user's git config never used.
# shellcheck source=tests/integration/store_lib.sh
. "$SRC/tests/integration/store_lib.sh"
command -v git >/dev/null || exit 77

# a hostile user git config: signing, hooks, another identity
mkdir -p "$WORK/userhome/hooks"
printf '#!/bin/sh\ntouch %s/hook-ran\n' "$WORK" >"$WORK/userhome/hooks/pre-commit"
chmod +x "$WORK/userhome/hooks/pre-commit"
cat >"$WORK/userhome/.gitconfig" <<CFG
[user]
	name = Evil
	email = evil@example.com
[commit]
	gpgsign = true
[core]
	hooksPath = $WORK/userhome/hooks
[init]
	defaultBranch = trunk
CFG
export HOME=$WORK/userhome

cd "$TREE"
mkdir -p src node_modules/dep
printf 'int main(void) { return 0; }\n' >src/main.c
printf '#!/bin/sh\necho hi\n' >run.sh
chmod +x run.sh
ln -s src/main.c link
: >empty
echo 'SECRET=1' >.env
echo 'module' >node_modules/dep/index.js
echo 'log' >debug.log
expect 0 checkpoint -m "first state"
D=$(store_dir)
[ -f "$D/HEAD" ] || fail "no bare repository at $D"
case "$D" in "$TREE"/*) fail "store inside the tree" ;; esac
[ "$(cat "$D/hermes-tree")" = "$TREE" ] || fail "hermes-tree does not name the tree"
ok "store created outside the tree, recording it"

G=(git --git-dir="$D")
[ "$("${G[@]}" log --format=%s)" = "first state" ] || fail "git log: $("${G[@]}" log --format=%s)"
[ "$("${G[@]}" log --format='%an <%ae>')" = "hermes <hermes@local>" ] || fail "author not hermes"
"${G[@]}" log -1 --format=%G? | grep -q N || fail "commit is signed"
[ ! -e "$WORK/hook-ran" ] || fail "a user hook ran"
ok "git log reads the checkpoint; hermes identity; no signing, no hooks"

[ "$("${G[@]}" show HEAD:src/main.c)" = 'int main(void) { return 0; }' ] || fail "content"
"${G[@]}" ls-tree HEAD run.sh | grep -q '^100755 ' || fail "exec bit lost"
"${G[@]}" ls-tree HEAD link | grep -q '^120000 ' || fail "symlink not a link"
[ "$("${G[@]}" cat-file -p HEAD:link)" = "src/main.c" ] || fail "symlink target"
[ "$("${G[@]}" cat-file -s HEAD:empty)" = 0 ] || fail "empty file"
ok "contents, exec bit, symlink and empty file as in the tree"

files=$("${G[@]}" ls-tree -r --name-only HEAD | tr '\n' ' ')
for bad in .env node_modules debug.log; do
	case " $files" in *" $bad"*) fail "$bad was checkpointed: $files" ;; esac
done
ok "excluded paths are not in the checkpoint"

expect 0 checkpoint -m again
[ "$("${G[@]}" rev-list --count HEAD)" = 1 ] || fail "an unchanged tree made a commit"
echo "$OUT" | grep -q 'no changes' || fail "no 'no changes' message: $OUT"
ok "unchanged tree: no commit"

printf 'a\nb\nc\n' >src/new.txt
echo 'int x;' >>src/main.c
rm empty
expect 0 checkpoint -m "second"
msg=$("${G[@]}" log -1 --format=%B)
echo "$msg" | grep -q '^Hermes-Files: 3$' || fail "files trailer: $msg"
echo "$msg" | grep -q '^Hermes-Insertions: 4$' || fail "insertions trailer: $msg"
echo "$msg" | grep -q '^Hermes-Deletions: 0$' || fail "deletions trailer: $msg"
[ "$("${G[@]}" rev-parse HEAD~1)" = "$("${G[@]}" rev-list --max-parents=0 HEAD)" ] ||
	fail "not chained"
"${G[@]}" fsck --strict --no-progress 2>&1 | grep -v '^$' && fail "git fsck complains"
ok "chained commits with count trailers; git fsck clean"
