#!/bin/bash
# A whole-tree rollback while writers run (issue 20, item 5): the safety
# checkpoint and the restore are one step, so every write lands either in
# the safety checkpoint or in the tree after the restore, none in between.
# A shell appends numbered lines to a log in a loop (a new open per line);
# a second writer keeps its log open for writing across the rollback, and
# tail -f follows it. Afterwards: the safety checkpoint's log ends at line
# K, the restored log holds the checkpoint's lines and then K+1, K+2, ...
# with no line missing; the held-open writer's later lines are in the file
# the user sees, and tail -f saw them.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config
echo "base" >"$TREE/log"
echo "base" >"$TREE/held.txt"
for i in $(seq 200); do echo "file $i" >"$TREE/f$i.txt"; done
ckpt_mount
base=$(git --git-dir="$STORE" rev-parse HEAD)
ckpt_turn work
for i in $(seq 200); do echo "changed $i" >>"$TREE/f$i.txt"; done

(
	i=1
	while [ ! -e "$T/stop" ]; do
		echo "n $i" >>"$TREE/log" || echo "append $i failed" >>"$T/errors"
		i=$((i + 1))
	done
) &
appender=$!
t_on_cleanup "kill $appender"
python3 - "$TREE/held.txt" "$T" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
i = 1
while not os.path.exists(sys.argv[2] + "/stop"):
    os.write(fd, b"h %d\n" % i)
    i += 1
    time.sleep(0.002)
os.write(fd, b"h last\n")
os.close(fd)
PY
holder=$!
t_on_cleanup "kill $holder"
tail -n +1 -f "$TREE/held.txt" >"$T/tail.out" &
tailer=$!
t_on_cleanup "kill $tailer"
sleep 1

ckpt_restore "$base"
sleep 1
: >"$T/stop"
wait "$appender" "$holder"

[ -e "$T/errors" ] && t_check_fail "appends failed: $(head -3 "$T/errors")"
safety=$(git --git-dir="$STORE" log --format='%H %s' | awk '/before rollback to/ { print $1; exit }')
[ -n "$safety" ] || t_fail "no safety checkpoint: $(ckpt_subjects | tr '\n' '|')"
# every numbered line, once: those before the restore in the safety
# checkpoint, those after it in the restored log, contiguous
ckpt_show "$safety" log >"$T/safety.log"
python3 - "$T/safety.log" "$TREE/log" <<'PY' || t_check_fail "lines were lost around the rollback (above)"
import sys
safety = open(sys.argv[1]).read().split("\n")[:-1]
now = open(sys.argv[2]).read().split("\n")[:-1]
assert safety[0] == "base" and now[0] == "base", (safety[:2], now[:2])
s = [int(x.split()[1]) for x in safety[1:]]
n = [int(x.split()[1]) for x in now[1:]]
assert s == list(range(1, len(s) + 1)), "the safety checkpoint's lines have gaps"
k = len(s)
assert n, "nothing was appended after the rollback"
assert n == list(range(k + 1, k + 1 + len(n))), \
    "after the restore the log goes on at %d, the safety checkpoint ends at %d" % (n[0], k)
print("# safety checkpoint holds lines 1..%d, the restored log %d..%d" % (k, n[0], n[-1]), file=sys.stderr)
PY
# the held-open writer: what it wrote after the rollback is in the file
# the user sees (rewritten in place), and tail -f, which follows it, saw it
grep -q '^h last$' "$TREE/held.txt" ||
	t_check_fail "the held-open writer's last line is not in the file the user sees: $(tail -2 "$TREE/held.txt" | tr '\n' '|')"
t_wait_for 5 grep -q '^h last$' "$T/tail.out" || t_check_fail "tail -f did not see the held-open writer's last line"
# the other files were restored
for i in 1 100 200; do
	t_expect_content "$TREE/f$i.txt" "file $i"
done
t_pass
