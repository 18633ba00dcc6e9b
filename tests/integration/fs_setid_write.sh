#!/bin/bash
# A write by an unprivileged user to a set-user-ID or set-group-ID program
# clears those bits, and the mount shows it at once: right after the write,
# stat gives the plain mode and running the program gives no root euid/egid
# (the kernel keeps a file's mode for the day-long attribute timeout and
# execve trusts it). Write-only, append and read-write opens, as on disk.
set -u
. "$SRC/tests/integration/lib.sh"
t_need_fuse
t_need_root
t_need_cmd setpriv /usr/bin/python3 id
t_init
mkdir -p "$T/native" "$T/tree"
t_mount "$T/tree"
N=(setpriv --reuid 65534 --regid 65534 --clear-groups)
for dir in native tree; do
	for mode in 4777 2777 6777; do
		for flags in O_WRONLY "O_WRONLY|os.O_APPEND" O_RDWR; do
			f=$T/$dir/prog
			rm -f "$f"
			cp "$(command -v id)" "$f"
			chmod "$mode" "$f"
			stat -c %A "$f" >/dev/null # the kernel now holds the set-id mode
			"${N[@]}" /usr/bin/python3 -c "import os
fd = os.open('$f', os.$flags)
os.pwrite(fd, b'\x7f', 0)
os.close(fd)" || t_fail "nobody cannot write $f"
			m=$(stat -c %A "$f")
			case $m in *s* | *S*) t_check_fail "$dir: mode $mode, open $flags: still $m after nobody's write" ;; esac
			out=$("${N[@]}" "$f")
			case $out in *euid=0* | *egid=0*) t_check_fail "$dir: mode $mode, open $flags: runs as root after the write: $out" ;; esac
		done
	done
done
t_umount "$T/tree"
t_pass
