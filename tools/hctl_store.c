/* Shared pieces of the store commands: tree discovery from -C DIR, opening
 * the store with the user's config, checking command-line paths. */
#include "hctl_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hermesctl.h"
#include "paths.h"

int hctl_find_tree(const char *dir, char tree[PATH_MAX], char dir_out[PATH_MAX],
		   int *has_store)
{
	char buf[PATH_MAX];
	struct herr e = HERR_INIT;

	if (paths_resolve(dir ? dir : ".", dir_out, PATH_MAX, &e) < 0) {
		hctl_error("%s", e.msg);
		return HCTL_NOTFOUND;
	}
	snprintf(buf, sizeof(buf), "%s", dir_out);
	for (;;) {
		char *slash;
		if (store_exists_for_tree(buf)) {
			snprintf(tree, PATH_MAX, "%s", buf);
			*has_store = 1;
			return HCTL_OK;
		}
		slash = strrchr(buf, '/');
		if (!slash || slash == buf)
			break;
		*slash = '\0';
	}
	snprintf(tree, PATH_MAX, "%s", dir_out);
	*has_store = 0;
	return HCTL_OK;
}

int hctl_exit_for(int err)
{
	switch (err) {
	case -EINVAL:
	case -EEXIST:
		return HCTL_USAGE;
	case -ENOENT:
	case -ERANGE:
		return HCTL_NOTFOUND;
	case -EPERM:
	case -EFBIG:
		return HCTL_BLOCKED;
	default:
		return HCTL_FAIL;
	}
}

int hctl_open_store(const char *tree, struct config **cfg, struct store **st)
{
	struct herr e = HERR_INIT;
	int r;

	r = config_load(NULL, cfg, &e);
	if (r < 0) {
		hctl_error("%s", e.msg);
		return HCTL_FAIL;
	}
	r = store_open(tree, *cfg, st, &e);
	if (r < 0) {
		hctl_error("%s", e.msg);
		return hctl_exit_for(r);
	}
	return HCTL_OK;
}

/* Lexically normalise an absolute path ("/a/./b/../c" -> "/a/c"). */
static void hctl_normalise(char *p)
{
	char *out = p, *s = p;

	while (*s) {
		while (*s == '/')
			s++;
		char *end = strchr(s, '/');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		if (len == 0)
			break;
		if (len == 1 && s[0] == '.') {
		} else if (len == 2 && s[0] == '.' && s[1] == '.') {
			while (out > p && *--out != '/')
				;
		} else {
			*out++ = '/';
			memmove(out, s, len);
			out += len;
		}
		s += len;
	}
	if (out == p)
		*out++ = '/';
	*out = '\0';
}

/* Resolve symlinks in an absolute path as far as they exist (a dangling
 * link still counts where it points, like Python's resolve()). */
static void hctl_resolve_lenient(char *path, size_t size)
{
	char done[PATH_MAX * 2] = "", rest[PATH_MAX * 2], link[PATH_MAX];
	int hops = 0;

	snprintf(rest, sizeof(rest), "%s", path);
	hctl_normalise(rest);
	while (rest[0] && strcmp(rest, "/") != 0) {
		char *s = rest + 1, *end = strchr(s, '/');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		char cand[PATH_MAX * 2 + 2];
		ssize_t n;

		snprintf(cand, sizeof(cand), "%s/%.*s", done, (int)len, s);
		n = hops < 40 ? readlink(cand, link, sizeof(link) - 1) : -1;
		if (n < 0) {
			snprintf(done, sizeof(done), "%s", cand);
			memmove(rest, s + len, strlen(s + len) + 1);
			continue;
		}
		link[n] = '\0';
		hops++;
		{
			char next[PATH_MAX * 4 + 4];
			if (link[0] == '/')
				snprintf(next, sizeof(next), "%s%s", link, s + len);
			else
				snprintf(next, sizeof(next), "%s/%s%s", done, link, s + len);
			hctl_normalise(next);
			snprintf(rest, sizeof(rest), "%s", next);
			done[0] = '\0';
		}
	}
	snprintf(path, size, "%s", done[0] ? done : "/");
}

int hctl_tree_relpath(const char *tree, const char *dir, const char *arg, char *out,
		      size_t size)
{
	char full[PATH_MAX * 2], parent[PATH_MAX * 2];
	char *slash;
	size_t tl = strlen(tree);

	if (arg[0] == '\0') {
		hctl_error("empty path");
		return HCTL_USAGE;
	}
	if (arg[0] == '/')
		snprintf(full, sizeof(full), "%s", arg); /* fine if inside the tree */
	else
		snprintf(full, sizeof(full), "%s/%s", dir, arg);
	hctl_normalise(full);
	if (arg[0] == '/' && !paths_is_under(full, tree)) {
		/* the tree reached through a symlink (/tmp/link/f.c) */
		snprintf(parent, sizeof(parent), "%s", full);
		slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			hctl_resolve_lenient(parent, sizeof(parent));
			char again[PATH_MAX * 4];
			snprintf(again, sizeof(again), "%s/%s", parent, slash + 1);
			if (paths_is_under(again, tree))
				snprintf(full, sizeof(full), "%s", again);
		}
	}
	if (!paths_is_under(full, tree) || strcmp(full, tree) == 0) {
		hctl_error("%s: not a path inside %s", arg, tree);
		return HCTL_BLOCKED;
	}
	/* the parents must not leave the tree through a symlink */
	snprintf(parent, sizeof(parent), "%s", full);
	slash = strrchr(parent, '/');
	*slash = '\0';
	hctl_resolve_lenient(parent, sizeof(parent));
	if (!paths_is_under(parent, tree)) {
		hctl_error("%s: leaves %s through a symlink", arg, tree);
		return HCTL_BLOCKED;
	}
	if ((size_t)snprintf(out, size, "%s", full + tl + 1) >= size) {
		hctl_error("%s: path too long", arg);
		return HCTL_USAGE;
	}
	return HCTL_OK;
}

void hctl_progress(void *arg, size_t files, unsigned long long bytes)
{
	(void)arg;
	if (!isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "\rscanning: %zu files, %llu MB", files, bytes >> 20);
	fflush(stderr);
}

void hctl_caller(struct ckpt_proc *p)
{
	char path[64];
	FILE *f;

	memset(p, 0, sizeof(*p));
	p->pid = getppid();
	p->uid = getuid();
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)p->pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(p->comm, sizeof(p->comm), f))
			p->comm[strcspn(p->comm, "\n")] = '\0';
		fclose(f);
	}
	if (!p->comm[0])
		snprintf(p->comm, sizeof(p->comm), "hermesctl");
}
