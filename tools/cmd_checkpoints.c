/* hermesctl checkpoints: disk use of every checkpoint store under
 * $HERMES_HOME/checkpoints (status), retention applied now (prune), and
 * removal of stores (clear), including orphans whose tree is gone. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "hctl_store.h"
#include "hermesctl.h"
#include "paths.h"

struct ckstore {
	char dir[PATH_MAX];
	char tree[PATH_MAX];
	char disabled[512];
	long long bytes;
	size_t count;
	int orphan;
	int broken;
};

static void checkpoints_usage(FILE *out)
{
	fprintf(out,
		"usage: hermesctl checkpoints status [--json]\n"
		"       hermesctl checkpoints prune [--json]\n"
		"       hermesctl checkpoints clear [-y] [--orphans | TREE...]\n"
		"\n"
		"status  every store: its tree, checkpoints, bytes on disk; orphans are\n"
		"        stores whose tree no longer exists\n"
		"prune   apply retention now (checkpoints.max_snapshots and\n"
		"        max_total_size_mb) and reclaim the space, in the foreground\n"
		"clear   remove stores: all, only orphans, or those of the given trees;\n"
		"        asks first unless -y/--yes\n");
}

static int checkpoints_collect(const struct config *cfg, struct ckstore **out, size_t *n)
{
	char base[PATH_MAX];
	DIR *d;
	struct dirent *de;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (paths_state_dir("checkpoints", 0, base, sizeof(base)) < 0)
		return -ENAMETOOLONG;
	d = opendir(base);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		struct ckstore cs = { 0 };
		struct store *st = NULL;
		struct herr e = HERR_INIT;
		struct ckpt_info *v = NULL;
		struct stat sb;

		if (de->d_name[0] == '.')
			continue;
		snprintf(cs.dir, sizeof(cs.dir), "%s/%s", base, de->d_name);
		if (store_open_dir(cs.dir, cfg, &st, &e) < 0) {
			cs.broken = 1;
			snprintf(cs.tree, sizeof(cs.tree), "?");
			snprintf(cs.disabled, sizeof(cs.disabled), "%s", e.msg);
		} else {
			snprintf(cs.tree, sizeof(cs.tree), "%s", store_tree_path(st));
			if (store_disabled_reason(st))
				snprintf(cs.disabled, sizeof(cs.disabled), "%s",
					 store_disabled_reason(st));
			if (store_list(st, &v, &cs.count, &e) < 0) {
				cs.broken = 1;
				snprintf(cs.disabled, sizeof(cs.disabled), "%s", e.msg);
			}
			free(v);
			store_close(st);
			cs.orphan = stat(cs.tree, &sb) < 0 && errno == ENOENT;
		}
		cs.bytes = store_disk_usage(cs.dir);
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			struct ckstore *nv = realloc(*out, cap * sizeof(*nv));
			if (!nv)
				break;
			*out = nv;
		}
		(*out)[(*n)++] = cs;
	}
	closedir(d);
	return 0;
}

static void checkpoints_print(const struct config *cfg, const struct ckstore *v, size_t n,
			      int json)
{
	long long total = 0;
	long long cap = config_int(cfg, "checkpoints.max_total_size_mb", 500) << 20;

	if (json) {
		cJSON *arr = cJSON_CreateArray();
		char *s;
		for (size_t i = 0; i < n; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "tree", v[i].tree);
			cJSON_AddStringToObject(o, "store", v[i].dir);
			cJSON_AddNumberToObject(o, "checkpoints", (double)v[i].count);
			cJSON_AddNumberToObject(o, "bytes", (double)v[i].bytes);
			cJSON_AddBoolToObject(o, "orphan", v[i].orphan);
			cJSON_AddBoolToObject(o, "broken", v[i].broken);
			if (v[i].disabled[0])
				cJSON_AddStringToObject(o, "note", v[i].disabled);
			cJSON_AddItemToArray(arr, o);
		}
		s = cJSON_Print(arr);
		puts(s);
		cJSON_free(s);
		cJSON_Delete(arr);
		return;
	}
	if (n == 0) {
		printf("no checkpoint stores\n");
		return;
	}
	printf("%-11s %9s  %s\n", "CHECKPOINTS", "SIZE", "TREE");
	for (size_t i = 0; i < n; i++) {
		total += v[i].bytes;
		printf("%11zu %7.1f M  %s", v[i].count, (double)v[i].bytes / 1048576.0, v[i].tree);
		if (v[i].orphan)
			printf("  (orphan: the tree is gone)");
		if (v[i].disabled[0])
			printf("  (%s%s)", v[i].broken ? "damaged: " : "", v[i].disabled);
		putchar('\n');
		/* a store never goes below its newest checkpoint: say so rather
		 * than let a cap smaller than one tree look ignored */
		if (cap > 0 && v[i].bytes > cap && v[i].count <= 2)
			printf("%11s over max_total_size_mb (%lld MB): one checkpoint of this tree "
			       "needs %.0f MB; raise the cap or exclude more\n",
			       "", cap >> 20, (double)v[i].bytes / 1048576.0);
		else if (cap > 0 && v[i].bytes > cap)
			printf("%11s over max_total_size_mb (%lld MB): the next checkpoint drops the "
			       "oldest ('hermesctl checkpoints prune' does it now)\n",
			       "", cap >> 20);
	}
	printf("total %.1f MB in %zu store%s\n", (double)total / 1048576.0, n, n == 1 ? "" : "s");
}

