/* Mount helpers shared by mount, umount and status: lexical paths, dead
 * mount cleanup, and the JSON form of a mount record. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hermesctl.h"
#include "mounts.h"

/* Lexically absolute path (no realpath: a dead FUSE mount answers ENOTCONN). */
int hctl_abspath(const char *in, char *out, size_t size)
{
	char cwd[PATH_MAX], buf[PATH_MAX * 2];
	char *parts[PATH_MAX / 2];
	size_t np = 0;
	char *save = NULL;

	if (in[0] == '/') {
		snprintf(buf, sizeof(buf), "%s", in);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		snprintf(buf, sizeof(buf), "%s/%s", cwd, in);
	}
	for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (strcmp(t, ".") == 0 || !*t)
			continue;
		if (strcmp(t, "..") == 0) {
			if (np)
				np--;
			continue;
		}
		parts[np++] = t;
	}
	size_t off = 0;
	out[0] = '\0';
	for (size_t i = 0; i < np; i++) {
		int w = snprintf(out + off, size - off, "/%s", parts[i]);
		if (w < 0 || (size_t)w >= size - off)
			return -ENAMETOOLONG;
		off += (size_t)w;
	}
	if (np == 0)
		snprintf(out, size, "/");
	return 0;
}

/* Abort the FUSE connection of a dead mount: a daemon killed while one of
 * its threads waited on a request to its own mount (a restore writes through
 * it) cannot finish dying until the kernel gives up that request, and until
 * then it keeps its files, the store's lock among them. */
static void hctl_fuse_abort(const char *mountpoint)
{
	unsigned minor = 0;

	/* not ours to abort (non-root), or already gone: detaching still
	 * frees the path */
	if (mounts_kernel_dev(mountpoint, NULL, 0, &minor) > 0)
		mounts_fuse_abort(minor);
}

/* Detach a mount whose daemon is gone and forget its record. */
int hctl_cleanup_dead(const struct mount_info *m)
{
	if (m->mounted)
		hctl_fuse_abort(m->mountpoint);
	if (m->mounted && umount2(m->mountpoint, MNT_DETACH) < 0) {
		int r = -errno;
		pid_t pid = fork();
		if (pid == 0) {
			execlp("fusermount3", "fusermount3", "-u", "-z", m->mountpoint,
			       (char *)NULL);
			_exit(127);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			return r;
	}
	char sock[PATH_MAX];
	if (mounts_run_path(m->id, "sock", sock, sizeof(sock)) == 0)
		unlink(sock);
	mounts_remove(m->id);
	return 0;
}

cJSON *hctl_mount_json(const struct mount_info *m)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "source", m->source);
	cJSON_AddStringToObject(o, "mountpoint", m->mountpoint);
	cJSON_AddBoolToObject(o, "in_place", strcmp(m->source, m->mountpoint) == 0);
	cJSON_AddNumberToObject(o, "pid", m->pid);
	cJSON_AddStringToObject(o, "socket", m->sock);
	cJSON_AddStringToObject(o, "log", m->log);
	cJSON_AddNumberToObject(o, "started", (double)m->started);
	return o;
}

void hctl_print_json(cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);

	if (s)
		puts(s);
	free(s);
	cJSON_Delete(o);
}

static int hctl_match(const char *path, int exact, struct mount_info *m)
{
	if (mounts_find(path, m) < 0)
		return -ENOENT;
	if (exact && strcmp(m->mountpoint, path) != 0 && strcmp(m->source, path) != 0)
		return -ENOENT;
	return 0;
}

int hctl_find_mount(const char *arg, int exact, char *path, size_t size, struct mount_info *m)
{
	char real[PATH_MAX];
	int r = hctl_abspath(arg, path, size);

	if (r < 0)
		return r;
	if (hctl_match(path, exact, m) == 0)
		return 0;
	/* resolving walks the path: only now, so a dead mount's path (ENOTCONN)
	 * and a hung daemon are never touched when the lexical path names them */
	if (!realpath(arg, real) || strcmp(real, path) == 0)
		return -ENOENT;
	snprintf(path, size, "%s", real);
	return hctl_match(path, exact, m);
}
