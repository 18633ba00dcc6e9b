/* What the tools share: arguments, paths, whole-file reads and writes. */
#include "tools.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"

const struct tool_def *const tool_all[] = {
	&tool_read_file, &tool_write_file, &tool_patch, &tool_search_files, &tool_terminal, NULL,
};

const struct tool_def *tool_find(const char *name)
{
	for (size_t i = 0; tool_all[i]; i++)
		if (strcmp(tool_all[i]->name, name) == 0)
			return tool_all[i];
	return NULL;
}

cJSON *tool_error(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	cJSON *o = cJSON_CreateObject();

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (o) {
		char *u = tool_utf8(msg, strlen(msg));
		cJSON_AddStringToObject(o, "error", u ? u : msg);
		free(u);
	}
	return o;
}

const char *tool_str(const cJSON *args, const char *name, const char *def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsString(v) ? v->valuestring : def;
}

double tool_num(const cJSON *args, const char *name, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsNumber(v) ? v->valuedouble : def;
}

int tool_bool(const cJSON *args, const char *name, int def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

int tool_path(const struct tool_ctx *ctx, const char *p, char *out, size_t size)
{
	return guard_normalize(p, ctx->root, ctx->home, out, size);
}

int tool_read_fd(int fd, size_t max, char **out, size_t *len)
{
	size_t n = 0, cap = 65536;
	char *buf = malloc(cap + 1);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;
		if (n == cap) {
			char *nb;
			if (cap > max) {
				free(buf);
				return -EFBIG;
			}
			if (!(nb = realloc(buf, cap * 2 + 1))) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(buf);
		return -EFBIG;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int tool_read_all(const char *path, size_t max, char **out, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0)
		return -errno;
	if (S_ISDIR(sb.st_mode))
		return -EISDIR;
	if ((size_t)sb.st_size > max)
		return -EFBIG;
	return tool_read_fd(fd, max, out, len);
}

static int tool_mkdirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(buf, 0777) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

/* A new file beside path, named as the store's own temporaries, which
 * checkpoints leave out (a killed script's leftover is never taken for a
 * file of the tree); created 0666 less the umask, which the kernel applies
 * (reading the umask means setting it, for every thread at once). */
static int tool_tmpfile(const char *path, char *tmp, size_t size)
{
	const char *slash = strrchr(path, '/');
	int dlen = (int)(slash ? slash - path : 0);

	for (int i = 0; i < 16; i++) {
		unsigned long long rnd = 0;
		int fd;

		if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -errno;
		snprintf(tmp, size, "%.*s/.hermes-tmp-write-%016llx", dlen, path, rnd);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

int tool_write_all(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX + 48];
	struct stat sb;
	int have = stat(path, &sb) == 0, fd, r = 0;

	if (have && S_ISDIR(sb.st_mode))
		return -EISDIR;
	if ((r = tool_mkdirs(path)) < 0)
		return r;
	/* a temporary renamed over it: a reader never sees half */
	if ((fd = tool_tmpfile(path, tmp, sizeof(tmp))) < 0)
		return fd;
	if (have) {
		r = fchmod(fd, sb.st_mode & 07777) < 0 ? -errno : 0;
		/* the owner too, when we may (root writing a user's file) */
		if (r == 0 && (sb.st_uid != geteuid() || sb.st_gid != getegid()) &&
		    fchown(fd, sb.st_uid, sb.st_gid) < 0 && errno != EPERM)
			r = -errno;
	}
	for (size_t at = 0; r == 0 && at < len;) {
		ssize_t w = write(fd, data + at, len - at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			r = -errno;
		else
			at += (size_t)w;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

int tool_is_binary(const char *buf, size_t len)
{
	size_t n = len < 8192 ? len : 8192;

	return memchr(buf, '\0', n) != NULL;
}

char *tool_utf8(const char *s, size_t len)
{
	char *out = malloc(len * 3 + 1), *o = out;
	size_t i = 0;

	if (!out)
		return NULL;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		int good = n > 0 && c != 0 && i + n <= len && !(n == 2 && c < 0xc2) && c <= 0xf4;
		for (size_t k = 1; good && k < n; k++)
			good = ((unsigned char)s[i + k] >> 6) == 2;
		if (good && n >= 3) {
			unsigned char c1 = (unsigned char)s[i + 1];
			if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) ||
			    (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
				good = 0;
		}
		if (good) {
			memcpy(o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	*o = '\0';
	return out;
}
