/* Unit tests for the store API on a plain temporary directory: unchanged
 * trees, O(changed) checkpoints across file <-> directory swaps compared
 * with a full scan, counts in the listing, resolving numbers and hashes,
 * single-path restore. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"
#include "tap.h"

static char tree[256];

static int run(const char *cmd)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "cd '%s' && %s", tree, cmd);
	return system(buf);
}

int main(void)
{
	char home[] = "/tmp/hermes-unit-XXXXXX", oid[STORE_OID_HEX], oid2[STORE_OID_HEX];
	char scan_oid[STORE_OID_HEX], got[STORE_OID_HEX];
	struct store *st = NULL;
	struct herr e = HERR_INIT;
	struct ckpt_info *v = NULL;
	size_t n = 0;
	int rootfd, r;

	if (!mkdtemp(home))
		return 1;
	setenv("HERMES_HOME", home, 1);
	snprintf(tree, sizeof(tree), "%s/tree", home);
	mkdir(tree, 0755);
	run("mkdir -p d && echo one > a && echo two > d/b");
	rootfd = open(tree, O_RDONLY | O_DIRECTORY);

	ok(store_open(tree, NULL, &st, &e) == 0, "store created: %s", e.msg);
	ok(store_checkpoint_scan(st, rootfd, NULL, NULL, NULL, oid, &e) == 0, "baseline");
	ok(store_checkpoint_scan(st, rootfd, NULL, NULL, NULL, oid2, &e) == STORE_UNCHANGED &&
	   strcmp(oid, oid2) == 0, "unchanged tree: no commit");

	/* a <-> d swap: the file becomes a directory and the other way round */
	run("rm a && mkdir a && echo in > a/x && rm -r d && echo flat > d");
	{
		const char *paths[] = { "a", "d" };
		struct ckpt_meta m = { .reason = "swap" };
		r = store_checkpoint_paths(st, rootfd, paths, 2, &m, oid, &e);
		ok(r == 0, "paths checkpoint across file/dir swaps: %s", e.msg);
	}
	ok(store_checkpoint_scan(st, rootfd, NULL, NULL, NULL, scan_oid, &e) == STORE_UNCHANGED,
	   "a full scan finds the same tree");

	ok(store_list(st, &v, &n, &e) == 0 && n == 2, "two checkpoints listed");
	ok(n == 2 && strcmp(v[0].reason, "swap") == 0 && v[0].files == 4 && v[0].insertions == 2 &&
	   v[0].deletions == 2, "reason and counts from the trailers");
	free(v);

	ok(store_resolve(st, "2", got, &e) == 0, "resolve a number");
	ok(store_resolve(st, "3", got, &e) == -ERANGE, "out of range");
	ok(store_resolve(st, "xyz", got, &e) == -EINVAL, "malformed");
	ok(store_resolve(st, "-abc", got, &e) == -EINVAL, "leading dash");
	{
		char prefix[8];
		snprintf(prefix, sizeof(prefix), "%.7s", oid);
		ok(store_resolve(st, prefix, got, &e) == 0 && strcmp(got, oid) == 0,
		   "resolve a hash prefix");
	}

	ok(store_resolve(st, "2", got, &e) == 0, "resolve 2");
	{
		const char *p[] = { "d" };
		err_clear(&e);
		struct store_restore_out res;
		err_clear(&e);
		ok(store_restore_check(st, rootfd, got, p, 1, &e) == 0, "check d: %s", e.msg);
		ok(store_restore(st, rootfd, got, p, 1, 022, NULL, &res, &e) == 0, "restore d: %s", e.msg);
		ok(res.nkept == 0, "nothing kept");
		store_restore_out_free(&res);
		ok(run("test -d d && grep -q two d/b && test -d a") == 0,
		   "d is a directory again, a untouched");
	}
	{
		const char *p[] = { "nope" };
		struct store_restore_out res;
		ok(store_restore_check(st, rootfd, got, p, 1, &e) == -ENOENT,
		   "a path in neither tree nor on the disk is refused before a checkpoint");
		ok(store_restore(st, rootfd, got, p, 1, 022, NULL, &res, &e) == -ENOENT,
		   "a path in neither tree is refused");
		store_restore_out_free(&res);
	}
	store_close(st);
	close(rootfd);
	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
		if (system(cmd) != 0)
			return 1;
	}
	return done_testing();
}
