/* HOME modes: every alias, the profile environment (HOME, real home,
 * scratch TMPDIR, crontab stand-in first on PATH, no user bus), real mode. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "home.h"
#include "tap.h"

int main(void)
{
	static const struct {
		const char *s;
		enum runner_home_mode m;
	} names[] = {
		{ "auto", RUNNER_HOME_AUTO },		{ "real", RUNNER_HOME_REAL },
		{ "host", RUNNER_HOME_REAL },		{ "user", RUNNER_HOME_REAL },
		{ "real_home", RUNNER_HOME_REAL },	{ "real-home", RUNNER_HOME_REAL },
		{ "profile", RUNNER_HOME_PROFILE },	{ "isolated", RUNNER_HOME_PROFILE },
		{ "profile_home", RUNNER_HOME_PROFILE }, { "profile-home", RUNNER_HOME_PROFILE },
		{ " Profile ", RUNNER_HOME_PROFILE },
	};
	char hh[] = "/tmp/hermes-test-home.XXXXXX";
	char path[PATH_MAX], want[PATH_MAX + 32], home[PATH_MAX], shim[PATH_MAX + 16];
	struct herr e = HERR_INIT;
	enum runner_home_mode m;
	struct envv ev;
	struct stat st;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ok(home_mode_parse(names[i].s, &m) == 0 && m == names[i].m, "'%s' is %s",
		   names[i].s, home_mode_name(names[i].m));
	ok(home_mode_parse("sandbox", &m) < 0 && home_mode_parse("", &m) < 0,
	   "unknown modes are refused");

	if (!mkdtemp(hh))
		return 1;
	setenv("HERMES_HOME", hh, 1);
	setenv("HOME", "/home/tester", 1);
	unsetenv("HERMES_REAL_HOME");
	snprintf(shim, sizeof(shim), "%s/fake-crontab", hh);
	fclose(fopen(shim, "w"));
	chmod(shim, 0755);

	envv_init(&ev);
	envv_set(&ev, "PATH", "/usr/bin:/bin");
	envv_set(&ev, "HOME", "/home/tester");
	envv_set(&ev, "DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus");
	envv_set(&ev, "XDG_RUNTIME_DIR", "/run/user/0");
	ok(home_apply(RUNNER_HOME_PROFILE, shim, &ev, home, sizeof(home), &e) == 0,
	   "profile mode applies (%s)", e.msg);
	snprintf(want, sizeof(want), "%s/home", hh);
	is_str(envv_get(&ev, "HOME"), want, "HOME is $HERMES_HOME/home");
	is_str(home, want, "the job's home is reported");
	ok(stat(want, &st) == 0 && S_ISDIR(st.st_mode), "the profile home exists");
	is_str(envv_get(&ev, "HERMES_REAL_HOME"), "/home/tester", "HERMES_REAL_HOME is real");
	snprintf(want, sizeof(want), "%s/tmp", hh);
	is_str(envv_get(&ev, "TMPDIR"), want, "TMPDIR is the scratch dir");
	is_str(envv_get(&ev, "TMP"), want, "TMP too");
	is_str(envv_get(&ev, "TEMP"), want, "TEMP too");
	ok(envv_get(&ev, "DBUS_SESSION_BUS_ADDRESS") == NULL, "no user bus address");
	ok(envv_get(&ev, "XDG_RUNTIME_DIR") == NULL, "no XDG_RUNTIME_DIR");
	snprintf(want, sizeof(want), "%s/shims:/usr/bin:/bin", hh);
	is_str(envv_get(&ev, "PATH"), want, "the shim dir is first on PATH");
	snprintf(path, sizeof(path), "%s/shims/crontab", hh);
	char link[PATH_MAX] = "";
	ok(readlink(path, link, sizeof(link) - 1) > 0 && strcmp(link, shim) == 0,
	   "shims/crontab points at the stand-in");
	envv_free(&ev);

	/* A nested job: HOME is already the profile home; real stays real. */
	snprintf(want, sizeof(want), "%s/home", hh);
	setenv("HOME", want, 1);
	ok(home_real(path, sizeof(path)) == 0, "real home found");
	ok(strcmp(path, want) != 0, "the profile home is never taken as the real one (%s)",
	   path);
	setenv("HERMES_REAL_HOME", "/home/tester", 1);
	envv_init(&ev);
	envv_set(&ev, "HOME", want);
	ok(home_apply(RUNNER_HOME_REAL, shim, &ev, home, sizeof(home), &e) == 0, "real mode");
	is_str(envv_get(&ev, "HOME"), "/home/tester", "real mode restores the real HOME");
	ok(envv_get(&ev, "TMPDIR") == NULL, "real mode leaves TMPDIR alone");
	envv_free(&ev);

	envv_init(&ev);
	ok(home_apply(RUNNER_HOME_PROFILE, "/nonexistent/crontab", &ev, home, sizeof(home),
		      &e) < 0 && strstr(e.msg, "crontab stand-in"),
	   "profile mode without the stand-in is an error, not a leak");
	envv_free(&ev);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", hh);
	if (system(cmd) != 0)
		return 1;
	return done_testing();
}
