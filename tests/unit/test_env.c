/* Environment scrub: secret names go (any case), keep-lists stay,
 * passthrough wins over both, and the vector helpers behave. */
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "tap.h"

int main(void)
{
	static const char *const secrets[] = {
		"OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD",
		"GOOGLE_APPLICATION_CREDENTIALS", "MYSQL_PASSWD", "HTTP_AUTH", "SENTRY_DSN",
		"SLACK_WEBHOOK_URL", "NPM_CREDS", "BEARER", "MY_APIKEY", "github_token",
		"PATH_TOKEN", "HOME_SECRET",
	};
	static const char *const kept[] = {
		"PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TMP", "TEMP",
		"SHELL", "LOGNAME", "XDG_CONFIG_HOME", "PYTHONPATH", "VIRTUAL_ENV",
		"CONDA_PREFIX", "HERMES_HOME", "HERMES_PROFILE",
	};
	static const char *const dropped[] = { "LD_PRELOAD", "FOO", "EDITOR", "HERMES_OTHER" };
	const char *pass[] = { "GITHUB_TOKEN", "MY_*" };
	struct env_policy pol = { pass, 2 };
	char *src[] = {
		"PATH=/usr/bin", "HOME=/home/t", "OPENAI_API_KEY=sk-1", "GITHUB_TOKEN=ghp",
		"MY_SETTING=1", "LD_PRELOAD=/x.so", "LC_ALL=C", "AWS_SECRET_ACCESS_KEY=a",
		"broken", NULL,
	};
	struct envv ev;

	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
		ok(env_is_secret(secrets[i]), "secret: %s", secrets[i]);
	ok(!env_is_secret("PATH") && !env_is_secret("EDITOR"), "PATH, EDITOR are not secrets");
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		ok(env_is_kept(kept[i]), "kept: %s", kept[i]);
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
		ok(!env_is_kept(dropped[i]), "not kept: %s", dropped[i]);

	ok(env_build_child(src, &pol, &ev) == 0, "build the child environment");
	is_str(envv_get(&ev, "PATH"), "/usr/bin", "PATH kept");
	is_str(envv_get(&ev, "LC_ALL"), "C", "LC_ALL kept");
	ok(envv_get(&ev, "OPENAI_API_KEY") == NULL, "OPENAI_API_KEY removed");
	ok(envv_get(&ev, "AWS_SECRET_ACCESS_KEY") == NULL, "AWS_SECRET_ACCESS_KEY removed");
	is_str(envv_get(&ev, "GITHUB_TOKEN"), "ghp", "passthrough keeps a secret name");
	is_str(envv_get(&ev, "MY_SETTING"), "1", "passthrough glob keeps an unlisted name");
	ok(envv_get(&ev, "LD_PRELOAD") == NULL, "LD_PRELOAD is not on the keep-lists");
	ok(ev.n == 5 && ev.v[5] == NULL, "five entries, NULL-terminated (got %zu)", ev.n);
	ok(env_count_secrets(src, &pol) == 2, "two secrets would be removed from src");
	ok(env_count_secrets(src, NULL) == 3, "three without passthrough");

	ok(envv_set(&ev, "HOME", "/p") == 0, "set HOME");
	is_str(envv_get(&ev, "HOME"), "/p", "HOME replaced, not duplicated");
	ok(envv_path_prepend(&ev, "/shims") == 0, "prepend to PATH");
	is_str(envv_get(&ev, "PATH"), "/shims:/usr/bin", "PATH has the shim dir first");
	envv_unset(&ev, "LC_ALL");
	ok(envv_get(&ev, "LC_ALL") == NULL && ev.v[ev.n] == NULL, "unset keeps the vector ended");
	for (int i = 0; i < 100; i++) {
		char name[32];
		snprintf(name, sizeof(name), "V%d", i);
		envv_set(&ev, name, "x");
	}
	is_str(envv_get(&ev, "V99"), "x", "vector grows");
	envv_free(&ev);
	return done_testing();
}
