#!/bin/bash
# One vim session, several saves, each in a turn of its own: every turn
# leaves exactly one checkpoint (but the first: vim's swap file is not
# checkpointed, so the tree before it is the baseline's), and restoring each
# checkpoint through the daemon gives back the tree as it was before that
# turn, byte for byte.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
t_need_cmd vim
ckpt_config
NSAVES=5

printf 'line 1\nline 2\nline 3\n' >"$TREE/a.txt"
printf 'untouched\n' >"$TREE/b.txt"
ckpt_mount
ckpt_expect_count 1 "after the baseline"

# the tree as a user sees it, without vim's swap file
snapshot() {
	rm -rf "$1"
	mkdir -p "$1"
	# vim may touch its swap file (and so the directory) while tar reads:
	# tar's exit 1 ("file changed as we read it") is fine for us
	local rc=0
	tar -C "$TREE" --exclude='.*.sw?' --warning=no-file-changed -cf - . >"$T/snap.tar" || rc=$?
	[ "$rc" -le 1 ] || t_fail "cannot copy the tree to $1"
	tar -C "$1" -xpf "$T/snap.tar" || t_fail "cannot unpack the copy of the tree in $1"
}
snapshot "$T/state0"

# vim writes $ctl/ready once its swap file (.a.txt.swp, in the tree as it
# normally is) exists, then for each K waits for $ctl/goK, edits, saves and
# writes $ctl/savedK.
ctl=$T/ctl
mkdir "$ctl"
cat >"$T/session.vim" <<EOF
let s:ctl = '$ctl'
" the swap file exists before the first turn, as in an interactive session
preserve
call writefile([], s:ctl . '/ready')
for k in range(1, $NSAVES)
  let s:n = 0
  while !filereadable(s:ctl . '/go' . k) && s:n < 1500
    sleep 20m
    let s:n += 1
  endwhile
  call append('\$', 'added in save ' . k)
  if k % 2 == 0
    1delete
  endif
  if k == 3
    write! new.txt
  endif
  write
  call writefile([], s:ctl . '/saved' . k)
endfor
qall!
EOF
(cd "$TREE" && exec vim -Nu NONE -i NONE -es -S "$T/session.vim" a.txt </dev/null >"$T/vim.out" 2>&1) &
vim_pid=$!
t_on_cleanup "kill $vim_pid"
t_wait_for 30 test -e "$ctl/ready" || t_fail "vim did not start (see $T/vim.out)"
[ -e "$TREE/.a.txt.swp" ] || t_fail "vim made no swap file in the tree"

for k in $(seq 1 "$NSAVES"); do
	ckpt_turn "save $k"
	: >"$ctl/go$k"
	t_wait_for 30 test -e "$ctl/saved$k" || t_fail "vim did not save $k (see $T/vim.out)"
	snapshot "$T/state$k"
done
t_wait_for 30 t_pid_gone "$vim_pid" || t_fail "vim did not quit"
wait "$vim_pid" || t_check_fail "vim exited with status $? ($(cat "$T/vim.out"))"
[ "$(tail -n 1 "$TREE/a.txt")" = "added in save $NSAVES" ] || t_fail "vim did not save a.txt"

# baseline + one per save after the first; none yet for the last turn's
# own changes
ckpt_expect_count "$NSAVES" "$NSAVES saves in $NSAVES turns"
for k in $(seq 1 "$NSAVES"); do
	n=$(git --git-dir="$STORE" log --format=%s | grep -cx "save $k")
	want=$((k > 1))
	[ "$n" = "$want" ] || t_check_fail "turn 'save $k' left $n checkpoints, want $want"
done

# restore each save's checkpoint: the tree before that save, exactly
oid_of() { git --git-dir="$STORE" log --format='%H %s' | awk -v s="$1" '{ h = $1; $1 = ""; if (substr($0, 2) == s) print h }'; }
# the safety checkpoint's reason names the target and its short hash after it
oid_prefix() { git --git-dir="$STORE" log --format='%H %s' | awk -v s="$1" '{ h = $1; $1 = ""; if (index(substr($0, 2), s) == 1) print h }'; }
tree_equal() {
	snapshot "$T/now"
	t_compare_trees "$1" "$2" "$T/now"
}
for k in $(seq "$NSAVES" -1 1); do
	oid=$(oid_of "save $k")
	[ "$k" != 1 ] || oid=$(oid_of baseline)
	[ -n "$oid" ] || continue
	ckpt_restore "$oid"
	tree_equal "restore of 'save $k'" "$T/state$((k - 1))" ||
		t_check_fail "restore of 'save $k' is not the tree before save $k"
done
# the first restore's safety checkpoint holds the tree after the last save
safety=$(oid_prefix "before rollback to $(oid_of "save $NSAVES")")
[ -n "$safety" ] || t_fail "no safety checkpoint for the first restore"
ckpt_restore "$safety"
tree_equal "undo of the restores" "$T/state$NSAVES" ||
	t_check_fail "restoring the safety checkpoint did not bring back the last save"
t_umount "$TREE"
t_pass
