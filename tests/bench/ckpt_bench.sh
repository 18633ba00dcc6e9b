#!/bin/bash
# Checkpoint bench, two parts, each against a baseline measured in the same run:
#  1. On a tree of CKPT_BENCH_FILES (default 60,000) small files mounted by
#     hermesfs: the latency of a turn's first change (one append, timed
#     around the syscalls by bench_first_write) when the previous turn
#     changed 1, 10, 100 and 1,000 files, beside a later change of the same
#     turn and beside `git add -A && git commit` (GIT_DIR/GIT_WORK_TREE on the
#     same tree, same changes, the disk under the mount). Wall times
#     follow the machine's load, so the CPU time each side spent is printed
#     too (the daemon's threads from /proc/PID/task/*/schedstat; git's
#     user+sys): the ratio of those is what a quiet machine would show.
#  2. Throughput of a simple workload (fio sequential write and read,
#     create+stat+delete of small files) on a mount with checkpoints on,
#     on with a turn every 200 ms, and off (checkpoints: {enabled: false}),
#     as ratios to off. Rounds alternate the modes, each round in another
#     order; before each timed workload any background collection of a
#     store (gc.lock) is waited for, the disk synced and the caches dropped
#     (as root), so no mode pays for what an earlier one left behind. The
#     table gives medians, the medians of the per-round ratios, and the
#     spread of the off runs (slowest/fastest) as the machine's noise.
#
# usage: ckpt_bench.sh [--quick]   (quick: 10,000 files, smaller workloads)
#   CKPT_BENCH_FILES, CKPT_BENCH_REPS (5), CKPT_BENCH_ROUNDS (5) override;
#   CKPT_BENCH_PARTS (default "1 2") runs only the parts named.
#   BUILD (default <source>/build) holds fs/hermesfs, tools/hermesctl and
#   tests/bench/bench_*; the data goes under /tmp (or BENCH_DIR).
set -u

SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$SRC/build}
export SRC BUILD
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"

quick=0
[ "${1-}" = --quick ] && quick=1
if [ "$quick" = 1 ]; then
	NFILES=${CKPT_BENCH_FILES:-10000} SEQ_MB=64 SMALL=2000
else
	NFILES=${CKPT_BENCH_FILES:-60000} SEQ_MB=256 SMALL=5000
fi
REPS=${CKPT_BENCH_REPS:-5}
ROUNDS=${CKPT_BENCH_ROUNDS:-5}
PARTS=${CKPT_BENCH_PARTS:-1 2}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
HCTL=$BUILD/tools/hermesctl
FIRST=$BUILD/tests/bench/bench_first_write
FILES=$BUILD/tests/bench/bench_files

t_need_fuse
t_need_cmd fio git python3
if [ ! -x "$FIRST" ] || [ ! -x "$FILES" ]; then
	t_fail "build first: no $FIRST or $FILES"
fi
t_init
if [ -n "${BENCH_DIR-}" ]; then
	B=$(mktemp -d "$BENCH_DIR/hermes-ckbench.XXXXXX") || exit 1
	t_on_cleanup "rm -rf '$B'"
else
	B=$T
fi

