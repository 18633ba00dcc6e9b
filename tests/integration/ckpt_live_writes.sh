#!/bin/bash
# With -o live_writes, handles that write tracked files go straight to the
# disk below (kernel passthrough, as root) with checkpoints on too, and the
# checkpoints stay exact:
# - a file held open for writing across `hermesctl turn`: the new turn's
#   checkpoint is taken when the turn begins and holds what the file held
#   then, not the writes that follow through the same handle;
# - the idle rule: writes through one open handle, a pause longer than
#   turn_idle_ms, more writes: a checkpoint holds the file as it was in the
#   pause, and it names the writer;
# - a writer that closes: its last writes are in the next checkpoint;
# - the writes themselves never reach the daemon (status counts no write).
# Skipped where the kernel offers no passthrough.
. "$SRC/tests/integration/ckpt_lib.sh"
t_need_root
ckpt_init
ckpt_config "turn_idle_ms: 600" "max_snapshots: 100000"
echo base >"$TREE/held.txt"
ckpt_mount -- -o live_writes
grep -q 'passthrough: so are opens for writing' "$HERMES_HOME"/logs/*.log ||
	t_skip "this kernel does not offer FUSE passthrough"

# 1. explicit turns while a handle stays open
python3 - "$TREE" "$HCTL" >"$T/explicit.out" <<'EOF' || t_fail "the explicit-turn writer failed"
import os, subprocess, sys
tree, hctl = sys.argv[1], sys.argv[2]
def turn(m):
    subprocess.run([hctl, "turn", "-m", m, "-C", tree], check=True,
                   stdout=subprocess.DEVNULL)
fd = os.open(os.path.join(tree, "held.txt"), os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"one\n")
turn("t-two")
os.write(fd, b"two\n")
turn("t-three")
os.write(fd, b"three\n")
os.close(fd)
turn("t-after")
with open(os.path.join(tree, "other.txt"), "w") as f:
    f.write("x\n")
EOF
[ "$(cat "$TREE/held.txt")" = "$(printf 'one\ntwo\nthree')" ] || t_fail "held.txt is $(cat "$TREE/held.txt")"
c2=$(git --git-dir="$STORE" log --format=%H --grep='^t-two$' -n 1)
c3=$(git --git-dir="$STORE" log --format=%H --grep='^t-three$' -n 1)
c4=$(git --git-dir="$STORE" log --format=%H --grep='^t-after$' -n 1)
[ -n "$c2" ] && [ -n "$c3" ] && [ -n "$c4" ] ||
	{ ckpt_subjects >&2; t_fail "a turn with a file open for writing has no checkpoint"; }
[ "$(ckpt_show "$c2" held.txt)" = "one" ] ||
	t_check_fail "turn t-two's checkpoint holds '$(ckpt_show "$c2" held.txt)', want the file as the turn began"
[ "$(ckpt_show "$c3" held.txt)" = "$(printf 'one\ntwo')" ] ||
	t_check_fail "turn t-three's checkpoint holds '$(ckpt_show "$c3" held.txt)'"
[ "$(ckpt_show "$c4" held.txt)" = "$(printf 'one\ntwo\nthree')" ] ||
	t_check_fail "the checkpoint after the close holds '$(ckpt_show "$c4" held.txt)'"

# 2. the idle rule through one open handle
before=$(ckpt_count)
python3 - "$TREE" <<'EOF' || t_fail "the idle writer failed"
import os, sys, time
fd = os.open(os.path.join(sys.argv[1], "log.txt"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
for i in range(5):
    os.write(fd, b"burst one %d\n" % i)
    time.sleep(0.05)
time.sleep(2.0)           # idle: over turn_idle_ms, nothing else changes
os.write(fd, b"burst two\n")
time.sleep(0.5)
os.close(fd)
EOF
sleep 1.5 # the close's changes: idle again, so the next change checkpoints
echo y >"$TREE/other.txt"
idle=$(git --git-dir="$STORE" log --format=%H --grep='idle' -n 1)
[ "$(ckpt_count)" -gt "$before" ] && [ -n "$idle" ] ||
	{ ckpt_subjects >&2; t_fail "no idle checkpoint while a file was open for writing"; }
found=""
for c in $(git --git-dir="$STORE" rev-list HEAD -n $(($(ckpt_count) - before))); do
	if [ "$(ckpt_show "$c" log.txt 2>/dev/null | wc -l)" = 5 ]; then
		found=$c
		git --git-dir="$STORE" show -s --format=%B "$c" | grep -q python3 ||
			t_check_fail "the idle checkpoint does not name the writer: $(git --git-dir="$STORE" show -s --format=%B "$c")"
	fi
done
[ -n "$found" ] || {
	for c in $(git --git-dir="$STORE" rev-list HEAD -n 4); do
		printf '%s %s: %s lines\n' "$c" "$(git --git-dir="$STORE" show -s --format=%s "$c")" \
			"$(ckpt_show "$c" log.txt 2>/dev/null | wc -l)" >&2
	done
	t_check_fail "no checkpoint holds log.txt as it was in the pause (5 lines)"
}
ckpt_show HEAD log.txt | grep -q 'burst two' ||
	t_check_fail "the newest checkpoint lacks the writes before the close"

# 3. none of it came to the daemon as a write
writes=$(ckpt_status_json | python3 -c 'import json, sys
print(json.load(sys.stdin)["mounts"][0]["ops"].get("write", 0))')
[ "$writes" = 0 ] || t_check_fail "$writes writes reached the daemon; passthrough handles should send none"
t_pass
