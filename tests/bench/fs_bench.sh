#!/bin/bash
# Filesystem bench: the same workloads on a plain directory and on a
# hermesfs mount (in place) of a sibling directory on the same disk, in one
# run. Each workload alternates native and mount runs, starting and ending
# native (N M N M ... N), so the two sides see the same machine; the table
# gives the median of each side, and the spread of the native runs
# (slowest/fastest) shows the machine's noise.
#
# Two mounts take part: "mount" with checkpoints off (the filesystem alone,
# config checkpoints.enabled: false) and "ckpt" with checkpoints on (each
# run there starts with `hermesctl turn`, so its first change pays for the
# checkpoint of the previous run's changes); the table gives mount/native
# and ckpt/mount. The two mounts take turns going first in a round, and no
# run starts while a background collection of the checkpoint store runs.
#
# The metadata workloads also run on "floor", a FUSE filesystem that does
# nothing (tests/bench/fuse_floor.c: names in memory, no data, the same
# mount options and timeouts): floor/nat is what the FUSE round trips alone
# cost on this machine, mount/floor what hermesfs adds to them.
#
# usage: fs_bench.sh [--quick] [--opts "DAEMON OPTIONS"]
#   BUILD (default: <source>/build) holds fs/hermesfs and the bench helper;
#   BENCH_DIR (default /tmp) is where the data goes (needs ~2.5 GiB free);
#   FS_BENCH_ROUNDS (1) and FS_BENCH_ROUNDS_SEQ (2): runs per mount.
# Needs root (it drops the page cache between phases: echo 3 >
# /proc/sys/vm/drop_caches; without root the caches stay warm and the
# figures say so), fio, tar, /dev/fuse.
# the workload functions are called through aba "$w"
# shellcheck disable=SC2317
set -u

SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$SRC/build}
export SRC BUILD
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"

quick=0
daemon_opts=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--opts)
		shift
		read -r -a daemon_opts <<<"${1-}"
		;;
	-h | --help)
		sed -n '2,13p' "$0"
		exit 0
		;;
	*)
		echo "fs_bench: unknown argument $1" >&2
		exit 2
		;;
	esac
	shift
done

if [ "$quick" = 1 ]; then
	SEQ_MB=128 RAND_MB=64 RAND_SECS=1 NFILES=2000 NTREE=5000
	ROUNDS_SEQ=2 ROUNDS=1
else
	SEQ_MB=1024 RAND_MB=256 RAND_SECS=2 NFILES=20000 NTREE=50000
	ROUNDS_SEQ=2 ROUNDS=1
fi
ROUNDS_SEQ=${FS_BENCH_ROUNDS_SEQ:-$ROUNDS_SEQ}
ROUNDS=${FS_BENCH_ROUNDS:-$ROUNDS}

t_need_fuse
t_need_cmd fio tar dd
[ -x "$BUILD/tests/bench/bench_files" ] || t_fail "no $BUILD/tests/bench/bench_files (build first)"
t_init
if [ -n "${BENCH_DIR-}" ]; then
	B=$(mktemp -d "$BENCH_DIR/hermes-bench.XXXXXX") || exit 1
	t_on_cleanup "rm -rf '$B'"
else
	B=$T
fi

can_drop=0
[ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ] && can_drop=1
drop_caches() {
	sync
	[ "$can_drop" = 1 ] && echo 3 >/proc/sys/vm/drop_caches
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }
mbps() { awk -v mb="$1" -v s="$2" 'BEGIN { printf "%.1f", mb / s }'; }

declare -A R # R[run,metric] = value

# A tree of NTREE small files in directories of 100, as a tarball.
make_tree() {
	local root=$B/treegen/tree i d body
	body=$(head -c 2000 /dev/urandom | base64 -w 0)
	for ((d = 0; d * 100 < NTREE; d++)); do
		mkdir -p "$root/m$((d / 50))/d$d"
	done
	for ((i = 0; i < NTREE; i++)); do
		d=$((i / 100))
		printf '%s\n' "${body:0:$((i % 1500 + 10))}" \
			>"$root/m$((d / 50))/d$d/f$i.txt"
	done
	tar -C "$B/treegen" -cf "$B/tree.tar" tree
	rm -rf "$B/treegen"
}

# A workload that fails leaves its figures as "FAIL" and the run goes on,
# so one broken workload does not hide the others.
BENCH_FAILED=0
w_fail() {
	printf 'FAIL: %s\n' "$*" >&2
	BENCH_FAILED=1
	return 1
}

