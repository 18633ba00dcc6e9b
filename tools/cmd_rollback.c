/* hermesctl rollback: list a tree's checkpoints, show what changed since
 * one, and restore the whole tree or some files to one (after a safety
 * checkpoint, so every rollback can itself be rolled back). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cleanup.h"
#include "hctl_daemon.h"
#include "jsonl.h"
#include "hctl_store.h"
#include "hermesctl.h"
#include "quote.h"

static void rollback_usage(FILE *out)
{
	fprintf(out,
		"usage: hermesctl rollback [-C DIR] [--json]          list checkpoints, newest first\n"
		"       hermesctl rollback [-C DIR] diff N [FILE...]  what changed since checkpoint N\n"
		"       hermesctl rollback [-C DIR] N                 restore the whole tree to N\n"
		"       hermesctl rollback [-C DIR] N FILE...         restore only these files\n"
		"\n"
		"N is a number from the list (1 = newest) or a commit hash of 4-64 hex\n"
		"digits. FILE is relative to DIR and must stay inside the tree. A restore\n"
		"first takes a safety checkpoint (\"before rollback to N\"), so it can be\n"
		"undone with another rollback. A whole-tree restore makes every tracked\n"
		"file equal to the checkpoint (files created since are removed, deleted\n"
		"ones come back); excluded paths (node_modules/, .env, ...) are never touched.\n"
		"\n"
		"  -C DIR      work on the tree holding DIR (default: the current directory)\n"
		"  --json      machine-readable list\n"
		"  --stat      diff: only the summary\n"
		"  --no-pager  diff: never page\n");
}

static void rollback_fmt_time(long long t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	localtime_r(&tt, &tm);
	strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
}

/* The "by" column: processes by name, a count for a name that repeats
 * ("git ×3, w1.sh"), in at most this many columns, never cutting a name
 * ("... and 2 more"); --json keeps every pid. */
#define ROLLBACK_WHO_COLS 40
#define ROLLBACK_WHO_MAX 64

struct rollback_who {
	char name[136]; /* quoted for the terminal */
	unsigned count;
};

/* Columns s takes: one per UTF-8 character. */
static size_t rollback_cols(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void rollback_who_add(struct rollback_who *v, size_t *n, const char *name, size_t len)
{
	char raw[64], quoted[sizeof(v->name)];
	size_t i;

	if (len >= sizeof(raw))
		len = sizeof(raw) - 1;
	memcpy(raw, name, len);
	raw[len] = '\0';
	/* a process names itself: quoted if it holds escapes */
	quote_str(raw, quoted, sizeof(quoted));
	for (i = 0; i < *n; i++) {
		if (strcmp(v[i].name, quoted) == 0) {
			v[i].count++;
			return;
		}
	}
	if (*n == ROLLBACK_WHO_MAX)
		return;
	memcpy(v[i].name, quoted, sizeof(quoted));
	v[i].count = 1;
	(*n)++;
}

/* The Hermes-Processes trailer, "comm[pid] uid=N, comm[pid] uid=N", as
 * names with counts, in order of first appearance. A name may hold any
 * byte, so an entry ends only where "] uid=" and digits are followed by
 * ", " or the end. */
static size_t rollback_who_parse(const char *who, struct rollback_who *v)
{
	const char *p = who, *q = who;
	size_t n = 0;

	while (*p) {
		const char *end, *next, *open;

		q = strstr(q, "] uid=");
		if (!q) {
			rollback_who_add(v, &n, p, strlen(p)); /* another format: as it is */
			break;
		}
		end = q + strlen("] uid=");
		while (*end >= '0' && *end <= '9')
			end++;
		if (end[0] == ',' && end[1] == ' ')
			next = end + 2;
		else if (end[0] == '\0')
			next = end;
		else {
			q++; /* inside a name */
			continue;
		}
		for (open = q; open > p && *open != '['; open--)
			;
		rollback_who_add(v, &n, p, (size_t)((*open == '[' ? open : q) - p));
		p = q = next;
	}
	return n;
}

static void rollback_who_render(const struct rollback_who *v, size_t n, char *out, size_t size)
{
	size_t len = 0, cols = 0, i;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		char piece[sizeof(v->name) + 32], more[32] = "";
		size_t pc;

		snprintf(piece, sizeof(piece), "%s%s", i ? ", " : "", v[i].name);
		if (v[i].count > 1)
			snprintf(piece + strlen(piece), sizeof(piece) - strlen(piece), " ×%u",
				 v[i].count);
		pc = rollback_cols(piece);
		/* room for saying how many did not fit after this one */
		if (i + 1 < n)
			snprintf(more, sizeof(more), " and %zu more", n - i - 1);
		if (i > 0 && cols + pc + rollback_cols(more) > ROLLBACK_WHO_COLS)
			break;
		if (len + strlen(piece) + 1 > size)
			break;
		memcpy(out + len, piece, strlen(piece) + 1);
		len += strlen(piece);
		cols += pc;
	}
	if (i < n)
		snprintf(out + len, size - len, " and %zu more", n - i);
}

