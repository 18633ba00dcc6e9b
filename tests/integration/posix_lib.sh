# shellcheck shell=bash
# The posix_ops comparison shared by the posix_*.sh scripts: the same
# battery on a plain directory and on a hermesfs mount, as root or as
# uid 65534, and a diff of the two transcripts.

# Replace, in both transcripts, the lines of a check listed in
# posix_known.txt when the mount gave exactly the listed result (or "-":
# any result), and say so. Everything else is compared as it is. Entries
# with a fourth field apply only when the daemon options contain it.
posix_accept_known() {
	local native=$1 mount=$2 opts=$3 f
	# key of a line: check name and its occurrence number
	awk -F'\t' -v opts=" $opts " '
		function key(line, n) {
			n = line; sub(/ -> .*/, "", n); sub(/: .*/, "", n)
			return n
		}
		FILENAME == ARGV[1] {
			if ($0 ~ /^#/ || NF < 3) next
			# a fourth field names the daemon option the entry is for
			if (NF >= 4 && index(opts, $4) == 0) next
			want[$1] = $2; why[$1] = $3; next
		}
		FILENAME == ARGV[2] { k = key($0); nat[k "#" (++nn[k])] = $0; next }
		{
			k = key($0); id = k "#" (++mn[k])
			res = $0; sub(/^[^>]*-> /, "", res); sub(/ .*/, "", res)
			if ((k in want) && nat[id] != $0 &&
			    (want[k] == "-" || want[k] == res)) {
				printf "# known difference %s: %s (%s)\n", k, res, why[k] > "/dev/stderr"
				print id
			}
		}' "$SRC/tests/integration/posix_known.txt" "$native" "$mount" >"$mount.known"
	[ -s "$mount.known" ] || return 0
	for f in "$native" "$mount"; do
		awk 'FILENAME == ARGV[1] { skip[$1] = 1; next }
			{ k = $0; sub(/ -> .*/, "", k); sub(/: .*/, "", k)
			  if (!((k "#" (++n[k])) in skip)) print }' \
			"$mount.known" "$f" >"$f.cmp"
		mv "$f.cmp" "$f"
	done
}

# posix_compare USER LAYOUT [DAEMON OPTION...]
#   USER:   root | nobody
#   LAYOUT: inplace (mount SRC over itself) | second (mount SRC on MNT)
posix_compare() {
	local user=$1 layout=$2 tool native work mnt fstype
	shift 2
	t_need_root
	t_need_fuse
	t_need_cmd setpriv findmnt
	t_init

	# a copy of the tool that uid 65534 can certainly execute
	mkdir -p "$T/bin"
	cp "$BUILD/tests/integration/posix_ops" "$T/bin/posix_ops"
	chmod 0755 "$T/bin" "$T/bin/posix_ops"
	tool=$T/bin/posix_ops

	native=$T/native
	mkdir -p "$native" "$T/src"
	chmod 0755 "$native" "$T/src"
	case $layout in
	inplace)
		t_mount "$T/src" -- "$@"
		mnt=$T/src
		;;
	second)
		mkdir -p "$T/mnt"
		t_mount "$T/src" "$T/mnt" -- "$@"
		mnt=$T/mnt
		;;
	*) t_fail "unknown layout $layout" ;;
	esac

	cd "$T" || t_fail "cannot enter $T"
	for work in "$native/w" "$mnt/w"; do
		mkdir "$work" || t_fail "cannot create $work"
		chmod 0755 "$work"
	done
	fstype=$(findmnt -n -o FSTYPE -T "$mnt/w")
	case $fstype in
	fuse*) ;;
	*) t_fail "$mnt/w is on $fstype, not on the hermesfs mount" ;;
	esac
	if [ "$user" = nobody ]; then
		for work in "$native/w" "$mnt/w"; do
			"$tool" --fixtures "$work" || t_fail "fixtures in $work"
			chown "$NOBODY_UID:$NOBODY_GID" "$work"
		done
		t_as_nobody "$tool" "$native/w" >"$T/native.out" 2>"$T/native.err" ||
			t_check_fail "posix_ops on the native dir exited $?"
		t_as_nobody "$tool" "$mnt/w" >"$T/mount.out" 2>"$T/mount.err" ||
			t_check_fail "posix_ops on the mount exited $?"
	else
		"$tool" "$native/w" >"$T/native.out" 2>"$T/native.err" ||
			t_check_fail "posix_ops on the native dir exited $?"
		"$tool" "$mnt/w" >"$T/mount.out" 2>"$T/mount.err" ||
			t_check_fail "posix_ops on the mount exited $?"
	fi
	cat "$T/native.err" "$T/mount.err" >&2

	# the battery must really have run to the end on both sides
	grep -q '^run: done$' "$T/native.out" ||
		t_check_fail "native transcript incomplete"
	grep -q '^run: done$' "$T/mount.out" ||
		t_check_fail "mount transcript incomplete"
	t_log "$(wc -l <"$T/native.out") checks as $user, layout $layout${*:+, options $*}"
	posix_accept_known "$T/native.out" "$T/mount.out" "$*"
	t_diff "posix_ops as $user ($layout)" "$T/native.out" "$T/mount.out"
	if [ "$T_FAILED" = 1 ]; then
		t_log "differences: $(diff "$T/native.out" "$T/mount.out" |
			grep -c '^>') lines"
	fi
	cd / || true
	t_umount "$mnt"
	t_pass
}
