#!/bin/bash
# Readers beside writers on the same file, as people run them: a shell's
# read fd, `tail -f`, a `cat` loop and an mmap reader held open while
# appends, `>` overwrites, O_TRUNC opens, `sed -i`, python's open('a') and a
# set-id file's writer go on. Every write succeeds and every byte lands, as
# on a plain directory, with passthrough of writes on (the default), off
# (-o nopassthrough_writes), and with checkpoints off. (Issue 20, item 1: a
# read-only open's backing file made later writers fail with EIO after their
# O_TRUNC had emptied the file.)
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
mkdir -p "$T/plain"

tail_caught_up() { [ "$(grep -c '^line ' "$T/tail.out")" = 2000 ]; }

scenario() { # DIR: prints a transcript of what a user sees
	local d=$1 i ok tp cp
	cd "$d" || return 1
	printf 'important data\n' >f
	exec 3<f
	echo more >>f && echo "append ok"
	echo new >f && echo "overwrite ok"
	python3 -c "open('f','a').write('py\n')" && echo "python append ok"
	sed -i 's/new/NEW/' f && echo "sed -i ok"
	python3 -c "import os; fd=os.open('f', os.O_WRONLY|os.O_TRUNC); os.write(fd, b'trunc\n'); os.close(fd)" &&
		echo "O_TRUNC ok"
	printf 'XY' | dd of=f conv=notrunc status=none && echo "dd notrunc ok"
	exec 3<&-
	echo "size $(stat -c %s f)"
	cat f
	# a set-id file: its writers stay with the daemon, beside a reader
	printf '#!/bin/sh\n' >s
	chmod 4755 s
	exec 3<s
	echo 'echo hi' >>s && echo "set-id append ok"
	exec 3<&-
	cat s
	# tail -f and a cat loop while 2,000 appends run
	: >log
	tail -n +1 -f log >"$T/tail.out" &
	tp=$!
	(while :; do cat log >/dev/null; done) &
	cp=$!
	ok=0
	for i in $(seq 2000); do echo "line $i" >>log && ok=$((ok + 1)); done
	echo "appends ok: $ok"
	# tail polls each second on FUSE (no inotify for a remote type)
	t_wait_for 5 tail_caught_up
	kill "$tp" "$cp"
	wait "$tp" "$cp" 2>/dev/null
	echo "log: $(wc -l <log) lines, $(sort -u log | wc -l) distinct"
	echo "tail saw: $(grep -c '^line ' "$T/tail.out") lines"
	# an mmap reader while the file is overwritten and appended to
	python3 - <<'PY'
import mmap, os
with open("m", "w") as f:
    f.write("a" * 8192)
ro = os.open("m", os.O_RDONLY)
mp = mmap.mmap(ro, 0, prot=mmap.PROT_READ)
with open("m", "r+") as f:
    f.write("b" * 4096)
with open("m", "a") as f:
    f.write("c" * 10)
print("map sees", mp[0:1].decode(), mp[4096:4097].decode())
print("read sees", os.pread(ro, 20000, 0).count(b"b"), os.pread(ro, 20000, 0).count(b"c"))
mp.close(); os.close(ro)
PY
	cd /
}

scenario "$T/plain" >"$T/plain.out" 2>&1
for mode in default nopassthrough_writes nocheckpoints; do
	rm -rf "${TREE:?}"/*
	opts=()
	case $mode in
	nopassthrough_writes) opts=(-- -o nopassthrough_writes) ;;
	nocheckpoints) ckpt_config "enabled: false" ;;
	*) ckpt_config ;;
	esac
	if [ "$mode" = nocheckpoints ]; then
		t_mount "$TREE"
	else
		ckpt_mount "${opts[@]}"
	fi
	scenario "$TREE" >"$T/$mode.out" 2>&1
	t_diff "$mode" "$T/plain.out" "$T/$mode.out"
	t_umount "$TREE"
done
grep -q 'appends ok: 2000' "$T/plain.out" || t_fail "the plain run itself is wrong: $(cat "$T/plain.out")"
t_pass
