#!/bin/bash
# hermesctl code in a mounted tree: one script reads 5 files, greps, patches
# 3, writes one and runs a command, in one call. Checked on disk, in the
# answer (status, tool_calls_made, output) and in the store: exactly one
# checkpoint for the whole script, which `hermesctl rollback 1` restores.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config "turn_idle_ms: 0" "max_snapshots: 100000"
for i in 1 2 3 4 5; do
	printf 'module %d\nVERSION = "1.0"\nend\n' "$i" >"$TREE/m$i.py"
done
ckpt_mount
ckpt_expect_count 1 "after the baseline"
# a change before the script, outside any turn: the script's checkpoint
# (the tree before its first change) then differs from the baseline
echo pre >"$TREE/pre.txt"
t_hash_tree "$TREE" >"$T/before.sum"

cat >"$T/script.py" <<'PY'
# bump three modules to 2.0 and record it
from hermes_tools import read_file, search_files, patch, write_file, terminal
total = 0
for i in range(1, 6):
    r = read_file(f"m{i}.py")
    assert r["total_lines"] == 3, r
    total += r["total_lines"]
hits = search_files('VERSION = "1', output_mode="files_with_matches")
assert hits["files"] == [f"m{i}.py" for i in range(1, 6)], hits
for i in (1, 2, 3):
    p = patch(f"m{i}.py", 'VERSION = "1.0"', 'VERSION = "2.0"')
    assert p.get("success"), p
w = write_file("CHANGES.txt", "m1-m3: 2.0\n")
assert w["bytes_written"] == 11, w
t = terminal("grep -l '2.0' m*.py | wc -l")
print("lines", total, "bumped", t["output"].strip(), "exit", t["exit_code"])
PY
out=$("$HCTL" code -C "$TREE" --json "$T/script.py") || t_check_fail "hermesctl code failed: $out"
echo "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)
assert o["status"] == "success", o
assert o["tool_calls_made"] == 11, o
assert o["exit_code"] == 0, o
assert o["output"] == "lines 15 bumped 3 exit 0\n", repr(o["output"])
assert o["error"] is None, o
' || t_check_fail "the answer: $out"
for i in 1 2 3; do
	grep -q 'VERSION = "2.0"' "$TREE/m$i.py" || t_check_fail "m$i.py not patched"
done
for i in 4 5; do
	grep -q 'VERSION = "1.0"' "$TREE/m$i.py" || t_check_fail "m$i.py changed"
done
[ "$(cat "$TREE/CHANGES.txt")" = "m1-m3: 2.0" ] || t_check_fail "CHANGES.txt"
t_log "ok: a script read 5 files, grepped, patched 3, wrote one and ran a command"

ckpt_expect_count 2 "the script's writes (tools and terminal)"
[ "$(ckpt_subjects | head -n 1)" = "code: bump three modules to 2.0 and record it" ] ||
	t_check_fail "the checkpoint's reason is '$(ckpt_subjects | head -n 1)'"
ckpt_show HEAD CHANGES.txt >/dev/null 2>&1 &&
	t_check_fail "the checkpoint holds CHANGES.txt: it was taken after the script's first write"
[ "$(ckpt_show HEAD pre.txt)" = pre ] || t_check_fail "the checkpoint lacks pre.txt"
[ "$(ckpt_show HEAD m1.py | sed -n 2p)" = 'VERSION = "1.0"' ] ||
	t_check_fail "the checkpoint holds a patched m1.py"
t_log "ok: exactly one checkpoint, taken before the script's first change, named by its first line"

# a second script is a second turn
printf 'from hermes_tools import write_file\nwrite_file("second.txt", "2\\n")\n' |
	"$HCTL" code -C "$TREE" --reason "second script" - >/dev/null ||
	t_check_fail "the second script"
ckpt_expect_count 3 "a second script"
"$HCTL" rollback -C "$TREE" 2 >"$T/rb.out" 2>&1 || t_check_fail "rollback: $(cat "$T/rb.out")"
t_hash_tree "$TREE" >"$T/after.sum"
diff "$T/before.sum" "$T/after.sum" >/dev/null ||
	t_check_fail "rollback to the first script's checkpoint is not the tree before it: $(diff "$T/before.sum" "$T/after.sum" | head)"
t_log "ok: rollback restores the tree as it was before the script"
t_umount "$TREE"
t_pass
