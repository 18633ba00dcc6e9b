#!/bin/bash
# shellcheck disable=SC2016,SC2088,SC2015 # job text is single-quoted on purpose
# Turn marking: a job whose directory is in a registered tree whose daemon
# is dead is refused, and nothing runs; an unregistered tree is fine.
. "$(dirname "$0")/run_lib.sh"

tree="$T/tree"
mkdir -p "$tree/src" "$HERMES_HOME/run"
tree=$(cd "$tree" && pwd -P)
id=$(printf %s "$tree" | sha256sum | cut -c1-16)
sleep 0 &
dead=$!
wait "$dead"
cat >"$HERMES_HOME/run/$id.json" <<JSON
{"id":"$id","source":"$tree","mountpoint":"$tree","socket":"$HERMES_HOME/run/$id.sock",
 "log":"","pid":$dead,"started":0}
JSON
rc=0
"$HCTL" run -C "$tree/src" -- 'echo should-not-run' >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "dead daemon: exit $rc"
grep -q "daemon (pid $dead) is dead" "$T/err" || fail "message: $(cat "$T/err")"
[ -s "$T/out" ] && fail "the command ran"
rm "$HERMES_HOME/run/$id.json"
"$HCTL" run -C "$tree/src" -- true || fail "an unmounted tree must not matter"
pass "a tree with a dead daemon is an error; no registry entry is fine"

