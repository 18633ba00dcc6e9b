/* posix_ops: runs a fixed battery of POSIX operations in a directory and
 * prints one normalized line per check, so that the transcript on a plain
 * directory and on a hermesfs mount can be diffed. This file owns main(),
 * the output format and the small helpers every battery shares. */
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "posix_ops.h"

const char *po_errname(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "E?";
}

static void po_vline(const char *name, const char *res, const char *fmt,
		     va_list ap)
{
	char state[1024] = "";

	if (fmt && *fmt)
		vsnprintf(state, sizeof(state), fmt, ap);
	if (res)
		printf("%s -> %s%s%s\n", name, res, *state ? " " : "", state);
	else
		printf("%s: %s\n", name, state);
	fflush(stdout);
}

void po_line(const char *name, long ret, const char *fmt, ...)
{
	char res[32];
	va_list ap;

	if (ret < 0)
		snprintf(res, sizeof(res), "%s", po_errname((int)-ret));
	else
		snprintf(res, sizeof(res), "%ld", ret);
	va_start(ap, fmt);
	po_vline(name, res, fmt, ap);
	va_end(ap);
}

void po_note(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	po_vline(name, NULL, fmt, ap);
	va_end(ap);
}

static const char *po_type(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return "reg";
	case S_IFDIR: return "dir";
	case S_IFLNK: return "lnk";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "sock";
	case S_IFCHR: return "chr";
	case S_IFBLK: return "blk";
	}
	return "?";
}

static const char *po_stat_fmt(const struct stat *st, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s mode=%04o nlink=%lu uid=%u gid=%u",
			 po_type(st->st_mode), st->st_mode & 07777,
			 (unsigned long)st->st_nlink, st->st_uid, st->st_gid);

	/* directory sizes are the lower filesystem's business, not ours,
	 * but passthrough must show the same, so keep them */
	if (n > 0 && (size_t)n < size && !S_ISCHR(st->st_mode))
		snprintf(buf + n, size - n, " size=%lld", (long long)st->st_size);
	else if (n > 0 && (size_t)n < size)
		snprintf(buf + n, size - n, " rdev=%u,%u", major(st->st_rdev),
			 minor(st->st_rdev));
	return buf;
}

const char *po_lstat_str(const char *path, char *buf, size_t size)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		snprintf(buf, size, "stat=%s", po_errname(errno));
		return buf;
	}
	return po_stat_fmt(&st, buf, size);
}

const char *po_fstat_str(int fd, char *buf, size_t size)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(buf, size, "fstat=%s", po_errname(errno));
		return buf;
	}
	return po_stat_fmt(&st, buf, size);
}

uint64_t po_hash_bytes(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ULL;
	}
	return h;
}

const char *po_hash_path(const char *path, char *buf, size_t size)
{
	uint64_t h = 1469598103934665603ULL;
	unsigned char chunk[65536];
	long long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW);

	if (fd < 0) {
		snprintf(buf, size, "hash=%s", po_errname(errno));
		return buf;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			h ^= chunk[i];
			h *= 1099511628211ULL;
		}
		total += n;
	}
	if (n < 0)
		snprintf(buf, size, "hash=%s", po_errname(errno));
	else
		snprintf(buf, size, "hash=%016llx/%lld", (unsigned long long)h,
			 total);
	close(fd);
	return buf;
}

long po_open_ret(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;
	int fd;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	fd = open(path, flags, mode);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int po_write_file(const char *path, const void *data, size_t n, mode_t mode)
{
	const char *p = data;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	int r = 0;

	if (fd < 0)
		return -errno;
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			r = -errno;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int po_read_file(const char *path, char *buf, size_t size, size_t *got)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	*got = 0;
	if (fd < 0)
		return -errno;
	while (*got < size && (n = read(fd, buf + *got, size - *got)) > 0)
		*got += (size_t)n;
	close(fd);
	return 0;
}

void po_pattern(void *buf, size_t n, unsigned seed)
{
	unsigned char *c = buf;
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		c[i] = (unsigned char)x;
	}
}

struct timespec po_now(void)
{
	struct timespec ts;

	/* file times come from the coarse clock; the fine one may be ahead */
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	return ts;
}

int po_ts_cmp(struct timespec a, struct timespec b)
{
	if (a.tv_sec != b.tv_sec)
		return a.tv_sec < b.tv_sec ? -1 : 1;
	if (a.tv_nsec != b.tv_nsec)
		return a.tv_nsec < b.tv_nsec ? -1 : 1;
	return 0;
}

int po_age(const char *path)
{
	struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	return (int)po_sys(utimensat(AT_FDCWD, path, old, AT_SYMLINK_NOFOLLOW));
}

int po_is_root(void)
{
	return geteuid() == 0;
}

static int po_wait(pid_t pid)
{
	int status;

	if (pid < 0)
		return -errno;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int po_as_user(uid_t uid, gid_t gid, int ngroups, const gid_t *groups,
	       void (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setgroups((size_t)ngroups, groups) < 0 ||
		    setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0) {
			po_note("as-user", "cannot switch to %u: %s", uid,
				po_errname(errno));
			_exit(1);
		}
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	return po_wait(pid);
}

int po_in_child(void (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	return po_wait(pid);
}

static void po_usage(void)
{
	fprintf(stderr,
		"usage: posix_ops DIR          run the battery in DIR (empty)\n"
		"       posix_ops --fixtures DIR  as root: create the root-owned\n"
		"                                 fixtures for an unprivileged run\n");
}

static const struct {
	const char *name;
	void (*run)(void);
} po_batteries[] = {
	{ "files", po_files_run },
	{ "io", po_io_run },
	{ "names", po_names_run },
	{ "meta", po_meta_run },
	{ "locks", po_locks_run },
	{ "special", po_special_run },
	{ "users", po_users_run },
	{ "times", po_times_run },
	{ "edge", po_edge_run },
	{ "acl", po_acl_run },
};

int main(int argc, char **argv)
{
	const char *only = getenv("POSIX_OPS_ONLY");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "--fixtures") == 0)
		return po_users_fixtures(argv[2]) < 0 ? 1 : 0;
	if (argc != 2 || argv[1][0] == '-') {
		po_usage();
		return 2;
	}
	if (chdir(argv[1]) < 0) {
		fprintf(stderr, "posix_ops: cannot enter %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	umask(022);
	po_note("run", "%s", po_is_root() ? "root" : "unprivileged");
	for (size_t i = 0; i < sizeof(po_batteries) / sizeof(po_batteries[0]);
	     i++) {
		if (only && !strstr(only, po_batteries[i].name))
			continue;
		if (mkdir(po_batteries[i].name, 0755) < 0 ||
		    chdir(po_batteries[i].name) < 0) {
			fprintf(stderr, "posix_ops: cannot set up %s: %s\n",
				po_batteries[i].name, strerror(errno));
			return 1;
		}
		po_note("battery", "%s", po_batteries[i].name);
		po_batteries[i].run();
		umask(022);
		if (chdir("..") < 0)
			return 1;
	}
	po_note("run", "done");
	return 0;
}
