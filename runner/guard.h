/* The write guard shared by the danger gate and the file tools: system
 * paths and the sensitive files of every home that could be meant are
 * protected against writes by absolute path. */
#pragma once

#include <limits.h>
#include <stddef.h>

#define GUARD_MAX_HOMES 4

struct guard {
	char homes[GUARD_MAX_HOMES][PATH_MAX]; /* distinct, normalised */
	size_t n_homes;
	char config_path[PATH_MAX];            /* the active config.yaml */
	char hermes_home[PATH_MAX];
};

/* Collect the homes: the process HOME, the real home, the subprocess HOME
 * and the profile HOME ($HERMES_HOME/home). Any argument may be NULL. */
void guard_init(struct guard *g, const char *subprocess_home, const char *real_home,
		const char *config_path);
/* Add one more home (deduplicated). */
void guard_add_home(struct guard *g, const char *home);
/* Lexically normalise path (., .., //) against cwd when relative; "~",
 * "$HOME" and "${HOME}" at the start expand to home. */
int guard_normalize(const char *path, const char *cwd, const char *home, char *out,
		    size_t size);
/* May path be written? 0 when it may, -EACCES with why filled ("<path> is
 * <reason>") when it is protected. A "~" path is checked against every home. */
int guard_check_write(const struct guard *g, const char *path, const char *cwd, char *why,
		      size_t size);
/* Is path (normalised) one of the homes? */
int guard_is_home(const struct guard *g, const char *path);
/* Does word start with a spelling of the home (~, $HOME, ${HOME:?}, ...)? */
int guard_is_home_word(const char *word);
