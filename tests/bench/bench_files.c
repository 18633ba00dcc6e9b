/* bench_files: the small-file metadata workload of the filesystem bench:
 * create N small files (in directories of 1,000), stat each, delete each,
 * and print the seconds each phase took, one "phase seconds" line each. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BENCH_FILES_PER_DIR 1000

static double bench_files_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void bench_files_path(char *buf, size_t size, long i)
{
	snprintf(buf, size, "d%03ld/file-%06ld", i / BENCH_FILES_PER_DIR, i);
}

static int bench_files_create(long n)
{
	static const char body[100] = "small file body";
	char p[64];

	for (long i = 0; i < n; i++) {
		int fd;

		if (i % BENCH_FILES_PER_DIR == 0) {
			snprintf(p, sizeof(p), "d%03ld", i / BENCH_FILES_PER_DIR);
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -errno;
		}
		bench_files_path(p, sizeof(p), i);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			return -errno;
		if (write(fd, body, sizeof(body)) != (ssize_t)sizeof(body)) {
			close(fd);
			return -EIO;
		}
		if (close(fd) < 0)
			return -errno;
	}
	return 0;
}

static int bench_files_stat(long n)
{
	struct stat st;
	char p[64];

	for (long i = 0; i < n; i++) {
		bench_files_path(p, sizeof(p), i);
		if (stat(p, &st) < 0)
			return -errno;
		if (st.st_size != 100)
			return -EIO;
	}
	return 0;
}

static int bench_files_delete(long n)
{
	char p[64];

	for (long i = 0; i < n; i++) {
		bench_files_path(p, sizeof(p), i);
		if (unlink(p) < 0)
			return -errno;
	}
	for (long d = 0; d * BENCH_FILES_PER_DIR < n; d++) {
		snprintf(p, sizeof(p), "d%03ld", d);
		if (rmdir(p) < 0)
			return -errno;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(long n);
	} phases[] = {
		{ "create", bench_files_create },
		{ "stat", bench_files_stat },
		{ "delete", bench_files_delete },
	};
	long n;

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: bench_files DIR N\n");
		return 2;
	}
	if (chdir(argv[1]) < 0) {
		fprintf(stderr, "bench_files: cannot enter %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		double t0 = bench_files_now();
		int r = phases[i].run(n);

		if (r < 0) {
			fprintf(stderr, "bench_files: %s failed: %s\n",
				phases[i].name, strerror(-r));
			return 1;
		}
		printf("%s %.6f\n", phases[i].name, bench_files_now() - t0);
	}
	return 0;
}