w_seq() { # RUN DIR
	local run=$1 dir=$2 t0 t1
	t_log "$run: sequential write of $SEQ_MB MiB"
	drop_caches
	# fio writes random (not zero) buffers: a virtual disk may skip zeros
	t0=$(now)
	fio --name=seqwrite --filename="$dir/seq" --size="${SEQ_MB}M" --bs=1M \
		--rw=write --ioengine=psync --end_fsync=1 --minimal >/dev/null ||
		w_fail "$run: sequential write failed" || return 1
	t1=$(now)
	R[$run,seqw]=$(mbps "$SEQ_MB" "$(elapsed "$t0" "$t1")")

	# the same with a write-only open, as cp, tar, dd and compilers write
	rm -f "$dir/seq"
	t_log "$run: sequential write of $SEQ_MB MiB, write-only (dd)"
	drop_caches
	cat "$B/seq.src" >/dev/null # the source comes from memory
	t0=$(now)
	dd if="$B/seq.src" of="$dir/seq" bs=1M conv=fsync status=none ||
		w_fail "$run: sequential write-only write failed" || return 1
	t1=$(now)
	R[$run,seqwo]=$(mbps "$SEQ_MB" "$(elapsed "$t0" "$t1")")

	t_log "$run: sequential read of $SEQ_MB MiB"
	drop_caches
	t0=$(now)
	dd if="$dir/seq" of=/dev/null bs=1M status=none ||
		w_fail "$run: sequential read failed" || return 1
	t1=$(now)
	R[$run,seqr]=$(mbps "$SEQ_MB" "$(elapsed "$t0" "$t1")")
	rm -f "$dir/seq"
}

w_rand() { # RUN DIR
	local run=$1 dir=$2 out
	t_log "$run: 4 KiB random read and write, $RAND_SECS s each"
	dd if=/dev/urandom of="$dir/rnd" bs=1M count="$RAND_MB" conv=fsync status=none ||
		w_fail "$run: cannot lay out the random I/O file" || return 1
	# cold: nothing of the file cached, reads come from the disk
	drop_caches
	out=$(fio --name=randread --filename="$dir/rnd" --size="${RAND_MB}M" \
		--bs=4k --rw=randread --ioengine=psync --direct=0 \
		--runtime="$RAND_SECS" --time_based --minimal) ||
		w_fail "$run: fio randread failed" || return 1
	R[$run,randr]=$(cut -d';' -f8 <<<"$out")
	# warm: the file was just read whole and fio keeps the cache
	# (invalidate=0), so this measures the request path alone
	cat "$dir/rnd" >/dev/null
	out=$(fio --name=randread --filename="$dir/rnd" --size="${RAND_MB}M" \
		--bs=4k --rw=randread --ioengine=psync --direct=0 --invalidate=0 \
		--runtime="$RAND_SECS" --time_based --minimal) ||
		w_fail "$run: fio randread (warm) failed" || return 1
	R[$run,randrw]=$(cut -d';' -f8 <<<"$out")
	drop_caches
	out=$(fio --name=randwrite --filename="$dir/rnd" --size="${RAND_MB}M" \
		--bs=4k --rw=randwrite --ioengine=psync --direct=0 \
		--runtime="$RAND_SECS" --time_based --minimal) ||
		w_fail "$run: fio randwrite failed" || return 1
	R[$run,randw]=$(cut -d';' -f49 <<<"$out")
	rm -f "$dir/rnd"
}

