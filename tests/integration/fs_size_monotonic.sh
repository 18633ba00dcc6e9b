#!/bin/bash
# The size of a file only ever appended to never goes backwards: a process
# that opens it and calls fstat twice sees the second size at least as big
# as the first, while another appends line after line the way loggers and
# python's open('a') do (open O_APPEND, fstat, seek to the end, write,
# close). The kernel used to keep a size from before the last append after
# showing a later one, 20-35 times in 20 s here with -o nopassthrough; an
# mmap(2) of the size just seen then failed. Checked on a plain directory,
# on the mount as it comes and with -o nopassthrough, checkpoints on.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
SW=$BUILD/tests/integration/size_watch
SECS=${SIZE_SECONDS:-8}

run() { # DIR SECONDS: prints the watcher's line
	: >"$1/a.log"
	"$SW" append "$1/a.log" "$2" &
	local ap=$!
	"$SW" watch "$1/a.log" "$2"
	wait "$ap" || t_fail "the appender failed in $1"
}

mkdir -p "$T/plain"
out=$(run "$T/plain" 2)
t_log "plain directory: $out"
case $out in *" backwards 0") ;; *) t_fail "plain directory: $out" ;; esac
for mode in default nopassthrough; do
	opts=()
	[ "$mode" = nopassthrough ] && opts=(-- -o nopassthrough)
	ckpt_config
	ckpt_mount "${opts[@]}"
	out=$(run "$TREE" "$SECS")
	t_log "$mode: $out"
	lines=$(wc -l <"$TREE/a.log")
	[ "$(tail -n 1 "$TREE/a.log")" = "line $lines" ] || t_fail "$mode: the log lost lines"
	case $out in
	"opens "*" backwards 0") ;;
	*) t_check_fail "$mode: the size went backwards: $out" ;;
	esac
	t_umount "$TREE"
	rm -f "$TREE/a.log"
done
t_pass
