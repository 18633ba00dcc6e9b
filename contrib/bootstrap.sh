#!/usr/bin/env bash
# Fresh Debian 12 to a working hermesfs: install what is missing, build,
# install hermesfs and hermesctl into /usr/local, and either run the demo
# (default) or the whole test suite (`test`).
#   contrib/bootstrap.sh          install, build, run the demo
#   contrib/bootstrap.sh test     install, build (-Werror, ASan+UBSan), run every test
#   contrib/bootstrap.sh build    install and build only
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mode=${1:-demo}

build_pkgs=(gcc pkg-config meson ninja-build git fuse3 libfuse3-dev libgit2-dev
	libyaml-dev libcjson-dev libuv1-dev libssl-dev)
test_pkgs=(python3 vim nano tmux attr fio bubblewrap util-linux make tar
	procps psmisc cron curl hyperfine)

say() { printf '\n==> %s\n' "$*"; }

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		echo "bootstrap: need root to run: $*" >&2
		exit 1
	fi
}

install_missing() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	say "installing ${missing[*]}"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
}

build() { # build DIR [meson options...]
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >/dev/null
	else
		meson configure "$dir" "$@" >/dev/null
	fi
	say "building $dir"
	meson compile -C "$dir"
}

# hermesfs and hermesctl on PATH (/usr/local/bin): mount(8) runs hermesfs for
# /etc/fstab lines of type fuse.hermesfs, and people type hermesctl
install_built() { # install_built DIR
	say "installing $1 into $(meson configure "$1" | awk '$1 == "prefix" { print $2 }')/bin"
	as_root meson install -C "$1" --no-rebuild --quiet
}

case "$mode" in
demo)
	install_missing "${build_pkgs[@]}"
	build build
	install_built build
	say "demo: a project mounted in place, an edit through the mount"
	exec "$top/contrib/demo.sh" "$top/build"
	;;
build)
	install_missing "${build_pkgs[@]}"
	build build
	install_built build
	;;
test)
	install_missing "${build_pkgs[@]}" "${test_pkgs[@]}"
	# warnings are errors here; the tests run on the sanitizer build
	build build-ci --werror
	install_built build-ci
	build build-asan --werror -Db_sanitize=address,undefined -Db_lundef=false
	sandir=$(mktemp -d /tmp/hermes-san.XXXXXX)
	chmod 1777 "$sandir"
	export ASAN_OPTIONS="log_path=$sandir/asan:detect_leaks=1:abort_on_error=0"
	export UBSAN_OPTIONS="log_path=$sandir/ubsan:print_stacktrace=1:halt_on_error=0"
	say "running the test suite (unit, integration) on the ASan+UBSan build"
	rc=0
	meson test -C build-asan --print-errorlogs --num-processes 2 "${@:2}" || rc=$?
	reports=$(find "$sandir" -type f | sort)
	if [ -n "$reports" ]; then
		say "sanitizer reports (each one fails the run):"
		for f in $reports; do
			echo "--- $f"
			head -n 60 "$f"
		done
		rc=1
	fi
	# the threaded parts once more under ThreadSanitizer: the turn gate,
	# many writers while turns flip, random concurrent changes (with fds, and
	# with handles whose kept fds come and go), readers and writers while
	# rollbacks run
	say "ThreadSanitizer: turns and concurrent writers"
	build build-tsan --werror -Db_sanitize=thread -Db_lundef=false
	TSAN_OPTIONS="log_path=$sandir/tsan:halt_on_error=0" TORTURE_SECONDS=20 \
		meson test -C build-tsan --print-errorlogs turn ckpt_concurrent.sh stress_concurrent.sh \
		stress_handles.sh torture_rw.sh ||
		rc=1
	if [ -n "$(find "$sandir" -name 'tsan*' -type f)" ]; then
		say "ThreadSanitizer reports (each one fails the run):"
		for f in "$sandir"/tsan*; do
			echo "--- $f"
			head -n 60 "$f"
		done
		rc=1
	fi
	tsan_log="$top/build-tsan/meson-logs/testlog.json"
	rm -rf "$sandir"
	# the checkpoint-store tests once more at full speed: a sanitizer build
	# is too slow to overlap a background git gc, and a race with one (gc
	# deleting a temporary index mid-checkpoint) hid there
	say "plain build: the checkpoint and store tests at full speed"
	mapfile -t store_tests < <(cd "$top/tests/integration" &&
		find . -maxdepth 1 \( -name 'store_*.sh' -o -name 'ckpt_*.sh' \) -perm -u+x |
		sed 's|^./||' | LC_ALL=C sort)
	meson test -C build-ci --print-errorlogs --num-processes 2 "${store_tests[@]}" || rc=1
	python3 - "$top/build-asan/meson-logs/testlog.json" "$tsan_log" \
		"$top/build-ci/meson-logs/testlog.json" <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0, "TIMEOUT": 0, "EXPECTEDFAIL": 0, "UNEXPECTEDPASS": 0, "ERROR": 0}
for path in sys.argv[1:]:
    for line in open(path):
        line = line.strip()
        if line:
            r = json.loads(line).get("result", "ERROR")
            counts[r] = counts.get(r, 0) + 1
failed = counts["FAIL"] + counts["TIMEOUT"] + counts["ERROR"] + counts["UNEXPECTEDPASS"]
print(f"tests: {counts['OK'] + counts['EXPECTEDFAIL']} passed, {failed} failed, {counts['SKIP']} skipped")
PY
	exit $rc
	;;
*)
	echo "usage: contrib/bootstrap.sh [demo|build|test [meson test args]]" >&2
	exit 2
	;;
esac
