/* Appender and watcher for fs_size_monotonic.sh.
 *
 *   size_watch append FILE SECONDS   open O_APPEND, fstat, seek to the
 *                                    end, write one line, close; again
 *   size_watch watch FILE SECONDS    open, fstat twice, close; again
 *
 * The watcher prints "opens N backwards M": M counts the opens whose second
 * fstat showed a smaller size than the first, which on a file only ever
 * appended to must never happen. The appender's stat and seek matter: they
 * are what python's open('a') and most loggers do, and what made the
 * kernel keep a size from before the last append. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int size_append(const char *path, time_t end)
{
	char line[64];

	for (long i = 1; time(NULL) < end; i++) {
		struct stat st;
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		int n;

		if (fd < 0 || fstat(fd, &st) < 0 || lseek(fd, 0, SEEK_END) < 0) {
			perror(path);
			return 1;
		}
		n = snprintf(line, sizeof(line), "line %ld\n", i);
		if (write(fd, line, (size_t)n) != n || close(fd) < 0) {
			perror(path);
			return 1;
		}
	}
	return 0;
}

static int size_watch(const char *path, time_t end)
{
	long opens = 0, back = 0;

	while (time(NULL) < end) {
		struct stat a, b;
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &a) < 0 || fstat(fd, &b) < 0) {
			perror(path);
			return 1;
		}
		if (b.st_size < a.st_size)
			back++;
		close(fd);
		opens++;
	}
	printf("opens %ld backwards %ld\n", opens, back);
	return 0;
}

int main(int argc, char **argv)
{
	time_t end;

	if (argc != 4) {
		fprintf(stderr, "usage: size_watch append|watch FILE SECONDS\n");
		return 2;
	}
	end = time(NULL) + atoi(argv[3]);
	if (strcmp(argv[1], "append") == 0)
		return size_append(argv[2], end);
	if (strcmp(argv[1], "watch") == 0)
		return size_watch(argv[2], end);
	fprintf(stderr, "size_watch: unknown mode %s\n", argv[1]);
	return 2;
}
