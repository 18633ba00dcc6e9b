#!/bin/bash
# A full disk under the store never costs a write: with HERMES_HOME on a
# tiny tmpfs filled to the brim, every write to the tree goes through and
# reads back exactly, the failed checkpoint shows in status
# (checkpoint_failures, last_error) and in the daemon's log, the store stays
# fsck-clean, and once space is back the next checkpoint holds every change
# the failed one missed.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
t_need_root
# HERMES_HOME on its own 2 MiB tmpfs (recomputed paths: same tree id)
mkdir -p "$T/small"
mount -t tmpfs -o size=2m tmpfs "$T/small" || t_skip "cannot mount a tmpfs"
t_on_cleanup "umount '$T/small'"
export HERMES_HOME=$T/small
STORE=$HERMES_HOME/checkpoints/${STORE##*/}
SOCK=$HERMES_HOME/run/${SOCK##*/}
ckpt_config

for i in 1 2 3; do echo "before $i" >"$TREE/old$i.txt"; done
ckpt_mount
ckpt_expect_count 1 "after the baseline"
daemon_err=${T_LOGS[0]}

# fill the store's file system
dd if=/dev/zero of="$HERMES_HOME/filler" bs=16k 2>/dev/null
avail=$(df --output=avail -k "$HERMES_HOME" | tail -n 1 | tr -d ' ')
[ "$avail" -le 16 ] || t_fail "could not fill the tmpfs ($avail KiB left)"

# a turn of incompressible writes, then the next turn: its checkpoint
# cannot be written, the change that needs it must still go through
ckpt_turn "fill"
mkdir -p "$T/expect"
for i in $(seq 1 20); do
	head -c 60000 /dev/urandom >"$T/expect/new$i.bin"
	cp "$T/expect/new$i.bin" "$TREE/new$i.bin" || t_check_fail "write of new$i.bin failed with the store full"
done
echo "changed" >"$TREE/old1.txt" || t_check_fail "write of old1.txt failed"
ckpt_turn "after fill"
echo "trigger" >"$TREE/trigger.txt" || t_check_fail "the write that needed a checkpoint failed"
ckpt_expect_count 1 "no checkpoint fits on a full disk"

for i in $(seq 1 20); do
	cmp -s "$T/expect/new$i.bin" "$TREE/new$i.bin" || t_check_fail "new$i.bin differs from what was written"
done
t_expect_content "$TREE/old1.txt" changed
t_expect_content "$TREE/trigger.txt" trigger

fails=$(ckpt_status 'c["checkpoint_failures"]')
[ "$fails" -ge 1 ] || t_check_fail "status shows $fails checkpoint failures after a full disk"
lasterr=$(ckpt_status 'c.get("last_error", "")')
[ -n "$lasterr" ] || t_check_fail "status has no last_error after a failed checkpoint"
t_log "last_error: $lasterr"
case $lasterr in
*"space"* | *"ENOSPC"* | *"full"*) ;;
*) t_check_fail "last_error does not say the disk is full: $lasterr" ;;
esac
grep -q 'checkpoint.*failed' "$daemon_err" ||
	t_check_fail "the daemon's log does not report the failed checkpoint"
git --git-dir="$STORE" fsck --no-progress >"$T/fsck.out" 2>&1 ||
	t_check_fail "git fsck after the failed checkpoint: $(head -n 5 "$T/fsck.out")"

# space again: the next checkpoint holds everything the failed one missed
rm "$HERMES_HOME/filler"
ckpt_ctl '{"op":"checkpoint","reason":"space again"}' >/dev/null ||
	t_check_fail "checkpoint with space back failed"
ckpt_expect_count 2 "with space back"
for i in $(seq 1 20); do
	git --git-dir="$STORE" cat-file blob "HEAD:new$i.bin" | cmp -s - "$T/expect/new$i.bin" ||
		t_check_fail "the checkpoint with space back lacks new$i.bin"
done
[ "$(ckpt_show HEAD old1.txt)" = changed ] || t_check_fail "the checkpoint with space back lacks old1.txt"
[ "$(ckpt_show HEAD trigger.txt)" = trigger ] || t_check_fail "the checkpoint with space back lacks trigger.txt"
[ -z "$(ckpt_status 'c.get("last_error", "")')" ] || t_check_fail "last_error stays after a good checkpoint"
t_umount "$TREE"
git --git-dir="$STORE" fsck --no-progress >"$T/fsck.out" 2>&1 ||
	t_check_fail "git fsck at the end: $(head -n 5 "$T/fsck.out")"
t_pass
