#!/bin/bash
# A checkpoint keeps the name it was shown with for as long as it exists,
# also once the store is at max_snapshots and every checkpoint trims the
# chain: the undo hash a rollback prints works, and so does every hash of
# the listing; git still reads the store, and what was trimmed is reclaimed.
# shellcheck source=tests/integration/store_lib.sh
. "$SRC/tests/integration/store_lib.sh"
command -v git >/dev/null || exit 77
printf 'checkpoints:\n  max_snapshots: 5\n' >"$HERMES_HOME/config.yaml"
cd "$TREE"
for i in 1 2 3 4 5; do
	echo "v$i" >f
	expect 0 checkpoint -m "step $i"
done
echo 1 >f
expect 0 rollback 3 f
[ "$(cat f)" = v3 ] || fail "f not restored: $(cat f)"
undo=$(echo "$OUT" | sed -n "s/.*'hermesctl rollback \([0-9a-f]*\)' undoes this$/\1/p")
[ -n "$undo" ] || fail "no undo hint in: $OUT"
expect 0 rollback "$undo"
[ "$(cat f)" = 1 ] || fail "the undo did not bring back f: $(cat f)"
ok "at max_snapshots, the printed undo command 'hermesctl rollback $undo' works"

# every hash of a listing stays valid while its checkpoint is listed
D=$(store_dir)
G=(git --git-dir="$D")
expect 0 rollback --json
before=$(echo "$OUT" | python3 -c 'import json,sys
for c in json.load(sys.stdin): print(c["oid"][:8], c["reason"])')
for i in 6 7 8; do
	echo "v$i" >f
	expect 0 checkpoint -m "step $i"
done
expect 0 rollback --json
after=$(echo "$OUT" | python3 -c 'import json,sys
for c in json.load(sys.stdin): print(c["oid"][:8], c["reason"])')
[ "$(echo "$after" | wc -l)" = 5 ] || fail "not 5 checkpoints kept: $after"
kept=0
while read -r h reason; do
	if grep -qxF "$h $reason" <<<"$after"; then
		kept=$((kept + 1))
		expect 0 rollback diff "$h" --stat --no-pager
	elif grep -q " $reason\$" <<<"$after"; then
		fail "checkpoint '$reason' was $h and is now $(grep " $reason\$" <<<"$after")"
	fi
done <<<"$before"
[ "$kept" -ge 2 ] || fail "only $kept checkpoints outlived the trims: $before / $after"
expect 0 rollback
for h in $(echo "$after" | cut -d' ' -f1); do
	echo "$OUT" | grep -q "  $h  " || fail "the listing does not show $h: $OUT"
done
ok "hashes of the listing survive trimming ($kept of them checked)"

"${G[@]}" log --format='%h %s' >"$WORK/log" 2>&1 || fail "git log: $(cat "$WORK/log")"
[ "$(wc -l <"$WORK/log")" = 5 ] || fail "git log shows $(wc -l <"$WORK/log") checkpoints: $(cat "$WORK/log")"
[ "$("${G[@]}" rev-parse HEAD~4)" = "$("${G[@]}" rev-list --max-parents=0 HEAD)" ] ||
	fail "the oldest kept checkpoint is not where git's history ends"
"${G[@]}" fsck --no-progress >"$WORK/fsck" 2>&1 || fail "git fsck: $(cat "$WORK/fsck")"
ok "git log shows the 5 kept, git fsck is clean"

# what the trims dropped goes at the next collection
dropped=$(echo "$before" | head -n 5 | tail -n 1 | cut -d' ' -f1)
grep -q "^$dropped " <<<"$after" && fail "test setup: $dropped was not dropped"
expect 0 checkpoints prune
if "${G[@]}" cat-file -e "$dropped" 2>/dev/null; then
	fail "the trimmed checkpoint $dropped is still on disk after prune"
fi
"${G[@]}" log --format=%s >"$WORK/log" 2>&1 || fail "git log after prune: $(cat "$WORK/log")"
"${G[@]}" fsck --no-progress >"$WORK/fsck" 2>&1 || fail "git fsck after prune: $(cat "$WORK/fsck")"
oldest=$(echo "$after" | tail -n 1 | cut -d' ' -f1)
want=$("${G[@]}" show "$oldest:f")
expect 0 rollback "$oldest" f
[ "$(cat f)" = "$want" ] || fail "the oldest kept checkpoint after prune"
ok "trimmed checkpoints reclaimed by a collection; the oldest kept still restores"
