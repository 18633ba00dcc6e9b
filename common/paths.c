/* Hermes state locations ($HERMES_HOME), tree ids, and path predicates
 * shared by the daemon, hermesctl and the runner. */
#include "paths.h"

#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int paths_user_home(char *out, size_t size)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (!h || h[0] != '/') {
		pw = getpwuid(getuid());
		h = pw ? pw->pw_dir : NULL;
	}
	if (!h || h[0] != '/')
		return -ENOENT;
	if ((size_t)snprintf(out, size, "%s", h) >= size)
		return -ENAMETOOLONG;
	while (strlen(out) > 1 && out[strlen(out) - 1] == '/')
		out[strlen(out) - 1] = '\0';
	return 0;
}

int paths_hermes_home(char *out, size_t size)
{
	const char *h = getenv("HERMES_HOME");
	char home[PATH_MAX];
	int r;

	if (h && h[0]) {
		if (h[0] != '/') {
			char cwd[PATH_MAX];
			if (!getcwd(cwd, sizeof(cwd)))
				return -errno;
			r = snprintf(out, size, "%s/%s", cwd, h);
		} else {
			r = snprintf(out, size, "%s", h);
		}
	} else {
		int e = paths_user_home(home, sizeof(home));
		if (e < 0)
			return e;
		r = snprintf(out, size, "%s/.hermes", home);
	}
	if (r < 0 || (size_t)r >= size)
		return -ENAMETOOLONG;
	while (strlen(out) > 1 && out[strlen(out) - 1] == '/')
		out[strlen(out) - 1] = '\0';
	return 0;
}

void paths_tree_id(const char *abspath, char out[TREE_ID_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	static const char hex[] = "0123456789abcdef";

	EVP_Digest(abspath, strlen(abspath), md, &mdlen, EVP_sha256(), NULL);
	for (int i = 0; i < TREE_ID_LEN / 2; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[TREE_ID_LEN] = '\0';
}

int paths_mkdir_p(const char *path, unsigned mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int paths_is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int paths_resolve(const char *path, char *out, size_t size, struct herr *e)
{
	char buf[PATH_MAX];

	if (!realpath(path, buf))
		return err_sys(e, -errno, "%s", path);
	if (strlen(buf) >= size)
		return err_set(e, -ENAMETOOLONG, "%s: path too long", path);
	strcpy(out, buf);
	return 0;
}

int paths_state_dir(const char *sub, int mkdir, char *out, size_t size)
{
	char home[PATH_MAX];
	int r = paths_hermes_home(home, sizeof(home));

	if (r < 0)
		return r;
	r = snprintf(out, size, "%s%s%s", home, sub && *sub ? "/" : "",
		     sub ? sub : "");
	if (r < 0 || (size_t)r >= size)
		return -ENAMETOOLONG;
	return mkdir ? paths_mkdir_p(out, 0700) : 0;
}

/* Is dir (resolved) a home directory: $HOME, the caller's (or sudo's
 * caller's) home, or the home of a person's account (root, or a uid in the
 * range useradd gives people)? System accounts' homes (/var/www, ...) may be
 * projects and are not refused. */
static int paths_is_home(const char *dir)
{
	char home[PATH_MAX], real[PATH_MAX];
	const char *sudo = getenv("SUDO_USER");
	struct passwd *pw;
	int hit = 0;

	if (paths_user_home(home, sizeof(home)) == 0 &&
	    (strcmp(home, dir) == 0 || (realpath(home, real) && strcmp(real, dir) == 0)))
		return 1;
	if (sudo && *sudo && (pw = getpwnam(sudo)) && pw->pw_dir[0] == '/' &&
	    realpath(pw->pw_dir, real) && strcmp(real, dir) == 0)
		return 1;
	setpwent();
	while (!hit && (pw = getpwent())) {
		int person = pw->pw_uid == 0 || (pw->pw_uid >= 1000 && pw->pw_uid < 60000) ||
			     pw->pw_uid == getuid();
		if (person && pw->pw_dir && strcmp(pw->pw_dir, "/") != 0 && pw->pw_dir[0] == '/' &&
		    realpath(pw->pw_dir, real) && strcmp(real, dir) == 0)
			hit = 1;
	}
	endpwent();
	return hit;
}

/* path with its symlinks resolved as far as it exists; the components
 * that do not exist yet (a $HERMES_HOME not made so far) follow as
 * written. Returns 0, or -ENAMETOOLONG. */
static int paths_resolve_existing(const char *path, char *out, size_t size)
{
	char head[PATH_MAX], real[PATH_MAX];
	char *cut = NULL;

	if (snprintf(head, sizeof(head), "%s", path) >= (int)sizeof(head))
		return -ENAMETOOLONG;
	for (;;) {
		if (realpath(head, real)) {
			const char *rest = cut ? path + (cut - head) : "";
			int n = snprintf(out, size, "%s%s", real, rest);
			return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
		}
		char *slash = strrchr(head, '/');
		if (!slash || slash == head) { /* nothing of it exists: as given */
			int n = snprintf(out, size, "%s", path);
			return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
		}
		*slash = '\0';
		cut = slash;
	}
}

enum paths_refusal paths_refusal_of(const char *abspath)
{
	char hh[PATH_MAX];

	if (strcmp(abspath, "/") == 0)
		return PATHS_REFUSE_ROOT;
	if (paths_is_home(abspath))
		return PATHS_REFUSE_HOME;
	if (paths_hermes_home(hh, sizeof(hh)) == 0) {
		/* through symlinks, even into parts not made yet: a home inside
		 * the tree would have the daemon write into its own mount */
		char real[PATH_MAX];
		const char *h = paths_resolve_existing(hh, real, sizeof(real)) == 0 ? real : hh;
		if (paths_is_under(h, abspath))
			return PATHS_REFUSE_HERMES_HOME;
	}
	return PATHS_REFUSE_NONE;
}

const char *paths_refuse_tree(const char *abspath)
{
	switch (paths_refusal_of(abspath)) {
	case PATHS_REFUSE_ROOT:
		return "refusing to protect /: the whole filesystem is too broad";
	case PATHS_REFUSE_HOME:
		return "refusing to protect a home directory: pick a project below it";
	case PATHS_REFUSE_HERMES_HOME:
		return "refusing to protect a tree that holds $HERMES_HOME: the store would live inside the tree it protects";
	case PATHS_REFUSE_NONE:
		break;
	}
	return NULL;
}
