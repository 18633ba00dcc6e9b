/* Logging: timestamped lines written with one write(2) each, so lines from
 * concurrent FUSE worker threads never interleave. */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int log_fd = -1;
static int log_stderr = 1;
static enum log_level log_level_cur = LOG_INFO;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

int log_open(const char *path, enum log_level level, int also_stderr)
{
	log_level_cur = level;
	log_stderr = also_stderr;
	if (!path)
		return 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (log_fd >= 0)
		close(log_fd);
	log_fd = fd;
	return 0;
}

void log_set_level(enum log_level level)
{
	log_level_cur = level;
}

int log_enabled(enum log_level level)
{
	return level <= log_level_cur;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[2048];
	struct timespec ts;
	struct tm tm;
	size_t n;
	va_list ap;
	int saved = errno;

	if (!log_enabled(level))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	n += snprintf(line + n, sizeof(line) - n, ".%03ldZ [%ld] %s: ",
		      ts.tv_nsec / 1000000, (long)syscall(SYS_gettid),
		      level_names[level]);
	va_start(ap, fmt);
	if (n < sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (log_fd >= 0 && write(log_fd, line, n) < 0) {
		/* nowhere better to report it */
	}
	if (log_stderr && write(STDERR_FILENO, line, n) < 0) {
		/* stderr gone: nothing to do */
	}
	errno = saved;
}

void log_close(void)
{
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
}
