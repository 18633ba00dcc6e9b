#!/bin/bash
# pjdfstest (an external POSIX suite, not packaged in Debian and not part
# of this repository) on a plain directory and on an in-place hermesfs
# mount, as root: no assertion may fail on the mount that passes natively,
# and every test file must run all the assertions it plans (pjdfstest's own
# feature checks may plan fewer on FUSE, e.g. rename_ctime is only assumed
# for ext4/UFS/ZFS; those are listed, not failed). Skipped unless
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

# run_suite DIR OUT: every .t file in DIR, its TAP output in OUT/<name>
run_suite() {
	local dir=$1 out=$2 t name
	mkdir -p "$out"
	while read -r t; do
		name=${t#"$PJDFSTEST_DIR/tests/"}
		name=${name//\//_}
		(cd "$dir" && timeout 300 sh "$t") >"$out/$name" 2>&1
	done < <(find "$PJDFSTEST_DIR/tests" -name '*.t' | LC_ALL=C sort)
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
t_log "pjdfstest on the native directory"
run_suite "$T/native" "$T/tap.native"
t_mount "$T/src" -- "${opts[@]}"
t_log "pjdfstest on the mount${opts[*]:+ (${opts[*]})}"
run_suite "$T/src" "$T/tap.mount"
cd "$T" || exit 1
t_umount "$T/src"

summary "$T/tap.native" >"$T/native.sum"
summary "$T/tap.mount" >"$T/mount.sum"
t_log "native: $(awk '{ a += $3; f += NF - 3 } END { print a " assertions, " f " not ok (TODO included)" }' "$T/native.sum")"
t_log "mount:  $(awk '{ a += $3; f += NF - 3 } END { print a " assertions, " f " not ok (TODO included)" }' "$T/mount.sum")"
# per file: a failure the disk does not have, or fewer assertions than planned
awk '
	FILENAME == ARGV[1] { for (i = 4; i <= NF; i++) nat[$1 " " $i] = 1; np[$1] = $2; next }
	{
		if ($3 < $2) { print "FAIL " $1 ": ran " $3 " of " $2 " planned assertions"; bad = 1 }
		for (i = 4; i <= NF; i++)
			if (!(($1 " " $i) in nat)) { print "FAIL " $1 ": assertion " $i " fails only on the mount"; bad = 1 }
		if ($2 != np[$1]) print "note " $1 ": plans " $2 " assertions on the mount, " np[$1] " natively"
	}
	END { exit bad }' "$T/native.sum" "$T/mount.sum" >"$T/verdict" 
verdict=$?
cat "$T/verdict" >&2
if [ "$verdict" != 0 ]; then
	t_check_fail "pjdfstest fails on the mount where the disk passes"
	awk '/^FAIL / { sub(":", "", $2); print $2 }' "$T/verdict" | sort -u |
		while read -r f; do
			printf '== %s\n' "$f" >&2
			grep -B3 '^not ok' "$T/tap.mount/$f" | head -n 40 >&2
		done
fi
t_pass
