/* hermes-crontab: the crontab stand-in that profile-mode jobs find first
 * on PATH. Same surface as crontab(1) (-l, -r, -e, FILE, - or stdin), but
 * the table is a plain file of the profile, so the real one is untouched. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

static const char *crontab_user(void)
{
	struct passwd *pw = getpwuid(getuid());
	const char *u = getenv("USER");

	return pw ? pw->pw_name : u ? u : "unknown";
}

static int crontab_path(char *out, size_t size)
{
	const char *t = getenv("HERMES_CRONTAB"), *h = getenv("HOME");
	int r;

	if (t && t[0])
		r = snprintf(out, size, "%s", t);
	else if (h && h[0])
		r = snprintf(out, size, "%s/.crontab-hermes", h);
	else
		return -ENOENT;
	return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : 0;
}

/* Read all of fd into a malloc'd buffer. */
static char *crontab_slurp(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;

	while (buf && (r = read(fd, buf + n, cap - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return NULL;
		}
		n += (size_t)r;
		if (n == cap) {
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb)
				free(buf);
			buf = nb;
			cap *= 2;
		}
	}
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

/* Each line: blank, comment, NAME=value, @keyword CMD or 5 fields + CMD. */
static int crontab_check(const char *text)
{
	int lineno = 0;

	for (const char *l = text; *l; ) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		char line[4096];
		int fields = 0, inword = 0;

		lineno++;
		snprintf(line, sizeof(line), "%.*s", (int)(len < 4095 ? len : 4095), l);
		l += len + (end ? 1 : 0);
		const char *s = line + strspn(line, " \t");
		if (!*s || *s == '#')
			continue;
		if (*s == '@' || (strchr(s, '=') && strcspn(s, "=") < strcspn(s, " \t")))
			continue;
		for (const char *c = s; *c; c++) {
			int sp = *c == ' ' || *c == '\t';
			if (!sp && !inword)
				fields++;
			inword = !sp;
		}
		if (fields < 6) {
			fprintf(stderr, "crontab: line %d: bad entry: %s\n", lineno, s);
			return -EINVAL;
		}
	}
	return 0;
}

static int crontab_install(const char *path, const char *text, size_t len)
{
	char tmp[PATH_MAX + 16];
	_cleanup_close_ int fd = -1;

	if (crontab_check(text) < 0) {
		fprintf(stderr, "crontab: errors in crontab file, can't install\n");
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) < 0 ||
	    rename(tmp, path) < 0) {
		fprintf(stderr, "crontab: cannot write %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return 1;
	}
	return 0;
}

static int crontab_list(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len;
	char *text;

	if (fd < 0) {
		fprintf(stderr, "no crontab for %s\n", crontab_user());
		return 1;
	}
	if (!(text = crontab_slurp(fd, &len)))
		return 1;
	fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

static int crontab_remove(const char *path)
{
	if (unlink(path) < 0) {
		fprintf(stderr, "no crontab for %s\n", crontab_user());
		return 1;
	}
	return 0;
}

static int crontab_replace(const char *path, const char *file)
{
	_cleanup_close_ int fd = -1;
	size_t len;
	char *text;
	int r;

	fd = strcmp(file, "-") == 0 ? dup(0) : open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "crontab: %s: %s\n", file, strerror(errno));
		return 1;
	}
	if (!(text = crontab_slurp(fd, &len)))
		return 1;
	r = crontab_install(path, text, len);
	free(text);
	return r;
}

static int crontab_edit(const char *path)
{
	const char *ed = getenv("VISUAL"), *tmpdir = getenv("TMPDIR");
	char tmp[PATH_MAX];
	size_t len = 0, nlen;
	char *old = NULL, *text;
	int status, fd, rfd;
	pid_t pid;

	if (!ed || !ed[0])
		ed = getenv("EDITOR");
	if (!ed || !ed[0])
		ed = "vi";
	snprintf(tmp, sizeof(tmp), "%s/crontab.XXXXXX", tmpdir && tmpdir[0] ? tmpdir : "/tmp");
	if ((fd = mkstemp(tmp)) < 0) {
		fprintf(stderr, "crontab: cannot create a temporary file: %s\n", strerror(errno));
		return 1;
	}
	if ((rfd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		old = crontab_slurp(rfd, &len);
		close(rfd);
		if (old && write(fd, old, len) != (ssize_t)len) {
			fprintf(stderr, "crontab: cannot write %s\n", tmp);
			close(fd);
			unlink(tmp);
			free(old);
			return 1;
		}
	}
	close(fd);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exec $0 \"$1\"", ed, tmp, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "crontab: \"%s\" exited with an error, crontab unchanged\n", ed);
		unlink(tmp);
		free(old);
		return 1;
	}
	rfd = open(tmp, O_RDONLY | O_CLOEXEC);
	text = rfd >= 0 ? crontab_slurp(rfd, &nlen) : NULL;
	if (rfd >= 0)
		close(rfd);
	unlink(tmp);
	if (!text) {
		free(old);
		return 1;
	}
	status = 0;
	if (old && nlen == len && memcmp(old, text, len) == 0) {
		fprintf(stderr, "crontab: no changes made to crontab\n");
	} else {
		fprintf(stderr, "crontab: installing new crontab\n");
		status = crontab_install(path, text, nlen);
	}
	free(old);
	free(text);
	return status;
}

static void crontab_usage(void)
{
	fprintf(stderr,
		"usage: crontab [-u user] FILE | -\n"
		"       crontab [-u user] -l | -r | -e\n"
		"(hermes stand-in: the table lives in $HERMES_CRONTAB, the real one is "
		"untouched)\n");
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	char action = 0;
	int opt;

	while ((opt = getopt(argc, argv, "u:lreiT")) != -1) {
		switch (opt) {
		case 'u':
			break; /* one profile, one table */
		case 'l': case 'r': case 'e':
			if (action && action != opt) {
				crontab_usage();
				return 1;
			}
			action = (char)opt;
			break;
		case 'i': case 'T':
			break;
		default:
			crontab_usage();
			return 1;
		}
	}
	if (crontab_path(path, sizeof(path)) < 0) {
		fprintf(stderr, "crontab: neither HERMES_CRONTAB nor HOME is set\n");
		return 1;
	}
	if (action && optind < argc) {
		crontab_usage();
		return 1;
	}
	switch (action) {
	case 'l': return crontab_list(path);
	case 'r': return crontab_remove(path);
	case 'e': return crontab_edit(path);
	default:
		/* a bare crontab would install its empty stdin: refused, as
		 * Debian's crontab does */
		if (optind >= argc) {
			fprintf(stderr, "crontab: usage error: file name must be specified for "
					"replace\n");
			crontab_usage();
			return 1;
		}
		return crontab_replace(path, argv[optind]);
	}
}
