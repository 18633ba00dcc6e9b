#!/bin/bash
# checkpoints status / prune / clear across stores: trees, counts, bytes,
# orphans whose tree is gone; clear asks or needs --yes; a bad config file is
# an error naming its line.
# shellcheck source=tests/integration/store_lib.sh
. "$SRC/tests/integration/store_lib.sh"
mkdir -p "$WORK/t1" "$WORK/t2"
echo a >"$WORK/t1/f"
echo b >"$WORK/t2/f"
expect 0 checkpoint -C "$WORK/t1"
echo a2 >"$WORK/t1/f"
expect 0 checkpoint -C "$WORK/t1"
expect 0 checkpoint -C "$WORK/t2"
expect 0 checkpoints status
echo "$OUT" | grep -q "^ *2 .* M  $WORK/t1\$" || fail "t1 row: $OUT"
echo "$OUT" | grep -q "^ *1 .* M  $WORK/t2\$" || fail "t2 row: $OUT"
echo "$OUT" | grep -q 'total .* MB in 2 stores' || fail "total: $OUT"
expect 0 checkpoints status --json
echo "$OUT" | python3 -c 'import json,sys; l=json.load(sys.stdin); assert sorted(s["checkpoints"] for s in l)==[1,2] and all(s["bytes"]>0 for s in l), l' ||
	fail "json: $OUT"
ok "status lists every store with checkpoints and bytes"

rm -rf "$WORK/t2"
expect 0 checkpoints status
echo "$OUT" | grep "$WORK/t2" | grep -q orphan || fail "orphan not shown: $OUT"
expect 0 checkpoints prune
ok "orphans shown; prune runs"

expect 2 checkpoints clear --orphans </dev/null
[ "$(find "$HERMES_HOME/checkpoints" -mindepth 1 -maxdepth 1 -name '[!.]*' | wc -l)" = 2 ] || fail "clear without --yes removed something"
expect 0 checkpoints clear --orphans -y
echo "$OUT" | grep -q "removed the checkpoints of $WORK/t2" || fail "clear output: $OUT"
expect 0 checkpoints status
echo "$OUT" | grep -q "$WORK/t2" && fail "orphan still there"
echo "$OUT" | grep -q "$WORK/t1" || fail "clear --orphans removed a live store"
expect 0 checkpoints clear --yes "$WORK/t1"
expect 0 checkpoints status
echo "$OUT" | grep -q 'no checkpoint stores' || fail "not empty: $OUT"
ok "clear needs --yes, removes orphans or named trees only"

printf 'checkpoints:\n  max_snapshots: [1\n' >"$HERMES_HOME/config.yaml"
expect 1 checkpoint -C "$WORK/t1"
echo "$ERR" | grep -q 'config.yaml:2:' || fail "config error without its line: $ERR"
printf 'checkpoints:\n  max_snapshot: 3\n' >"$HERMES_HOME/config.yaml"
expect 1 checkpoint -C "$WORK/t1"
ok "a bad config file is an error with its place"
