#!/bin/bash
# vim -es with its default options (swap file, writebackup, backupcopy=auto)
# editing through the mount: a plain file, a file reached through a symlink
# and a file with a second hard link. Same results as on a plain directory.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
t_need_root
t_need_fuse
t_need_cmd vim
t_init

mkdir -p "$T/native" "$T/src" "$T/home"
t_mount "$T/src"
cd "$T" || exit 1

for d in "$T/native" "$T/src"; do
	mkdir "$d/sub"
	printf 'one\ntwo\nthree\n' >"$d/sub/plain.c"
	printf 'target\n' >"$d/sub/real.txt"
	ln -s real.txt "$d/sub/via-link.txt"
	printf 'shared\n' >"$d/sub/hard1.txt"
	ln "$d/sub/hard1.txt" "$d/sub/hard2.txt"
	chmod 0755 "$d/sub/plain.c"
	(
		cd "$d/sub" || exit 1
		export HOME=$T/home
		timeout 60 vim -Nu NONE -i NONE -es --cmd 'set backupskip=' -c 'g/two/d' -c 'wq' plain.c &&
		timeout 60 vim -Nu NONE -i NONE -es --cmd 'set backupskip=' -c 'normal Aedited' -c 'wq' \
			via-link.txt &&
		timeout 60 vim -Nu NONE -i NONE -es --cmd 'set backupskip=' -c 'normal A!' -c 'wq' hard2.txt
	) </dev/null || t_check_fail "vim failed in $d"
done

t_expect_content "$T/src/sub/plain.c" $'one\nthree'
t_expect_content "$T/src/sub/real.txt" 'targetedited'
[ -L "$T/src/sub/via-link.txt" ] || t_check_fail "vim replaced the symlink"
t_expect_content "$T/src/sub/hard1.txt" 'shared!'
[ "$(stat -c %h "$T/src/sub/hard1.txt")" = 2 ] ||
	t_check_fail "vim broke the hard link"
[ -z "$(find "$T/src/sub" -name '.*.sw?')" ] ||
	t_check_fail "vim left a swap file: $(find "$T/src/sub" -name '.*.sw?')"
t_compare_trees "vim -es edits" "$T/native" "$T/src"
t_umount "$T/src"
t_pass
