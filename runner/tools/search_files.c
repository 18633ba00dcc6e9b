/* search_files(pattern, target="content", path=".", file_glob=None,
 * limit=50, offset=0, output_mode="content", context=0): an extended
 * regular expression over the lines of text files, or (target="files") a
 * glob over names, below path, in name order. What a checkpoint leaves out
 * by default (VCS metadata, node_modules, virtualenvs, caches) and binary
 * files are skipped. Results are paginated by offset and limit. */
#include "tools.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"

#define SEARCH_FILE_MAX ((size_t)8 << 20) /* bigger files are skipped */
#define SEARCH_TEXT_MAX 500               /* bytes of a matching line shown */
#define SEARCH_DEPTH 64

struct search {
	regex_t re;
	const char *glob, *file_glob, *mode;
	int files, context;
	long offset, limit, seen; /* results skipped, wanted, found so far */
	size_t files_scanned;
	cJSON *out;
	int more;           /* results past offset + limit exist */
};

static const char *const search_skip_dirs[] = {
	".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
	".mypy_cache", ".pytest_cache", ".cache", NULL,
};

static int search_skip_dir(const char *dir, const char *name)
{
	char cfg[PATH_MAX + 16];

	for (size_t i = 0; search_skip_dirs[i]; i++)
		if (strcmp(name, search_skip_dirs[i]) == 0)
			return 1;
	snprintf(cfg, sizeof(cfg), "%s/pyvenv.cfg", dir);
	return access(cfg, F_OK) == 0;
}

/* One more result: kept when within the page. */
static int search_take(struct search *s)
{
	s->seen++;
	if (s->seen <= s->offset)
		return 0;
	if (s->seen > s->offset + s->limit) {
		s->more = 1;
		return 0;
	}
	return 1;
}

static char *search_text(const char *p, size_t n)
{
	return tool_utf8(p, n > SEARCH_TEXT_MAX ? SEARCH_TEXT_MAX : n);
}

static void search_file(struct search *s, const char *path, const char *rel)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, count = 0, nlines = 0, line = 0;
	_cleanup_free_ size_t *starts = NULL;

	if (tool_read_all(path, SEARCH_FILE_MAX, &buf, &len) < 0 || tool_is_binary(buf, len))
		return;
	s->files_scanned++;
	for (size_t i = 0; i < len; i++)
		nlines += buf[i] == '\n';
	nlines++;
	if (!(starts = malloc((nlines + 1) * sizeof(*starts))))
		return;
	starts[0] = 0;
	for (size_t i = 0, k = 1; i < len; i++)
		if (buf[i] == '\n')
			starts[k++] = i + 1;
	starts[nlines] = len + 1;
	for (line = 0; line < nlines; line++) {
		size_t a = starts[line], b = starts[line + 1] - 1;
		regmatch_t m;
		char save;

		if (a > len)
			break;
		save = buf[b > len ? len : b];
		buf[b > len ? len : b] = '\0';
		int hit = regexec(&s->re, buf + a, 1, &m, 0) == 0;
		buf[b > len ? len : b] = save;
		if (!hit)
			continue;
		count++;
		if (strcmp(s->mode, "content") != 0)
			continue;
		if (!search_take(s))
			continue;
		cJSON *o = cJSON_CreateObject();
		char *t = search_text(buf + a, (b > len ? len : b) - a);
		cJSON_AddStringToObject(o, "path", rel);
		cJSON_AddNumberToObject(o, "line", (double)(line + 1));
		cJSON_AddStringToObject(o, "text", t ? t : "");
		free(t);
		if (s->context > 0) {
			cJSON *before = cJSON_AddArrayToObject(o, "before");
			cJSON *after = cJSON_AddArrayToObject(o, "after");
			size_t from = line > (size_t)s->context ? line - (size_t)s->context : 0;
			for (size_t k = from; k < line; k++) {
				char *c = search_text(buf + starts[k], starts[k + 1] - 1 - starts[k]);
				cJSON_AddItemToArray(before, cJSON_CreateString(c ? c : ""));
				free(c);
			}
			for (size_t k = line + 1; k <= line + (size_t)s->context && k < nlines &&
			     starts[k] <= len; k++) {
				size_t e = starts[k + 1] - 1 > len ? len : starts[k + 1] - 1;
				char *c = search_text(buf + starts[k], e - starts[k]);
				cJSON_AddItemToArray(after, cJSON_CreateString(c ? c : ""));
				free(c);
			}
		}
		cJSON_AddItemToArray(s->out, o);
	}
	if (count && strcmp(s->mode, "files_with_matches") == 0 && search_take(s))
		cJSON_AddItemToArray(s->out, cJSON_CreateString(rel));
	if (count && strcmp(s->mode, "count") == 0 && search_take(s)) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", rel);
		cJSON_AddNumberToObject(o, "count", (double)count);
		cJSON_AddItemToArray(s->out, o);
	}
}

