/* Error objects: formatting and context chaining for struct herr. */
#include "err.h"

#include <stdio.h>
#include <string.h>

static void err_vset(struct herr *e, int code, const char *fmt, va_list ap)
{
	e->code = code;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
}

int err_set(struct herr *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return code;
	va_start(ap, fmt);
	err_vset(e, code, fmt, ap);
	va_end(ap);
	return code;
}

int err_sys(struct herr *e, int code, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!e)
		return code;
	va_start(ap, fmt);
	err_vset(e, code, fmt, ap);
	va_end(ap);
	n = strlen(e->msg);
	snprintf(e->msg + n, sizeof(e->msg) - n, ": %s", strerror(-code));
	return code;
}

int err_prefix(struct herr *e, const char *fmt, ...)
{
	char ctx[512], old[sizeof(e->msg)];
	va_list ap;

	if (!e)
		return 0;
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	snprintf(e->msg, sizeof(e->msg), "%s: %s", ctx, old);
	return e->code;
}

void err_clear(struct herr *e)
{
	if (e) {
		e->code = 0;
		e->msg[0] = '\0';
	}
}
