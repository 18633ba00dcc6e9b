/* stress_ops: several processes change one small tree at random for a
 * while (atomic file replacement by rename, reads that verify what they
 * read, unlink, link, symlink, mkdir, rmdir, directory renames, readdir).
 * Only the errors that such races explain are allowed; any other error, or
 * a file whose contents do not check out, fails the run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STRESS_DIRS 6
#define STRESS_NAMES 12
#define STRESS_MAX 20000

enum stress_op {
	OP_WRITE, OP_READ, OP_UNLINK, OP_LINK, OP_SYMLINK, OP_MKDIR,
	OP_RMDIR, OP_RENAME_DIR, OP_RENAME_FILE, OP_READDIR, OP_STAT, OP_N
};

static const char *stress_names[OP_N] = {
	"write", "read", "unlink", "link", "symlink", "mkdir",
	"rmdir", "rename_dir", "rename_file", "readdir", "stat",
};

static uint64_t stress_hash(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* An error a race between the workers explains. */
static int stress_expected(int err)
{
	return err == ENOENT || err == EEXIST || err == ENOTEMPTY;
}

static int stress_bad;

static void stress_report(int worker, enum stress_op op, const char *path,
			  int err)
{
	if (stress_expected(err))
		return;
	fprintf(stderr, "worker %d: %s %s: %s\n", worker, stress_names[op],
		path, strerror(err));
	stress_bad++;
}

/* A file is 8 bytes of hash then the body: any torn or mixed file shows. */
static int stress_write(const char *path, int worker, unsigned *seed)
{
	unsigned char buf[STRESS_MAX + 8];
	size_t n = (size_t)(rand_r(seed) % STRESS_MAX) + 1;
	char tmp[64];
	uint64_t h;
	int fd;

	for (size_t i = 0; i < n; i++)
		buf[8 + i] = (unsigned char)rand_r(seed);
	h = stress_hash(buf + 8, n);
	memcpy(buf, &h, 8);
	snprintf(tmp, sizeof(tmp), "tmp.%d", worker);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, n + 8) != (ssize_t)(n + 8)) {
		int err = errno ? errno : EIO;

		close(fd);
		return -err;
	}
	if (close(fd) < 0)
		return -errno;
	return rename(tmp, path) < 0 ? -errno : 0;
}

static int stress_read(const char *path)
{
	unsigned char buf[STRESS_MAX + 16];
	ssize_t n, got = 0;
	uint64_t h;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + got, sizeof(buf) - (size_t)got)) > 0)
		got += n;
	close(fd);
	if (n < 0)
		return -errno;
	if (got < 9)
		return -EBADMSG;
	memcpy(&h, buf, 8);
	return h == stress_hash(buf + 8, (size_t)got - 8) ? 0 : -EBADMSG;
}

static int stress_readdir(const char *path)
{
	DIR *d = opendir(path);
	int n = 0;

	if (!d)
		return -errno;
	errno = 0;
	while (readdir(d))
		n++;
	if (errno) {
		int err = errno;

		closedir(d);
		return -err;
	}
	closedir(d);
	return n >= 2 ? 0 : -EBADMSG;
}

static void stress_worker(int worker, double seconds, unsigned seed)
{
	long counts[OP_N] = { 0 };
	struct timespec t0, now;
	char a[64], b[64];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long iter = 0;; iter++) {
		enum stress_op op = (enum stress_op)(rand_r(&seed) % OP_N);
		int d1 = rand_r(&seed) % STRESS_DIRS, d2 = rand_r(&seed) % STRESS_DIRS;
		int n1 = rand_r(&seed) % STRESS_NAMES, n2 = rand_r(&seed) % STRESS_NAMES;
		struct stat st;
		int r = 0;

		if (iter % 64 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((double)(now.tv_sec - t0.tv_sec) +
				    (double)(now.tv_nsec - t0.tv_nsec) / 1e9 >
			    seconds)
				break;
		}
		snprintf(a, sizeof(a), "d%d/f%d", d1, n1);
		snprintf(b, sizeof(b), "d%d/f%d", d2, n2);
		switch (op) {
		case OP_WRITE: r = stress_write(a, worker, &seed); break;
		case OP_READ: r = stress_read(a); break;
		case OP_UNLINK: r = unlink(a) < 0 ? -errno : 0; break;
		case OP_LINK: r = link(a, b) < 0 ? -errno : 0; break;
		case OP_SYMLINK:
			snprintf(b, sizeof(b), "d%d/s%d", d2, n2);
			r = symlink("../d0/f0", b) < 0 ? -errno : 0;
			if (r == -EEXIST)
				r = unlink(b) < 0 ? -errno : 0;
			break;
		case OP_MKDIR:
			snprintf(a, sizeof(a), "d%d/sub%d", d1, n1 % 3);
			r = mkdir(a, 0755) < 0 ? -errno : 0;
			break;
		case OP_RMDIR:
			snprintf(a, sizeof(a), "d%d/sub%d", d1, n1 % 3);
			r = rmdir(a) < 0 ? -errno : 0;
			break;
		case OP_RENAME_DIR:
			snprintf(a, sizeof(a), "d%d/sub%d", d1, n1 % 3);
			snprintf(b, sizeof(b), "d%d/sub%d", d2, n2 % 3);
			r = rename(a, b) < 0 ? -errno : 0;
			break;
		case OP_RENAME_FILE: r = rename(a, b) < 0 ? -errno : 0; break;
		case OP_READDIR:
			snprintf(a, sizeof(a), "d%d", d1);
			r = stress_readdir(a);
			break;
		case OP_STAT: r = lstat(a, &st) < 0 ? -errno : 0; break;
		case OP_N: break;
		}
		if (r == -EBADMSG) {
			fprintf(stderr, "worker %d: %s %s: contents do not check out\n",
				worker, stress_names[op], a);
			stress_bad++;
		} else if (r < 0) {
			stress_report(worker, op, a, -r);
		}
		counts[op]++;
	}
	printf("worker %d:", worker);
	for (int i = 0; i < OP_N; i++)
		printf(" %s=%ld", stress_names[i], counts[i]);
	printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int workers, bad = 0;
	double seconds;

	if (argc != 4 || (workers = atoi(argv[2])) <= 0 ||
	    (seconds = atof(argv[3])) <= 0) {
		fprintf(stderr, "usage: stress_ops DIR WORKERS SECONDS\n");
		return 2;
	}
	if (chdir(argv[1]) < 0) {
		fprintf(stderr, "stress_ops: cannot enter %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	for (int d = 0; d < STRESS_DIRS; d++) {
		char p[16];

		snprintf(p, sizeof(p), "d%d", d);
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			perror("stress_ops: mkdir");
			return 1;
		}
	}
	fflush(stdout);
	for (int w = 0; w < workers; w++) {
		if (fork() == 0) {
			stress_worker(w, seconds, (unsigned)w * 7919u + 17u);
			_exit(stress_bad ? 1 : 0);
		}
	}
	for (int w = 0; w < workers; w++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			bad = 1;
	}
	/* the tree must still read back whole */
	for (int d = 0; d < STRESS_DIRS; d++)
		for (int n = 0; n < STRESS_NAMES; n++) {
			char p[64];
			int r;

			snprintf(p, sizeof(p), "d%d/f%d", d, n);
			r = stress_read(p);
			if (r < 0 && r != -ENOENT) {
				fprintf(stderr, "final read %s: %s\n", p,
					r == -EBADMSG ? "contents do not check out"
						      : strerror(-r));
				bad = 1;
			}
		}
	printf("stress: %s\n", bad ? "FAILED" : "ok");
	return bad;
}