w_files() { # RUN DIR
	local run=$1 dir=$2 out line
	t_log "$run: create+stat+delete of $NFILES small files"
	drop_caches
	mkdir -p "$dir/files"
	out=$("$BUILD/tests/bench/bench_files" "$dir/files" "$NFILES") ||
		w_fail "$run: bench_files failed" || { rm -rf "$dir/files"; return 1; }
	while read -r line; do
		R[$run,files_${line%% *}]=${line#* }
	done <<<"$out"
	R[$run,files]=$(awk -v a="${R[$run,files_create]}" -v b="${R[$run,files_stat]}" \
		-v c="${R[$run,files_delete]}" 'BEGIN { printf "%.4f", a + b + c }')
	rmdir "$dir/files"
}

w_untar() { # RUN DIR
	local run=$1 dir=$2 t0 t1
	t_log "$run: extracting a tree of $NTREE files"
	drop_caches
	if [ "${run#floor}" != "$run" ]; then
		# the floor keeps no data and lists no directories: a fresh
		# directory each run, and nothing to check or remove
		mkdir -p "$dir/x$run"
		t0=$(now)
		tar -C "$dir/x$run" -xf "$B/tree.tar" ||
			w_fail "$run: extraction failed" || return 1
		t1=$(now)
		R[$run,untar]=$(elapsed "$t0" "$t1")
		return 0
	fi
	mkdir -p "$dir/x"
	t0=$(now)
	tar -C "$dir/x" -xf "$B/tree.tar" ||
		w_fail "$run: extraction failed" || { rm -rf "$dir/x"; return 1; }
	t1=$(now)
	[ "$(find "$dir/x" -type f | wc -l)" = "$NTREE" ] ||
		w_fail "$run: extraction lost files" || { rm -rf "$dir/x"; return 1; }
	R[$run,untar]=$(elapsed "$t0" "$t1")
	# walks of the extracted tree: cold, then warm (after one more walk,
	# which takes what the first left stale), then ls -lR warm (an
	# xattr lookup per file for the SELinux label and the ACL)
	drop_caches
	t0=$(now)
	find "$dir/x" -ls >/dev/null || w_fail "$run: find failed" || { rm -rf "$dir/x"; return 1; }
	t1=$(now)
	R[$run,walkc]=$(elapsed "$t0" "$t1")
	find "$dir/x" -ls >/dev/null
	t0=$(now)
	find "$dir/x" -ls >/dev/null
	t1=$(now)
	R[$run,walkw]=$(elapsed "$t0" "$t1")
	t0=$(now)
	ls -lR "$dir/x" >/dev/null || w_fail "$run: ls -lR failed" || { rm -rf "$dir/x"; return 1; }
	t1=$(now)
	R[$run,lslr]=$(elapsed "$t0" "$t1")
	rm -rf "$dir/x"
}

# No background collection of the checkpoint store running (it holds
# gc.lock while it works): a run must not pay for what an earlier one left.
gc_wait() {
	local l
	for l in "$T"/home-on/checkpoints/*/gc.lock; do
		[ -e "$l" ] || continue
		timeout 600 flock "$l" true || t_log "a collection of ${l%/gc.lock} runs on"
	done
}

# One run on the mount with checkpoints on: a new turn first, so the
# workload's first change pays for a checkpoint of what the previous
# workload there changed.
ckpt_run() { # WORKLOAD K
	gc_wait
	HERMES_HOME=$T/home-on "$BUILD/tools/hermesctl" turn -m "bench $1" \
		-C "$B/ckpt" >/dev/null || w_fail "hermesctl turn failed"
	"$1" "ckpt$2" "$B/ckpt"
}

# aba WORKLOAD ROUNDS: N M C N C M N ... N with ROUNDS runs on each mount
# (the two mounts take turns going first); figures into R[native<k>,*],
# R[mount<k>,*] and R[ckpt<k>,*]
aba() {
	local w=$1 rounds=$2 k
	for ((k = 1; k <= rounds; k++)); do
		"$w" "native$k" "$B/native"
		if [ $((k % 2)) = 1 ]; then
			gc_wait
			"$w" "mount$k" "$B/src"
			ckpt_run "$w" "$k"
		else
			ckpt_run "$w" "$k"
			gc_wait
			"$w" "mount$k" "$B/src"
		fi
		case $w in
		w_files | w_untar) "$w" "floor$k" "$B/floor" ;;
		esac
	done
	"$w" "native$((rounds + 1))" "$B/native"
}

t_log "generating a tarball of $NTREE files"
make_tree
# random bytes for dd to copy (a virtual disk may skip zeros)
head -c "$((SEQ_MB << 20))" /dev/urandom >"$B/seq.src"
mkdir -p "$B/native" "$B/src" "$B/ckpt" "$B/floor" "$T/home-off" "$T/home-on"
"$BUILD/tests/bench/fuse_floor" "$B/floor" || t_fail "cannot mount the FUSE floor"
t_on_cleanup "fusermount3 -u '$B/floor' 2>/dev/null"
printf 'checkpoints:\n  enabled: false\n' >"$T/home-off/config.yaml"
HERMES_HOME=$T/home-off t_mount "$B/src" -- "${daemon_opts[@]}"
HERMES_HOME=$T/home-on t_mount "$B/ckpt" -- "${daemon_opts[@]}"
aba w_seq "$ROUNDS_SEQ"
aba w_rand "$ROUNDS"
aba w_files "$ROUNDS"
aba w_untar "$ROUNDS"
cd / || exit 1
t_umount "$B/src"
t_umount "$B/ckpt"
fusermount3 -u "$B/floor"

# ratio A B: A/B with two decimals
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b
		else print "n/a" }'
}

# stat SIDE KEY WHAT: median | min | max | n of the runs of one side
side_stat() {
	local side=$1 key=$2 what=$3 k v vals=()
	for ((k = 1; k <= 8; k++)); do
		v=${R[$side$k,$key]-}
		[ -n "$v" ] && vals+=("$v")
	done
	[ ${#vals[@]} -gt 0 ] || { echo FAIL; return; }
	printf '%s\n' "${vals[@]}" | LC_ALL=C sort -g | awk -v what="$what" '
		{ v[NR] = $1 }
		END {
			if (what == "n") print NR
			else if (what == "min") print v[1]
			else if (what == "max") print v[NR]
			else if (NR % 2) print v[(NR + 1) / 2]
			else printf "%.10g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}

printf '\nhermesfs bench (%s sizes%s); caches %s between phases\n' \
	"$([ "$quick" = 1 ] && echo quick || echo full)" \
	"${daemon_opts[*]:+, daemon options ${daemon_opts[*]}}" \
	"$([ "$can_drop" = 1 ] && echo dropped || echo NOT dropped)"
printf 'medians of alternating runs (sequential: %s native, %s per mount; others: %s, %s);\n' \
	"$((ROUNDS_SEQ + 1))" "$ROUNDS_SEQ" "$((ROUNDS + 1))" "$ROUNDS"
printf 'noise = slowest/fastest native run; ckpt = mount with checkpoints on, a turn per run;\n'
printf 'floor = a FUSE filesystem that does nothing (metadata workloads only)\n'
printf '%-30s %10s %10s %9s %10s %9s %9s %9s %6s\n' metric native mount mount/nat ckpt ckpt/mnt \
	floor/nat mnt/floor noise
row() { # label, key, kind (rate: higher is better, time: lower is better)
	local label=$1 key=$2 kind=$3 n m c f lo hi noise r rc rf rmf
	n=$(side_stat native "$key" median) m=$(side_stat mount "$key" median)
	c=$(side_stat ckpt "$key" median) f=$(side_stat floor "$key" median)
	lo=$(side_stat native "$key" min) hi=$(side_stat native "$key" max)
	noise=$(ratio "$hi" "$lo")
	r=$(ratio "$m" "$n")
	rc=$(ratio "$c" "$m")
	rf=$(ratio "$f" "$n")
	rmf=$(ratio "$m" "$f")
	printf '%-30s %10s %10s %9s %10s %9s %9s %9s %6s\n' "$label" "$n" "$m" "$r" "$c" "$rc" \
		"$rf" "$rmf" "$noise"
	if [ "$kind" = rate ]; then
		SUMMARY+=("$label: mount at ${r}x native throughput, checkpoints on at ${rc}x of that (native runs vary by ${noise}x)")
	elif [ "$rf" != n/a ]; then
		SUMMARY+=("$label: mount takes ${r}x native time (a FUSE filesystem doing nothing ${rf}x), checkpoints on ${rc}x of that (native runs vary by ${noise}x)")
	else
		SUMMARY+=("$label: mount takes ${r}x native time, checkpoints on ${rc}x of that (native runs vary by ${noise}x)")
	fi
}
SUMMARY=()
row "seq write ${SEQ_MB} MiB, fio rw (MB/s)" seqw rate
row "seq write ${SEQ_MB} MiB, dd wo (MB/s)" seqwo rate
row "seq read ${SEQ_MB} MiB (MB/s)" seqr rate
row "4k rand read, cold (IOPS)" randr rate
row "4k rand read, warm (IOPS)" randrw rate
row "4k rand write (IOPS)" randw rate
row "create ${NFILES} files (s)" files_create time
row "stat ${NFILES} files (s)" files_stat time
row "delete ${NFILES} files (s)" files_delete time
row "create+stat+delete total (s)" files time
row "extract ${NTREE}-file tar (s)" untar time
row "find -ls of it, cold (s)" walkc time
row "find -ls of it, warm (s)" walkw time
row "ls -lR of it, warm (s)" lslr time
printf '\n'
printf '%s\n' "${SUMMARY[@]}"
[ "$BENCH_FAILED" = 0 ] || t_fail "some workloads failed (see FAIL above)"
t_pass
