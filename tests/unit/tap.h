/* A tiny TAP producer for unit tests: ok()/is()/done_testing(). */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

/* One result line; a description that holds newlines or tabs (a shell
 * snippet under test) is written with them escaped, so the TAP stays one
 * line per result. */
__attribute__((format(printf, 2, 3), unused)) static void tap_result(int c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("%sok %d - ", c ? "" : "not ", tap_n);
	for (const char *p = buf; *p; p++) {
		if (*p == '\n')
			fputs("\\n", stdout);
		else if (*p == '\t')
			fputs("\\t", stdout);
		else
			putchar(*p);
	}
	putchar('\n');
}

#define ok(cond, ...)                                                        \
	do {                                                                 \
		int tap_c = !!(cond);                                        \
		tap_n++;                                                     \
		if (!tap_c)                                                  \
			tap_failed++;                                        \
		tap_result(tap_c, __VA_ARGS__);                              \
		if (!tap_c)                                                  \
			printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, \
			       #cond);                                       \
	} while (0)

#define is_str(got, want, ...)                                             \
	do {                                                               \
		const char *tap_g = (got), *tap_w = (want);                \
		ok(tap_g && tap_w && strcmp(tap_g, tap_w) == 0, __VA_ARGS__); \
		if (!(tap_g && tap_w && strcmp(tap_g, tap_w) == 0))        \
			printf("#   got '%s', want '%s'\n", tap_g ? tap_g : "(null)", \
			       tap_w ? tap_w : "(null)");                  \
	} while (0)

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