static int search_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void search_dir(struct search *s, const char *dir, const char *rel, int depth)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (!d || depth > SEARCH_DEPTH)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			char **nv = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*nv));
			if (!nv)
				break;
			names = nv;
		}
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	qsort(names, n, sizeof(*names), search_name_cmp);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX], r[PATH_MAX];
		struct stat sb;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(r, sizeof(r), "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
		if (lstat(path, &sb) < 0)
			continue;
		if (S_ISDIR(sb.st_mode)) {
			if (!search_skip_dir(path, names[i]))
				search_dir(s, path, r, depth + 1);
		} else if (S_ISREG(sb.st_mode)) {
			if (s->files) {
				const char *subject = strchr(s->glob, '/') ? r : names[i];
				if (fnmatch(s->glob, subject, FNM_PERIOD) == 0 && search_take(s))
					cJSON_AddItemToArray(s->out, cJSON_CreateString(r));
			} else if (!s->file_glob || fnmatch(s->file_glob, names[i], 0) == 0) {
				search_file(s, path, r);
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static cJSON *search_files(const struct tool_ctx *ctx, const cJSON *args)
{
	const char *pattern = tool_str(args, "pattern", NULL), *target = tool_str(args, "target", "content");
	const char *p = tool_str(args, "path", ".");
	struct search s = { 0 };
	char root[PATH_MAX], msg[256];
	struct stat sb;
	cJSON *res;
	int r;

	if (!pattern || !pattern[0])
		return tool_error("search_files: pattern is required");
	if (strcmp(target, "content") && strcmp(target, "files"))
		return tool_error("search_files: target is 'content' or 'files', not '%s'", target);
	s.files = strcmp(target, "files") == 0;
	s.mode = s.files ? "files" : tool_str(args, "output_mode", "content");
	if (!s.files && strcmp(s.mode, "content") && strcmp(s.mode, "files_with_matches") &&
	    strcmp(s.mode, "count"))
		return tool_error("search_files: output_mode is 'content', 'files_with_matches' or "
				  "'count', not '%s'", s.mode);
	s.file_glob = tool_str(args, "file_glob", NULL);
	s.limit = (long)tool_num(args, "limit", 50);
	s.offset = (long)tool_num(args, "offset", 0);
	s.context = (int)tool_num(args, "context", 0);
	if (s.limit < 1 || s.offset < 0 || s.context < 0 || s.context > 100)
		return tool_error("search_files: limit >= 1, offset >= 0 and context 0-100");
	if (tool_path(ctx, p, root, sizeof(root)) < 0)
		return tool_error("search_files: %s: path too long", p);
	if (stat(root, &sb) < 0)
		return tool_error("search_files: %s: %s", p, strerror(errno));
	if (s.files) {
		s.glob = pattern;
	} else if ((r = regcomp(&s.re, pattern, REG_EXTENDED | REG_NEWLINE)) != 0) {
		regerror(r, &s.re, msg, sizeof(msg));
		return tool_error("search_files: bad regular expression '%s': %s", pattern, msg);
	}
	if (!(res = cJSON_CreateObject())) {
		if (!s.files)
			regfree(&s.re);
		return NULL;
	}
	s.out = cJSON_AddArrayToObject(res, s.files ? "files" : strcmp(s.mode, "content") == 0 ? "matches" :
					  strcmp(s.mode, "count") == 0 ? "counts" : "files");
	if (S_ISDIR(sb.st_mode)) {
		search_dir(&s, root, "", 0);
	} else if (!s.files) {
		search_file(&s, root, p);
	}
	if (!s.files)
		regfree(&s.re);
	cJSON_AddNumberToObject(res, "total", (double)s.seen);
	cJSON_AddNumberToObject(res, "offset", (double)s.offset);
	cJSON_AddBoolToObject(res, "truncated", s.more);
	if (s.more)
		cJSON_AddNumberToObject(res, "next_offset", (double)(s.offset + s.limit));
	if (!s.files)
		cJSON_AddNumberToObject(res, "files_scanned", (double)s.files_scanned);
	return res;
}

const struct tool_def tool_search_files = {
	.name = "search_files",
	.run = search_files,
	.slow = 1,
	.py_params = "pattern, target=\"content\", path=\".\", file_glob=None, limit=50, offset=0, "
		     "output_mode=\"content\", context=0",
	.py_doc = "A regular expression over file contents (target='content'; output_mode "
		  "'content', 'files_with_matches' or 'count') or a glob over names "
		  "(target='files'), below path; paginated by offset and limit.",
};
