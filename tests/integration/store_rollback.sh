#!/bin/bash
# rollback: the list newest first, diff since N, whole-tree restore (files
# created since removed, deleted ones back, modes and links restored,
# excluded paths untouched), single-file restore, undo via the safety
# checkpoint, and working from a subdirectory.
# shellcheck source=tests/integration/store_lib.sh
. "$SRC/tests/integration/store_lib.sh"
cd "$TREE"
mkdir -p src docs node_modules/dep
printf 'one\ntwo\nthree\n' >src/a.c
printf 'doc\n' >docs/readme.md
printf '#!/bin/sh\n' >tool.sh
chmod +x tool.sh
ln -s src/a.c link
echo 'SECRET=1' >.env
echo v1 >node_modules/dep/index.js
expect 0 checkpoint -m "base"

printf 'one\nTWO\nthree\nfour\n' >src/a.c
rm docs/readme.md
rmdir docs
echo new >src/new.c
mkdir -p extra/deep
echo x >extra/deep/file
chmod -x tool.sh
rm link
ln -s docs/readme.md link
echo 'SECRET=2' >.env
echo v2 >node_modules/dep/index.js
expect 0 checkpoint -m "edits"

expect 0 rollback
echo "$OUT" | sed -n 3p | grep -q '^ *1  [0-9a-f]\{8\}  [0-9-]\{10\} [0-9:]\{8\}  edits  (' ||
	fail "first row is not the newest: $OUT"
echo "$OUT" | sed -n 4p | grep -q '^ *2  [0-9a-f]\{8\}  .*  base  (' || fail "second row: $OUT"
echo "$OUT" | grep -q 'edits  (6 files, +5/-3)' || fail "counts: $OUT"
ok "list: newest first with number, hash, date, reason, counts"

expect 0 rollback --json
echo "$OUT" | python3 -c 'import json,sys; l=json.load(sys.stdin); assert [c["reason"] for c in l]==["edits","base"], l' ||
	fail "json list: $OUT"
ok "json list"

expect 0 rollback diff 2
echo "$OUT" | grep -q 'src/a.c *| *3 ++-' || fail "diff --stat: $OUT"
echo "$OUT" | grep -q '^-two$' || fail "diff lacks -two"
echo "$OUT" | grep -q '^+TWO$' || fail "diff lacks +TWO"
echo "$OUT" | grep -q 'deleted file mode 100644' || fail "diff lacks the deleted file"
echo "$OUT" | grep -q $'\033' && fail "colour when not on a terminal"
expect 0 rollback diff 2 src/a.c
echo "$OUT" | grep -q 'docs/readme.md' && fail "diff FILE shows other files"
echo "$OUT" | grep -q '^+four$' || fail "diff FILE lacks the change"
ok "diff N and diff N FILE: stat, then unified diff"

echo 'not checkpointed yet' >>src/new.c
expect 0 rollback 2
[ "$(cat src/a.c)" = $'one\ntwo\nthree' ] || fail "a.c not restored"
[ "$(cat docs/readme.md)" = doc ] || fail "deleted file not recreated"
[ ! -e src/new.c ] || fail "file created since was kept"
[ ! -e extra ] || fail "emptied directory left behind"
[ -x tool.sh ] || fail "exec bit not restored"
[ "$(readlink link)" = src/a.c ] || fail "symlink not restored"
[ "$(cat .env)" = 'SECRET=2' ] || fail ".env touched"
[ "$(cat node_modules/dep/index.js)" = v2 ] || fail "node_modules touched"
ok "whole-tree restore: exact tracked state, excluded paths untouched"

expect 0 rollback
echo "$OUT" | sed -n 3p | grep -q 'before rollback to 2' || fail "no safety checkpoint: $OUT"
expect 0 rollback 1
if [ ! -e src/new.c ] || [ "$(readlink link)" != docs/readme.md ] || [ -x tool.sh ]; then
	fail "rolling back the rollback did not bring the edits back"
fi
grep -q 'not checkpointed yet' src/new.c || fail "the change made before the rollback is lost"
ok "safety checkpoint first; a rollback can be rolled back"

echo changed >src/a.c
echo changed >src/new.c
cd src
expect 0 rollback 4 a.c
cd "$TREE"
[ "$(cat src/a.c)" = $'one\ntwo\nthree' ] || fail "single file not restored from a subdirectory"
[ "$(cat src/new.c)" = changed ] || fail "single-file restore touched another file"
ok "rollback N FILE from a subdirectory restores only that file"

expect 0 rollback 5 docs
[ "$(cat docs/readme.md)" = doc ] || fail "directory restore"
ok "rollback N DIR restores a directory"

echo changed >docs/readme.md
expect 0 rollback 6 "$TREE/docs/readme.md"
[ "$(cat docs/readme.md)" = doc ] || fail "restore by absolute path"
ok "rollback N /abs/path/inside/the/tree restores that file"

# names and reasons an agent chose reach the terminal quoted: an escape
# sequence cannot clear the screen, a newline cannot break the table
cd "$TREE"
esc=$(printf 'esc\033[2Jname.txt')
nl=$(printf 'new\nline.txt')
echo one >"$esc"
expect 0 checkpoint -m "$(printf 'reason \033[31mred')"
echo two >>"$esc"
echo x >"$nl"
expect 0 rollback diff 1 --stat --no-pager
printf '%s' "$OUT" | grep -q "$(printf '\033')" && fail "diff --stat printed a raw escape: $(printf '%s' "$OUT" | cat -v)"
printf '%s\n' "$OUT" | grep -qF '"esc\033[2Jname.txt" |' || fail "diff --stat does not quote the name: $OUT"
printf '%s\n' "$OUT" | grep -qF '"new\nline.txt" ' || fail "diff --stat broke on a newline: $OUT"
[ "$(printf '%s\n' "$OUT" | wc -l)" = 3 ] || fail "diff --stat is not two rows and a summary: $OUT"
expect 0 rollback
printf '%s' "$OUT" | grep -q "$(printf '\033')" && fail "the list printed a raw escape"
printf '%s\n' "$OUT" | grep -qF '"reason \033[31mred"' || fail "the list does not quote the reason: $OUT"
ok "names and reasons with control characters are quoted on the terminal"
