/* The child's environment: a vector of NAME=VALUE strings, the secret
 * scrub with the reference's keep-lists, and the runner's own re-exec so
 * removed values are not readable through /proc/<runner>/environ. */
#pragma once

#include <stddef.h>

struct envv {
	char **v; /* NULL-terminated; each entry malloc'd "NAME=VALUE" */
	size_t n, cap;
};

struct env_policy {
	const char *const *passthrough; /* fnmatch patterns of names always kept */
	size_t n_passthrough;
};

/* Does the name contain KEY, TOKEN, SECRET, ... (any case)? */
int env_is_secret(const char *name);
/* Is the name on the keep-lists (PATH*, HOME*, LC_*, HERMES_HOME, ...)? */
int env_is_kept(const char *name);
/* Is the name listed for passthrough? */
int env_is_passthrough(const struct env_policy *p, const char *name);

int envv_init(struct envv *ev);
void envv_free(struct envv *ev);
const char *envv_get(const struct envv *ev, const char *name);
int envv_set(struct envv *ev, const char *name, const char *value);
void envv_unset(struct envv *ev, const char *name);
/* Prepend dir to PATH (PATH set to dir alone when it was unset). */
int envv_path_prepend(struct envv *ev, const char *dir);

/* The child's environment from src: secrets dropped unless passthrough,
 * then only keep-listed or passthrough names kept. */
int env_build_child(char *const *src, const struct env_policy *p, struct envv *out);
/* How many variables of src the scrub removes as secrets. */
size_t env_count_secrets(char *const *src, const struct env_policy *p);
/* If this process's environment holds secrets, re-exec /proc/self/exe with
 * argv and the environment minus them, so /proc/self/environ is clean.
 * Returns 0 when nothing had to be removed; does not return on success;
 * a negative errno when exec failed. */
int env_reexec_scrubbed(char *const *argv, const struct env_policy *p);
/* The same without a new exec (which costs milliseconds of loading):
 * the bytes of the initial environment block, which /proc/<pid>/environ
 * shows, are zeroed for every variable the job does not get, and environ
 * becomes a heap copy without the secrets. -ENOSYS when the block's
 * bounds are unknown (then re-exec). */
int env_scrub_in_place(const struct env_policy *p);
