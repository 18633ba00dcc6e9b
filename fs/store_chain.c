/* The chain of checkpoints, newest to oldest, and where it ends: at the
 * first commit, or at the oldest kept one, named in the store's `shallow`
 * file. git reads a commit listed there as having no parents, so trimming
 * the chain moves that mark and rewrites no commit: every checkpoint keeps
 * the hash it was shown with, and `git gc` reclaims what lies beyond. */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

/* A lock older than this was left by a killed writer (ours take
 * microseconds, git's prune_shallow about as long). */
#define CHAIN_STALE_LOCK_S 60

/* The text of `shallow` into buf ("" when there is none). */
static int chain_read(const struct store *st, char *buf, size_t size)
{
	char path[PATH_MAX + 16];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/shallow", st->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		buf[0] = '\0';
		return errno == ENOENT ? 0 : -errno;
	}
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int store_chain_load(struct store *st)
{
	return chain_read(st, st->shallow, sizeof(st->shallow));
}

int store_chain_head(struct store *st, git_commit **head, struct herr *e)
{
	int r = chain_read(st, st->shallow, sizeof(st->shallow));

	if (r < 0) {
		*head = NULL;
		return err_sys(e, r, "cannot read %s/shallow", st->dir);
	}
	return store_head(st, head, NULL, e);
}

/* Is id the oldest kept checkpoint? (The file may list several commits
 * if git wrote it; any of them ends the chain, as for git.) */
int store_chain_is_end(const struct store *st, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];

	if (!st->shallow[0])
		return 0;
	git_oid_tostr(hex, sizeof(hex), id);
	for (const char *l = st->shallow; l && *l;) {
		if (strncmp(l, hex, GIT_OID_HEXSZ) == 0 &&
		    (l[GIT_OID_HEXSZ] == '\n' || l[GIT_OID_HEXSZ] == '\0'))
			return 1;
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return 0;
}

int store_chain_parent(struct store *st, const git_commit *c, git_commit **parent,
		       struct herr *e)
{
	*parent = NULL;
	if (git_commit_parentcount(c) == 0 || store_chain_is_end(st, git_commit_id(c)))
		return 0;
	if (git_commit_parent(parent, c, 0) < 0)
		return store_git_err(e, -EIO, "the checkpoint chain is damaged");
	return 0;
}

/* shallow.lock, git's own lock for the file (O_EXCL); -EAGAIN while
 * someone else holds it. */
static int chain_lock(const char *lock)
{
	for (int i = 0; i < 100; i++) {
		int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		struct stat sb;

		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
		if (stat(lock, &sb) == 0 && sb.st_mtime + CHAIN_STALE_LOCK_S < time(NULL)) {
			unlink(lock);
			continue;
		}
		struct timespec d = { 0, 10 * 1000 * 1000 };
		nanosleep(&d, NULL);
	}
	return -EAGAIN;
}

int store_chain_cut(struct store *st, const git_oid *oldest, struct herr *e)
{
	char lock[PATH_MAX + 16], path[PATH_MAX + 16], now[sizeof(st->shallow)];
	char line[GIT_OID_HEXSZ + 2];
	int fd, r;

	snprintf(path, sizeof(path), "%s/shallow", st->dir);
	snprintf(lock, sizeof(lock), "%s/shallow.lock", st->dir);
	fd = chain_lock(lock);
	if (fd < 0)
		return fd == -EAGAIN ? fd : err_sys(e, fd, "cannot lock %s", lock);
	/* the walk that chose oldest read the file as it is: else another
	 * process trimmed meanwhile, and the mark must never move back */
	r = chain_read(st, now, sizeof(now));
	if (r == 0 && strcmp(now, st->shallow) != 0)
		r = -EAGAIN;
	if (r == 0) {
		git_oid_tostr(line, GIT_OID_HEXSZ + 1, oldest);
		strcat(line, "\n");
		if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
			r = -EIO;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(lock, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(lock);
		return r == -EAGAIN ? r : err_sys(e, r, "cannot write %s", path);
	}
	snprintf(st->shallow, sizeof(st->shallow), "%s", line);
	return 0;
}
