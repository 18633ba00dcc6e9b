#!/bin/bash
# nano, driven by keystrokes in a private tmux server, saving a file through
# the mount (with -B, so it also writes a backup). The result must match the
# same keystrokes on a plain directory.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
t_need_root
t_need_fuse
t_need_cmd nano tmux
t_init

mkdir -p "$T/native" "$T/src" "$T/home"
t_mount "$T/src"
cd "$T" || exit 1
sock=$T/tmux.sock
t_on_cleanup "tmux -S '$sock' kill-server"

# shellcheck disable=SC2317 # called through t_wait_for
pane_has() { tmux -S "$sock" capture-pane -p -t "$1" | grep -q -- "$2"; }

n=0
for d in "$T/native" "$T/src"; do
	n=$((n + 1))
	printf 'first line\nsecond line\n' >"$d/todo.txt"
	chmod 0600 "$d/todo.txt"
	tmux -S "$sock" new-session -d -s "s$n" -x 100 -y 30 \
		"cd '$d' && HOME='$T/home' TERM=xterm nano --ignorercfiles -B todo.txt"
	t_wait_for 10 pane_has "s$n" 'first line' ||
		t_fail "nano did not show the file in $d"
	tmux -S "$sock" send-keys -t "s$n" 'typed in nano' Enter
	tmux -S "$sock" send-keys -t "s$n" C-o
	t_wait_for 10 pane_has "s$n" 'File Name to Write' ||
		t_fail "nano did not ask for the file name in $d"
	tmux -S "$sock" send-keys -t "s$n" Enter
	t_wait_for 10 pane_has "s$n" 'Wrote 3 lines' ||
		t_fail "nano did not report the write in $d: $(tmux -S "$sock" capture-pane -p -t "s$n" | tail -3)"
	tmux -S "$sock" send-keys -t "s$n" C-x
	t_wait_for 10 eval "! tmux -S '$sock' has-session -t s$n 2>/dev/null" ||
		t_check_fail "nano did not exit in $d"
done

t_expect_content "$T/src/todo.txt" $'typed in nano\nfirst line\nsecond line'
t_expect_content "$T/src/todo.txt~" $'first line\nsecond line'
[ "$(stat -c %a "$T/src/todo.txt")" = 600 ] ||
	t_check_fail "nano's save changed the mode: $(stat -c %a "$T/src/todo.txt")"
t_compare_trees "nano save" "$T/native" "$T/src"
t_umount "$T/src"
t_expect_content "$T/src/todo.txt" $'typed in nano\nfirst line\nsecond line'
t_pass
