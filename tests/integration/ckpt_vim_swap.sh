#!/bin/bash
# A real vim (keystrokes through a private tmux server) editing a file on
# the mount while whole-tree rollbacks run: its live swap file survives
# them untouched, a rollback to a checkpoint taken while an earlier vim was
# open brings no stale swap back, and a vim started afterwards does not
# warn about one (E325 ATTENTION). Swap files are never in the store.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
t_need_cmd vim tmux
ckpt_config
mkdir -p "$T/home"
printf 'line one\nline two\n' >"$TREE/f.txt"
ckpt_mount
ckpt_expect_count 1 "after the baseline"
G=(git --git-dir="$STORE")
base=$("${G[@]}" rev-parse HEAD)
swap=$TREE/.f.txt.swp

sock=$T/tmux.sock
t_on_cleanup "tmux -S '$sock' kill-server"
# shellcheck disable=SC2317 # called through t_wait_for
pane_has() { tmux -S "$sock" capture-pane -p -t "$1" | grep -q -- "$2"; }
pane_tail() { tmux -S "$sock" capture-pane -p -t "$1" | tail -n 3; }
vim_start() {
	tmux -S "$sock" new-session -d -s "$1" -x 100 -y 30 \
		"cd '$TREE' && HOME='$T/home' TERM=xterm exec vim -Nu NONE -i NONE f.txt"
	# (or its question about a swap file it found)
	t_wait_for 10 pane_has "$1" 'line one\|ATTENTION' ||
		t_fail "vim $1 did not show f.txt: $(pane_tail "$1")"
}
# append a line, then write the swap file out (:preserve)
vim_type() {
	tmux -S "$sock" send-keys -t "$1" Go "$2" Escape
	t_wait_for 10 pane_has "$1" "$2" || t_fail "vim $1 did not take the text: $(pane_tail "$1")"
	tmux -S "$sock" send-keys -t "$1" :preserve Enter
	t_wait_for 10 sh -c "grep -aq '$2' '$swap'" || t_fail "vim $1 wrote no swap file"
}
# shellcheck disable=SC2317 # called through t_wait_for
vim_gone() { ! tmux -S "$sock" has-session -t "$1" 2>/dev/null; }
# shellcheck disable=SC2317 # called through t_wait_for
swap_gone() { [ ! -e "$swap" ]; }

# vim 1 is open while a checkpoint is taken, then saves and quits
vim_start v1
vim_type v1 'first session'
echo other >"$TREE/other.txt"
ckpt_ctl '{"op":"checkpoint","reason":"while vim 1 was open"}' >/dev/null ||
	t_fail "checkpoint failed"
during=$("${G[@]}" rev-parse HEAD)
[ "$during" != "$base" ] || t_fail "no checkpoint while vim 1 was open"
tmux -S "$sock" send-keys -t v1 :wq Enter
t_wait_for 10 vim_gone v1 || t_fail "vim 1 did not quit: $(pane_tail v1)"
t_wait_for 10 swap_gone || t_fail "vim 1 left its swap file"

# vim 2 edits without saving; rollbacks of the whole tree run meanwhile
vim_start v2
pane_has v2 'ATTENTION' && t_fail "vim 2 found a swap file: $(pane_tail v2)"
vim_type v2 'second session'
ino=$(stat -c %i "$swap")
for target in "$base" "$during"; do
	out=$("$HCTL" rollback -C "$TREE" "$target" 2>&1) || t_fail "rollback to $target: $out"
	if [ ! -e "$swap" ]; then
		t_check_fail "the rollback to ${target:0:8} removed vim's live swap file"
	elif [ "$(stat -c %i "$swap")" != "$ino" ] || ! grep -aq 'second session' "$swap"; then
		t_check_fail "the rollback to ${target:0:8} replaced vim's live swap file"
	fi
done
[ "$(cat "$TREE/other.txt")" = other ] || t_check_fail "the rollback did not restore other.txt"
# vim 2 still works with its swap file: it can write it again
tmux -S "$sock" send-keys -t v2 Go 'after the rollbacks' Escape :preserve Enter
t_wait_for 10 sh -c "grep -aq 'after the rollbacks' '$swap'" ||
	t_check_fail "vim 2 cannot write its swap file after the rollbacks: $(pane_tail v2)"
tmux -S "$sock" send-keys -t v2 :q! Enter
t_wait_for 10 vim_gone v2 || t_fail "vim 2 did not quit: $(pane_tail v2)"
t_wait_for 10 swap_gone || t_fail "vim 2 left its swap file"

# no vim open: the checkpoint of vim 1's time brings no swap back
out=$("$HCTL" rollback -C "$TREE" "$during" 2>&1) || t_fail "rollback to $during: $out"
[ -e "$swap" ] && t_check_fail "a rollback brought vim 1's stale swap file back"
vim_start v3
pane_has v3 'ATTENTION' && t_check_fail "vim 3 warns of a stale swap file: $(pane_tail v3)"
tmux -S "$sock" send-keys -t v3 :q! Enter
t_wait_for 10 vim_gone v3 || t_check_fail "vim 3 did not quit"
# a vim stuck at a prompt would keep the mount busy
tmux -S "$sock" kill-server 2>/dev/null

held=$("${G[@]}" log --format=%H | while read -r c; do
	"${G[@]}" ls-tree -r --name-only "$c"
done | grep '\.sw[po]$' | sort -u)
[ -z "$held" ] || t_check_fail "checkpoints hold swap files: $held"
t_umount "$TREE"
t_pass
