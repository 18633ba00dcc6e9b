#!/bin/bash
# Empty directories are part of the tree a checkpoint holds (issue 14,
# item 2): checkpointed with an empty logs/, then `rmdir logs`, then
# `hermesctl rollback N`, logs/ is back; one made since is removed (only
# while empty: what is in it is nobody's checkpoint); a one-path rollback of
# a directory brings it back too. The store keeps them as git's empty tree,
# which the git CLI reads (fsck --strict passes, ls-tree shows them).
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config "turn_idle_ms: 0" "max_snapshots: 100000" "max_file_size_mb: 1"
mkdir -p "$TREE/logs" "$TREE/a/b/c" "$TREE/keep"
echo data >"$TREE/keep/f.txt"
ckpt_mount
ckpt_expect_count 1 "after the baseline"
G=(git --git-dir="$STORE")
"${G[@]}" ls-tree -r -t HEAD | grep -q $'^040000 tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\tlogs$' ||
	t_fail "the baseline does not hold the empty logs/: $("${G[@]}" ls-tree -r -t HEAD)"
"${G[@]}" ls-tree -r -t HEAD | grep -q $'\ta/b/c$' || t_fail "the baseline lacks a/b/c"

# rmdir, then back to the baseline
ckpt_turn step
rmdir "$TREE/logs"
rm -r "$TREE/a"
mkdir "$TREE/new" "$TREE/full"
echo mine >"$TREE/full/.env"  # excluded: in no checkpoint
ckpt_turn step
"$HCTL" rollback -C "$TREE" "$("${G[@]}" rev-list --max-parents=0 HEAD | head -1)" >"$T/rb.out" 2>&1 ||
	t_fail "rollback failed: $(cat "$T/rb.out")"
[ -d "$TREE/logs" ] || t_check_fail "logs/ did not come back"
[ -d "$TREE/a/b/c" ] || t_check_fail "a/b/c did not come back"
[ -e "$TREE/new" ] && t_check_fail "new/, made since, is still there"
[ "$(cat "$TREE/full/.env" 2>/dev/null)" = mine ] ||
	t_check_fail "full/.env, in no checkpoint, was lost"
[ "$(cat "$TREE/keep/f.txt")" = data ] || t_check_fail "keep/f.txt changed"

# the safety checkpoint holds the state before: undo it
undo=$(grep -o "rollback [0-9a-f]\{8,\}" "$T/rb.out" | head -1 | cut -d' ' -f2)
[ -n "$undo" ] || t_fail "the rollback named no undo: $(cat "$T/rb.out")"
ckpt_turn step
"$HCTL" rollback -C "$TREE" "$undo" >"$T/undo.out" 2>&1 || t_fail "undo failed: $(cat "$T/undo.out")"
[ -e "$TREE/logs" ] && t_check_fail "undo: logs/ is still there"
[ -d "$TREE/new" ] || t_check_fail "undo: new/ did not come back"

# one path: the directory alone
ckpt_turn step
"$HCTL" rollback -C "$TREE" "$("${G[@]}" rev-list --max-parents=0 HEAD | head -1)" logs >"$T/one.out" 2>&1 ||
	t_fail "one-path rollback failed: $(cat "$T/one.out")"
[ -d "$TREE/logs" ] || t_check_fail "one path: logs/ did not come back"
[ -d "$TREE/new" ] || t_check_fail "one path: new/ went"

# a one-file rollback that removes the only file of a directory the
# checkpoint holds empty keeps the directory
echo x >"$TREE/logs/x.txt"
ckpt_turn step
"$HCTL" rollback -C "$TREE" "$("${G[@]}" rev-list --max-parents=0 HEAD | head -1)" logs/x.txt \
	>"$T/one2.out" 2>&1 || t_fail "one-file rollback failed: $(cat "$T/one2.out")"
[ -e "$TREE/logs/x.txt" ] && t_check_fail "logs/x.txt is still there"
[ -d "$TREE/logs" ] || t_check_fail "removing logs/x.txt removed logs/, which the checkpoint holds"

# a file in the way of an empty directory, in no checkpoint (over the size
# cap), is kept by a rollback
ckpt_turn step
rmdir "$TREE/logs"
ckpt_turn step
head -c 2000000 /dev/urandom >"$TREE/logs"
ckpt_turn step
"$HCTL" rollback -C "$TREE" "$("${G[@]}" rev-list --max-parents=0 HEAD | head -1)" >"$T/way.out" 2>&1
[ -f "$TREE/logs" ] && [ "$(stat -c %s "$TREE/logs")" = 2000000 ] ||
	t_check_fail "the big file in the way of logs/ was lost: $(cat "$T/way.out")"
rm -f "$TREE/logs"

# an emptied directory (its files removed, the directory left) stays
ckpt_turn step
rm "$TREE/keep/f.txt"
ckpt_turn step
echo x >"$TREE/other.txt"
ckpt_turn step
"${G[@]}" ls-tree -r -t HEAD | grep -q $'^040000 tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\tkeep$' ||
	t_check_fail "the emptied keep/ is not in the newest checkpoint: $("${G[@]}" ls-tree -t HEAD)"
"${G[@]}" fsck --strict >"$T/fsck.out" 2>&1 || t_check_fail "git fsck --strict: $(cat "$T/fsck.out")"
t_umount "$TREE"
t_pass
