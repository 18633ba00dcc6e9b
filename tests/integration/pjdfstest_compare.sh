#!/bin/bash
# pjdfstest (an external POSIX suite, not packaged in Debian and not part
# of this repository) on a plain directory and on an in-place hermesfs
# mount, as root: no assertion may fail on the mount that passes natively,
# and every test file must run as many assertions as on the disk. The
# mount runs twice: checkpoints on (writes pass through the daemon) and off
# (writes may go to the disk below directly). Skipped unless
# PJDFSTEST_DIR points at a built checkout (pjdfstest binary and tests/):
#   git clone https://github.com/pjd/pjdfstest && cd pjdfstest &&
#   autoreconf -ifs && ./configure && make pjdfstest
#   PJDFSTEST_DIR=$PWD meson test -C build pjdfstest_compare.sh
# PJDFSTEST_OPTS passes daemon options (e.g. "-o writeback").
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
[ -n "${PJDFSTEST_DIR-}" ] || t_skip "PJDFSTEST_DIR not set"
{ [ -x "$PJDFSTEST_DIR/pjdfstest" ] && [ -d "$PJDFSTEST_DIR/tests" ]; } ||
	t_skip "no built pjdfstest in $PJDFSTEST_DIR"
t_need_root
t_need_fuse
t_init

# pjdfstest chooses some assertions by the filesystem's type name (e.g.
# rename_ctime only on EXT4/UFS/ZFS), and on the mount it would read
# "FUSE.HERMESFS". The mount is the disk passed through, so the mount runs
# see the disk's name: a copy of tests/ whose conf says it.
fs_name=$(df -PT "$T" | awk 'END { print toupper($2) }')
mkdir -p "$T/pjd"
ln -s "$PJDFSTEST_DIR/pjdfstest" "$T/pjd/pjdfstest"
cp -r "$PJDFSTEST_DIR/tests" "$T/pjd/tests"
sed -i "s/^\tfs=\`df -PT .*/\tfs=$fs_name/" "$T/pjd/tests/conf"
grep -q "^.fs=$fs_name\$" "$T/pjd/tests/conf" || t_fail "cannot set the type name in pjdfstest's conf"

# run_suite DIR OUT TESTS: every .t file under TESTS, its TAP output in
# OUT/<name>
run_suite() {
	local dir=$1 out=$2 tests=$3 t name
	mkdir -p "$out"
	while read -r t; do
		name=${t#"$tests/"}
		name=${name//\//_}
		(cd "$dir" && timeout 300 sh "$t") >"$out/$name" 2>&1
	done < <(find "$tests" -name '*.t' | LC_ALL=C sort)
}

# summary OUT: "<file> <planned> <ran> <failed numbers...>" per test file
summary() {
	local f
	for f in "$1"/*; do
		awk -v n="${f##*/}" '
			/^1\.\.[0-9]+$/ { split($0, p, "."); plan = p[3] }
			/^ok / { ok++ }
			/^not ok / { split($0, a, " "); bad = bad " " a[3]; nok++ }
			END { printf "%s %d %d%s\n", n, plan, ok + nok, bad }' "$f"
	done
}

mkdir -p "$T/native" "$T/src"
read -r -a opts <<<"${PJDFSTEST_OPTS-}"
t_log "pjdfstest on the native directory ($fs_name)"
run_suite "$T/native" "$T/tap.native" "$PJDFSTEST_DIR/tests"
summary "$T/tap.native" >"$T/native.sum"
t_log "native: $(awk '{ a += $3; f += NF - 3 } END { print a " assertions, " f " not ok (TODO included)" }' "$T/native.sum")"

# on the mount twice: checkpoints on (every change tracked: writes pass
# through the daemon) and off (writes may go straight to the disk)
verdict=0
for ck in on off; do
	if [ "$ck" = off ]; then
		printf 'checkpoints:\n  enabled: false\n' >"$HERMES_HOME/config.yaml"
	else
		rm -f "$HERMES_HOME/config.yaml"
	fi
	rm -rf "$T/src" && mkdir -p "$T/src"
	t_mount "$T/src" -- "${opts[@]}"
	t_log "pjdfstest on the mount, checkpoints $ck${opts[*]:+ (${opts[*]})}"
	run_suite "$T/src" "$T/tap.$ck" "$T/pjd/tests"
	cd "$T" || exit 1
	t_umount "$T/src"
	summary "$T/tap.$ck" >"$T/$ck.sum"
	t_log "mount ($ck): $(awk '{ a += $3; f += NF - 3 } END { print a " assertions, " f " not ok (TODO included)" }' "$T/$ck.sum")"
	# per file: a failure the disk does not have, or fewer assertions
	# than planned
	awk -v ck="$ck" '
	FILENAME == ARGV[1] { for (i = 4; i <= NF; i++) nat[$1 " " $i] = 1; np[$1] = $2; next }
	{
		if ($3 < $2) { print "FAIL " ck " " $1 ": ran " $3 " of " $2 " planned assertions"; bad = 1 }
		for (i = 4; i <= NF; i++)
			if (!(($1 " " $i) in nat)) { print "FAIL " ck " " $1 ": assertion " $i " fails only on the mount"; bad = 1 }
		if ($2 != np[$1]) { print "FAIL " ck " " $1 ": plans " $2 " assertions on the mount, " np[$1] " natively"; bad = 1 }
	}
	END { exit bad }' "$T/native.sum" "$T/$ck.sum" >"$T/verdict.$ck"
	v=$?
	cat "$T/verdict.$ck" >&2
	if [ "$v" != 0 ]; then
		verdict=1
		awk '/^FAIL / { sub(":", "", $3); print $3 }' "$T/verdict.$ck" | sort -u |
			while read -r f; do
				printf '== %s (checkpoints %s)\n' "$f" "$ck" >&2
				grep -B3 '^not ok' "$T/tap.$ck/$f" | head -n 40 >&2
			done
	fi
done
[ "$verdict" = 0 ] || t_check_fail "pjdfstest fails on the mount where the disk passes"
t_pass
