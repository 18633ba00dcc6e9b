/* bench_first_write: the latency a turn's first change pays. Appends one
 * line to each FILE in turn (open O_WRONLY|O_APPEND, write, close) and
 * prints the milliseconds each took, one per line: the first is the turn's
 * first mutation (it waits for the checkpoint), the others only mark. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double bench_first_write_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Append one line to path; the elapsed ms in *ms. 0 or a negative errno. */
static int bench_first_write_one(const char *path, double *ms)
{
	static const char line[] = "first write\n";
	double t0 = bench_first_write_ms();
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, line, sizeof(line) - 1) != (ssize_t)(sizeof(line) - 1))
		r = -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	*ms = bench_first_write_ms() - t0;
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_first_write FILE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		double ms = 0;
		int r = bench_first_write_one(argv[i], &ms);

		if (r < 0) {
			fprintf(stderr, "bench_first_write: cannot write %s: %s\n", argv[i],
				strerror(-r));
			return 1;
		}
		printf("%.3f\n", ms);
	}
	return 0;
}
