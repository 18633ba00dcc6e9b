/* $HERMES_HOME/config.yaml: parsed with libyaml, checked against a schema,
 * kept as a cJSON tree. Unknown keys inside our sections, wrong types and
 * syntax errors are errors with line and column; sections that belong to
 * other programs sharing the file are ignored. */
#pragma once

#include <cjson/cJSON.h>
#include "err.h"

struct config;

/* path NULL: $HERMES_HOME/config.yaml. A missing file is an empty config. */
int config_load(const char *path, struct config **out, struct herr *e);
/* Parse YAML text (name is used in messages). */
int config_parse(const char *text, size_t len, const char *name,
		 struct config **out, struct herr *e);
void config_free(struct config *cfg);

/* Dotted keys, e.g. "checkpoints.max_snapshots". */
int config_bool(const struct config *cfg, const char *key, int def);
long long config_int(const struct config *cfg, const char *key, long long def);
const char *config_str(const struct config *cfg, const char *key, const char *def);
/* A list of strings, or NULL when unset. */
const cJSON *config_list(const struct config *cfg, const char *key);
/* Was the key given at all? */
int config_has(const struct config *cfg, const char *key);
/* Where the file was read from ("" when none existed). */
const char *config_path(const struct config *cfg);
