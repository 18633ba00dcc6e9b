/* write_file(path, content): the file's whole new contents (parents made),
 * unless the write guard protects the path. */
#include "tools.h"

#include <errno.h>
#include <string.h>

static cJSON *write_file(const struct tool_ctx *ctx, const cJSON *args)
{
	const char *p = tool_str(args, "path", NULL), *content = tool_str(args, "content", NULL);
	char path[PATH_MAX], why[PATH_MAX + 128];
	cJSON *res;
	int r;

	if (!p || !p[0])
		return tool_error("write_file: path is required");
	if (!content)
		return tool_error("write_file: content (a string) is required");
	if (tool_path(ctx, p, path, sizeof(path)) < 0)
		return tool_error("write_file: %s: path too long", p);
	if (guard_check_write(&ctx->guard, path, ctx->root, why, sizeof(why)) < 0)
		return tool_error("write_file: refused: %s", why);
	r = tool_write_all(path, content, strlen(content));
	if (r < 0)
		return tool_error("write_file: %s: %s", p, strerror(-r));
	if (!(res = cJSON_CreateObject()))
		return NULL;
	cJSON_AddStringToObject(res, "path", path);
	cJSON_AddNumberToObject(res, "bytes_written", (double)strlen(content));
	return res;
}

const struct tool_def tool_write_file = {
	.name = "write_file",
	.run = write_file,
	.py_params = "path, content",
	.py_doc = "Replace the file's contents (parents made); {'path', 'bytes_written'} or "
		  "{'error'}.",
};
