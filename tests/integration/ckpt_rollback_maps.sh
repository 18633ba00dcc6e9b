#!/bin/bash
# A whole-tree rollback beside maps and links (found by review):
# - a store through a shared writable map, not yet written back, is in the
#   safety checkpoint, and is not written over the restored file after;
# - a reader mapping a file the rollback shrinks keeps running (the file is
#   replaced, not cut under its map: no SIGBUS);
# - a one-file rollback of a file with a second link leaves the other name
#   with the right link count;
# - failed rmdirs pin no fds (past the fd budget every inode is a handle).
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config
echo "base content line" >"$TREE/f.txt"
python3 -c 'import sys; open(sys.argv[1], "w").write("A" * 16384)' "$TREE/data.txt"
echo base >"$TREE/a.txt"
for i in $(seq 200); do mkdir "$TREE/d$i"; echo x >"$TREE/d$i/f"; done
ckpt_mount -- -o fd_budget=0,handle_fds=16
base=$(git --git-dir="$STORE" rev-parse HEAD)
ckpt_turn work
echo "second version....." >"$TREE/f.txt"
python3 -c 'import sys; open(sys.argv[1], "a").write("B" * 16384)' "$TREE/data.txt"

# a dirty shared map, and a reader mapping 32 KiB of what becomes 16 KiB
python3 - "$TREE" "$T" <<'PY' &
import mmap, os, sys, time
tree, t = sys.argv[1], sys.argv[2]
fd = os.open(tree + "/f.txt", os.O_RDWR)
m = mmap.mmap(fd, 0)
m[0:5] = b"DIRTY"
open(t + "/wrote", "w").close()
while not os.path.exists(t + "/go"):
    time.sleep(0.01)
m.close()
os.close(fd)
PY
mapper=$!
t_on_cleanup "kill $mapper"
python3 - "$TREE/data.txt" "$T" <<'PY' &
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 32768, prot=mmap.PROT_READ)
open(sys.argv[2] + "/mapped", "w").close()
while not os.path.exists(sys.argv[2] + "/go"):
    x = m[30000]
    time.sleep(0.001)
PY
reader=$!
t_on_cleanup "kill $reader"
t_wait_for 10 test -e "$T/wrote" -a -e "$T/mapped" || t_fail "the mappers did not start"
ckpt_restore "$base"
: >"$T/go"
wait "$mapper" || t_check_fail "the map writer failed"
wait "$reader"
rc=$?
[ "$rc" = 0 ] || t_check_fail "the reader of a mapped file died with status $rc (135: SIGBUS) in the rollback"
sleep 0.5
safety=$(git --git-dir="$STORE" log --format='%H %s' | awk '/before rollback to/ { print $1; exit }')
[ "$(ckpt_show "$safety" f.txt)" = "DIRTYd version....." ] ||
	t_check_fail "the safety checkpoint lacks the store through the map: '$(ckpt_show "$safety" f.txt)'"
t_expect_content "$TREE/f.txt" "base content line"
[ "$(stat -c %s "$TREE/data.txt")" = 16384 ] || t_check_fail "data.txt is $(stat -c %s "$TREE/data.txt") bytes"

# a file with two names, one of them restored
ckpt_turn links
echo changed >"$TREE/a.txt"
ln "$TREE/a.txt" "$TREE/b.o"
[ "$(stat -c %h "$TREE/b.o")" = 2 ] || t_fail "the link did not take"
ckpt_restore "$base" a.txt
t_expect_content "$TREE/a.txt" "base"
t_expect_content "$TREE/b.o" "changed"
[ "$(stat -c %h "$TREE/b.o")" = 1 ] ||
	t_check_fail "b.o shows $(stat -c %h "$TREE/b.o") links after a.txt was replaced (1 on the disk)"

# failed removals pin nothing
before=$(ls /proc/"$T_DAEMON_PID"/fd | wc -l)
for i in $(seq 200); do rmdir "$TREE/d$i" 2>/dev/null && t_fail "rmdir of a full directory succeeded"; done
after=$(ls /proc/"$T_DAEMON_PID"/fd | wc -l)
[ $((after - before)) -lt 20 ] || t_check_fail "200 failed rmdirs took the daemon from $before to $after fds"
t_pass