median() { LC_ALL=C sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.5g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
best() { LC_ALL=C sort -g | awk -v hi="$1" 'NR == 1 { lo = $1 } { last = $1 } END { if (NR == 0) print "n/a"; else print (hi ? last : lo) }'; }
now_ms() { date +%s%3N; }
# CPU ms a whole process has used (threads that ended included), in clock ticks
CLK_TCK=$(getconf CLK_TCK)
cpu_ticks_ms() { sed 's/.*) //' "/proc/$1/stat" | awk -v hz="$CLK_TCK" '{ printf "%.0f", ($12 + $13) * 1000 / hz }'; }
# CPU ms the live threads of a process have used, to the nanosecond (for
# short spans: a thread that ends in the span would make it look negative)
cpu_ms() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.3f", s / 1e6 }'; }
# run a command; its wall and user+sys ms into WALL_MS and CPU_MS
timed() {
	local tf=$T/timed.out rc=0 TIMEFORMAT='%3R %3U %3S'
	{ time "$@" >/dev/null 2>&1; } 2>"$tf" || rc=$?
	read -r WALL_MS CPU_MS <<<"$(awk '{ printf "%.0f %.0f", $1 * 1000, ($2 + $3) * 1000 }' "$tf")"
	return $rc
}

config() { # enabled(true|false)
	cat >"$HERMES_HOME/config.yaml" <<EOF
checkpoints:
  enabled: $1
  turn_idle_ms: 0
  max_files: 10000000
  max_snapshots: 100000
  max_total_size_mb: 100000
EOF
}

status_field() { # MOUNTPOINT KEY: a number from the checkpoints object
	"$HCTL" status --json "$1" | grep -o "\"$2\":[0-9.]*" | head -n 1 | cut -d: -f2
}
# shellcheck disable=SC2317 # called through t_wait_for
baseline_done() {
	"$HCTL" status --json "$1" | grep -q '"scanning":false'
}

# ---- part 1: first-mutation latency on a big tree ----------------------
part1() {
	t_log "generating $NFILES files"
	python3 - "$B/src" "$NFILES" <<-'PY'
	import os, sys
	root, n = sys.argv[1], int(sys.argv[2])
	body = os.urandom(1200).hex()
	for i in range(n):
	    d = os.path.join(root, "m%02d" % (i // 5000), "d%04d" % (i // 100))
	    if i % 100 == 0:
	        os.makedirs(d, exist_ok=True)
	    with open(os.path.join(d, "f%06d.txt" % i), "w") as f:
	        f.write(body[: 10 + i % 1500] + "\n")
	PY
	export GIT_CONFIG_NOSYSTEM=1
	gitb() { GIT_DIR=$B/git.git GIT_WORK_TREE=$B/src HOME=$B git -c user.name=b -c user.email=b@b "$@"; }
	gitb init -q || t_fail "git init failed"
	t0=$(now_ms)
	{ gitb add -A && gitb commit -q -m base; } || t_fail "git baseline commit failed"
	git_first_ms=$(($(now_ms) - t0))

	config true
	mkdir -p "$B/mnt"
	t0=$(now_ms)
	t_mount "$B/src" "$B/mnt"
	t_wait_for 600 baseline_done "$B/mnt" || t_fail "no baseline within 600 s"
	base_ms=$(($(now_ms) - t0))
	[ "$(status_field "$B/mnt" checkpoints_taken)" -ge 1 ] ||
		t_fail "no baseline checkpoint (over max_files?)"
	mkdir -p "$B/mnt/probe"

	t_log "baseline of $NFILES files: $base_ms ms"
	declare -gA FIRSTMS LATERMS GITMS CKMS CPUMS GITCPU
	off=0
	for k in 1 10 100 1000; do
		t_log "first-mutation latency after $k changed files"
		for ((r = 0; r < REPS; r++)); do
			# the previous turn: change k files through the mount
			python3 - "$B/mnt" "$NFILES" "$k" "$off" <<-'PY' || t_fail "cannot change $k files"
	import os, sys
	root, n, k, off = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
	for j in range(k):
	    i = (off + j * 7919) % n
	    p = os.path.join(root, "m%02d" % (i // 5000), "d%04d" % (i // 100), "f%06d.txt" % i)
	    with open(p, "a") as f:
	        f.write("changed %d\n" % off)
	PY
			off=$((off + k + 1))
			"$HCTL" turn -m "bench $k" -C "$B/mnt" || t_fail "hermesctl turn failed"
			c0=$(cpu_ms "$T_DAEMON_PID")
			out=$("$FIRST" "$B/mnt/probe/first-$k-$r") || t_fail "bench_first_write failed"
			CPUMS[$k]+="$(awk -v a="$c0" -v b="$(cpu_ms "$T_DAEMON_PID")" 'BEGIN { if (b >= a) printf "%.1f", b - a }') "
			out+=$'\n'$("$FIRST" "$B/mnt/probe/later-$k-$r") || t_fail "bench_first_write failed"
			FIRSTMS[$k]+="$(sed -n 1p <<<"$out") "
			LATERMS[$k]+="$(sed -n 2p <<<"$out") "
			CKMS[$k]+="$(status_field "$B/mnt" last_checkpoint_ms) "
			# git on the disk under the mount, same changes
			timed gitb add -A || t_fail "git add -A failed"
			gw=$WALL_MS gc=$CPU_MS
			timed gitb commit -q -m "bench $k $r" || t_fail "git commit failed"
			GITMS[$k]+="$((gw + WALL_MS)) "
			GITCPU[$k]+="$((gc + CPU_MS)) "
		done
	done
	cd / || exit 1
	t_umount "$B/mnt"
}

# ---- part 2: throughput, checkpoints on / on with turns / off -------------
# Three mounts of sibling directories stay up for the whole part; each round
# runs every workload on the three, back to back, so a ratio is taken
# between runs minutes apart at most, and the median of those per-round
# ratios is what the table reports.
declare -A TP   # TP[mode,metric] = "values..." (one per round, in order)
declare -A DPID # the daemon of each mode
# the daemon's CPU ms for workload KEY of MODE since c0
add_cpu() { # MODE KEY C0
	TP[$1,$2_cpu]+="$(($(cpu_ticks_ms "${DPID[$1]}") - $3)) "
}
# Before a timed workload: no background collection of a store running (it
# holds gc.lock while it works), the dirty pages of the last workload
# written out, and the caches dropped, so no mode pays for what an earlier
# one left behind. The drop matters most: ext4 without a journal skips
# inodes deleted in the last minutes while their inode table block is
# cached (recently_deleted), so creating 5,000 files right after another
# run deleted 5,000 costs 2-3x the CPU, by which run came just before.
can_drop=0
[ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ] && can_drop=1
quiesce() {
	local l
	for l in "$HERMES_HOME"/checkpoints/*/gc.lock; do
		[ -e "$l" ] || continue
		timeout 600 flock "$l" true || t_log "a collection of ${l%/gc.lock} runs on"
	done
	sync
	[ "$can_drop" = 1 ] && echo 3 >/proc/sys/vm/drop_caches
}
w_fio() { # MODE DIR
	local out c0
	quiesce
	c0=$(cpu_ticks_ms "${DPID[$1]}")
	out=$(fio --name=seqw --directory="$2" --filename=seq --size="${SEQ_MB}M" --bs=1M \
		--rw=write --ioengine=psync --end_fsync=1 --minimal) || return 1
	TP[$1,seqw]+="$(awk -v k="$(cut -d';' -f48 <<<"$out")" 'BEGIN { printf "%.1f", k / 1024 }') "
	add_cpu "$1" seqw "$c0"
	quiesce
	c0=$(cpu_ticks_ms "${DPID[$1]}")
	out=$(fio --name=seqr --directory="$2" --filename=seq --size="${SEQ_MB}M" --bs=1M \
		--rw=read --ioengine=psync --minimal) || return 1
	TP[$1,seqr]+="$(awk -v k="$(cut -d';' -f7 <<<"$out")" 'BEGIN { printf "%.1f", k / 1024 }') "
	add_cpu "$1" seqr "$c0"
	rm -f "$2/seq"
}
w_small() { # MODE DIR
	local out c0
	mkdir -p "$2/files"
	quiesce
	c0=$(cpu_ticks_ms "${DPID[$1]}")
	out=$("$FILES" "$2/files" "$SMALL") || return 1
	TP[$1,small]+="$(awk '{ s += $2 } END { printf "%.3f", s }' <<<"$out") "
	add_cpu "$1" small "$c0"
	rmdir "$2/files"
}
run_mode() { # MODE ROUND
	local mode=$1 dir=$B/tp-$1 flip=""
	if [ "$mode" = turns ]; then
		# one client on the control socket, not a hermesctl process per
		# turn: the bench is to time checkpoints, not process start-up
		PYTHONDONTWRITEBYTECODE=1 python3 - "$SRC/tests/integration" \
			"$HERMES_HOME/run/$(printf %s "$dir" | sha256sum | cut -c1-16).sock" <<-'PY' &
		import sys, time
		sys.path.insert(0, sys.argv[1])
		import ckpt_client
		conn = ckpt_client.Conn(sys.argv[2])
		while conn.call({"op": "turn", "reason": "flip"}).get("ok"):
		    time.sleep(0.2)
		PY
		flip=$!
		t_on_cleanup "kill $flip"
	fi
	t_log "throughput, checkpoints $mode, round $2"
	w_fio "$mode" "$dir" || t_check_fail "$mode: fio failed"
	w_small "$mode" "$dir" || t_check_fail "$mode: bench_files failed"
	if [ -n "$flip" ]; then
		kill "$flip"
		wait "$flip" 2>/dev/null
	fi
}
part2() {
	local round modes mode dir
	for mode in off on turns; do
		dir=$B/tp-$mode
		mkdir -p "$dir"
		echo seed >"$dir/seed.txt"
		if [ "$mode" = off ]; then config false; else config true; fi
		t_mount "$dir"
		DPID[$mode]=$T_DAEMON_PID
		if [ "$mode" != off ]; then
			t_wait_for 60 baseline_done "$dir" || t_fail "$mode: no baseline"
		fi
	done
	for ((round = 0; round < ROUNDS; round++)); do
		# each mode goes first, second and last in turn
		case $((round % 3)) in
		0) modes="off on turns" ;;
		1) modes="on turns off" ;;
		*) modes="turns off on" ;;
		esac
		for mode in $modes; do
			run_mode "$mode" "$round"
		done
	done
	cd / || exit 1
	for mode in off on turns; do
		t_umount "$B/tp-$mode"
	done
}

part 1 && part1
part 2 && part2

# ---- report ----------------------------------------------------------------
printf '\nhermesfs checkpoint bench (load average %s at the end)\n' \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
report1() {
	printf '\npart 1: first change of a turn on a tree of %s files\n' "$NFILES"
	printf 'first baseline: hermesfs %d ms (full scan, in the background); git add -A && commit %d ms\n\n' \
		"$base_ms" "$git_first_ms"
	printf 'medians of %d; wall ms unless said; ckpt = the daemon'"'"'s own commit time;\n' "$REPS"
	printf 'cpu = CPU ms the daemon spent for the first change / git spent for add+commit\n'
	printf '%-8s %9s %9s %9s %9s %10s %9s %10s %9s %8s\n' changed first later ckpt "first cpu" "git" "git cpu" first/git "cpu ratio" "goal"
	for k in 1 10 100 1000; do
		f=$(tr ' ' '\n' <<<"${FIRSTMS[$k]}" | grep . | median)
		l=$(tr ' ' '\n' <<<"${LATERMS[$k]}" | grep . | median)
		c=$(tr ' ' '\n' <<<"${CKMS[$k]}" | grep . | median)
		fc=$(tr ' ' '\n' <<<"${CPUMS[$k]}" | grep . | median)
		g=$(tr ' ' '\n' <<<"${GITMS[$k]}" | grep . | median)
		gc=$(tr ' ' '\n' <<<"${GITCPU[$k]}" | grep . | median)
		goal=""
		if [ "$k" -le 10 ]; then
			goal=$(awk -v f="$f" 'BEGIN { print (f <= 20 ? "ok" : "MISS") }')
		fi
		printf '%-8s %9s %9s %9s %9s %10s %9s %10s %9s %8s\n' "$k" "$f" "$l" "$c" "$fc" "$g" "$gc" \
			"$(ratio "$f" "$g")" "$(ratio "$fc" "$gc")" "$goal"
	done
	printf '(goal: first <= 20 ms for <= 10 changed files on %s files)\n' "$NFILES"
}

report2() {
	printf '\npart 2: throughput in %d rounds, each running the workloads with checkpoints\n' "$ROUNDS"
	printf 'on, on with a turn every 200 ms, and off, back to back. Figures: medians;\n'
	printf 'ratios: median of the per-round ratios; noise: slowest/fastest off run\n'
	printf '%-28s %10s %10s %10s %9s %9s %6s\n' metric on turns off on/off turns/off noise
	# per-round ratios of throughput (rate: a/b; time: b/a), their median
	paired() { # A_VALUES B_VALUES KIND
		paste -d' ' <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) |
			awk -v k="$3" '$1 > 0 && $2 > 0 { print (k == "rate" ? $1 / $2 : $2 / $1) }' |
			median | awk '{ if ($1 ~ /^[0-9.]+$/) printf "%.2f", $1; else print $1 }'
	}
	tp_row() { # LABEL KEY KIND (rate|time)
		local on tu of noise
		on=$(tr ' ' '\n' <<<"${TP[on,$2]-}" | grep . | median)
		tu=$(tr ' ' '\n' <<<"${TP[turns,$2]-}" | grep . | median)
		of=$(tr ' ' '\n' <<<"${TP[off,$2]-}" | grep . | median)
		noise=$(ratio "$(tr ' ' '\n' <<<"${TP[off,$2]-}" | grep . | best 1)" \
			"$(tr ' ' '\n' <<<"${TP[off,$2]-}" | grep . | best 0)")
		printf '%-28s %10s %10s %10s %9s %9s %6s\n' "$1" "$on" "$tu" "$of" \
			"$(paired "${TP[on,$2]-}" "${TP[off,$2]-}" "$3")" \
			"$(paired "${TP[turns,$2]-}" "${TP[off,$2]-}" "$3")" "$noise"
		on=$(tr ' ' '\n' <<<"${TP[on,$2_cpu]-}" | grep . | median)
		tu=$(tr ' ' '\n' <<<"${TP[turns,$2_cpu]-}" | grep . | median)
		of=$(tr ' ' '\n' <<<"${TP[off,$2_cpu]-}" | grep . | median)
		printf '%-28s %10s %10s %10s %9s %9s\n' "  daemon CPU ms" "$on" "$tu" "$of" \
			"$(paired "${TP[on,$2_cpu]-}" "${TP[off,$2_cpu]-}" time)" \
			"$(paired "${TP[turns,$2_cpu]-}" "${TP[off,$2_cpu]-}" time)"
	}
	tp_row "seq write ${SEQ_MB} MiB (MB/s)" seqw rate
	tp_row "seq read ${SEQ_MB} MiB (MB/s)" seqr rate
	tp_row "${SMALL} small files c+s+d (s)" small time
	printf '(ratios are throughput, or CPU efficiency for the daemon CPU rows: >= 0.90 meets the goal)\n'
	local m
	for m in on turns off; do
		printf 'runs %-5s seqw: %s| seqr: %s| small: %s\n' "$m" "${TP[$m,seqw]-}" \
			"${TP[$m,seqr]-}" "${TP[$m,small]-}"
	done
}
part 1 && report1
part 2 && report2
t_pass
