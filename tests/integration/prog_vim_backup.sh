#!/bin/bash
# vim saving through the mount with a kept backup and the rename path
# (backupcopy=no: the original is renamed to file~ and a new file is
# written). The result must match the same edit on a plain directory.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
t_need_root
t_need_fuse
t_need_cmd vim getfattr setfattr
t_init

mkdir -p "$T/native" "$T/src" "$T/home"
t_mount "$T/src"
cd "$T" || exit 1

for d in "$T/native" "$T/src"; do
	printf 'alpha\nbeta\n' >"$d/notes.txt"
	chmod 0640 "$d/notes.txt"
	setfattr -n user.tag -v keep "$d/notes.txt"
	(cd "$d" && HOME=$T/home timeout 60 vim -Nu NONE -i NONE -es \
		-c 'set backup writebackup backupcopy=no backupdir=. backupskip=' \
		-c '%s/beta/gamma/' -c 'wq' notes.txt </dev/null) ||
		t_check_fail "vim failed in $d"
done

t_expect_content "$T/src/notes.txt" $'alpha\ngamma'
t_expect_content "$T/src/notes.txt~" $'alpha\nbeta'
[ "$(stat -c %a "$T/src/notes.txt")" = 640 ] ||
	t_check_fail "vim's save lost the mode: $(stat -c %a "$T/src/notes.txt")"
t_compare_trees "vim backup save" "$T/native" "$T/src"

# a second save of the same file, now that the backup exists
for d in "$T/native" "$T/src"; do
	(cd "$d" && HOME=$T/home timeout 60 vim -Nu NONE -i NONE -es \
		-c 'set backup writebackup backupcopy=no backupdir=. backupskip=' \
		-c 'normal Godelta' -c 'wq' notes.txt </dev/null) ||
		t_check_fail "second vim save failed in $d"
done
t_expect_content "$T/src/notes.txt" $'alpha\ngamma\ndelta'
t_expect_content "$T/src/notes.txt~" $'alpha\ngamma'
t_compare_trees "vim second save" "$T/native" "$T/src"

t_umount "$T/src"
# what vim wrote is on the disk below
t_expect_content "$T/src/notes.txt" $'alpha\ngamma\ndelta'
t_pass
