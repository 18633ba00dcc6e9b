#!/bin/bash
# tar round trip: a tree with hard links, symlinks, odd modes, owners,
# xattrs, empty and sparse files, a fifo is archived, extracted onto the mount and
# onto a plain directory (same listing, contents, xattrs), then archived
# again from the mount and extracted natively: nothing may change.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
t_need_root
t_need_fuse
t_need_cmd tar getfattr setfattr diff
t_init

o=$T/orig/tree
mkdir -p "$o/dir/deeper/deepest" "$o/empty-dir" "$o/modes"
printf 'plain\n' >"$o/plain.txt"
head -c 300000 /dev/urandom >"$o/dir/random.bin"
: >"$o/empty"
ln "$o/plain.txt" "$o/dir/hardlink.txt"
ln "$o/plain.txt" "$o/dir/deeper/hardlink2.txt"
ln -s ../plain.txt "$o/dir/rel-link"
ln -s /nonexistent/target "$o/dangling-link"
ln -s deeper "$o/dir/dir-link"
for m in 0400 0444 0600 0640 0700 0755 0777 1755 2755 4755; do
	printf '%s\n' "$m" >"$o/modes/m$m"
	chmod "$m" "$o/modes/m$m"
done
chmod 0700 "$o/dir/deeper/deepest"
chmod 1777 "$o/empty-dir"
printf 'owned\n' >"$o/owned-by-1234"
chown 1234:4321 "$o/owned-by-1234"
setfattr -n user.color -v blue "$o/plain.txt"
setfattr -n user.binary -v 0x00ff10 "$o/dir/random.bin"
setfattr -n user.on-dir -v yes "$o/dir"
truncate -s 10M "$o/sparse"
printf 'end' >>"$o/sparse"
mkfifo "$o/fifo"
touch -d '2001-02-03 04:05:06' "$o/dir/random.bin"

tar --xattrs --xattrs-include='user.*' -C "$T/orig" -cpf "$T/a.tar" tree ||
	t_fail "cannot create the archive"

mkdir -p "$T/native" "$T/src"
t_mount "$T/src"
cd "$T" || exit 1
tar --xattrs --xattrs-include='user.*' --same-owner -C "$T/native" -xpf "$T/a.tar" ||
	t_fail "native extraction failed"
tar --xattrs --xattrs-include='user.*' --same-owner -C "$T/src" -xpf "$T/a.tar" ||
	t_check_fail "extraction onto the mount failed"

# diff -r cannot compare fifos; the listing of t_compare_trees covers it
diff -r --no-dereference --exclude=fifo "$T/native/tree" "$T/src/tree" >&2 ||
	t_check_fail "diff -r finds differences between native and mount"
t_compare_trees "tar extraction" "$T/native/tree" "$T/src/tree"
[ "$(stat -c %Y "$T/src/tree/dir/random.bin")" = \
	"$(stat -c %Y "$T/native/tree/dir/random.bin")" ] ||
	t_check_fail "mtime not restored by tar on the mount"

# archive from the mount, extract natively: the same tree again
tar --xattrs --xattrs-include='user.*' -C "$T/src" -cpf "$T/b.tar" tree ||
	t_check_fail "cannot archive from the mount"
mkdir -p "$T/again"
tar --xattrs --xattrs-include='user.*' --same-owner -C "$T/again" -xpf "$T/b.tar" ||
	t_check_fail "cannot extract the archive made on the mount"
t_compare_trees "archive made on the mount" "$T/native/tree" "$T/again/tree"
tar -tvf "$T/a.tar" | awk '{ $4 = $5 = ""; print }' | LC_ALL=C sort >"$T/a.list"
tar -tvf "$T/b.tar" | awk '{ $4 = $5 = ""; print }' | LC_ALL=C sort >"$T/b.list"
t_diff "archive listings (without times)" "$T/a.list" "$T/b.list"

t_umount "$T/src"
t_compare_trees "tree on the disk after unmount" "$T/native/tree" "$T/src/tree"
t_pass
