/* The danger gate: a guard against accidents, not a security boundary.
 * The floor is always refused; commands that need approval run only when
 * a person approves on the terminal, the config allowlists them, or the
 * mode is off. Nobody to ask means deny, with a message saying how to
 * allow it. */
#pragma once

#include <stddef.h>
#include <cjson/cJSON.h>

#include "guard.h"
#include "runner.h"

struct gate_policy {
	enum runner_approval mode;
	int can_ask;
	const char *no_ask_why;   /* "no terminal", "--json", "CI is set" */
	const cJSON *allowlist;   /* rule ids or command globs */
	const cJSON *deny;        /* command globs always refused */
	const char *config_path;  /* named in messages */
};

/* "manual", "deny", "off" (and "ask", "never", "yolo" ...) to a mode. */
int gate_mode_parse(const char *s, enum runner_approval *out);
/* 0: the command may run. -EPERM: blocked, reason says why and how to
 * allow it. Other negative errno: the gate itself failed. */
int gate_decide(const char *command, const struct gate_policy *pol, const struct guard *g,
		const char *cwd, char *reason, size_t size);
