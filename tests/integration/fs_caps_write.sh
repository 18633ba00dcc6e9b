#!/bin/bash
# File capabilities (security.capability) go away when the file is written,
# on the mount as on the disk below: whoever writes (root or nobody), however
# the file was made (a shell redirection, an exclusive create, cp), and
# whether it got its capabilities right after it was made or after a first
# write. The daemon remembers which files it made and answers their
# capability lookups from memory until one is set, so each way in matters.
set -u
. "$SRC/tests/integration/lib.sh"
t_need_fuse
t_need_root
t_need_cmd setcap getcap setpriv /usr/bin/python3
t_init
mkdir -p "$T/native" "$T/tree"
t_mount "$T/tree"
N=(setpriv --reuid 65534 --regid 65534 --clear-groups)

# make DIR HOW: a new file f by HOW
make() {
	local f=$1/f
	rm -f "$f"
	case $2 in
	redirect) echo one >"$f" ;;
	excl) /usr/bin/python3 -c "import os; os.close(os.open('$f', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))" ;;
	cp) cp "$(type -P true)" "$f" ;;
	esac
}

# caps FILE: what getcap says, without the name
caps() {
	getcap "$1" | sed 's/^[^ ]* *//'
}

results=()
for dir in native tree; do
	out=""
	for how in redirect excl cp; do
		for when in made written; do
			for who in root nobody; do
				make "$T/$dir" "$how"
				chmod 666 "$T/$dir/f"
				[ "$when" = written ] && echo two >>"$T/$dir/f"
				setcap cap_net_raw+ep "$T/$dir/f" || t_fail "setcap on $dir failed"
				before=$(caps "$T/$dir/f")
				[ -n "$before" ] || t_check_fail "$dir/$how/$when: setcap left no capability"
				if [ "$who" = root ]; then
					echo three >>"$T/$dir/f"
				else
					"${N[@]}" sh -c "echo three >>'$T/$dir/f'" || t_fail "nobody cannot write $dir/f"
				fi
				out+="$how/$when/$who: [$(caps "$T/$dir/f")] "
			done
		done
	done
	results+=("$out")
done
t_log "native: ${results[0]}"
t_log "mount:  ${results[1]}"
[ "${results[0]}" = "${results[1]}" ] || t_check_fail "capabilities after a write differ from the disk's"
# on ext4 a write drops them for everyone; say so if this disk keeps them
case ${results[0]} in *cap_net_raw*) t_log "note: the disk below keeps some capabilities after a write" ;; esac

# and a file made on the mount that never had any reads as having none
make "$T/tree" redirect
[ -z "$(caps "$T/tree/f")" ] || t_check_fail "a new file shows capabilities"
t_umount "$T/tree"
t_pass
