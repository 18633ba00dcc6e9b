#!/bin/bash
# shellcheck disable=SC2016,SC2088,SC2015 # job text is single-quoted on purpose
# Profile HOME mode: ~/x, crontab and mktemp land in the profile; the real
# HOME (a fake one made here), the real crontab and the user bus are
# untouched, compared before and after.
. "$(dirname "$0")/run_lib.sh"

real="$T/realhome"
mkdir -p "$real/.ssh" "$real/projects"
echo "keep" >"$real/.bashrc"
echo "key" >"$real/.ssh/id_rsa"
export HOME="$real"
listing() { (cd "$real" && find . -printf '%p %s %T@ %m\n' | sort); }
before=$(listing)

have_cron=0
if command -v crontab >/dev/null && [ "$(readlink -f "$(command -v crontab)")" != "$(readlink -f "$BUILD/tools/hermes-crontab")" ]; then
	have_cron=1
	cron_before=$(crontab -l 2>&1 || true)
	spool_before=$(ls -la --time-style=full-iso /var/spool/cron/crontabs 2>&1 || true)
fi

job='echo "home=$HOME real=$HERMES_REAL_HOME tmp=$TMPDIR/$TMP/$TEMP"
echo "bus=${DBUS_SESSION_BUS_ADDRESS-none} xdg=${XDG_RUNTIME_DIR-none}"
echo "xdg-homes=${XDG_CONFIG_HOME-none}/${XDG_DATA_HOME-none}/${XDG_CACHE_HOME-none}/${XDG_STATE_HOME-none}"
git config --global user.name profile-agent 2>/dev/null || true
crontab </dev/null; echo "bare crontab rc=$?"
echo agent-file > ~/x
echo "0 2 * * * $HOME/backup.sh" | crontab -
echo "crontab-l: $(crontab -l)"
echo "mktemp: $(mktemp)"
echo "crontab: $(command -v crontab)"'
mkdir -p "$T/realxdg/git"
: >"$T/realxdg/git/config"
out=$(DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus XDG_RUNTIME_DIR=/run/user/0 \
	XDG_CONFIG_HOME=$T/realxdg XDG_DATA_HOME=$T/realxdg XDG_CACHE_HOME=$T/realxdg \
	"$HCTL" run --home-mode profile -- "$job")
printf '# %s\n' "${out//$'\n'/$'\n'# }"
P="$HERMES_HOME/home"
echo "$out" | grep -qx "home=$P real=$real tmp=$HERMES_HOME/tmp/$HERMES_HOME/tmp/$HERMES_HOME/tmp" ||
	fail "HOME/HERMES_REAL_HOME/TMPDIR"
echo "$out" | grep -qx "bus=none xdg=none" || fail "user bus variables reached the job"
echo "$out" | grep -qx "xdg-homes=none/none/none/none" || fail "XDG homes of the real home reached the job"
[ ! -s "$T/realxdg/git/config" ] || fail "git config --global wrote into the real XDG_CONFIG_HOME"
echo "$out" | grep -qx "bare crontab rc=1" || fail "a bare crontab was not refused"
[ "$(cat "$P/x")" = agent-file ] || fail "~/x is not in the profile home"
[ ! -e "$real/x" ] || fail "~/x landed in the real home"
echo "$out" | grep -qx "crontab-l: 0 2 \* \* \* $P/backup.sh" || fail "crontab -l does not show the job's entry"
grep -q "backup.sh" "$P/.crontab-hermes" || fail "the profile crontab file lacks the entry"
echo "$out" | grep -q "^mktemp: $HERMES_HOME/tmp/tmp\." || fail "mktemp did not use the scratch dir"
echo "$out" | grep -qx "crontab: $HERMES_HOME/shims/crontab" || fail "the stand-in is not first on PATH"
pass "profile mode: ~/x, crontab -, mktemp went to the profile; no user bus"

# The rest of the crontab surface: -e with EDITOR, a file argument, -r.
cat >"$T/editor.sh" <<'ED'
#!/bin/sh
echo "30 3 * * * /nightly.sh" >> "$1"
ED
chmod +x "$T/editor.sh"
printf '15 1 * * * /from-file.sh\n' >"$T/tab"
# EDITOR is not on the keep-lists: it reaches jobs through passthrough.
printf 'terminal:\n  env_passthrough: [EDITOR]\n' >"$HERMES_HOME/config.yaml"
out=$(EDITOR="$T/editor.sh" "$HCTL" run --home-mode profile -- \
	"crontab -e 2>/dev/null; crontab -l | wc -l; crontab $T/tab; crontab -l; crontab -r; crontab -l 2>/dev/null; echo rc=\$?")
rm "$HERMES_HOME/config.yaml"
expected="2
15 1 * * * /from-file.sh
rc=1"
[ "$out" = "$expected" ] || fail "crontab -e/FILE/-r: got [$out]"
out=$("$HCTL" run --home-mode profile -- 'echo "not a cron line" | crontab -; echo rc=$?' 2>&1)
echo "$out" | grep -q "rc=1" || fail "a bad table was accepted: $out"
pass "crontab stand-in: -e, FILE, -r, -l and syntax check"

# Aliases through the environment and the config.
out=$(TERMINAL_HOME_MODE=isolated "$HCTL" run -- 'echo $HOME')
[ "$out" = "$P" ] || fail "TERMINAL_HOME_MODE=isolated: $out"
printf 'terminal:\n  home_mode: profile-home\n' >"$HERMES_HOME/config.yaml"
out=$("$HCTL" run -- 'echo $HOME')
[ "$out" = "$P" ] || fail "terminal.home_mode: profile-home: $out"
out=$(TERMINAL_HOME_MODE=real_home "$HCTL" run -- 'echo $HOME')
[ "$out" = "$real" ] || fail "env overrides config: $out"
out=$("$HCTL" run --home-mode host -- 'echo $HOME; command -v crontab || echo none')
[ "$(echo "$out" | head -1)" = "$real" ] || fail "--home-mode host: $out"
echo "$out" | grep -q "$HERMES_HOME/shims" && fail "real mode got the crontab stand-in: $out"
rc=0
"$HCTL" run --home-mode sandboxed -- true 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "unknown home mode" "$T/err" || fail "bad mode accepted"
rm "$HERMES_HOME/config.yaml"
pass "aliases: isolated, profile-home, real_home, host; unknown refused"

after=$(listing)
[ "$before" = "$after" ] || fail "the real home changed:
$(diff <(echo "$before") <(echo "$after"))"
pass "the real HOME is byte-for-byte as before"
if [ "$have_cron" = 1 ]; then
	cron_after=$(crontab -l 2>&1 || true)
	[ "$cron_before" = "$cron_after" ] || fail "the real crontab changed"
	spool_after=$(ls -la --time-style=full-iso /var/spool/cron/crontabs 2>&1 || true)
	[ "$spool_before" = "$spool_after" ] || fail "the real cron spool changed"
	pass "the real crontab (crontab -l) is unchanged"
else
	echo "# no real crontab binary: real crontab check skipped"
fi