/* On a mounted tree: what changed since the newest checkpoint, by whom. */
static void rollback_pending(const char *tree)
{
	struct mount_info m;
	cJSON *req, *resp = NULL;
	struct herr e = HERR_INIT;

	if (mounts_find(tree, &m) < 0 || strcmp(m.source, tree) != 0 || !m.alive)
		return;
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "status");
	if (ctl_call(m.sock, req, &resp, 2000, &e) == 0) {
		const cJSON *ck = cJSON_GetObjectItemCaseSensitive(resp, "checkpoints");
		const cJSON *dp = cJSON_GetObjectItemCaseSensitive(ck, "dirty_paths");
		const cJSON *who = cJSON_GetObjectItemCaseSensitive(ck, "who");
		if (cJSON_IsNumber(dp) && dp->valuedouble > 0) {
			printf("\n  not yet checkpointed: %d path%s changed since checkpoint 1",
			       (int)dp->valuedouble, dp->valuedouble == 1 ? "" : "s");
			struct rollback_who v[ROLLBACK_WHO_MAX];
			char by[512];
			const cJSON *w;
			size_t n = 0;
			cJSON_ArrayForEach(w, who)
			{
				const char *comm = hctl_json_str(w, "comm");
				rollback_who_add(v, &n, comm, strlen(comm));
			}
			rollback_who_render(v, n, by, sizeof(by));
			printf("%s%s\n", n ? " by " : "", by);
		}
	}
	cJSON_Delete(req);
	cJSON_Delete(resp);
}

