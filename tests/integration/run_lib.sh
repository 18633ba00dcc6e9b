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

run_cleanup() {
	local p
	for p in "${TEST_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	rm -rf "$T"
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
