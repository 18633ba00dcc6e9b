#!/bin/bash
# Filesystems mounted inside the tree: the mount shows one st_dev for
# everything, so their files must not share inode numbers with each other
# or with the tree's own, or tar (and rsync -H, cp -a, du) takes one file
# for a hard link of another and loses its data. The tree's own files keep
# the inode numbers of the disk below.
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root to mount tmpfs"; exit 77; }

P=$WORK/proj
mkdir -p "$P/a" "$P/b"
SUBS=()
sub_cleanup() {
	local m
	for m in "${SUBS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
}
# the hermesfs mount covers the submounts: it goes first
trap 'umount "$P" 2>/dev/null || true; sub_cleanup; fs_cleanup' EXIT
# two fresh tmpfs: their first files get the same inode number
for d in a b; do
	mount -t tmpfs "hermes-test-$d" "$P/$d" || fail "cannot mount a tmpfs on $P/$d"
	SUBS=("$P/$d" "${SUBS[@]}")
done
echo "content of a" >"$P/a/f"
echo "content of b" >"$P/b/g"
echo "the tree's own" >"$P/own"
[ "$(stat -c %i "$P/a/f")" = "$(stat -c %i "$P/b/g")" ] ||
	echo "note: the two tmpfs files do not share an inode number below"
own_ino=$(stat -c %i "$P/own")

fs_mount "$P"
fs_is_mounted "$P" || fail "not mounted"
ia=$(stat -c %i "$P/a/f") ib=$(stat -c %i "$P/b/g") io=$(stat -c %i "$P/own")
echo "inode numbers on the mount: a/f $ia, b/g $ib, own $io (below: own $own_ino)"
[ "$ia" != "$ib" ] || fail "files of two filesystems in the tree share inode number $ia"
[ "$io" = "$own_ino" ] || fail "the tree's own file shows inode $io, the disk says $own_ino"
# readdir gives the same numbers as stat
la=$(ls -i "$P/a" | awk '$2 == "f" { print $1 }')
[ "$la" = "$ia" ] || fail "ls -i shows $la for a/f, stat $ia"

# tar round trip: no file stored as a link to another
(cd "$P" && tar cf "$WORK/t.tar" a b own) || fail "tar cf failed"
if tar tvf "$WORK/t.tar" | grep -q ' link to '; then
	tar tvf "$WORK/t.tar" >&2
	fail "tar stored a file of one filesystem as a hard link to another"
fi
mkdir "$WORK/out"
tar -C "$WORK/out" -xf "$WORK/t.tar" || fail "tar xf failed"
[ "$(cat "$WORK/out/a/f")" = "content of a" ] || fail "a/f came back wrong"
[ "$(cat "$WORK/out/b/g")" = "content of b" ] || fail "b/g came back wrong"

# a real hard link inside one submount is still one
ln "$P/b/g" "$P/b/g2"
[ "$(stat -c %i "$P/b/g2")" = "$ib" ] || fail "a hard link in a submount shows another inode"

"$HERMESFS" --version >/dev/null
umount "$P" || fail "cannot unmount"
echo "PASS"
