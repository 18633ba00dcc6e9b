#!/bin/bash
# Everyday shell tools on the mount give what they give on a plain
# directory: cp -a into the mount, mv across the mount's boundary (copy +
# delete) and within it, sed -i (replace by rename), touch -d, chmod -R,
# ln, find -delete, du, ls -l, rm -rf.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
t_need_root
t_need_fuse
t_need_cmd cp mv sed find du ls getfattr setfattr
t_init

# the source tree both sides start from
o=$T/orig
mkdir -p "$o/a/b/c" "$o/empty"
for i in $(seq 1 30); do printf 'line %d\nsecond\n' "$i" >"$o/a/f$i.txt"; done
head -c 200000 /dev/urandom >"$o/a/b/blob"
ln "$o/a/f1.txt" "$o/a/b/hard"
ln -s ../f2.txt "$o/a/b/sym"
chmod 0600 "$o/a/f3.txt"
setfattr -n user.k -v v "$o/a/f4.txt"
truncate -s 5M "$o/a/b/c/sparse"
touch -d '2002-02-02 02:02:02' "$o/a/f5.txt"

mkdir -p "$T/native" "$T/src" "$T/outside"
t_mount "$T/src"
cd "$T" || exit 1

for d in "$T/native" "$T/src"; do
	(
		set -e
		cp -a "$o" "$d/tree"
		sed -i 's/second/2nd/' "$d/tree/a/f6.txt"
		touch -d '2003-03-03 03:03:03' "$d/tree/a/f7.txt"
		chmod -R g+w,o-r "$d/tree/a/b"
		ln -s a/f8.txt "$d/tree/link8"
		ln "$d/tree/a/f9.txt" "$d/tree/hard9"
		mv "$d/tree/a/f10.txt" "$d/tree/moved10.txt"
		printf 'from outside\n' >"$T/outside/in-$(basename "$d").txt"
		mv "$T/outside/in-$(basename "$d").txt" "$d/tree/came-in.txt"
		cp -a "$d/tree/a/f11.txt" "$T/outside/out-$(basename "$d").txt"
		mv "$d/tree/a/f12.txt" "$T/outside/went-out-$(basename "$d").txt"
		find "$d/tree/a" -name 'f2?.txt' -delete
		rm -rf "$d/tree/empty"
	) || t_check_fail "the shell steps failed in $d"
done

t_compare_trees "coreutils" "$T/native/tree" "$T/src/tree"
# ls -l and du as a user reads them (times of the files made by the steps
# differ: --time-style=+ prints none)
# shellcheck disable=SC2012 # ls -l is what is being compared
lsl() { (cd "$1" && LC_ALL=C ls -lR --time-style=+ .); }
lsl "$T/native/tree" >"$T/native.ls"
lsl "$T/src/tree" >"$T/mount.ls"
t_diff "ls -lR" "$T/native.ls" "$T/mount.ls"
[ "$(du -s --apparent-size "$T/native/tree" | cut -f1)" = "$(du -s --apparent-size "$T/src/tree" | cut -f1)" ] ||
	t_check_fail "du --apparent-size differs"
[ "$(du -s "$T/native/tree" | cut -f1)" = "$(du -s "$T/src/tree" | cut -f1)" ] ||
	t_check_fail "du (allocated blocks) differs: native $(du -s "$T/native/tree" | cut -f1), mount $(du -s "$T/src/tree" | cut -f1)"
t_expect_content "$T/src/tree/a/f6.txt" $'line 6\n2nd'
t_expect_content "$T/outside/went-out-src.txt" $'line 12\nsecond'
cmp -s "$T/outside/out-native.txt" "$T/outside/out-src.txt" ||
	t_check_fail "a file copied out of the mount differs"
rm -rf "$T/src/tree" || t_check_fail "rm -rf of the tree on the mount failed"
[ -z "$(ls -A "$T/src")" ] || t_check_fail "rm -rf left: $(ls -A "$T/src")"
t_umount "$T/src"
t_pass
