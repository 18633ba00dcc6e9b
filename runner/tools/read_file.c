/* read_file(path, offset=1, limit=2000): lines offset.. of a text file,
 * numbered as `cat -n` does, with the file's line count; a binary file or
 * a missing one is said so, not dumped. */
#include "tools.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

#define READ_MAX ((size_t)64 << 20)
/* a line longer than this is cut (minified code), with a mark */
#define READ_LINE_MAX 2000

static cJSON *read_file(const struct tool_ctx *ctx, const cJSON *args)
{
	const char *p = tool_str(args, "path", NULL);
	double off = tool_num(args, "offset", 1), lim = tool_num(args, "limit", 2000);
	char path[PATH_MAX];
	_cleanup_free_ char *buf = NULL, *text = NULL;
	char *out = NULL;
	size_t len = 0, total = 0, shown = 0, o = 0, cap;
	long first, limit;
	cJSON *res;
	int r;

	if (!p || !p[0])
		return tool_error("read_file: path is required");
	if (!(off >= 1) || !(lim >= 1) || off > 1e12 || lim > 1e9)
		return tool_error("read_file: offset and limit must be positive line counts");
	first = (long)off;
	limit = (long)lim;
	if (tool_path(ctx, p, path, sizeof(path)) < 0)
		return tool_error("read_file: %s: path too long", p);
	r = tool_read_all(path, READ_MAX, &buf, &len);
	if (r == -ENOENT)
		return tool_error("read_file: %s: no such file", p);
	if (r == -EISDIR)
		return tool_error("read_file: %s is a directory (search_files lists files)", p);
	if (r == -EFBIG)
		return tool_error("read_file: %s is over %zu MB", p, READ_MAX >> 20);
	if (r < 0)
		return tool_error("read_file: %s: %s", p, strerror(-r));
	if (tool_is_binary(buf, len)) {
		res = tool_error("read_file: %s is a binary file (%zu bytes); not shown", p, len);
		cJSON_AddBoolToObject(res, "is_binary", 1);
		cJSON_AddNumberToObject(res, "file_size", (double)len);
		return res;
	}
	cap = len + 64;
	for (size_t i = 0; i < len; i++)
		cap += buf[i] == '\n' ? 8 : 0;
	cap += 16;
	if (!(out = malloc(cap + 8 * (size_t)1)))
		return NULL;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t ll = nl ? (size_t)(nl - (buf + at)) : len - at;

		total++;
		if ((long)total >= first && (long)shown < limit) {
			size_t keep = ll > READ_LINE_MAX ? READ_LINE_MAX : ll;
			size_t need = o + 16 + keep + 32;
			if (need > cap) {
				char *nb = realloc(out, need * 2);
				if (!nb) {
					free(out);
					return NULL;
				}
				out = nb;
				cap = need * 2;
			}
			o += (size_t)snprintf(out + o, cap - o, "%6zu|", total);
			memcpy(out + o, buf + at, keep);
			o += keep;
			if (keep < ll)
				o += (size_t)snprintf(out + o, cap - o, "... [line cut: %zu bytes]",
						      ll);
			out[o++] = '\n';
			shown++;
		}
		at += ll + 1;
	}
	out[o] = '\0';
	text = tool_utf8(out, o);
	free(out);
	if (!text || !(res = cJSON_CreateObject()))
		return NULL;
	cJSON_AddStringToObject(res, "content", text);
	cJSON_AddStringToObject(res, "path", path);
	cJSON_AddNumberToObject(res, "total_lines", (double)total);
	cJSON_AddNumberToObject(res, "file_size", (double)len);
	cJSON_AddNumberToObject(res, "offset", (double)first);
	cJSON_AddNumberToObject(res, "lines", (double)shown);
	cJSON_AddBoolToObject(res, "truncated", (long)total >= first + (long)shown);
	if ((long)total >= first + (long)shown)
		cJSON_AddNumberToObject(res, "next_offset", (double)(first + (long)shown));
	return res;
}

const struct tool_def tool_read_file = {
	.name = "read_file",
	.run = read_file,
	.py_params = "path, offset=1, limit=2000",
	.py_doc = "Lines offset.. (1-based, at most limit) of a text file, numbered; "
		  "{'content', 'total_lines', 'truncated', 'next_offset'} or {'error'}.",
};
