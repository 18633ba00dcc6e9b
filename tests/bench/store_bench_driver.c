/* Benchmark driver for the store: calls store_checkpoint_paths in process,
 * as the filesystem daemon will, after changing K files, and prints the
 * time of each checkpoint call alone (no process start-up): wall-clock
 * median, p90 and max, then the median CPU time (user + system), which a
 * machine busy with other work disturbs less. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "config.h"
#include "store.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double cpu_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Overwrite relpath with ~size bytes of text that differs every time
 * (churn), or append one line as an edit would (edit: size 0). */
static void bench_rewrite(int rootfd, const char *relpath, size_t size, unsigned *seed)
{
	static char buf[1 << 16];
	int fd = openat(rootfd, relpath, O_WRONLY | (size ? O_TRUNC : O_APPEND) | O_CLOEXEC);

	if (fd >= 0 && size == 0) {
		int n = snprintf(buf, sizeof(buf), "/* edit %u */\n", (unsigned)rand_r(seed));
		if (write(fd, buf, (size_t)n) < 0)
			perror("write");
		close(fd);
		return;
	}
	if (fd < 0)
		return;
	if (size > sizeof(buf))
		size = sizeof(buf);
	for (size_t i = 0; i < size; i++)
		buf[i] = (i % 64 == 63) ? '\n' : (char)('a' + rand_r(seed) % 26);
	if (write(fd, buf, size) < 0)
		perror("write");
	close(fd);
}

int main(int argc, char **argv)
{
	struct config *cfg = NULL;
	struct store *st = NULL;
	struct herr e = HERR_INIT;
	char **files = NULL, line[4096], oid[STORE_OID_HEX];
	size_t nfiles = 0, cap = 0;
	FILE *fl;
	double *t, *cpu;
	int rootfd, iters, k;
	unsigned seed;
	int rewrite;

	if (argc != 7) {
		fprintf(stderr, "usage: %s TREE FILELIST ITERATIONS FILES_PER_CHECKPOINT SEED "
			"edit|rewrite\n", argv[0]);
		return 2;
	}
	iters = atoi(argv[3]);
	k = atoi(argv[4]);
	seed = (unsigned)atoi(argv[5]);
	rewrite = strcmp(argv[6], "rewrite") == 0;
	fl = fopen(argv[2], "re");
	if (!fl)
		return perror(argv[2]), 1;
	while (fgets(line, sizeof(line), fl)) {
		line[strcspn(line, "\n")] = '\0';
		if (nfiles == cap) {
			cap = cap ? cap * 2 : 1024;
			files = realloc(files, cap * sizeof(*files));
		}
		files[nfiles++] = strdup(line);
	}
	fclose(fl);
	if (config_load(NULL, &cfg, &e) < 0 || store_open(argv[1], cfg, &st, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	rootfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	t = calloc((size_t)iters, sizeof(*t));
	cpu = calloc((size_t)iters, sizeof(*cpu));
	for (int i = 0; i < iters; i++) {
		const char *changed[64];
		double t0, c0;
		int r;

		for (int j = 0; j < k && j < 64; j++) {
			changed[j] = files[(size_t)rand_r(&seed) % nfiles];
			bench_rewrite(rootfd, changed[j],
				      rewrite ? 4096 + (size_t)rand_r(&seed) % 28000 : 0, &seed);
		}
		c0 = cpu_ms();
		t0 = now_ms();
		r = store_checkpoint_paths(st, rootfd, changed, (size_t)(k < 64 ? k : 64), NULL, oid,
					   &e);
		t[i] = now_ms() - t0;
		cpu[i] = cpu_ms() - c0;
		if (r < 0) {
			fprintf(stderr, "checkpoint %d: %s\n", i, e.msg);
			return 1;
		}
	}
	qsort(t, (size_t)iters, sizeof(*t), cmp_double);
	qsort(cpu, (size_t)iters, sizeof(*cpu), cmp_double);
	printf("%.3f %.3f %.3f %.3f\n", t[iters / 2], t[(iters * 9) / 10], t[iters - 1],
	       cpu[iters / 2]);
	store_close(st);
	config_free(cfg);
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	free(t);
	free(cpu);
	close(rootfd);
	return 0;
}
