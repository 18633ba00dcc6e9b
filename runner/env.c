/* Environment policy for jobs: the secret-name scrub, the reference's
 * keep-lists, config passthrough, and the self re-exec that leaves no
 * secret in the runner's own initial environment block. */
#include "env.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static const char *const env_secret_words[] = {
	"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "PASSWD", "AUTH",
	"DSN", "WEBHOOK", "CREDS", "BEARER", "APIKEY",
};

static const char *const env_keep_prefixes[] = {
	"PATH", "HOME", "USER", "LANG", "LC_", "TERM", "TMPDIR", "TMP", "TEMP",
	"SHELL", "LOGNAME", "XDG_", "PYTHONPATH", "VIRTUAL_ENV", "CONDA",
};

static const char *const env_keep_exact[] = {
	"HERMES_HOME", "HERMES_PROFILE", "HERMES_CONFIG", "HERMES_ENV",
	"HERMES_DELEGATED_CHILD_CONTEXT",
};

#define N_(a) (sizeof(a) / sizeof((a)[0]))

int env_is_secret(const char *name)
{
	for (size_t i = 0; i < N_(env_secret_words); i++)
		if (strcasestr(name, env_secret_words[i]))
			return 1;
	return 0;
}

int env_is_kept(const char *name)
{
	for (size_t i = 0; i < N_(env_keep_prefixes); i++)
		if (strncmp(name, env_keep_prefixes[i], strlen(env_keep_prefixes[i])) == 0)
			return 1;
	for (size_t i = 0; i < N_(env_keep_exact); i++)
		if (strcmp(name, env_keep_exact[i]) == 0)
			return 1;
	return 0;
}

int env_is_passthrough(const struct env_policy *p, const char *name)
{
	if (!p)
		return 0;
	for (size_t i = 0; i < p->n_passthrough; i++)
		if (fnmatch(p->passthrough[i], name, 0) == 0)
			return 1;
	return 0;
}

int envv_init(struct envv *ev)
{
	ev->n = 0;
	ev->cap = 64;
	ev->v = calloc(ev->cap, sizeof(char *));
	return ev->v ? 0 : -ENOMEM;
}

void envv_free(struct envv *ev)
{
	if (!ev->v)
		return;
	for (size_t i = 0; i < ev->n; i++)
		free(ev->v[i]);
	free(ev->v);
	ev->v = NULL;
	ev->n = ev->cap = 0;
}

/* Index of NAME in ev, or -1. */
static long envv_find(const struct envv *ev, const char *name, size_t len)
{
	for (size_t i = 0; i < ev->n; i++)
		if (strncmp(ev->v[i], name, len) == 0 && ev->v[i][len] == '=')
			return (long)i;
	return -1;
}

const char *envv_get(const struct envv *ev, const char *name)
{
	size_t len = strlen(name);
	long i = envv_find(ev, name, len);

	return i < 0 ? NULL : ev->v[i] + len + 1;
}

/* Take ownership of entry ("NAME=VALUE"), replacing NAME if present. */
static int envv_put(struct envv *ev, char *entry)
{
	size_t len = strcspn(entry, "=");
	long i = envv_find(ev, entry, len);

	if (i >= 0) {
		free(ev->v[i]);
		ev->v[i] = entry;
		return 0;
	}
	if (ev->n + 1 >= ev->cap) {
		char **nv = realloc(ev->v, ev->cap * 2 * sizeof(char *));
		if (!nv) {
			free(entry);
			return -ENOMEM;
		}
		ev->v = nv;
		ev->cap *= 2;
	}
	ev->v[ev->n++] = entry;
	ev->v[ev->n] = NULL;
	return 0;
}

int envv_set(struct envv *ev, const char *name, const char *value)
{
	size_t ln = strlen(name), lv = strlen(value);
	char *s = malloc(ln + lv + 2);

	if (!s)
		return -ENOMEM;
	memcpy(s, name, ln);
	s[ln] = '=';
	memcpy(s + ln + 1, value, lv + 1);
	return envv_put(ev, s);
}

void envv_unset(struct envv *ev, const char *name)
{
	long i = envv_find(ev, name, strlen(name));

	if (i < 0)
		return;
	free(ev->v[i]);
	memmove(&ev->v[i], &ev->v[i + 1], (ev->n - (size_t)i) * sizeof(char *));
	ev->n--;
}

int envv_path_prepend(struct envv *ev, const char *dir)
{
	const char *old = envv_get(ev, "PATH");
	size_t ld = strlen(dir), lo = old ? strlen(old) : 0;
	char *s = malloc(5 + ld + 1 + lo + 1);

	if (!s)
		return -ENOMEM;
	memcpy(s, "PATH=", 5);
	memcpy(s + 5, dir, ld);
	if (old && *old) {
		s[5 + ld] = ':';
		memcpy(s + 5 + ld + 1, old, lo + 1);
	} else {
		s[5 + ld] = '\0';
	}
	return envv_put(ev, s);
}

