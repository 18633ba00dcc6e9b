#!/bin/bash
# A restore through the daemon is seen at once by path, even with the
# kernel's caches warm (content, size, a cached "no such file", a cached
# entry of a file the restore removes), while a reader holds the file open
# and while cat reads it in a loop (every read whole: old or new, never
# torn). The restore's safety checkpoint undoes it.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config

short="short version"
long=$(python3 -c 'print("\n".join("long version line %d" % i for i in range(400)))')
printf '%s\n' "$short" >"$TREE/f.txt"
echo "I will be deleted" >"$TREE/gone.txt"
ckpt_mount
before=$(git --git-dir="$STORE" rev-parse HEAD)

# the turn: f.txt grows, gone.txt goes, new.txt comes
ckpt_turn edit
printf '%s\n' "$long" >"$TREE/f.txt"
rm "$TREE/gone.txt"
echo "created in the turn" >"$TREE/new.txt"
# warm every cache the kernel has for these names
t_expect_content "$TREE/f.txt" "$long"
stat "$TREE/gone.txt" >/dev/null 2>&1 && t_fail "gone.txt still there after rm"
stat "$TREE/new.txt" >/dev/null || t_fail "new.txt missing"

# a reader holding f.txt open, and cat reading it by path in a loop
python3 - "$TREE/f.txt" "$T/holder" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
first = os.pread(fd, 1 << 20, 0)
open(sys.argv[2] + ".ready", "w").close()
while not os.path.exists(sys.argv[2] + ".go"):
    time.sleep(0.01)
again = os.pread(fd, 1 << 20, 0)
open(sys.argv[2] + ".out", "wb").write(again)
PY
holder=$!
t_on_cleanup "kill $holder"
t_wait_for 10 test -e "$T/holder.ready" || t_fail "the holder did not open f.txt"
(
	i=0
	while [ ! -e "$T/cat.stop" ]; do
		cat "$TREE/f.txt" >"$T/cat.$i" 2>&1
		i=$((i + 1))
	done
) &
catter=$!
t_on_cleanup "kill $catter"
sleep 0.2

ckpt_restore "$before"

# by path, at once: the content, the size, the names
t_expect_content "$TREE/f.txt" "$short"
size=$(stat -c %s "$TREE/f.txt")
[ "$size" = $((${#short} + 1)) ] || t_check_fail "f.txt size $size after restore, want $((${#short} + 1))"
t_expect_content "$TREE/gone.txt" "I will be deleted"
[ -e "$TREE/new.txt" ] && t_check_fail "new.txt still visible after the restore removed it"

: >"$T/cat.stop"
wait "$catter"
: >"$T/holder.go"
wait "$holder" || t_check_fail "the holder failed"

# every cat read one whole version; after the restore only the old one
printf '%s\n' "$short" >"$T/want.short"
printf '%s\n' "$long" >"$T/want.long"
n=0 torn=0
for f in "$T"/cat.[0-9]*; do
	n=$((n + 1))
	cmp -s "$f" "$T/want.short" || cmp -s "$f" "$T/want.long" || {
		torn=$((torn + 1))
		t_log "torn read in $f: $(head -c 80 "$f")"
	}
done
[ "$n" -gt 0 ] || t_check_fail "cat never ran"
[ "$torn" = 0 ] || t_check_fail "$torn of $n reads by path saw neither version whole"
t_log "$n reads by path during the restore, none torn"
# the loop stopped after the restore had returned: its last read is new
cmp -s "$T/cat.$((n - 1))" "$T/want.short" ||
	t_check_fail "the last read by path (after the restore) is not the restored version"
# the open descriptor keeps the file it opened (a restore replaces files
# atomically, as an editor's save does): old or new, but whole
if ! cmp -s "$T/holder.out" "$T/want.long" && ! cmp -s "$T/holder.out" "$T/want.short"; then
	t_check_fail "the open descriptor reads neither version whole"
fi

# the restore is undoable: its safety checkpoint holds the edited tree
safety=$(git --git-dir="$STORE" log --format='%H %s' | awk -v s="before rollback to $before" \
	'{ h = $1; $1 = ""; if (index(substr($0, 2), s) == 1) print h }')
[ -n "$safety" ] || t_fail "no 'before rollback to $before' checkpoint: $(ckpt_subjects | tr '\n' '|')"
cat "$TREE/f.txt" >/dev/null # cache the restored short version
ckpt_restore "$safety"
t_expect_content "$TREE/f.txt" "$long"
[ -e "$TREE/gone.txt" ] && t_check_fail "gone.txt back after undoing the restore"
t_expect_content "$TREE/new.txt" "created in the turn"
t_umount "$TREE"
# and on disk, without the mount, the same
t_expect_content "$TREE/f.txt" "$long"
t_expect_content "$TREE/new.txt" "created in the turn"
t_pass
