#!/bin/bash
# shellcheck disable=SC2016,SC2088,SC2015 # job text is single-quoted on purpose
# Secrets in hermesctl's environment never reach the job: not in its env,
# not in /proc/<pid>/environ of any ancestor the job can read.
. "$(dirname "$0")/run_lib.sh"

tok="tok-$RANDOM$RANDOM$RANDOM"
probe="$T/probe.sh"
cat >"$probe" <<'PROBE'
#!/bin/bash
# Prints every place the secret value is visible to this job.
val=$1
env | grep -F -- "$val" | sed 's/^/env: /'
pid=$$
while [ "$pid" -gt 1 ]; do
	if [ -r /proc/$pid/environ ] && tr '\0' '\n' </proc/$pid/environ | grep -qF -- "$val"; then
		echo "proc: $pid $(cat /proc/$pid/comm)"
	fi
	pid=$(awk '{print $4}' /proc/$pid/stat 2>/dev/null || echo 1)
done
echo "walked"
PROBE
chmod +x "$probe"

# The probe can see a secret in an ancestor's environ (else this test
# could not fail).
ctl=$(env "MY_API_KEY=$tok" bash -c "\"$probe\" $tok; true")
echo "$ctl" | grep -q '^proc: ' || fail "control: the probe cannot see its parent's environ: $ctl"
pass "control: a plain parent leaks through /proc/<ppid>/environ"

# probe_hidden WHAT VAR=VALUE...: run the probe with these variables set
# for hermesctl; the value must be visible nowhere to the job
probe_hidden() {
	local what=$1 out stdout
	shift
	out=$(env "$@" "$HCTL" run --json -- "$probe" "$tok")
	stdout=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["stdout"], end="")' <<<"$out")
	echo "$stdout" | grep -q '^walked$' || fail "probe did not finish: $out"
	if echo "$stdout" | grep -q -e '^env: ' -e '^proc: '; then
		fail "$what visible to the job: $stdout"
	fi
}

probe_hidden "a secret" "MY_API_KEY=$tok" "GITHUB_TOKEN=$tok" "DB_PASSWORD=$tok" \
	"SENTRY_DSN=$tok" "SLACK_WEBHOOK=$tok" "X_AUTH=$tok" "SAFE_SETTING=visible"
pass "no secret in the job's env or any ancestor's /proc/environ"

# variables the job does not get (not keep-listed, whatever their name)
# are not readable through the runner's /proc/<pid>/environ either
probe_hidden "a dropped variable" "DATABASE_URL=postgres://u:$tok@h/db" "GH_PAT=$tok"
pass "dropped variables are not in any ancestor's /proc/environ"

# Names off the keep-lists are dropped too; keep-listed ones arrive.
out=$(env "FOO_SETTING=1" "LC_ALL=C" "$HCTL" run -- 'echo "foo=${FOO_SETTING-unset} lc=$LC_ALL"')
[ "$out" = "foo=unset lc=C" ] || fail "keep-lists: $out"
pass "keep-lists: LC_ALL kept, FOO_SETTING dropped"

# Passthrough from config brings a named secret through on purpose.
cat >"$HERMES_HOME/config.yaml" <<YAML
terminal:
  env_passthrough: [GITHUB_TOKEN]
YAML
out=$(env "GITHUB_TOKEN=$tok" "MY_API_KEY=$tok" "$HCTL" run -- 'echo "gh=${GITHUB_TOKEN-} key=${MY_API_KEY-unset}"')
[ "$out" = "gh=$tok key=unset" ] || fail "passthrough: $out"
pass "terminal.env_passthrough keeps GITHUB_TOKEN only"
