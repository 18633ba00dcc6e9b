/* Write guard: which absolute paths a job or a file tool must not write
 * without approval — system directories, the active config, and the
 * credential and start-up files of every home that could be meant. */
#include "guard.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"

static const char *const guard_system_dirs[] = {
	"/etc", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/usr/bin",
	"/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec",
	"/usr/include", "/usr/share", "/sys", "/proc", "/var/spool/cron",
	"/var/lib/dpkg", "/var/lib/apt", "/private/etc", "/private/var/db",
	"/private/var/root",
};

/* Writable device nodes that are not storage. */
static const char *const guard_dev_ok[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr",
	"/dev/tty", "/dev/random", "/dev/urandom",
};

/* Below each home: credentials, shell start-up, schedulers, hermes state. */
static const char *const guard_home_files[] = {
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".config/gcloud",
	".config/gh", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
	".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".kshrc",
	".cshrc", ".tcshrc", ".config/fish", ".netrc", ".npmrc", ".pypirc",
	".git-credentials", ".gitconfig", ".config/git", ".config/systemd",
	".config/autostart", ".local/share/systemd", ".hermes/.env",
	".hermes/config.yaml", ".bash_aliases", ".pgpass", ".my.cnf", ".inputrc",
};

#define N_(a) (sizeof(a) / sizeof((a)[0]))

void guard_add_home(struct guard *g, const char *home)
{
	char norm[PATH_MAX];

	if (!home || home[0] != '/' || g->n_homes >= GUARD_MAX_HOMES)
		return;
	if (guard_normalize(home, "/", NULL, norm, sizeof(norm)) < 0 || strcmp(norm, "/") == 0)
		return;
	for (size_t i = 0; i < g->n_homes; i++)
		if (strcmp(g->homes[i], norm) == 0)
			return;
	snprintf(g->homes[g->n_homes++], PATH_MAX, "%s", norm);
}

void guard_init(struct guard *g, const char *subprocess_home, const char *real_home,
		const char *config_path)
{
	char hh[PATH_MAX] = "", profile[PATH_MAX + 8];

	memset(g, 0, sizeof(*g));
	guard_add_home(g, getenv("HOME"));
	guard_add_home(g, real_home);
	guard_add_home(g, subprocess_home);
	if (paths_hermes_home(hh, sizeof(hh)) == 0) {
		snprintf(g->hermes_home, sizeof(g->hermes_home), "%s", hh);
		snprintf(profile, sizeof(profile), "%s/home", hh);
		guard_add_home(g, profile);
	}
	if (config_path && config_path[0])
		guard_normalize(config_path, "/", NULL, g->config_path, sizeof(g->config_path));
	else if (hh[0])
		snprintf(g->config_path, sizeof(g->config_path), "%s/config.yaml", hh);
}

/* Length of the "~", "$HOME" or "${HOME}" prefix of path, or 0. */
static size_t guard_home_prefix(const char *path)
{
	/* HERMES_REAL_HOME is set for the job in profile mode: a home too */
	static const char *const pfx[] = { "${HOME}", "$HOME", "~", "${HERMES_REAL_HOME}",
					   "$HERMES_REAL_HOME" };

	for (size_t i = 0; i < N_(pfx); i++) {
		size_t l = strlen(pfx[i]);
		if (strncmp(path, pfx[i], l) == 0 && (path[l] == '\0' || path[l] == '/'))
			return l;
	}
	/* ${HOME:?}, ${HOME%/}, ${HOME:-x}: still the home (rm -rf "${HOME:?}"/) */
	static const char *const braced[] = { "${HOME", "${HERMES_REAL_HOME" };
	for (size_t i = 0; i < N_(braced); i++) {
		size_t l = strlen(braced[i]);
		const char *end;
		if (strncmp(path, braced[i], l) == 0 && path[l] && strchr(":%#?-=+", path[l]) &&
		    (end = strchr(path + l, '}')) && (end[1] == '\0' || end[1] == '/'))
			return (size_t)(end + 1 - path);
	}
	return 0;
}

int guard_normalize(const char *path, const char *cwd, const char *home, char *out,
		    size_t size)
{
	char tmp[PATH_MAX * 2];
	size_t hp = guard_home_prefix(path);
	size_t o = 0;

	if (hp && home) {
		snprintf(tmp, sizeof(tmp), "%s/%s", home, path + hp);
	} else if (path[0] == '~' && path[1] && path[1] != '/') {
		/* ~user: that user's home (else the word as written) */
		char name[256], buf[4096];
		size_t l = strcspn(path + 1, "/");
		struct passwd pw, *res = NULL;
		snprintf(name, sizeof(name), "%.*s", (int)(l < 255 ? l : 255), path + 1);
		if (getpwnam_r(name, &pw, buf, sizeof(buf), &res) == 0 && res)
			snprintf(tmp, sizeof(tmp), "%s/%s", res->pw_dir, path + 1 + l);
		else
			snprintf(tmp, sizeof(tmp), "%s/%s", cwd ? cwd : "/", path);
	} else if (path[0] == '/')
		snprintf(tmp, sizeof(tmp), "%s", path);
	else
		snprintf(tmp, sizeof(tmp), "%s/%s", cwd ? cwd : "/", path);
	if (size < 2)
		return -ENAMETOOLONG;
	/* Walk components, keeping a stack in out. */
	out[0] = '\0';
	for (char *save = NULL, *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			char *slash = strrchr(out, '/');
			o = slash ? (size_t)(slash - out) : 0;
			out[o] = '\0';
			continue;
		}
		size_t l = strlen(c);
		if (o + 1 + l + 1 > size)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, c, l + 1);
		o += l;
	}
	if (o == 0) {
		out[0] = '/';
		out[1] = '\0';
	}
	return 0;
}

