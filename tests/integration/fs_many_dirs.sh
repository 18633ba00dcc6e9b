#!/bin/bash
# More directories than the daemon may hold fds (issue 20, item 2): with the
# daemon's fd limit lowered to 1,024 after it mounted, and the budgets it
# would have chosen for that limit (half for inodes, an eighth for kept
# handle fds), 3,000 directories (a wide level, and a chain 300 deep) each with
# a file are made, listed, read, renamed, removed with a process's cwd
# inside, committed with git and checkpointed; every step gives what it
# gives on a plain directory, and the tree stays usable (no EMFILE).
. "$SRC/tests/integration/ckpt_lib.sh"
t_need_root
t_need_cmd prlimit
ckpt_init
ckpt_config
mkdir -p "$T/plain"

scenario() { # DIR
	local d=$1 i p
	cd "$d" || return 1
	mkdir $(seq -f 'w%g' 2700) || echo "mkdir failed"
	for i in $(seq 2700); do
		echo "$i" >"w$i/f" || { echo "failed at w$i"; break; }
	done
	p=deep
	for i in $(seq 300); do
		p=$p/d
	done
	mkdir -p "$p" && echo bottom >"$p/leaf" && echo "deep ok"
	echo "dirs: $(find . -type d | wc -l), files: $(find . -type f | wc -l)"
	echo "sum: $(cat w*/f | awk '{ s += $1 } END { print s }')"
	cat "$p/leaf"
	python3 -c '
import os
for i in range(1, 2701, 3):
    os.rename("w%d" % i, "r%d" % i)' || echo "rename failed"
	echo "renamed: $(ls -d r* | wc -l)"
	mkdir gone && (cd gone && rmdir ../gone && stat -c 'cwd %h' . && ls -a | wc -l)
	python3 -c 'print("python ok")'
	git init -q . && git add -A && git -c user.name=t -c user.email=t@t commit -qm all &&
		echo "git files: $(git ls-files | wc -l)"
	rm -r $(seq -f 'w%g' 2 3 2700) || echo "rm failed"
	echo "left: $(ls | wc -l)"
	cd /
}

scenario "$T/plain" >"$T/plain.out" 2>&1
ckpt_mount -- -o fd_budget=512,handle_fds=128
prlimit --pid "$T_DAEMON_PID" --nofile=1024:1024 || t_fail "cannot lower the daemon's fd limit"
scenario "$TREE" >"$T/mount.out" 2>&1 &
sp=$!
maxfds=0
while kill -0 $sp 2>/dev/null; do
	n=$(ls /proc/"$T_DAEMON_PID"/fd | wc -l)
	[ "$n" -gt "$maxfds" ] && maxfds=$n
	sleep 0.2
done
wait $sp
t_diff "3,000 directories past the fd budget" "$T/plain.out" "$T/mount.out"
fds=$(ls /proc/"$T_DAEMON_PID"/fd | wc -l)
[ "$fds" -lt 1024 ] || t_check_fail "the daemon holds $fds fds"
t_log "daemon fds at the end: $fds, at most $maxfds; $(ckpt_status_json | python3 -c 'import json,sys; m=json.load(sys.stdin)["mounts"][0]; print("inode fds", m["inode_fds"], "handles", m["inode_handles"], "handle fds", m["inode_handle_fds"])')"
"$HCTL" checkpoint -m many -C "$TREE" >/dev/null || t_check_fail "hermesctl checkpoint failed"
n=$(git --git-dir="$STORE" ls-tree -r --name-only HEAD | grep -c '^r.*/f$')
[ "$n" = 900 ] || t_check_fail "the checkpoint holds $n of the 900 renamed directories' files"
# and after all that, the tree still takes new work
echo fine >"$TREE/after" && [ "$(cat "$TREE/after")" = fine ] || t_check_fail "the tree is unusable afterwards"
grep -q 'deep ok' "$T/plain.out" || t_fail "the plain run itself is wrong"
t_pass
