/* config.yaml reader: libyaml events walked into a cJSON tree, every value
 * checked against config_schema[] as it is read so an error names its place. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cleanup.h"
#include "paths.h"

enum ctype { C_BOOL, C_INT, C_STR, C_LIST, C_SECTION };

struct config_key {
	const char *key;
	enum ctype type;
};

/* Every key hermes reads. Sections listed here are ours: unknown keys in
 * them are errors. Top-level keys not listed belong to other programs. */
static const struct config_key config_schema[] = {
	{ "checkpoints", C_SECTION },
	{ "checkpoints.enabled", C_BOOL },
	{ "checkpoints.max_snapshots", C_INT },
	{ "checkpoints.max_total_size_mb", C_INT },
	{ "checkpoints.max_file_size_mb", C_INT },
	{ "checkpoints.max_files", C_INT },
	{ "checkpoints.exclude", C_LIST },
	{ "checkpoints.turn_idle_ms", C_INT },
	{ "terminal", C_SECTION },
	{ "terminal.backend", C_STR },
	{ "terminal.timeout", C_INT },
	{ "terminal.home_mode", C_STR },
	{ "terminal.env_passthrough", C_LIST },
	{ "terminal.max_output_bytes", C_INT },
	{ "terminal.max_stderr_bytes", C_INT },
	{ "approvals", C_SECTION },
	{ "approvals.mode", C_STR },
	{ "approvals.allowlist", C_LIST },
	{ "approvals.deny", C_LIST },
	{ "code", C_SECTION },
	{ "code.timeout", C_INT },
	{ "code.max_tool_calls", C_INT },
	{ "fs", C_SECTION },
	{ "fs.writeback_cache", C_BOOL },
	{ "fs.attr_timeout", C_INT },
};

struct config {
	cJSON *root;
	char path[PATH_MAX];
};

static const struct config_key *schema_find(const char *key)
{
	for (size_t i = 0; i < sizeof(config_schema) / sizeof(config_schema[0]); i++)
		if (strcmp(config_schema[i].key, key) == 0)
			return &config_schema[i];
	return NULL;
}

static const char *ctype_name(enum ctype t)
{
	switch (t) {
	case C_BOOL: return "a boolean (true/false)";
	case C_INT: return "an integer";
	case C_STR: return "a string";
	case C_LIST: return "a list of strings";
	default: return "a mapping";
	}
}

struct walker {
	yaml_parser_t parser;
	const char *name;
	struct herr *e;
};

static int walk_fail(struct walker *w, yaml_mark_t m, const char *fmt, const char *a,
		     const char *b)
{
	char what[512];

	snprintf(what, sizeof(what), fmt, a, b);
	return err_set(w->e, -EINVAL, "%s:%zu:%zu: %s", w->name, m.line + 1,
		       m.column + 1, what);
}

static int next_event(struct walker *w, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&w->parser, ev)) {
		yaml_mark_t m = w->parser.problem_mark;
		return err_set(w->e, -EINVAL, "%s:%zu:%zu: %s%s%s", w->name,
			       m.line + 1, m.column + 1,
			       w->parser.problem ? w->parser.problem : "syntax error",
			       w->parser.context ? " " : "",
			       w->parser.context ? w->parser.context : "");
	}
	return 0;
}

/* Skip a whole node whose start event is ev (for sections not ours). */
static int skip_node(struct walker *w, yaml_event_t *start)
{
	int depth = 0, r;
	yaml_event_t ev;

	if (start->type == YAML_SCALAR_EVENT || start->type == YAML_ALIAS_EVENT)
		return 0;
	depth = 1;
	while (depth > 0) {
		if ((r = next_event(w, &ev)) < 0)
			return r;
		if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT)
			depth++;
		else if (ev.type == YAML_MAPPING_END_EVENT ||
			 ev.type == YAML_SEQUENCE_END_EVENT)
			depth--;
		yaml_event_delete(&ev);
	}
	return 0;
}

