/* Mount registry: one small JSON file per live daemon, checked against the
 * kernel's mount table and the daemon's pid so dead mounts are recognised. */
#include "mounts.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cleanup.h"

int mounts_run_path(const char *id, const char *ext, char *out, size_t size)
{
	char dir[PATH_MAX];
	int r = paths_state_dir("run", 1, dir, sizeof(dir));

	if (r < 0)
		return r;
	r = snprintf(out, size, "%s/%s.%s", dir, id, ext);
	return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : 0;
}

int mounts_write(const struct mount_info *m)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	_cleanup_free_ char *s = NULL;
	cJSON *o = cJSON_CreateObject();
	int r, fd;

	cJSON_AddStringToObject(o, "id", m->id);
	cJSON_AddStringToObject(o, "source", m->source);
	cJSON_AddStringToObject(o, "mountpoint", m->mountpoint);
	cJSON_AddStringToObject(o, "socket", m->sock);
	cJSON_AddStringToObject(o, "log", m->log);
	cJSON_AddNumberToObject(o, "pid", m->pid);
	cJSON_AddNumberToObject(o, "started", (double)m->started);
	s = cJSON_Print(o);
	cJSON_Delete(o);
	if (!s)
		return -ENOMEM;
	if ((r = mounts_run_path(m->id, "json", path, sizeof(path))) < 0)
		return r;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	size_t len = strlen(s);
	if (write(fd, s, len) != (ssize_t)len || fsync(fd) < 0) {
		r = -errno ? -errno : -EIO;
		close(fd);
		unlink(tmp);
		return r;
	}
	close(fd);
	if (rename(tmp, path) < 0)
		return -errno;
	return 0;
}

int mounts_remove(const char *id)
{
	char path[PATH_MAX];
	int r = mounts_run_path(id, "json", path, sizeof(path));

	if (r < 0)
		return r;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape_mountinfo(char *s)
{
	char *w = s;
	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] && p[3]) {
			*w++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
}

#define MOUNTS_FUSECTL "/sys/fs/fuse/connections"

int mounts_fuse_abort(unsigned minor)
{
	char path[64];
	int fd, r = 0;

	snprintf(path, sizeof(path), MOUNTS_FUSECTL "/%u/abort", minor);
	if (access(path, F_OK) < 0 && geteuid() == 0)
		mount("fusectl", MOUNTS_FUSECTL, "fusectl", 0, NULL); /* not mounted yet */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) < 0)
		r = -errno;
	close(fd);
	return r;
}

int mounts_fuse_dead(const char *mountpoint)
{
	char path[64], buf[32];
	struct statfs sfs;
	unsigned minor;
	ssize_t n;
	int fd;

	/* requests in flight: a live daemon that is busy or stuck, which a
	 * statfs would wait for (a dead one's connection is aborted, and
	 * holds none) */
	if (mounts_kernel_dev(mountpoint, NULL, 0, &minor) > 0) {
		snprintf(path, sizeof(path), MOUNTS_FUSECTL "/%u/waiting", minor);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			buf[n > 0 ? n : 0] = '\0';
			if (atoi(buf) > 0)
				return 0;
		}
	}
	return statfs(mountpoint, &sfs) < 0 && errno == ENOTCONN;
}

int mounts_kernel_has(const char *mountpoint, char *fstype, size_t size)
{
	return mounts_kernel_dev(mountpoint, fstype, size, NULL);
}

int mounts_kernel_dev(const char *mountpoint, char *fstype, size_t size, unsigned *minor)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char mp[PATH_MAX], type[128];
		unsigned maj, min;
		char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %u:%u %*s %4095s", &maj, &min, mp) != 3)
			continue;
		if (sscanf(sep + 3, "%127s", type) != 1)
			continue;
		unescape_mountinfo(mp);
		if (strcmp(mp, mountpoint) != 0 || strncmp(type, "fuse", 4) != 0)
			continue;
		found = 1; /* the last match wins: mounts stack */
		if (fstype)
			snprintf(fstype, size, "%s", type);
		if (minor)
			*minor = min;
	}
	free(line);
	return found;
}

int mounts_kernel_hermesfs(struct kernel_mount **out, size_t *n)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	struct kernel_mount *v = NULL;
	size_t cnt = 0, cap = 0;
	char *line = NULL;
	size_t linecap = 0;

	*out = NULL;
	*n = 0;
	if (!f)
		return -errno;
	while (getline(&line, &linecap, f) > 0) {
		char mp[PATH_MAX], type[128], src[PATH_MAX];
		char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 ||
		    sscanf(sep + 3, "%127s %4095s", type, src) != 2 ||
		    strcmp(type, "fuse.hermesfs") != 0)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 4;
			struct kernel_mount *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				free(line);
				return -ENOMEM;
			}
			v = nv;
		}
		unescape_mountinfo(mp);
		unescape_mountinfo(src);
		snprintf(v[cnt].mountpoint, sizeof(v[cnt].mountpoint), "%s", mp);
		snprintf(v[cnt].source, sizeof(v[cnt].source), "%s", src);
		cnt++;
	}
	free(line);
	*out = v;
	*n = cnt;
	return 0;
}

