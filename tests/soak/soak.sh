#!/bin/bash
# Soak runner: loop the crash and concurrency tests many times and count.
# One failure in a hundred runs is a bug like any other; a single CI run
# would almost never show it. Not part of the meson suites (it runs for as
# long as it is told to).
#
# usage: tests/soak/soak.sh [-n ITERATIONS] [-t SECONDS] [-o DIR] [TEST...]
#   -n  rounds over the tests (default 50); -t  stop starting rounds after
#   this many seconds (default: no limit); -o  where logs and the summary go
#   (default: a new /tmp/hermes-soak.XXXXXX).
#   TEST: script names under tests/integration (default: every test about
#   crashes and concurrency, listed below).
#   BUILD (default <source>/build) must hold a built tree.
# While DIR/pause exists no new run starts (e.g. while a bench is timed).
# Output: one line per run, then a summary (runs, passes, failures, skips per
# test); the log of every failed run is kept as DIR/fail-TEST-ROUND.log and
# the first one is named in the summary. Exit 0 only if nothing failed.
set -u

SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$SRC/build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
export SRC BUILD

iterations=50
budget=0
out=""
while getopts "n:t:o:" opt; do
	case $opt in
	n) iterations=$OPTARG ;;
	t) budget=$OPTARG ;;
	o) out=$OPTARG ;;
	*) sed -n '2,18p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
	tests=("$@")
else
	tests=(ckpt_concurrent.sh ckpt_kill9.sh fs_crash.sh stress_concurrent.sh
		stress_handles.sh stress_writeback.sh ckpt_restore_live.sh ckpt_store_full.sh)
fi
for t in "${tests[@]}"; do
	[ -x "$SRC/tests/integration/$t" ] || { echo "soak: no test $t" >&2; exit 2; }
done
if [ -z "$out" ]; then
	out=$(mktemp -d /tmp/hermes-soak.XXXXXX) || exit 1
else
	mkdir -p "$out" || exit 1
fi

declare -A RUNS PASS FAIL SKIP
first_fail=""
start=$SECONDS
summary() {
	{
		printf '\nsoak summary (%s): %d s\n' "$out" $((SECONDS - start))
		printf '%-26s %6s %6s %6s %6s\n' test runs pass fail skip
		local t tr=0 tf=0
		for t in "${tests[@]}"; do
			printf '%-26s %6d %6d %6d %6d\n' "$t" "${RUNS[$t]:-0}" "${PASS[$t]:-0}" \
				"${FAIL[$t]:-0}" "${SKIP[$t]:-0}"
			tr=$((tr + ${RUNS[$t]:-0}))
			tf=$((tf + ${FAIL[$t]:-0}))
		done
		printf 'total: %d runs, %d failed\n' "$tr" "$tf"
		[ -n "$first_fail" ] && printf 'first failure: %s\n' "$first_fail"
	} | tee "$out/summary.txt"
}
trap 'summary; exit 130' INT TERM

round=0
for ((round = 1; round <= iterations; round++)); do
	if [ "$budget" -gt 0 ] && [ $((SECONDS - start)) -ge "$budget" ]; then
		echo "soak: time budget of $budget s spent after $((round - 1)) rounds"
		break
	fi
	for t in "${tests[@]}"; do
		while [ -e "$out/pause" ]; do sleep 2; done
		log=$out/run.log
		t0=$SECONDS
		rc=0
		timeout -k 30 900 "$SRC/tests/integration/$t" >"$log" 2>&1 || rc=$?
		RUNS[$t]=$((${RUNS[$t]:-0} + 1))
		case $rc in
		0) PASS[$t]=$((${PASS[$t]:-0} + 1)); res=pass ;;
		77) SKIP[$t]=$((${SKIP[$t]:-0} + 1)); res=skip ;;
		*)
			FAIL[$t]=$((${FAIL[$t]:-0} + 1))
			res="FAIL ($rc)"
			cp "$log" "$out/fail-${t%.sh}-$round.log"
			[ -n "$first_fail" ] || first_fail=$out/fail-${t%.sh}-$round.log
			;;
		esac
		printf '%s round %d %-24s %s %d s\n' "$(date +%T)" "$round" "$t" "$res" \
			$((SECONDS - t0)) | tee -a "$out/runs.txt"
	done
done
rm -f "$out/run.log"
summary
[ -z "$first_fail" ]
