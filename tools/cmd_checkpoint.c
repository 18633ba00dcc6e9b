/* hermesctl checkpoint: take a checkpoint of a tree now (a full scan with
 * the stat cache; or, hidden for benchmarks, of a list of changed paths). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cleanup.h"
#include "hctl_daemon.h"
#include "hctl_store.h"
#include "hermesctl.h"

static void checkpoint_usage(FILE *out)
{
	fprintf(out,
		"usage: hermesctl checkpoint [-m REASON] [-C DIR] [--json]\n"
		"\n"
		"Take a checkpoint of the tree now. The tree is the nearest ancestor of\n"
		"DIR (default: the current directory) that already has checkpoints,\n"
		"else DIR itself. Unchanged files are not re-read (stat cache).\n"
		"\n"
		"  -m, --message REASON  why (shown by 'hermesctl rollback')\n"
		"  -C DIR                work on the tree holding DIR\n"
		"      --json            print the result as JSON\n");
}

/* Newline-separated relative paths from a file ("-": stdin). */
static int checkpoint_read_paths(const char *file, char ***out, size_t *n)
{
	_cleanup_fclose_ FILE *f = strcmp(file, "-") == 0 ? NULL : fopen(file, "re");
	FILE *in = strcmp(file, "-") == 0 ? stdin : f;
	char *line = NULL;
	size_t cap = 0, len = 0;
	ssize_t got;

	*out = NULL;
	*n = 0;
	if (!in)
		return -errno;
	while ((got = getline(&line, &len, in)) >= 0) {
		if (got > 0 && line[got - 1] == '\n')
			line[--got] = '\0';
		if (got == 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			char **v = realloc(*out, cap * sizeof(*v));
			if (!v)
				break;
			*out = v;
		}
		(*out)[(*n)++] = strdup(line);
	}
	free(line);
	return 0;
}

int cmd_checkpoint(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "message", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "paths-from", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *reason = "manual checkpoint", *dir = NULL, *paths_from = NULL;
	char tree[PATH_MAX], cwd[PATH_MAX], oid[STORE_OID_HEX];
	struct config *cfg = NULL;
	struct store *st = NULL;
	struct herr e = HERR_INIT;
	struct ckpt_proc who;
	struct ckpt_meta meta = { 0 };
	_cleanup_close_ int rootfd = -1;
	char **paths = NULL;
	size_t npaths = 0;
	int json = 0, has, c, r, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "m:C:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			reason = optarg;
			break;
		case 'C':
			dir = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'p':
			paths_from = optarg;
			break;
		case 'h':
			checkpoint_usage(stdout);
			return HCTL_OK;
		default:
			checkpoint_usage(stderr);
			return HCTL_USAGE;
		}
	}
	if (optind < argc) {
		hctl_error("checkpoint: unexpected argument '%s'", argv[optind]);
		return HCTL_USAGE;
	}
	rc = hctl_find_tree(dir, tree, cwd, &has);
	if (rc != HCTL_OK)
		return rc;
	struct mount_info m;
	int daemon = paths_from ? 0 : hctl_tree_daemon(tree, &m);
	if (daemon < 0)
		return HCTL_DEAD;
	rc = hctl_open_store(tree, &cfg, &st);
	if (rc != HCTL_OK)
		goto out;
	if (!config_bool(cfg, "checkpoints.enabled", 1)) {
		hctl_error("checkpoints are disabled (checkpoints.enabled in %s)", config_path(cfg));
		rc = HCTL_BLOCKED;
		goto out;
	}
	rootfd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		hctl_error("cannot open %s: %s", tree, strerror(errno));
		rc = HCTL_NOTFOUND;
		goto out;
	}
	hctl_caller(&who);
	meta.reason = reason;
	meta.procs = &who;
	meta.nprocs = 1;
	if (paths_from) {
		if (checkpoint_read_paths(paths_from, &paths, &npaths) < 0) {
			hctl_error("cannot read %s: %s", paths_from, strerror(errno));
			rc = HCTL_FAIL;
			goto out;
		}
		r = store_checkpoint_paths(st, rootfd, (const char *const *)paths, npaths, &meta,
					   oid, &e);
	} else if (daemon) {
		/* the mounted tree's store has one writer: its daemon */
		cJSON *req = cJSON_CreateObject(), *resp = NULL;
		cJSON_AddStringToObject(req, "op", "checkpoint");
		cJSON_AddStringToObject(req, "reason", reason);
		rc = hctl_daemon_call(&m, req, &resp);
		if (rc != HCTL_OK)
			goto out;
		snprintf(oid, sizeof(oid), "%s", hctl_json_str(resp, "oid"));
		r = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "created")) ?
			    0 : STORE_UNCHANGED;
		cJSON_Delete(resp);
	} else {
		r = store_checkpoint_scan(st, rootfd, &meta, hctl_progress, NULL, oid, &e);
		if (isatty(STDERR_FILENO))
			fputs("\r\033[K", stderr);
	}
	if (r < 0) {
		hctl_error("checkpoint of %s failed: %s", tree, e.msg);
		rc = hctl_exit_for(r);
		goto out;
	}
	if (json) {
		cJSON *o = cJSON_CreateObject();
		char *s;
		cJSON_AddStringToObject(o, "tree", tree);
		cJSON_AddStringToObject(o, "oid", oid);
		cJSON_AddBoolToObject(o, "changed", r == 0);
		s = cJSON_PrintUnformatted(o);
		puts(s);
		cJSON_free(s);
		cJSON_Delete(o);
	} else if (r == STORE_UNCHANGED) {
		printf("no changes in %s since checkpoint %.8s\n", tree, oid);
	} else {
		struct ckpt_info *list = NULL;
		size_t n = 0;
		if (store_list(st, &list, &n, &e) == 0 && n > 0)
			printf("checkpoint %.8s of %s: %s (%d file%s, +%d/-%d)%s%s\n", oid, tree,
			       list[0].reason, list[0].files, list[0].files == 1 ? "" : "s",
			       list[0].insertions, list[0].deletions,
			       list[0].skipped[0] ? "; too big, left out: " : "", list[0].skipped);
		free(list);
	}
	rc = HCTL_OK;
out:
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	store_close(st);
	config_free(cfg);
	return rc;
}
