#!/bin/bash
# More files than the open-file limit the daemon was started with: creating,
# listing, reading back and deleting them all through the mount works, as
# it does on the disk below (an inode table that holds one fd per file must
# raise its limit or let go of fds).
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
t_need_root
t_need_fuse
t_init

limit=$(ulimit -n)
[ "$limit" = unlimited ] && limit=100000
n=$((limit + 2000))
[ "$n" -gt 120000 ] && n=120000
t_log "open-file limit $limit: creating $n files"

mkdir -p "$T/src"
t_mount "$T/src"
cd "$T/src" || exit 1
mkdir many
made=0
for ((i = 0; i < n; i++)); do
	if ! printf '%d\n' "$i" >"many/f$i" 2>"$T/err"; then
		t_check_fail "creating file $i of $n failed: $(cat "$T/err")"
		break
	fi
	made=$((made + 1))
done
[ "$made" = "$n" ] || t_fail "created only $made of $n files"
[ "$(find many -type f | wc -l)" = "$n" ] || t_check_fail "find does not list $n files"
[ "$(cat many/f0 "many/f$((n - 1))")" = "0
$((n - 1))" ] || t_check_fail "first and last file hold the wrong data"
sum=$(cat many/* | awk '{ s += $1 } END { print s }')
[ "$sum" = "$((n * (n - 1) / 2))" ] || t_check_fail "reading all files back gives sum $sum"
rm -r many || t_check_fail "rm -r of $n files failed"
[ ! -e many ] || t_check_fail "many/ still exists after rm -r"
cd "$T" || exit 1
t_umount "$T/src"
t_pass
