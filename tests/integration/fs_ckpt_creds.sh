#!/bin/bash
# The first change of a turn made by another user (uid 65534) creating a
# file, a directory, a symlink and a hard link: the turn's checkpoint runs
# as the daemon, not with that user's credentials, so it still captures a
# root-only file changed in the previous turn.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
t_need_root
ckpt_config
mkdir "$TREE/shared"
chmod 0777 "$TREE/shared"
echo "v1" >"$TREE/secret.txt"
chmod 0600 "$TREE/secret.txt"
# shellcheck disable=SC2119 # no daemon options
ckpt_mount

n=0
for how in create mkdir symlink link; do
	ckpt_turn "root edits ($how)"
	echo "secret before $how" >"$TREE/secret.txt"
	echo "pub $how" >"$TREE/shared/pub-$how"
	chmod 0666 "$TREE/shared/pub-$how"
	before=$(ckpt_count)
	ckpt_turn "nobody $how"
	# shellcheck disable=SC2016 # $1 is the inner shell's
	case $how in
	create) t_as_nobody sh -c 'echo n >"$1/shared/by-nobody"' sh "$TREE" ;;
	mkdir) t_as_nobody mkdir "$TREE/shared/dir-nobody" ;;
	symlink) t_as_nobody ln -s target "$TREE/shared/sym-nobody" ;;
	link) t_as_nobody ln "$TREE/shared/pub-$how" "$TREE/shared/hard-nobody" ;;
	esac || t_fail "nobody could not $how in shared/"
	after=$(ckpt_count)
	[ "$after" = $((before + 1)) ] ||
		t_check_fail "nobody's $how took no checkpoint ($before -> $after)"
	got=$(git --git-dir="$STORE" show "HEAD:secret.txt" 2>&1)
	[ "$got" = "secret before $how" ] ||
		t_check_fail "checkpoint before nobody's $how holds secret.txt as '$got'"
	n=$((n + 1))
done
[ "$(stat -c %U "$TREE/shared/by-nobody")" = nobody ] || t_check_fail "by-nobody is not owned by nobody"
t_umount "$TREE"
t_pass