static int rollback_list(struct store *st, const char *tree, int json)
{
	struct ckpt_info *v = NULL;
	struct herr e = HERR_INIT;
	size_t n = 0;
	char when[64];

	if (store_list(st, &v, &n, &e) < 0) {
		hctl_error("%s", e.msg);
		return HCTL_FAIL;
	}
	if (json) {
		cJSON *arr = cJSON_CreateArray();
		char *s;
		for (size_t i = 0; i < n; i++) {
			cJSON *o = cJSON_CreateObject();
			rollback_fmt_time(v[i].time, when, sizeof(when));
			cJSON_AddNumberToObject(o, "number", (double)(i + 1));
			cJSON_AddStringToObject(o, "oid", v[i].oid);
			cJSON_AddStringToObject(o, "date", when);
			cJSON_AddNumberToObject(o, "time", (double)v[i].time);
			cJSON_AddStringToObject(o, "reason", v[i].reason);
			cJSON_AddNumberToObject(o, "files", v[i].files);
			cJSON_AddNumberToObject(o, "insertions", v[i].insertions);
			cJSON_AddNumberToObject(o, "deletions", v[i].deletions);
			cJSON_AddStringToObject(o, "who", v[i].who);
			cJSON_AddStringToObject(o, "skipped", v[i].skipped);
			cJSON_AddItemToArray(arr, o);
		}
		if (store_dropped_note(st))
			hctl_warn("%s", store_dropped_note(st));
		s = cJSON_Print(arr);
		puts(s);
		cJSON_free(s);
		cJSON_Delete(arr);
	} else if (n == 0) {
		printf("no checkpoints for %s\n", tree);
		if (store_disabled_reason(st))
			printf("(%s)\n", store_disabled_reason(st));
		if (store_dropped_note(st))
			printf("(%s)\n", store_dropped_note(st));
	} else {
		printf("checkpoints of %s, newest first:\n\n", tree);
		if (store_dropped_note(st))
			printf("  (%s)\n\n", store_dropped_note(st));
		for (size_t i = 0; i < n; i++) {
			char reason[sizeof(v[i].reason) * 4 + 3], who[512];
			struct rollback_who procs[ROLLBACK_WHO_MAX];
			rollback_fmt_time(v[i].time, when, sizeof(when));
			/* reasons and process names come from agents: no raw escapes */
			quote_str(v[i].reason, reason, sizeof(reason));
			rollback_who_render(procs, rollback_who_parse(v[i].who, procs), who,
					    sizeof(who));
			printf("  %3zu  %.8s  %s  %s  (%d file%s, +%d/-%d)", i + 1, v[i].oid, when,
			       reason, v[i].files, v[i].files == 1 ? "" : "s", v[i].insertions,
			       v[i].deletions);
			if (v[i].who[0])
				printf("  by %s", who);
			putchar('\n');
			if (v[i].skipped[0])
				printf("       left out (over checkpoints.max_file_size_mb): %s\n",
				       v[i].skipped);
		}
		rollback_pending(tree);
		printf("\n  hermesctl rollback diff N    what changed since checkpoint N\n"
		       "  hermesctl rollback N         restore the tree to checkpoint N\n"
		       "  hermesctl rollback N FILE    restore one file from checkpoint N\n");
	}
	free(v);
	return HCTL_OK;
}