/* /proc/PID/stat: the state letter, the command name and the start time
 * (clock ticks since boot); -1 when there is no such process. */
static int mounts_proc_stat(pid_t pid, char *state, char comm[32], unsigned long long *start)
{
	char path[64], buf[1024], *open_paren, *close_paren;
	unsigned long long ticks = 0;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* the command name may hold spaces and parens: it ends at the last ')' */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ')
		return -1;
	*state = close_paren[2];
	*close_paren = '\0';
	snprintf(comm, 32, "%s", open_paren + 1);
	/* fields 3 (state) to 22 (starttime) follow the name */
	if (sscanf(close_paren + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
				   "%*d %*d %*d %*d %*d %*d %llu",
		   &ticks) != 1)
		ticks = 0;
	*start = ticks;
	return 0;
}

/* A zombie still answers kill(pid, 0) until its new parent reaps it, which
 * some container inits do late or never: read the state instead. */
int mounts_pid_alive(pid_t pid)
{
	unsigned long long start;
	char state, comm[32];

	if (mounts_proc_stat(pid, &state, comm, &start) < 0)
		return 0;
	return state != 'Z' && state != 'X' && state != 'x';
}

/* Wall-clock second at which a process started: boot time plus its start. */
static long long mounts_started_at(unsigned long long ticks)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/stat", "re");
	char line[256];
	long long btime = -1;
	long hz = sysconf(_SC_CLK_TCK);

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &btime) == 1)
			break;
	if (btime < 0 || hz <= 0)
		return -1;
	return btime + (long long)(ticks / (unsigned long long)hz);
}

/* Is the record's daemon still running? Its pid may have been given to
 * another process since it died: the process must be named hermesfs or
 * have started when the record says the daemon did. */
static int mounts_daemon_alive(const struct mount_info *m)
{
	unsigned long long ticks;
	char state, comm[32];
	long long at;

	if (mounts_proc_stat(m->pid, &state, comm, &ticks) < 0 || state == 'Z' ||
	    state == 'X' || state == 'x')
		return 0;
	if (strncmp(comm, "hermesfs", 8) == 0 || m->started <= 0)
		return 1;
	at = mounts_started_at(ticks);
	return at < 0 || (at >= m->started - 5 && at <= m->started + 5);
}

static int read_record(const char *path, struct mount_info *m)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char buf[16384];
	size_t n;
	cJSON *o;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	o = cJSON_Parse(buf);
	if (!o)
		return -EBADMSG;
	memset(m, 0, sizeof(*m));
#define GETS(field, key)                                                          \
	do {                                                                      \
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);        \
		if (cJSON_IsString(v))                                            \
			snprintf(m->field, sizeof(m->field), "%s", v->valuestring); \
	} while (0)
	GETS(id, "id");
	GETS(source, "source");
	GETS(mountpoint, "mountpoint");
	GETS(sock, "socket");
	GETS(log, "log");
#undef GETS
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(o, "pid");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "started");
	m->pid = cJSON_IsNumber(pid) ? (pid_t)pid->valuedouble : 0;
	m->started = cJSON_IsNumber(st) ? (long long)st->valuedouble : 0;
	cJSON_Delete(o);
	m->alive = mounts_daemon_alive(m);
	m->mounted = mounts_kernel_has(m->mountpoint, NULL, 0) > 0;
	return m->id[0] && m->mountpoint[0] ? 0 : -EBADMSG;
}

int mounts_list(struct mount_info **out, size_t *n)
{
	char dir[PATH_MAX];
	_cleanup_closedir_ DIR *d = NULL;
	struct mount_info *v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	int r;

	*out = NULL;
	*n = 0;
	if ((r = paths_state_dir("run", 0, dir, sizeof(dir))) < 0)
		return r;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			struct mount_info *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (read_record(path, &v[cnt]) == 0)
			cnt++;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int mounts_find(const char *path, struct mount_info *out)
{
	struct mount_info *v;
	size_t n, best = (size_t)-1, bestlen = 0;
	int r = mounts_list(&v, &n);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		const char *cands[2] = { v[i].mountpoint, v[i].source };
		for (int c = 0; c < 2; c++) {
			size_t l = strlen(cands[c]);
			if (paths_is_under(path, cands[c]) && l >= bestlen) {
				best = i;
				bestlen = l;
			}
		}
	}
	if (best != (size_t)-1)
		*out = v[best];
	free(v);
	return best != (size_t)-1 ? 0 : -ENOENT;
}