int guard_is_home_word(const char *word)
{
	return guard_home_prefix(word) > 0;
}

int guard_is_home(const struct guard *g, const char *path)
{
	for (size_t i = 0; i < g->n_homes; i++)
		if (strcmp(g->homes[i], path) == 0)
			return 1;
	return 0;
}

/* Check one normalised path; fills why and returns -EACCES if protected. */
static int guard_check_norm(const struct guard *g, const char *p, char *why, size_t size)
{
	if (strcmp(p, "/") == 0)
		return snprintf(why, size, "%s is the root directory", p), -EACCES;
	for (size_t i = 0; i < N_(guard_system_dirs); i++)
		if (paths_is_under(p, guard_system_dirs[i]))
			return snprintf(why, size, "%s is a system path (%s)", p,
					guard_system_dirs[i]), -EACCES;
	if (paths_is_under(p, "/dev") && strncmp(p, "/dev/fd/", 8) != 0 &&
	    strncmp(p, "/dev/shm/", 9) != 0) {
		int ok = 0;
		for (size_t i = 0; i < N_(guard_dev_ok); i++)
			ok |= strcmp(p, guard_dev_ok[i]) == 0;
		if (!ok)
			return snprintf(why, size, "%s is a device", p), -EACCES;
	}
	const char *base = strrchr(p, '/');
	if (base && strcmp(base + 1, "docker.sock") == 0)
		return snprintf(why, size, "%s is the docker socket", p), -EACCES;
	if (g->config_path[0] && strcmp(p, g->config_path) == 0)
		return snprintf(why, size, "%s is the active hermes config", p), -EACCES;
	if (g->hermes_home[0]) {
		char env[PATH_MAX + 8];
		snprintf(env, sizeof(env), "%s/.env", g->hermes_home);
		if (strcmp(p, env) == 0)
			return snprintf(why, size, "%s holds hermes secrets", p), -EACCES;
	}
	/* every home: ours, and anybody's (/root, /home/NAME: ~alice/.bashrc) */
	char other[PATH_MAX] = "";
	if (strncmp(p, "/root/", 6) == 0)
		snprintf(other, sizeof(other), "/root");
	else if (strncmp(p, "/home/", 6) == 0 && strchr(p + 6, '/'))
		snprintf(other, sizeof(other), "%.*s", (int)(strchr(p + 6, '/') - p), p);
	for (size_t h = 0; h <= g->n_homes; h++) {
		const char *home = h < g->n_homes ? g->homes[h] : other;
		if (!home[0])
			continue;
		for (size_t i = 0; i < N_(guard_home_files); i++) {
			char f[PATH_MAX * 2];
			snprintf(f, sizeof(f), "%s/%s", home, guard_home_files[i]);
			if (paths_is_under(p, f))
				return snprintf(why, size, "%s is a protected file of the home %s",
						p, home), -EACCES;
		}
	}
	return 0;
}

int guard_check_write(const struct guard *g, const char *path, const char *cwd, char *why,
		      size_t size)
{
	char norm[PATH_MAX];
	int r;

	if (!path || !path[0])
		return 0;
	if (guard_home_prefix(path)) {
		/* "~" means whichever home the writer has: check them all. */
		for (size_t h = 0; h < g->n_homes; h++) {
			if (guard_normalize(path, cwd, g->homes[h], norm, sizeof(norm)) < 0)
				return snprintf(why, size, "%s: path too long", path), -EACCES;
			if ((r = guard_check_norm(g, norm, why, size)) < 0)
				return r;
		}
		return 0;
	}
	if (guard_normalize(path, cwd, NULL, norm, sizeof(norm)) < 0)
		return snprintf(why, size, "%s: path too long", path), -EACCES;
	if ((r = guard_check_norm(g, norm, why, size)) < 0)
		return r;
	/* A symlink on the way may lead somewhere protected. */
	char real[PATH_MAX], parent[PATH_MAX], full[PATH_MAX * 2];
	if (realpath(norm, real)) {
		if (strcmp(real, norm) != 0)
			return guard_check_norm(g, real, why, size);
		return 0;
	}
	/* Not there yet: resolve the directory it would be created in. */
	snprintf(parent, sizeof(parent), "%s", norm);
	char *slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return 0;
	*slash = '\0';
	if (!realpath(parent, real) || strcmp(real, parent) == 0)
		return 0;
	snprintf(full, sizeof(full), "%s/%s", real, slash + 1);
	return guard_check_norm(g, full, why, size);
}
