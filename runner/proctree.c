/* Finding and signalling every process a job left behind, through
 * /proc/<pid>/task/<tid>/children (a full /proc scan when the kernel lacks
 * it), reaping orphaned zombies that the subreaper inherits. */
#include "proctree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

#define PROCTREE_MAX 4096

int proctree_become_subreaper(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* State letter of pid from /proc/<pid>/stat, its parent, and (when asked)
 * its process group and session; 0 if gone. */
static char proctree_stat_ids(pid_t pid, pid_t *ppid, pid_t *pgrp, pid_t *sid)
{
	char path[64], buf[512];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	int pp = 0, pg = 0, se = 0;
	char st = 0;
	if (!p || sscanf(p + 1, " %c %d %d %d", &st, &pp, &pg, &se) != 4)
		return 0;
	if (ppid)
		*ppid = pp;
	if (pgrp)
		*pgrp = pg;
	if (sid)
		*sid = se;
	return st;
}

static char proctree_stat(pid_t pid, pid_t *ppid)
{
	return proctree_stat_ids(pid, ppid, NULL, NULL);
}

void proctree_kill_session(pid_t sid)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;

	kill(-sid, SIGKILL);
	if (!(d = opendir("/proc")))
		return;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name), pg = 0, se = 0;
		if (pid > 1 && proctree_stat_ids(pid, NULL, &pg, &se) && (se == sid || pg == sid))
			kill(pid, SIGKILL);
	}
}

struct proctree_set {
	pid_t *v;
	size_t n, max;
	long count;
};

static pid_t proctree_ignored;

void proctree_ignore(pid_t pid)
{
	proctree_ignored = pid;
}

static void proctree_add(struct proctree_set *s, pid_t pid)
{
	if (pid == proctree_ignored && pid > 0)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == pid)
			return;
	if (s->n < s->max)
		s->v[s->n++] = pid;
}

/* Children of pid via /proc/<pid>/task/<tid>/children; -ENOENT when the
 * kernel does not provide the file. */
static int proctree_children(pid_t pid, struct proctree_set *s)
{
	char path[64];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0; /* gone */
	while ((de = readdir(d))) {
		char cpath[128], buf[4096];
		_cleanup_close_ int fd = -1;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", (int)pid, de->d_name);
		fd = open(cpath, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT && !found)
				return -ENOENT;
			continue;
		}
		found = 1;
		while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = '\0';
			for (char *save = NULL, *t = strtok_r(buf, " \n", &save); t;
			     t = strtok_r(NULL, " \n", &save))
				proctree_add(s, (pid_t)atoi(t));
		}
	}
	return 0;
}

/* Fallback: every process whose parent is in the set, until stable. */
static void proctree_scan_all(pid_t root, struct proctree_set *s)
{
	size_t before;

	do {
		_cleanup_closedir_ DIR *d = opendir("/proc");
		struct dirent *de;

		before = s->n;
		if (!d)
			return;
		while ((de = readdir(d))) {
			pid_t pid = (pid_t)atoi(de->d_name), pp = 0;
			if (pid <= 0 || !proctree_stat(pid, &pp))
				continue;
			int in = pp == root;
			for (size_t i = 0; i < s->n && !in; i++)
				in = s->v[i] == pp;
			if (in)
				proctree_add(s, pid);
		}
	} while (s->n != before);
}

static long proctree_collect(pid_t keep, struct proctree_set *s)
{
	pid_t self = getpid();
	int r = proctree_children(self, s);

	if (r == -ENOENT) {
		proctree_scan_all(self, s);
	} else {
		for (size_t i = 0; i < s->n; i++)
			proctree_children(s->v[i], s);
	}
	/* Count the living; reap our own zombies except keep (libuv's). */
	long live = 0;
	for (size_t i = 0; i < s->n; i++) {
		pid_t pp = 0;
		char st = proctree_stat(s->v[i], &pp);
		if (st == 'Z' || st == 'X' || st == 0) {
			if (st == 'Z' && pp == self && s->v[i] != keep)
				waitpid(s->v[i], NULL, WNOHANG);
			s->v[i] = 0;
			continue;
		}
		live++;
	}
	return live;
}

long proctree_descendants(pid_t keep, pid_t *out, size_t max)
{
	pid_t buf[PROCTREE_MAX];
	struct proctree_set s = { buf, 0, PROCTREE_MAX, 0 };
	long live = proctree_collect(keep, &s);
	size_t k = 0;

	for (size_t i = 0; out && i < s.n && k < max; i++)
		if (s.v[i])
			out[k++] = s.v[i];
	return live;
}

long proctree_signal(pid_t job, int sig)
{
	pid_t buf[PROCTREE_MAX];
	struct proctree_set s = { buf, 0, PROCTREE_MAX, 0 };
	long live;

	if (job > 0)
		kill(-job, sig);
	live = proctree_collect(job, &s);
	for (size_t i = 0; i < s.n; i++)
		if (s.v[i])
			kill(s.v[i], sig);
	return live;
}
