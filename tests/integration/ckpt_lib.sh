# shellcheck shell=bash
# Helpers for the transparent-checkpoint tests (sourced, not run): a tree and
# HERMES_HOME of the test's own, a mount whose baseline is awaited, and what a
# user reads back: the store with plain git, `hermesctl status --json`, and
# the control socket (through ckpt_client.py).
#
# Use: . "$SRC/tests/integration/ckpt_lib.sh"; ckpt_init; ckpt_config ...;
#      ckpt_mount; ...; t_pass

# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"

HCTL=$BUILD/tools/hermesctl
CKPT_CLIENT=$SRC/tests/integration/ckpt_client.py
# the helpers import each other: keep __pycache__ out of the source tree
export PYTHONDONTWRITEBYTECODE=1
TREE=""
STORE=""
SOCK=""

# A fresh world with an empty tree at $TREE; skips without FUSE, python3, git.
ckpt_init() {
	t_init
	t_need_fuse
	t_need_cmd python3 git
	TREE=$T/tree
	mkdir -p "$TREE"
	local id
	id=$(printf %s "$TREE" | sha256sum | cut -c1-16)
	STORE=$HERMES_HOME/checkpoints/$id
	SOCK=$HERMES_HOME/run/$id.sock
}

# Write $HERMES_HOME/config.yaml: the checkpoints section gets the given
# lines (YAML, two-space indented by us), e.g. ckpt_config "turn_idle_ms: 300".
# Default: no implicit turns, no retention, so counts are exact.
ckpt_config() {
	{
		echo "checkpoints:"
		if [ $# -eq 0 ]; then
			set -- "turn_idle_ms: 0" "max_snapshots: 100000"
		fi
		local l
		for l in "$@"; do
			printf '  %s\n' "$l"
		done
	} >"$HERMES_HOME/config.yaml"
}

# The daemon's status answer for our tree, as JSON (empty on failure).
ckpt_status_json() {
	"$HCTL" status --json "$TREE" 2>/dev/null
}

# Evaluate a Python expression on the checkpoints object of our mount's
# status (bound to c), e.g. ckpt_status 'c["checkpoints_taken"]'.
ckpt_status() {
	ckpt_status_json | python3 -c '
import json, sys
m = json.load(sys.stdin)["mounts"][0]
c = m.get("checkpoints", {})
print(eval(sys.argv[1]))' "$1"
}

# (grep, not python: it is polled, and python takes long to start on a busy box)
ckpt_baseline_done() {
	ckpt_status_json | grep -q '"enabled":[[:space:]]*true,.*"scanning":[[:space:]]*false'
}

# Mount $TREE in place with a foreground daemon we own, then wait for the
# baseline (or re-validation) to finish. Arguments go to t_mount (-- OPTS).
# shellcheck disable=SC2120 # the options are optional
ckpt_mount() {
	t_mount "$TREE" "$@"
	t_wait_for 60 ckpt_baseline_done || t_fail "the baseline did not finish within 60 s"
}

# Send one request to the control socket; prints the answer, fails on ok:false.
ckpt_ctl() {
	python3 "$CKPT_CLIENT" "$SOCK" "$1"
}

ckpt_turn() {
	"$HCTL" turn -m "$1" -C "$TREE" || t_fail "hermesctl turn -m '$1' failed"
}

# Number of checkpoints in the store, read with plain git.
ckpt_count() {
	git --git-dir="$STORE" rev-list --count HEAD 2>/dev/null || echo 0
}

# Subjects of the checkpoints, newest first.
ckpt_subjects() {
	git --git-dir="$STORE" log --format=%s
}

# Fail unless the store holds exactly $1 checkpoints; $2 says why.
ckpt_expect_count() {
	local n
	n=$(ckpt_count)
	if [ "$n" != "$1" ]; then
		git --git-dir="$STORE" log --format='  %h %s' >&2
		t_check_fail "$2: $n checkpoints, want $1"
		return 1
	fi
	return 0
}

# Restore checkpoint SPEC (list number or hash) through the daemon, whole
# tree or the given paths.
ckpt_restore() {
	local spec=$1 req
	shift
	req=$(python3 -c 'import json, sys
print(json.dumps({"op": "restore", "spec": sys.argv[1], "paths": sys.argv[2:]}))' \
		"$spec" "$@")
	ckpt_ctl "$req" >/dev/null || t_fail "restore of checkpoint $spec failed"
}

# Content of PATH in checkpoint REV (a commit id), as git shows it.
ckpt_show() {
	git --git-dir="$STORE" show "$1:$2"
}
