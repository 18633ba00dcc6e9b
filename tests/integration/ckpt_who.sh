#!/bin/bash
# Who changed the tree: changes made in one turn by python3, sh, cp (and by
# another user) are listed by status (who: pid, uid, comm) while the turn
# runs, and land in the Hermes-Processes trailer of the checkpoint that
# undoes them.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config
echo orig >"$TREE/src.txt"
mkdir "$TREE/shared"
chmod 0777 "$TREE/shared"
ckpt_mount

ckpt_turn "the work"
py_pid=$(python3 -c 'import os, sys
open(os.path.join(sys.argv[1], "py.txt"), "w").write("from python\n")
print(os.getpid())' "$TREE") || t_fail "python3 could not write"
# shellcheck disable=SC2016 # expanded by the inner sh
sh -c 'echo from sh >"$1/sh.txt"; echo $$ >"$2"' sh "$TREE" "$T/sh.pid" || t_fail "sh could not write"
sh_pid=$(cat "$T/sh.pid")
cp "$TREE/src.txt" "$TREE/copy.txt" || t_fail "cp failed"
# shellcheck disable=SC2016 # expanded by the inner sh
t_as_nobody sh -c 'echo by nobody >"$1/shared/n.txt"' sh "$TREE" || t_fail "nobody could not write"

who=$(ckpt_status 'sorted("%s:%d" % (w["comm"], w["uid"]) for w in c["who"])')
for want in "'python3:0'" "'sh:0'" "'cp:0'" "'sh:65534'"; do
	case $who in
	*"$want"*) ;;
	*) t_check_fail "status who is $who, lacks $want" ;;
	esac
done
[ "$(ckpt_status "[w['pid'] for w in c['who'] if w['comm'] == 'python3']")" = "[$py_pid]" ] ||
	t_check_fail "python3 is not listed with its pid $py_pid: $who"
[ "$(ckpt_status "[w['pid'] for w in c['who'] if w['comm'] == 'sh' and w['uid'] == 0]")" = "[$sh_pid]" ] ||
	t_check_fail "sh is not listed with its pid $sh_pid: $who"

# the next turn's checkpoint holds those changes and names who made them
ckpt_turn next
echo x >"$TREE/next.txt"
procs=$(git --git-dir="$STORE" log -1 --format='%(trailers:key=Hermes-Processes,valueonly)')
t_log "Hermes-Processes: $procs"
for want in "python3[$py_pid]" "sh[$sh_pid]" "cp[" "uid=65534"; do
	case $procs in
	*"$want"*) ;;
	*) t_check_fail "Hermes-Processes '$procs' lacks $want" ;;
	esac
done
case $procs in
*"[$$]"*) t_check_fail "Hermes-Processes names this shell, which changed nothing in that turn: $procs" ;;
esac
# the new turn starts with only the shell that wrote next.txt
me=$(cat /proc/$$/comm)
who=$(ckpt_status '[(w["comm"], w["pid"]) for w in c["who"]]')
[ "$who" = "[('$me', $$)]" ] || t_check_fail "who after the checkpoint is $who, want this shell ($me, $$)"
t_umount "$TREE"
t_pass
