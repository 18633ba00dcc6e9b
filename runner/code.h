/* hermesctl code: an agent's Python script that calls the project's tools
 * (hermes_tools.py, RPC stubs generated per run) served by this process
 * over a Unix socket, as one turn, within limits. */
#pragma once

#include <limits.h>

#include "runner.h"

#define CODE_TIMEOUT_DEFAULT 300.0
#define CODE_MAX_CALLS_DEFAULT 50
#define CODE_SPILL_MAX ((size_t)5 << 20)

enum code_status { CODE_SUCCESS, CODE_ERROR, CODE_TIMEOUT, CODE_INTERRUPTED };

struct code_job {
	/* cwd, limits (timeout, output caps), environment policy, HOME mode,
	 * reason, backend, config; command and argv are unused */
	struct runner_job base;
	const char *script;
	size_t script_len;
	int strict;            /* a private directory and the system python3 */
	int max_tool_calls;    /* <= 0: the default */
	const char *hermesctl; /* what terminal() runs as `hermesctl run` */
	/* passed on to terminal()'s hermesctl run (NULL: its defaults) */
	const char *home_mode_name, *approval_name;
};

struct code_result {
	enum code_status status;
	struct runner_result run; /* exit code, output, duration */
	int tool_calls;
	char error[4096];         /* why it did not succeed, or "" */
	char spill_path[PATH_MAX]; /* the whole stdout when the kept one was cut, or "" */
	char python[PATH_MAX];    /* the interpreter that ran it */
};

int code_run(const struct code_job *job, struct code_result *res, struct herr *e);
void code_result_free(struct code_result *res);
const char *code_status_name(enum code_status s);