static int scalar_value(struct walker *w, const yaml_event_t *ev, enum ctype t,
			const char *key, cJSON **out)
{
	const char *s = (const char *)ev->data.scalar.value;
	int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;

	switch (t) {
	case C_BOOL:
		if (plain && (!strcmp(s, "true") || !strcmp(s, "yes") ||
			      !strcmp(s, "on") || !strcmp(s, "True")))
			*out = cJSON_CreateTrue();
		else if (plain && (!strcmp(s, "false") || !strcmp(s, "no") ||
				   !strcmp(s, "off") || !strcmp(s, "False")))
			*out = cJSON_CreateFalse();
		else
			return walk_fail(w, ev->start_mark, "%s: expected a boolean (true/false), got '%s'", key, s);
		return 0;
	case C_INT: {
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 10);
		if (!plain && *s && !*end && !errno && v >= 0)
			return walk_fail(w, ev->start_mark,
					 "%s: expected a number, got the quoted string \"%s\" "
					 "(write it without quotes)", key, s);
		if (!plain || !*s || *end || errno || v < 0)
			return walk_fail(w, ev->start_mark, "%s: expected a non-negative integer, got '%s'", key, s);
		*out = cJSON_CreateNumber((double)v);
		return 0;
	}
	case C_STR:
		*out = cJSON_CreateString(s);
		return 0;
	default:
		return walk_fail(w, ev->start_mark, "%s: expected %s", key, ctype_name(t));
	}
}

static int walk_list(struct walker *w, const char *key, cJSON **out)
{
	yaml_event_t ev;
	cJSON *arr = cJSON_CreateArray();
	int r;

	for (;;) {
		if ((r = next_event(w, &ev)) < 0)
			goto fail;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			r = walk_fail(w, ev.start_mark, "%s: expected a list of strings%s", key, "");
			yaml_event_delete(&ev);
			goto fail;
		}
		cJSON_AddItemToArray(arr, cJSON_CreateString((const char *)ev.data.scalar.value));
		yaml_event_delete(&ev);
	}
	*out = arr;
	return 0;
fail:
	cJSON_Delete(arr);
	return r;
}

/* Walk a mapping whose MAPPING_START was just read; prefix is its dotted key
 * ("" for the document root). */
static int walk_map(struct walker *w, const char *prefix, cJSON *obj)
{
	yaml_event_t kev, vev;
	int r;

	for (;;) {
		char key[256];
		const struct config_key *sk;

		if ((r = next_event(w, &kev)) < 0)
			return r;
		if (kev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&kev);
			return 0;
		}
		if (kev.type != YAML_SCALAR_EVENT) {
			r = walk_fail(w, kev.start_mark, "expected a key%s%s", "", "");
			yaml_event_delete(&kev);
			return r;
		}
		snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "",
			 (const char *)kev.data.scalar.value);
		yaml_mark_t kmark = kev.start_mark;
		yaml_event_delete(&kev);
		if ((r = next_event(w, &vev)) < 0)
			return r;
		sk = schema_find(key);
		if (!sk) {
			if (*prefix) {
				r = walk_fail(w, kmark, "unknown key '%s'%s", key, "");
				yaml_event_delete(&vev);
				return r;
			}
			r = skip_node(w, &vev); /* another program's section */
			yaml_event_delete(&vev);
			if (r < 0)
				return r;
			continue;
		}
		const char *leaf = strrchr(key, '.') ? strrchr(key, '.') + 1 : key;
		cJSON *val = NULL;
		if (vev.type == YAML_ALIAS_EVENT) {
			r = walk_fail(w, vev.start_mark, "%s: YAML aliases are not supported%s", key, "");
		} else if (sk->type == C_SECTION) {
			if (vev.type == YAML_SCALAR_EVENT && vev.data.scalar.length == 0 &&
			    vev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
				r = 0; /* "checkpoints:" with nothing under it */
			} else if (vev.type != YAML_MAPPING_START_EVENT) {
				r = walk_fail(w, vev.start_mark, "%s: expected %s", key, ctype_name(C_SECTION));
			} else {
				val = cJSON_CreateObject();
				r = walk_map(w, key, val);
			}
		} else if (sk->type == C_LIST) {
			if (vev.type != YAML_SEQUENCE_START_EVENT)
				r = walk_fail(w, vev.start_mark, "%s: expected %s", key, ctype_name(C_LIST));
			else
				r = walk_list(w, key, &val);
		} else if (vev.type != YAML_SCALAR_EVENT) {
			r = walk_fail(w, vev.start_mark, "%s: expected %s", key, ctype_name(sk->type));
		} else {
			r = scalar_value(w, &vev, sk->type, key, &val);
		}
		yaml_event_delete(&vev);
		if (r < 0) {
			cJSON_Delete(val);
			return r;
		}
		if (val) {
			cJSON_DeleteItemFromObjectCaseSensitive(obj, leaf);
			cJSON_AddItemToObject(obj, leaf, val);
		}
	}
}

