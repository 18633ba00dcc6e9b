/* A tiny TAP producer for unit tests: ok()/is()/done_testing(). */
#pragma once

#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                        \
	do {                                                                 \
		int tap_c = !!(cond);                                        \
		tap_n++;                                                     \
		if (!tap_c)                                                  \
			tap_failed++;                                        \
		printf("%sok %d - ", tap_c ? "" : "not ", tap_n);            \
		printf(__VA_ARGS__);                                         \
		printf("\n");                                                \
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
