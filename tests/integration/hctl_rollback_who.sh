#!/bin/bash
# The "by" column of `hermesctl rollback` sums up who changed the tree: each
# process name once, with a count when it repeats ("longname-writer ×12,
# w1.sh, touch"), in at most 40 columns and never cutting a name ("... and
# 7 more"); --json keeps every pid. The line about changes not checkpointed
# yet says it the same way.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config
mkdir -p "$T/bin"
# a script's process is named after the script (15 bytes at most)
# shellcheck disable=SC2016 # $0 and $1 are the writer's own
mkwriter() { printf '#!/bin/sh\necho "$0" >"$1"\n' >"$T/bin/$1" && chmod +x "$T/bin/$1"; }
mkwriter longname-writer
mkwriter w1.sh
for i in 1 2 3 4 5 6 7 8 9; do mkwriter "a-writer-$i"; done
ckpt_mount

# the "by" part of the row whose reason is $1
by_of() {
	"$HCTL" rollback -C "$TREE" | grep "  $1  (" | sed 's/.*)  by //'
}

ckpt_turn "repeated names"
for i in $(seq 1 12); do "$T/bin/longname-writer" "$TREE/f$i.txt"; done
"$T/bin/w1.sh" "$TREE/w.txt"
touch "$TREE/t.txt"
ckpt_ctl '{"op":"checkpoint","reason":"repeated"}' >/dev/null || t_fail "checkpoint"
by=$(by_of repeated)
[ "$by" = "longname-writer ×12, w1.sh, touch" ] || t_check_fail "by column: '$by'"
n=$("$HCTL" rollback -C "$TREE" --json | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin) if c["reason"] == "repeated"][0]
print(c["who"].count(" uid="))')
[ "$n" = 14 ] || t_check_fail "--json names $n processes, want all 14"

ckpt_turn "many names"
for i in 1 2 3 4 5 6 7 8 9; do "$T/bin/a-writer-$i" "$TREE/a$i.txt"; done
ckpt_ctl '{"op":"checkpoint","reason":"distinct"}' >/dev/null || t_fail "checkpoint"
by=$(by_of distinct)
cols=$(printf '%s' "$by" | wc -m)
[ "$cols" -le 40 ] || t_check_fail "by column of $cols columns: '$by'"
python3 - "$by" <<'PY' || t_check_fail "by column cuts or loses names: '$by'"
import re, sys
m = re.fullmatch(r"(a-writer-[1-9](?:, a-writer-[1-9])*) and ([0-9]+) more", sys.argv[1])
names = m.group(1).split(", ") if m else []
sys.exit(0 if m and len(set(names)) + int(m.group(2)) == 9 else 1)
PY

# not checkpointed yet: the same summary
for i in 1 2 3; do "$T/bin/longname-writer" "$TREE/p$i.txt"; done
out=$("$HCTL" rollback -C "$TREE")
printf '%s\n' "$out" | grep -q 'not yet checkpointed: 3 paths changed since checkpoint 1 by longname-writer ×3$' ||
	t_check_fail "pending line: $out"
t_umount "$TREE"
t_pass
