/* Error objects: a negative errno plus a message a person can act on.
 * Callers add context with err_prefix() as the error travels up. */
#pragma once

#include <stdarg.h>

struct herr {
	int code;       /* negative errno, 0 when no error */
	char msg[1024]; /* "what failed: why" */
};

#define HERR_INIT { 0, { 0 } }

/* Set code (a negative errno) and the message; returns code for tail calls. */
int err_set(struct herr *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Like err_set, with ": strerror(-code)" appended. */
int err_sys(struct herr *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prepend "context: " to the message; returns e->code. */
int err_prefix(struct herr *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void err_clear(struct herr *e);
