/* Where hermes keeps its state, and the identity of a protected tree. */
#pragma once

#include <stddef.h>
#include "err.h"

#define TREE_ID_LEN 16

/* $HERMES_HOME, else ~/.hermes (HOME, then the passwd entry). Absolute,
 * without a trailing slash. Returns 0 or a negative errno. */
int paths_hermes_home(char *out, size_t size);
/* First 16 hex of SHA-256 of an absolute path: out must hold 17 bytes. */
void paths_tree_id(const char *abspath, char out[TREE_ID_LEN + 1]);
/* The home directory of the calling user (HOME, else passwd). */
int paths_user_home(char *out, size_t size);
/* mkdir -p with mode for every component created. */
int paths_mkdir_p(const char *path, unsigned mode);
/* Is path equal to or below dir? Both must be normalised absolute paths. */
int paths_is_under(const char *path, const char *dir);
/* realpath() into a caller buffer with an error message. */
int paths_resolve(const char *path, char *out, size_t size, struct herr *e);
/* "$HERMES_HOME/<sub>" into out, creating it (0700) when mkdir is set. */
int paths_state_dir(const char *sub, int mkdir, char *out, size_t size);
/* Why a directory may be neither protected nor mounted on: it is /, a
 * home directory, or holds $HERMES_HOME (symlinks resolved). */
enum paths_refusal {
	PATHS_REFUSE_NONE,
	PATHS_REFUSE_ROOT,
	PATHS_REFUSE_HOME,
	PATHS_REFUSE_HERMES_HOME,
};
enum paths_refusal paths_refusal_of(const char *abspath);
/* The same said of a tree to protect: NULL if it may be, else a reason. */
const char *paths_refuse_tree(const char *abspath);
