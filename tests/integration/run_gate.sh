#!/bin/bash
# shellcheck disable=SC2016,SC2088,SC2015 # job text is single-quoted on purpose
# The danger gate in non-interactive runs: commands that need approval are
# denied with a message saying why and how to allow them; the floor is
# refused even with approvals off; the allowlist and a terminal answer work.
. "$(dirname "$0")/run_lib.sh"

victim="$T/victim"
mk() { mkdir -p "$victim/sub" && echo data >"$victim/sub/f"; }
mk

check_denied() {
	local label=$1 why=$2
	shift 2
	local rc=0
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 4 ] || fail "$label: exit $rc, want 4"
	[ -e "$victim/sub/f" ] || fail "$label: the command ran"
	grep -q "$why" "$T/err" "$T/out" || fail "$label: message lacks '$why': $(cat "$T/err" "$T/out")"
	grep -q "approvals.allowlist" "$T/err" "$T/out" || fail "$label: message lacks how to allow"
	pass "$label: denied ($why)"
}

check_denied "no terminal" "nobody can answer (no terminal)" notty "$HCTL" run -- "rm -rf $victim"
check_denied "--json" "nobody can answer (--json" "$HCTL" run --json -- "rm -rf $victim"
check_denied "CI" "nobody can answer (running under CI)" env CI=true "$HCTL" run -- "rm -rf $victim"
check_denied "mode deny" "approvals.mode is deny" env HERMES_APPROVALS_MODE=deny "$HCTL" run -- "rm -rf $victim"
if command -v curl >/dev/null; then
	echo "rm -rf $victim" >"$T/install.sh"
	check_denied "curl | sh" "pipe-to-shell" notty "$HCTL" run -- "curl -s file://$T/install.sh | sh"
fi
# the same command hidden in shell syntax the gate must look through
check_denied "if/then" "nobody can answer" "$HCTL" run --json -- "if true; then rm -rf $victim; fi"
check_denied "for loop" "nobody can answer" "$HCTL" run --json -- "for d in $victim; do rm -rf \$d; done"
check_denied "eval" "nobody can answer" "$HCTL" run --json -- "eval rm -rf $victim"
check_denied "bash -ec" "nobody can answer" "$HCTL" run --json -- "bash -ec 'rm -rf $victim'"
check_denied "here-document" "nobody can answer" "$HCTL" run --json -- "bash <<'EOF'
rm -rf $victim
EOF"
check_denied "echo | bash" "nobody can answer" "$HCTL" run --json -- "echo 'rm -rf $victim' | bash"
check_denied "wrapper" "nobody can answer" "$HCTL" run --json -- "timeout -s KILL 5 rm -rf $victim"
out=$("$HCTL" run --json -- "rm -rf $victim" || true)
python3 - "$out" <<'PY' || fail "--json blocked shape: $out"
import json, sys
o = json.loads(sys.argv[1])
assert o["blocked"] is True and "nobody can answer" in o["reason"], o
PY
pass "--json: blocked true with the reason"

# The floor: fake mkfs/shutdown first on PATH leave a mark if they ever run.
mkdir -p "$T/bin"
for f in mkfs.ext4 shutdown; do
	printf '#!/bin/sh\ntouch %s/ran-%s\n' "$T" "$f" >"$T/bin/$f"
	chmod +x "$T/bin/$f"
done
for cmd in "mkfs.ext4 /dev/sdz9" "shutdown -h now"; do
	rc=0
	PATH="$T/bin:$PATH" notty "$HCTL" run --approval off -- "$cmd" 2>"$T/err" || rc=$?
	[ "$rc" = 4 ] || fail "floor '$cmd' with approvals off: exit $rc"
	grep -q "never allowed" "$T/err" || fail "floor message: $(cat "$T/err")"
done
rc=0
PATH="$T/bin:$PATH" notty "$HCTL" run --approval off -- mkfs.ext4 /dev/sdz9 2>"$T/err" || rc=$?
[ "$rc" = 4 ] || fail "floor as argv: exit $rc"
! compgen -G "$T/ran-*" >/dev/null || fail "a floor command ran"
pass "floor refused even with --approval off (mkfs, shutdown)"

# Ways to allow: --approval off, the config allowlist, a terminal answer.
notty "$HCTL" run --approval off -- "rm -rf $victim/sub" || fail "--approval off"
[ ! -e "$victim/sub" ] || fail "--approval off did not run"
mk
printf 'approvals:\n  allowlist: [rm-recursive]\n' >"$HERMES_HOME/config.yaml"
notty "$HCTL" run -- "rm -rf $victim/sub" || fail "allowlisted rm"
[ ! -e "$victim/sub" ] || fail "allowlisted rm did not run"
rm "$HERMES_HOME/config.yaml"
mk
pass "--approval off and approvals.allowlist let it run"

if command -v script >/dev/null; then
	rc=0
	printf 'd\n' | script -qec "$HCTL run -- 'rm -rf $victim/sub'" /dev/null >"$T/tty" 2>&1 || rc=$?
	[ -e "$victim/sub/f" ] || fail "answered deny on the terminal, but it ran"
	grep -q "needs approval" "$T/tty" || fail "no prompt on the terminal: $(cat "$T/tty")"
	printf 'o\n' | script -qec "$HCTL run -- 'rm -rf $victim/sub'" /dev/null >"$T/tty" 2>&1 || rc=$?
	[ ! -e "$victim/sub" ] || fail "answered once on the terminal, but it did not run: $(cat "$T/tty")"
	pass "terminal prompt: deny keeps, once runs"
fi