static int checkpoints_prune(const struct config *cfg, int json)
{
	struct ckstore *v = NULL;
	size_t n = 0;
	int rc = HCTL_OK;

	checkpoints_collect(cfg, &v, &n);
	for (size_t i = 0; i < n; i++) {
		struct store *st = NULL;
		struct herr e = HERR_INIT;
		if (v[i].broken || store_open_dir(v[i].dir, cfg, &st, &e) < 0)
			continue;
		if (store_prune(st, 1, &e) < 0) {
			hctl_error("prune %s: %s", v[i].tree, e.msg);
			rc = HCTL_FAIL;
		}
		store_close(st);
	}
	free(v);
	checkpoints_collect(cfg, &v, &n);
	checkpoints_print(cfg, v, n, json);
	free(v);
	return rc;
}

static int checkpoints_clear(const struct config *cfg, int argc, char **argv, int yes,
			     int orphans)
{
	struct ckstore *v = NULL;
	size_t n = 0, pick = 0;
	long long bytes = 0;
	int rc = HCTL_OK;
	char (*trees)[PATH_MAX] = calloc((size_t)argc + 1, PATH_MAX);

	for (int i = 0; trees && i < argc; i++) {
		struct herr e = HERR_INIT;
		if (paths_resolve(argv[i], trees[i], PATH_MAX, &e) < 0)
			snprintf(trees[i], PATH_MAX, "%s", argv[i]);
	}
	checkpoints_collect(cfg, &v, &n);
	for (size_t i = 0; i < n; i++) {
		int sel = !orphans && argc == 0;
		sel |= orphans && (v[i].orphan || v[i].broken);
		for (int k = 0; trees && k < argc; k++)
			sel |= strcmp(trees[k], v[i].tree) == 0;
		v[i].count = (size_t)sel; /* reused as the selection mark */
		if (sel) {
			pick++;
			bytes += v[i].bytes;
		}
	}
	free(trees);
	if (pick == 0) {
		printf("nothing to clear\n");
		free(v);
		return argc > 0 ? HCTL_NOTFOUND : HCTL_OK;
	}
	if (!yes) {
		char ans[16] = "";
		if (!isatty(STDIN_FILENO)) {
			hctl_error("checkpoints clear: would remove %zu store%s; confirm with --yes",
				   pick, pick == 1 ? "" : "s");
			free(v);
			return HCTL_USAGE;
		}
		printf("remove %zu checkpoint store%s (%.1f MB)? [y/N] ", pick,
		       pick == 1 ? "" : "s", (double)bytes / 1048576.0);
		fflush(stdout);
		if (!fgets(ans, sizeof(ans), stdin) || (ans[0] != 'y' && ans[0] != 'Y')) {
			printf("nothing removed\n");
			free(v);
			return HCTL_OK;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct herr e = HERR_INIT;
		if (!v[i].count)
			continue;
		if (store_destroy(v[i].dir, &e) < 0) {
			hctl_error("%s", e.msg);
			rc = HCTL_FAIL;
		} else {
			printf("removed the checkpoints of %s\n", v[i].tree);
		}
	}
	free(v);
	return rc;
}

int cmd_checkpoints(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "yes", no_argument, NULL, 'y' },
		{ "orphans", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct config *cfg = NULL;
	struct herr e = HERR_INIT;
	const char *sub;
	int json = 0, yes = 0, orphans = 0, c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "yh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'y':
			yes = 1;
			break;
		case 'o':
			orphans = 1;
			break;
		case 'h':
			checkpoints_usage(stdout);
			return HCTL_OK;
		default:
			checkpoints_usage(stderr);
			return HCTL_USAGE;
		}
	}
	sub = optind < argc ? argv[optind++] : "status";
	if (config_load(NULL, &cfg, &e) < 0) {
		hctl_error("%s", e.msg);
		return HCTL_FAIL;
	}
	if (strcmp(sub, "status") == 0 && optind == argc) {
		struct ckstore *v = NULL;
		size_t n = 0;
		checkpoints_collect(cfg, &v, &n);
		checkpoints_print(cfg, v, n, json);
		free(v);
		rc = HCTL_OK;
	} else if (strcmp(sub, "prune") == 0 && optind == argc) {
		rc = checkpoints_prune(cfg, json);
	} else if (strcmp(sub, "clear") == 0) {
		rc = checkpoints_clear(cfg, argc - optind, argv + optind, yes, orphans);
	} else {
		hctl_error("checkpoints: unknown subcommand or extra argument '%s'", sub);
		checkpoints_usage(stderr);
		rc = HCTL_USAGE;
	}
	config_free(cfg);
	return rc;
}