/* Split "NAME=VALUE" into a NUL-ended name in buf; 0 if malformed. */
static int env_name(const char *entry, char *buf, size_t size)
{
	size_t len = strcspn(entry, "=");

	if (entry[len] != '=' || len == 0 || len >= size)
		return 0;
	memcpy(buf, entry, len);
	buf[len] = '\0';
	return 1;
}

int env_build_child(char *const *src, const struct env_policy *p, struct envv *out)
{
	char name[512];
	int r;

	if ((r = envv_init(out)) < 0)
		return r;
	for (size_t i = 0; src && src[i]; i++) {
		if (!env_name(src[i], name, sizeof(name)))
			continue;
		int pass = env_is_passthrough(p, name);
		if (!pass && (env_is_secret(name) || !env_is_kept(name)))
			continue;
		char *dup = strdup(src[i]);
		if (!dup || (r = envv_put(out, dup)) < 0) {
			envv_free(out);
			return dup ? r : -ENOMEM;
		}
	}
	return 0;
}

size_t env_count_secrets(char *const *src, const struct env_policy *p)
{
	char name[512];
	size_t n = 0;

	for (size_t i = 0; src && src[i]; i++) {
		/* A name too long to check is treated as a secret. */
		if (!env_name(src[i], name, sizeof(name)))
			n += strchr(src[i], '=') != NULL;
		else if (env_is_secret(name) && !env_is_passthrough(p, name))
			n++;
	}
	return n;
}

/* env_start and env_end of this process (fields 50 and 51 of stat). */
static int env_block(uintptr_t *start, uintptr_t *end)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n;
	unsigned long long a = 0, b = 0;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the name (field 2) may hold spaces: count from its ')' */
	char *p = strrchr(buf, ')');
	int field = 2;
	if (!p)
		return -ENOSYS;
	for (char *save = NULL, *t = strtok_r(p + 1, " ", &save); t;
	     t = strtok_r(NULL, " ", &save)) {
		field++;
		if (field == 50)
			a = strtoull(t, NULL, 10);
		else if (field == 51)
			b = strtoull(t, NULL, 10);
	}
	if (!a || b <= a)
		return -ENOSYS;
	*start = (uintptr_t)a;
	*end = (uintptr_t)b;
	return 0;
}

int env_scrub_in_place(const struct env_policy *p)
{
	char name[512];
	uintptr_t start = 0, end = 0;
	size_t n = 0, k = 0;
	char **copy;
	int r;

	if ((r = env_block(&start, &end)) < 0)
		return r;
	while (environ[n])
		n++;
	if (!(copy = calloc(n + 1, sizeof(char *))))
		return -ENOMEM;
	/* ours: everything but the secrets (the runner needs none) */
	for (size_t i = 0; i < n; i++) {
		int named = env_name(environ[i], name, sizeof(name));
		if (!named || (env_is_secret(name) && !env_is_passthrough(p, name)))
			continue;
		char *d = strdup(environ[i]);
		if (!d) {
			for (size_t j = 0; j < k; j++)
				free(copy[j]);
			free(copy);
			return -ENOMEM;
		}
		copy[k++] = d;
	}
	/* the block: only what the job gets stays readable */
	for (size_t i = 0; i < n; i++) {
		uintptr_t at = (uintptr_t)environ[i];
		if (at < start || at >= end)
			continue; /* set later (setenv): not in the block */
		int named = env_name(environ[i], name, sizeof(name));
		if (named && (env_is_passthrough(p, name) ||
			      (!env_is_secret(name) && env_is_kept(name))))
			continue;
		size_t len = strlen(environ[i]);
		if (at + len > end)
			len = end - at;
		memset(environ[i], 0, len);
	}
	environ = copy;
	return 0;
}

int env_reexec_scrubbed(char *const *argv, const struct env_policy *p)
{
	char name[512];
	size_t n = 0, k = 0;
	char **clean;

	if (env_count_secrets(environ, p) == 0)
		return 0;
	while (environ[n])
		n++;
	clean = calloc(n + 1, sizeof(char *));
	if (!clean)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!env_name(environ[i], name, sizeof(name)))
			continue;
		if (env_is_secret(name) && !env_is_passthrough(p, name))
			continue;
		clean[k++] = environ[i];
	}
	clean[k] = NULL;
	/* The real path, not /proc/self/exe, so the process keeps its name. */
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0 || (size_t)len >= sizeof(exe) - 1)
		snprintf(exe, sizeof(exe), "/proc/self/exe");
	else
		exe[len] = '\0';
	execve(exe, argv, clean);
	int r = -errno;
	free(clean);
	return r;
}
