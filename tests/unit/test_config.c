/* Unit tests for config.yaml parsing: types, defaults, errors with places. */
#include <string.h>

#include "config.h"
#include "tap.h"

static int parse(const char *text, struct config **cfg, struct herr *e)
{
	return config_parse(text, strlen(text), "config.yaml", cfg, e);
}

int main(void)
{
	struct config *cfg = NULL;
	struct herr e = HERR_INIT;

	ok(parse("", &cfg, &e) == 0, "empty file is an empty config");
	ok(config_bool(cfg, "checkpoints.enabled", 1) == 1, "default used when unset");
	config_free(cfg);

	ok(parse("checkpoints:\n  enabled: false\n  max_snapshots: 7\n"
		 "  exclude:\n    - '*.tmp'\n    - secrets/\n"
		 "model:\n  anything: [1, 2]\n",
		 &cfg, &e) == 0,
	   "valid file parses: %s", e.msg);
	ok(config_bool(cfg, "checkpoints.enabled", 1) == 0, "bool read");
	ok(config_int(cfg, "checkpoints.max_snapshots", 50) == 7, "int read");
	const cJSON *ex = config_list(cfg, "checkpoints.exclude");
	ok(ex && cJSON_GetArraySize(ex) == 2, "list read");
	is_str(cJSON_GetArrayItem(ex, 1)->valuestring, "secrets/", "list item");
	ok(!config_has(cfg, "model"), "other programs' sections are ignored");
	config_free(cfg);

	ok(parse("checkpoints:\n  max_snapshots: lots\n", &cfg, &e) < 0, "bad int refused");
	ok(strstr(e.msg, "config.yaml:2:") != NULL, "error names the line: %s", e.msg);
	ok(strstr(e.msg, "max_snapshots") != NULL, "error names the key");

	ok(parse("checkpoints:\n  enabeld: true\n", &cfg, &e) < 0, "typo in our section refused");
	ok(strstr(e.msg, "config.yaml:2:3: unknown key 'checkpoints.enabeld'") != NULL,
	   "unknown key error has line and column: %s", e.msg);

	ok(parse("checkpoints: [\n", &cfg, &e) < 0, "syntax error refused");
	ok(strstr(e.msg, "config.yaml:") != NULL, "syntax error has a place: %s", e.msg);

	ok(parse("checkpoints:\n  enabled: 'true'\n", &cfg, &e) < 0,
	   "quoted string is not a boolean");
	ok(parse("terminal:\n  timeout: \"30\"\n", &cfg, &e) < 0 &&
		   strstr(e.msg, "without quotes") != NULL,
	   "a quoted number is refused with how to write it: %s", e.msg);
	ok(parse("- a\n- b\n", &cfg, &e) < 0, "top-level list refused");
	return done_testing();
}