/* Page through $PAGER (or less -R) when stdout is a terminal, like git. */
static FILE *rollback_pager(pid_t *pid)
{
	const char *pager = getenv("PAGER");
	int fds[2];

	*pid = -1;
	if (!isatty(STDOUT_FILENO))
		return stdout;
	if (!pager || !*pager)
		pager = "less";
	if (strcmp(pager, "cat") == 0 || pipe(fds) < 0)
		return stdout;
	fflush(stdout);
	*pid = fork();
	if (*pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return stdout;
	}
	if (*pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		close(fds[0]);
		close(fds[1]);
		setenv("LESS", getenv("LESS") ? getenv("LESS") : "FRX", 1);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	signal(SIGPIPE, SIG_IGN);
	return fdopen(fds[1], "w");
}

static int rollback_diff(struct store *st, int rootfd, const char *spec,
			 const char *const *paths, size_t npaths, int stat_only, int nopager)
{
	struct store_diff_opts o = { paths, npaths, 0, stat_only };
	struct herr e = HERR_INIT;
	char oid[STORE_OID_HEX];
	FILE *out = stdout;
	pid_t pager = -1;
	int r;

	r = store_resolve(st, spec, oid, &e);
	/* a path in neither the checkpoint nor the tree is a typo, not "no
	 * changes" */
	for (size_t i = 0; r == 0 && rootfd >= 0 && i < npaths; i++)
		if ((r = store_restore_check(st, rootfd, oid, &paths[i], 1, &e)) < 0)
			snprintf(e.msg, sizeof(e.msg), "%s: neither in checkpoint %s nor in the tree",
				 paths[i], spec);
	if (r < 0) {
		hctl_error("%s", e.msg);
		return hctl_exit_for(r);
	}
	if (!nopager)
		out = rollback_pager(&pager);
	o.color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	r = store_diff(st, rootfd, oid, &o, out, &e);
	if (r == 0)
		fprintf(out, "no changes since checkpoint %s (%.8s)\n", spec, oid);
	if (out != stdout)
		fclose(out);
	if (pager > 0)
		while (waitpid(pager, NULL, 0) < 0 && errno == EINTR)
			;
	if (r < 0) {
		hctl_error("%s", e.msg);
		return hctl_exit_for(r);
	}
	return HCTL_OK;
}

/* What a restore left as it was (store_restore_out.kept): said on stderr,
 * and the command fails, since the tree is not the checkpoint. */
static int rollback_report_kept(char *const *kept, size_t n)
{
	if (n == 0)
		return HCTL_OK;
	for (size_t i = 0; i < n && i < 20; i++) {
		fputs("hermesctl: kept ", stderr);
		quote_put(stderr, kept[i]);
		fputs(" as it is: no checkpoint holds it (a new file over "
		      "checkpoints.max_file_size_mb, or one made during the restore), so "
		      "restoring it would destroy the only copy\n",
		      stderr);
	}
	if (n > 20)
		fprintf(stderr, "hermesctl: ... and %zu more paths kept the same way\n", n - 20);
	hctl_error("%zu path%s not restored: move %s aside and run the rollback again",
		   n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
	return HCTL_FAIL;
}

/* Restore through the mounted tree's daemon: ordered with the other writes,
 * the kernel's caches kept right, the safety checkpoint taken by the one
 * writer of the store. */
static int rollback_restore_daemon(const struct mount_info *m, const char *spec,
				   const char *const *paths, size_t npaths)
{
	cJSON *req = cJSON_CreateObject(), *resp = NULL;
	cJSON *arr = cJSON_AddArrayToObject(req, "paths");
	int rc;

	cJSON_AddStringToObject(req, "op", "restore");
	cJSON_AddStringToObject(req, "spec", spec);
	cJSON_AddNumberToObject(req, "umask", (double)hctl_umask());
	for (size_t i = 0; i < npaths; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(paths[i]));
	rc = hctl_daemon_call(m, req, &resp);
	if (rc != HCTL_OK)
		return rc;
	const cJSON *ch = cJSON_GetObjectItemCaseSensitive(resp, "changed");
	const cJSON *kj = cJSON_GetObjectItemCaseSensitive(resp, "kept"), *it;
	long changed = cJSON_IsNumber(ch) ? (long)ch->valuedouble : 0;
	char **kept = NULL;
	size_t nkept = 0;

	printf("restored %s to checkpoint %.8s (%ld path%s changed)\n",
	       npaths ? "files" : m->source, hctl_json_str(resp, "oid"), changed,
	       changed == 1 ? "" : "s");
	printf("the state before it is checkpoint %.8s: 'hermesctl rollback %.8s' undoes this\n",
	       hctl_json_str(resp, "safety_oid"), hctl_json_str(resp, "safety_oid"));
	fflush(stdout);
	if (cJSON_IsArray(kj) && (kept = calloc((size_t)cJSON_GetArraySize(kj) + 1, sizeof(*kept))))
		cJSON_ArrayForEach(it, kj)
			if (cJSON_IsString(it))
				kept[nkept++] = it->valuestring;
	rc = rollback_report_kept(kept, nkept);
	free(kept);
	cJSON_Delete(resp);
	return rc;
}

static int rollback_restore(struct store *st, int rootfd, const char *spec,
			    const char *const *paths, size_t npaths)
{
	struct herr e = HERR_INIT;
	char oid[STORE_OID_HEX], safety[STORE_OID_HEX], reason[128];
	struct ckpt_proc who;
	struct ckpt_meta meta = { 0 };
	struct store_restore_out res = { 0 };
	int r;

	r = store_resolve(st, spec, oid, &e);
	if (r == 0)
		r = store_restore_check(st, rootfd, oid, paths, npaths, &e);
	if (r < 0) {
		hctl_error("%s", e.msg);
		return hctl_exit_for(r);
	}
	snprintf(reason, sizeof(reason), "before rollback to %s (%.8s)", spec, oid);
	hctl_caller(&who);
	meta.reason = reason;
	meta.procs = &who;
	meta.nprocs = 1;
	r = store_checkpoint_scan(st, rootfd, &meta, hctl_progress, NULL, safety, &e);
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	if (r < 0) {
		hctl_error("safety checkpoint failed, nothing restored: %s", e.msg);
		return hctl_exit_for(r);
	}
	r = store_restore(st, rootfd, oid, paths, npaths, hctl_umask(), NULL, &res, &e);
	if (r < 0) {
		hctl_error("%s", e.msg);
		if (res.changed > 0)
			hctl_error("the state before this rollback is checkpoint %.8s: "
				   "'hermesctl rollback %.8s' undoes the part that was done",
				   safety, safety);
		store_restore_out_free(&res);
		return hctl_exit_for(r);
	}
	printf("restored %s to checkpoint %.8s (%zu path%s changed)\n",
	       npaths ? "files" : store_tree_path(st), oid, res.changed,
	       res.changed == 1 ? "" : "s");
	printf("the state before it is checkpoint %.8s: 'hermesctl rollback %.8s' undoes this\n",
	       safety, safety);
	fflush(stdout);
	r = rollback_report_kept(res.kept, res.nkept);
	store_restore_out_free(&res);
	return r;
}

int cmd_rollback(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "stat", no_argument, NULL, 's' },
		{ "no-pager", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL;
	char tree[PATH_MAX], cwd[PATH_MAX];
	struct config *cfg = NULL;
	struct store *st = NULL;
	_cleanup_close_ int rootfd = -1;
	char **rel = NULL;
	size_t nrel = 0;
	int json = 0, stat_only = 0, nopager = 0, has, c, rc, diff = 0, daemon;
	struct mount_info m;

	optind = 1;
	/* options may follow N (e.g. "rollback diff 2 --stat") */
	while ((c = getopt_long(argc, argv, "C:h", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			dir = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 's':
			stat_only = 1;
			break;
		case 'P':
			nopager = 1;
			break;
		case 'h':
			rollback_usage(stdout);
			return HCTL_OK;
		default:
			rollback_usage(stderr);
			return HCTL_USAGE;
		}
	}
	argv += optind;
	argc -= optind;
	if (argc > 0 && strcmp(argv[0], "diff") == 0) {
		diff = 1;
		argv++;
		argc--;
		if (argc < 1) {
			hctl_error("rollback diff: which checkpoint? (see 'hermesctl rollback')");
			return HCTL_USAGE;
		}
	}
	rc = hctl_find_tree(dir, tree, cwd, &has);
	if (rc != HCTL_OK)
		return rc;
	if (!has) {
		if (argc == 0 && !json) {
			printf("no checkpoints for %s\n", tree);
			return HCTL_OK;
		}
		if (argc == 0) {
			puts("[]");
			return HCTL_OK;
		}
		hctl_error("no checkpoints for %s", tree);
		return HCTL_NOTFOUND;
	}
	rc = hctl_open_store(tree, &cfg, &st);
	if (rc != HCTL_OK)
		goto out;
	if (argc == 0) {
		rc = rollback_list(st, tree, json);
		goto out;
	}
	if (argc > 1) {
		rel = calloc((size_t)argc, sizeof(*rel));
		for (int i = 1; rel && i < argc; i++) {
			rel[nrel] = malloc(PATH_MAX);
			if (!rel[nrel])
				break;
			rc = hctl_tree_relpath(tree, cwd, argv[i], rel[nrel], PATH_MAX);
			nrel++;
			if (rc != HCTL_OK)
				goto out;
		}
	}
	rootfd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		hctl_error("cannot open %s: %s", tree, strerror(errno));
		rc = HCTL_NOTFOUND;
		goto out;
	}
	if (diff)
		rc = rollback_diff(st, rootfd, argv[0], (const char *const *)rel, nrel, stat_only,
				   nopager);
	else if ((daemon = hctl_tree_daemon(tree, &m)) > 0)
		rc = rollback_restore_daemon(&m, argv[0], (const char *const *)rel, nrel);
	else if (daemon < 0)
		rc = HCTL_DEAD;
	else
		rc = rollback_restore(st, rootfd, argv[0], (const char *const *)rel, nrel);
out:
	for (size_t i = 0; i < nrel; i++)
		free(rel[i]);
	free(rel);
	store_close(st);
	config_free(cfg);
	return rc;
}
