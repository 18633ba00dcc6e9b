/* patch(path, old_string, new_string, replace_all=False): old_string must
 * occur exactly once (or replace_all), else nothing is written and the
 * answer says where the candidates are. */
#include "tools.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

#define PATCH_MAX ((size_t)64 << 20)
#define PATCH_SHOW 20 /* candidate lines named in an ambiguous answer */

static size_t patch_line_of(const char *buf, const char *at)
{
	size_t n = 1;

	for (const char *s = buf; s < at; s++)
		n += *s == '\n';
	return n;
}

static cJSON *patch(const struct tool_ctx *ctx, const cJSON *args)
{
	const char *p = tool_str(args, "path", NULL), *mode = tool_str(args, "mode", "replace");
	const char *old = tool_str(args, "old_string", NULL), *new = tool_str(args, "new_string", NULL);
	int all = tool_bool(args, "replace_all", 0);
	char path[PATH_MAX], why[PATH_MAX + 128];
	_cleanup_free_ char *buf = NULL, *out = NULL;
	size_t len = 0, olen, nlen, count = 0, o = 0;
	cJSON *res;
	int r;

	if (strcmp(mode, "replace") != 0)
		return tool_error("patch: mode '%s' is not supported (use mode='replace' with "
				  "old_string and new_string)", mode);
	if (!p || !p[0])
		return tool_error("patch: path is required");
	if (!old || !new)
		return tool_error("patch: old_string and new_string (strings) are required");
	if (!old[0])
		return tool_error("patch: old_string is empty (write_file writes a whole file)");
	if (tool_path(ctx, p, path, sizeof(path)) < 0)
		return tool_error("patch: %s: path too long", p);
	if (guard_check_write(&ctx->guard, path, ctx->root, why, sizeof(why)) < 0)
		return tool_error("patch: refused: %s", why);
	r = tool_read_all(path, PATCH_MAX, &buf, &len);
	if (r == -ENOENT)
		return tool_error("patch: %s: no such file", p);
	if (r < 0)
		return tool_error("patch: %s: %s", p, strerror(-r));
	olen = strlen(old);
	nlen = strlen(new);
	for (const char *s = buf; (s = memmem(s, len - (size_t)(s - buf), old, olen)); s += olen)
		count++;
	if (count == 0)
		return tool_error("patch: old_string not found in %s (it must match exactly, "
				  "whitespace included)", p);
	if (count > 1 && !all) {
		char lines[512] = "";
		size_t k = 0, at = 0;
		for (const char *s = buf; k < PATCH_SHOW &&
		     (s = memmem(s, len - (size_t)(s - buf), old, olen)); s += olen, k++)
			at += (size_t)snprintf(lines + at, at < sizeof(lines) ? sizeof(lines) - at : 0,
					       "%s%zu", k ? ", " : "", patch_line_of(buf, s));
		res = tool_error("patch: old_string occurs %zu times in %s (lines %s%s): give more "
				 "context to make it unique, or replace_all=True",
				 count, p, lines, count > PATCH_SHOW ? ", ..." : "");
		cJSON_AddNumberToObject(res, "matches", (double)count);
		return res;
	}
	if (!(out = malloc(len + count * nlen + 1)))
		return NULL;
	{
		const char *s = buf, *end = buf + len, *m;
		while ((m = memmem(s, (size_t)(end - s), old, olen))) {
			memcpy(out + o, s, (size_t)(m - s));
			o += (size_t)(m - s);
			memcpy(out + o, new, nlen);
			o += nlen;
			s = m + olen;
		}
		memcpy(out + o, s, (size_t)(end - s));
		o += (size_t)(end - s);
	}
	r = tool_write_all(path, out, o);
	if (r < 0)
		return tool_error("patch: %s: %s", p, strerror(-r));
	if (!(res = cJSON_CreateObject()))
		return NULL;
	cJSON_AddBoolToObject(res, "success", 1);
	cJSON_AddStringToObject(res, "path", path);
	cJSON_AddNumberToObject(res, "replacements", (double)count);
	return res;
}

const struct tool_def tool_patch = {
	.name = "patch",
	.run = patch,
	.py_params = "path, old_string=None, new_string=None, replace_all=False, mode=\"replace\", "
		     "patch=None",
	.py_doc = "Replace old_string (exactly once, or every time with replace_all) by "
		  "new_string; {'success', 'replacements'} or {'error'}.",
};
