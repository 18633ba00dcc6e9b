/* The tools a hermesctl code script calls (hermes_tools.py): one file
 * each, every one taking its arguments as a JSON object and answering
 * one JSON object (an "error" member when it failed). */
#pragma once

#include <cjson/cJSON.h>
#include <limits.h>
#include <stddef.h>

#include "guard.h"

struct tool_ctx {
	char root[PATH_MAX];      /* relative paths resolve here (the script's cwd) */
	struct guard guard;       /* the write guard of hermesctl run */
	char home[PATH_MAX];      /* the job's HOME, for ~ in paths */
	const char *hermesctl;    /* the binary terminal() runs as `hermesctl run` */
	const char *home_mode;    /* passed on to hermesctl run (NULL: its default) */
	const char *approval;     /* the same */
	int can_ask;              /* someone may answer the gate on /dev/tty */
	double timeout;           /* what is left of the script's time, at most */
};

struct tool_def {
	const char *name;
	int slow;                 /* runs off the server's thread (it may block) */
	/* The answer for args (an object, maybe empty); NULL only out of memory. */
	cJSON *(*run)(const struct tool_ctx *ctx, const cJSON *args);
	const char *py_params;    /* the Python signature's parameters */
	const char *py_doc;
};

extern const struct tool_def tool_read_file, tool_write_file, tool_patch, tool_search_files,
	tool_terminal;
/* Every tool, NULL-terminated. */
extern const struct tool_def *const tool_all[];
const struct tool_def *tool_find(const char *name);

/* Helpers for the tools. */
cJSON *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* args[name] as a string / number / bool, or def (NULL: absent or null). */
const char *tool_str(const cJSON *args, const char *name, const char *def);
double tool_num(const cJSON *args, const char *name, double def);
int tool_bool(const cJSON *args, const char *name, int def);
/* The absolute, lexically normalised path of p (~ expands to the job's
 * HOME, relative to ctx->root). 0 or -ENAMETOOLONG. */
int tool_path(const struct tool_ctx *ctx, const char *p, char *out, size_t size);
/* Read a whole file (at most max bytes, -EFBIG past it); *out malloc'ed
 * and NUL-terminated. */
int tool_read_all(const char *path, size_t max, char **out, size_t *len);
/* The same from an open descriptor, to its end. */
int tool_read_fd(int fd, size_t max, char **out, size_t *len);
/* Replace path's contents (a temporary file renamed over it, mode kept);
 * parents made as needed. 0 or -errno. */
int tool_write_all(const char *path, const char *data, size_t len);
/* Does buf look binary (a NUL, or invalid UTF-8 in its first 8 KiB)? */
int tool_is_binary(const char *buf, size_t len);
/* A valid UTF-8 copy (bad bytes become U+FFFD), for JSON strings. */
char *tool_utf8(const char *s, size_t len);
