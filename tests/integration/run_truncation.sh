#!/bin/bash
# shellcheck disable=SC2016,SC2088,SC2015 # job text is single-quoted on purpose
# Output caps are exact: stdout keeps 20,000 head + 30,000 tail bytes with
# a notice naming the omitted count; stderr keeps its first 10,000 bytes.
. "$(dirname "$0")/run_lib.sh"

seq 1 40000 >"$T/big"           # 228,894 bytes
total=$(stat -c %s "$T/big")
omitted=$((total - 50000))
# Build the expected bytes by hand (printf drops trailing newlines in $()).
{
	head -c 20000 "$T/big"
	printf '\n\n... [OUTPUT TRUNCATED - %s bytes omitted out of %s total] ...\n\n' \
		"$(python3 -c "print(f'{$omitted:,}')")" "$(python3 -c "print(f'{$total:,}')")"
	tail -c 30000 "$T/big"
} >"$T/want"

"$HCTL" run -- "cat $T/big" >"$T/got" 2>"$T/err"
cmp "$T/got" "$T/want" || fail "stdout differs from head+notice+tail ($(stat -c %s "$T/got") bytes)"
grep -q "$(python3 -c "print(f'{$omitted:,}')") bytes omitted out of $(python3 -c "print(f'{$total:,}')") total" "$T/got" ||
	fail "notice count"
pass "stdout: $(stat -c %s "$T/got") bytes = 20000 head + notice + 30000 tail of $total"

"$HCTL" run -- "cat $T/big >&2" >"$T/got" 2>"$T/err" || true
{
	head -c 10000 "$T/big"
	printf '\n\n... [OUTPUT TRUNCATED - %s bytes omitted out of %s total] ...\n\n' \
		"$(python3 -c "print(f'{$total - 10000:,}')")" "$(python3 -c "print(f'{$total:,}')")"
} >"$T/want-err"
cmp "$T/err" "$T/want-err" || fail "stderr differs from its first 10000 bytes + notice"
[ -s "$T/got" ] && fail "stdout should be empty"
pass "stderr: first 10000 bytes and the notice"

# Exactly at the cap: nothing omitted, no notice.
head -c 50000 "$T/big" >"$T/exact"
"$HCTL" run -- "cat $T/exact" >"$T/got"
cmp "$T/got" "$T/exact" || fail "50000 bytes should pass whole"
pass "50000 bytes pass whole"

out=$("$HCTL" run --json -- "cat $T/big")
python3 - "$out" "$total" <<'PY' || fail "json counts"
import json, sys
o = json.loads(sys.argv[1]); total = int(sys.argv[2])
assert o["truncated"] is True
assert o["stdout_bytes"] == total and o["stdout_omitted"] == total - 50000, o
PY
pass "--json: truncated, stdout_bytes and stdout_omitted exact"

# The caps come from the config.
printf 'terminal:\n  max_output_bytes: 1000\n  max_stderr_bytes: 10\n' >"$HERMES_HOME/config.yaml"
"$HCTL" run -- "cat $T/big; cat $T/big >&2" >"$T/got" 2>"$T/err" || true
[ "$(head -c 400 "$T/got")" = "$(head -c 400 "$T/big")" ] || fail "configured head"
[ "$(tail -c 600 "$T/got")" = "$(tail -c 600 "$T/big")" ] || fail "configured tail"
grep -q "$(python3 -c "print(f'{$total - 1000:,}')") bytes omitted" "$T/got" || fail "configured notice"
[ "$(head -c 10 "$T/err")" = "$(head -c 10 "$T/big")" ] || fail "configured stderr head"
pass "terminal.max_output_bytes and max_stderr_bytes set the caps"
