# shellcheck shell=bash
# Shared setup for the run_*.sh integration tests (sourced, not run):
# a private HERMES_HOME, a scratch dir, cleanup of what the test started.
set -euo pipefail

: "${BUILD:?BUILD must point at the build directory}"
HCTL="$BUILD/tools/hermesctl"
[ -x "$HCTL" ] || { echo "no $HCTL: build first" >&2; exit 1; }

T=$(mktemp -d /tmp/hermes-run-test.XXXXXX)
export HERMES_HOME="$T/hermes"
mkdir -p "$HERMES_HOME"
# Nothing here may prompt or think it runs under CI unless a test says so.
unset CI HERMES_APPROVALS_MODE TERMINAL_HOME_MODE HERMES_REAL_HOME || true
TEST_PIDS=()
# Sanitizer reports of a -Db_sanitize build land here and fail the test.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T/sanitizer"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:log_path=$T/sanitizer"

run_cleanup() {
	local p rc=$?
	for p in "${TEST_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	if compgen -G "$T/sanitizer*" >/dev/null; then
		echo "FAIL: sanitizer reports:" >&2
		cat "$T"/sanitizer* >&2
		rc=1
	fi
	rm -rf "$T"
	exit $rc
}
trap run_cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

pass() {
	echo "ok - $*"
}

# Run without a controlling terminal so nobody can be asked.
notty() {
	setsid -w "$@" </dev/null
}
