# shellcheck shell=bash
# The body of the stress_*.sh scripts: four processes change one tree at
# random through the mount (stress_ops); no unexplained error, no torn
# file, the daemon stays up, and the mount's view equals the disk after.

# stress_run [DAEMON OPTION...]
stress_run() {
	local stress secs
	t_need_root
	t_need_fuse
	t_init

	stress=$BUILD/tests/integration/stress_ops
	[ -x "$stress" ] || t_fail "no $stress (build first)"
	secs=${STRESS_SECONDS:-6}

	# the helper itself on a plain directory: its checks must hold there
	mkdir -p "$T/native" "$T/src"
	if ! "$stress" "$T/native" 4 1 >"$T/native.out"; then
		cat "$T/native.out" >&2
		t_fail "stress_ops fails on a plain directory: the helper is wrong"
	fi

	t_mount "$T/src" -- "$@"
	"$stress" "$T/src" 4 "$secs" >"$T/mount.out" ||
		t_check_fail "stress_ops on the mount reported errors${*:+ (options $*)}"
	cat "$T/mount.out" >&2
	kill -0 "$T_DAEMON_PID" 2>/dev/null || t_fail "the daemon died under the stress run"

	# what the mount shows now is what is on the disk below
	t_stat_tree "$T/src" >"$T/via-mount.stat"
	t_hash_tree "$T/src" >"$T/via-mount.hash"
	cd "$T" || exit 1
	t_umount "$T/src"
	t_stat_tree "$T/src" >"$T/below.stat"
	t_hash_tree "$T/src" >"$T/below.hash"
	t_diff "listing through the mount vs the disk below" "$T/below.stat" "$T/via-mount.stat"
	t_diff "contents through the mount vs the disk below" "$T/below.hash" "$T/via-mount.hash"
	t_pass
}
