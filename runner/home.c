/* HOME modes for jobs: resolving auto/real/profile, creating the profile
 * home and scratch directory, and pointing HOME, TMPDIR, PATH (crontab
 * stand-in) and the user bus variables where the mode says. */
#include "home.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"

int home_mode_parse(const char *s, enum runner_home_mode *out)
{
	static const struct {
		const char *name;
		enum runner_home_mode mode;
	} names[] = {
		{ "auto", RUNNER_HOME_AUTO },		{ "real", RUNNER_HOME_REAL },
		{ "host", RUNNER_HOME_REAL },		{ "user", RUNNER_HOME_REAL },
		{ "real_home", RUNNER_HOME_REAL },	{ "real-home", RUNNER_HOME_REAL },
		{ "profile", RUNNER_HOME_PROFILE },	{ "isolated", RUNNER_HOME_PROFILE },
		{ "profile_home", RUNNER_HOME_PROFILE }, { "profile-home", RUNNER_HOME_PROFILE },
	};
	char buf[32];
	size_t n;

	if (!s)
		return -EINVAL;
	/* Values come from env vars and YAML: tolerate case and blanks. */
	s += strspn(s, " \t");
	n = strcspn(s, " \t\n");
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(buf, names[i].name) == 0) {
			*out = names[i].mode;
			return 0;
		}
	return -EINVAL;
}

const char *home_mode_name(enum runner_home_mode m)
{
	switch (m) {
	case RUNNER_HOME_REAL: return "real";
	case RUNNER_HOME_PROFILE: return "profile";
	default: return "auto";
	}
}

int home_in_container(void)
{
	const char *k = getenv("KUBERNETES_SERVICE_HOST");

	return access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0 ||
	       (k && k[0]);
}

int home_profile(char *out, size_t size)
{
	char hh[PATH_MAX];
	int r = paths_hermes_home(hh, sizeof(hh));

	if (r < 0)
		return r;
	r = snprintf(out, size, "%s/home", hh);
	return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : 0;
}

int home_real(char *out, size_t size)
{
	char profile[PATH_MAX] = "";
	struct passwd *pw = getpwuid(getuid());
	const char *cands[3] = { getenv("HERMES_REAL_HOME"), getenv("HOME"),
				 pw ? pw->pw_dir : NULL };

	home_profile(profile, sizeof(profile));
	for (size_t i = 0; i < 3; i++) {
		const char *c = cands[i];
		if (!c || c[0] != '/' || (profile[0] && paths_is_under(c, profile)))
			continue;
		if ((size_t)snprintf(out, size, "%s", c) >= size)
			return -ENAMETOOLONG;
		while (strlen(out) > 1 && out[strlen(out) - 1] == '/')
			out[strlen(out) - 1] = '\0';
		return 0;
	}
	snprintf(out, size, "/tmp");
	return 0;
}

/* $HERMES_HOME/shims/crontab -> the stand-in, and the dir onto PATH. */
static int home_shim(const char *hh, const char *shim, struct envv *env, struct herr *e)
{
	char dir[PATH_MAX], link[PATH_MAX + 16], cur[PATH_MAX];
	ssize_t n;
	int r;

	if (!shim || access(shim, X_OK) < 0)
		return err_set(e, -ENOENT,
			       "profile home: the crontab stand-in %s is missing (is hermes "
			       "installed completely?)", shim ? shim : "(none)");
	snprintf(dir, sizeof(dir), "%s/shims", hh);
	if ((r = paths_mkdir_p(dir, 0755)) < 0)
		return err_sys(e, r, "cannot create %s", dir);
	snprintf(link, sizeof(link), "%s/crontab", dir);
	n = readlink(link, cur, sizeof(cur) - 1);
	if (n < 0 || (size_t)n != strlen(shim) || memcmp(cur, shim, (size_t)n) != 0) {
		char tmp[PATH_MAX + 32];
		snprintf(tmp, sizeof(tmp), "%s.%d", link, (int)getpid());
		unlink(tmp);
		if (symlink(shim, tmp) < 0 || rename(tmp, link) < 0) {
			r = -errno;
			unlink(tmp);
			return err_sys(e, r, "cannot install the crontab stand-in in %s", dir);
		}
	}
	return envv_path_prepend(env, dir);
}

int home_apply(enum runner_home_mode mode, const char *crontab_shim, struct envv *env,
	       char *home_out, size_t size, struct herr *e)
{
	char real[PATH_MAX], hh[PATH_MAX], profile[PATH_MAX + 8], tmp[PATH_MAX + 8],
		tab[PATH_MAX + 32];
	int r;

	if ((r = home_real(real, sizeof(real))) < 0)
		return err_sys(e, r, "cannot find the real home");
	if (mode == RUNNER_HOME_AUTO)
		mode = home_in_container() ? RUNNER_HOME_PROFILE : RUNNER_HOME_REAL;
	if (mode == RUNNER_HOME_REAL) {
		if (envv_set(env, "HOME", real) < 0 || envv_set(env, "HERMES_REAL_HOME", real) < 0)
			return err_set(e, -ENOMEM, "out of memory");
		snprintf(home_out, size, "%s", real);
		return 0;
	}
	if ((r = paths_hermes_home(hh, sizeof(hh))) < 0)
		return err_sys(e, r, "cannot find HERMES_HOME");
	snprintf(profile, sizeof(profile), "%s/home", hh);
	snprintf(tmp, sizeof(tmp), "%s/tmp", hh);
	snprintf(tab, sizeof(tab), "%s/.crontab-hermes", profile);
	if ((r = paths_mkdir_p(profile, 0700)) < 0)
		return err_sys(e, r, "cannot create the profile home %s", profile);
	if ((r = paths_mkdir_p(tmp, 0700)) < 0)
		return err_sys(e, r, "cannot create the scratch directory %s", tmp);
	if ((r = home_shim(hh, crontab_shim, env, e)) < 0)
		return r;
	if (envv_set(env, "HOME", profile) < 0 || envv_set(env, "HERMES_REAL_HOME", real) < 0 ||
	    envv_set(env, "TMPDIR", tmp) < 0 || envv_set(env, "TMP", tmp) < 0 ||
	    envv_set(env, "TEMP", tmp) < 0 || envv_set(env, "HERMES_CRONTAB", tab) < 0)
		return err_set(e, -ENOMEM, "out of memory");
	/* No way to the real user manager: systemctl --user finds no bus. */
	envv_unset(env, "DBUS_SESSION_BUS_ADDRESS");
	envv_unset(env, "XDG_RUNTIME_DIR");
	/* the XDG homes point into the real home: unset, programs fall back
	 * to $HOME/.config, .local/share, .cache, .local/state (the profile) */
	envv_unset(env, "XDG_CONFIG_HOME");
	envv_unset(env, "XDG_DATA_HOME");
	envv_unset(env, "XDG_CACHE_HOME");
	envv_unset(env, "XDG_STATE_HOME");
	snprintf(home_out, size, "%s", profile);
	return 0;
}