int config_parse(const char *text, size_t len, const char *name,
		 struct config **out, struct herr *e)
{
	struct walker w = { .name = name, .e = e };
	struct config *cfg;
	yaml_event_t ev;
	int r = 0, done = 0;

	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return err_set(e, -ENOMEM, "out of memory");
	cfg->root = cJSON_CreateObject();
	yaml_parser_initialize(&w.parser);
	yaml_parser_set_input_string(&w.parser, (const unsigned char *)text, len);
	while (!done && r == 0) {
		if ((r = next_event(&w, &ev)) < 0)
			break;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_MAPPING_START_EVENT:
			r = walk_map(&w, "", cfg->root);
			break;
		case YAML_SCALAR_EVENT:
			if (ev.data.scalar.length != 0)
				r = walk_fail(&w, ev.start_mark, "expected a mapping at the top of the file%s%s", "", "");
			break;
		case YAML_SEQUENCE_START_EVENT:
			r = walk_fail(&w, ev.start_mark, "expected a mapping at the top of the file%s%s", "", "");
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&w.parser);
	if (r < 0) {
		config_free(cfg);
		return r;
	}
	*out = cfg;
	return 0;
}

int config_load(const char *path, struct config **out, struct herr *e)
{
	char buf[PATH_MAX];
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0, cap = 0, n;
	int r;

	if (!path) {
		r = paths_state_dir("config.yaml", 0, buf, sizeof(buf));
		if (r < 0)
			return err_sys(e, r, "cannot locate $HERMES_HOME");
		path = buf;
	}
	f = fopen(path, "re");
	if (!f) {
		if (errno != ENOENT)
			return err_sys(e, -errno, "cannot read %s", path);
		r = config_parse("", 0, path, out, e);
		if (r == 0)
			(*out)->path[0] = '\0';
		return r;
	}
	for (;;) {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			char *t = realloc(text, cap);
			if (!t)
				return err_set(e, -ENOMEM, "out of memory");
			text = t;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f))
		return err_sys(e, -EIO, "cannot read %s", path);
	r = config_parse(text, len, path, out, e);
	if (r == 0)
		snprintf((*out)->path, sizeof((*out)->path), "%s", path);
	return r;
}

void config_free(struct config *cfg)
{
	if (!cfg)
		return;
	cJSON_Delete(cfg->root);
	free(cfg);
}

static const cJSON *config_get(const struct config *cfg, const char *key)
{
	char buf[256];
	const cJSON *node;
	char *save = NULL;

	if (!cfg)
		return NULL;
	snprintf(buf, sizeof(buf), "%s", key);
	node = cfg->root;
	for (char *tok = strtok_r(buf, ".", &save); tok && node;
	     tok = strtok_r(NULL, ".", &save))
		node = cJSON_GetObjectItemCaseSensitive(node, tok);
	return node;
}

int config_bool(const struct config *cfg, const char *key, int def)
{
	const cJSON *n = config_get(cfg, key);
	return cJSON_IsBool(n) ? cJSON_IsTrue(n) : def;
}

long long config_int(const struct config *cfg, const char *key, long long def)
{
	const cJSON *n = config_get(cfg, key);
	return cJSON_IsNumber(n) ? (long long)n->valuedouble : def;
}

const char *config_str(const struct config *cfg, const char *key, const char *def)
{
	const cJSON *n = config_get(cfg, key);
	return cJSON_IsString(n) ? n->valuestring : def;
}

const cJSON *config_list(const struct config *cfg, const char *key)
{
	const cJSON *n = config_get(cfg, key);
	return cJSON_IsArray(n) ? n : NULL;
}

int config_has(const struct config *cfg, const char *key)
{
	return config_get(cfg, key) != NULL;
}

const char *config_path(const struct config *cfg)
{
	return cfg ? cfg->path : "";
}
