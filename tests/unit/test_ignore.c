/* Unit tests for the exclusion matcher: the gitignore subset, the
 * default list, and directories excluded for what they hold. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"
#include "tap.h"

static struct store_ignore *rules(const char *text)
{
	struct store_ignore *ig = NULL;

	store_ignore_new(&ig);
	store_ignore_add_text(ig, text, strlen(text));
	return ig;
}

static int foreign_at(const char *dir)
{
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r = fd >= 0 ? store_ignore_foreign_dir(fd) : -1;

	if (fd >= 0)
		close(fd);
	return r;
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f)
		fclose(f);
}

static void foreign_dirs(void)
{
	char dir[] = "/tmp/hermes-test-ignore.XXXXXX", p[256];

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	ok(foreign_at(dir) == 0, "an empty directory is no repository");
	snprintf(p, sizeof(p), "%s/HEAD", dir);
	touch(p);
	snprintf(p, sizeof(p), "%s/refs", dir);
	mkdir(p, 0755);
	ok(foreign_at(dir) == 0, "HEAD and refs/ without objects/ is no repository");
	snprintf(p, sizeof(p), "%s/objects", dir);
	touch(p);
	ok(foreign_at(dir) == 0, "a file named objects is no object store");
	unlink(p);
	mkdir(p, 0755);
	ok(foreign_at(dir) == 1, "HEAD, objects/ and refs/: a (bare) repository");
	ok(store_ignore_foreign_name("HEAD") && store_ignore_foreign_name("pyvenv.cfg") &&
		   !store_ignore_foreign_name("config"),
	   "the names that decide it");
	rmdir(p);
	snprintf(p, sizeof(p), "%s/refs", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/HEAD", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/pyvenv.cfg", dir);
	touch(p);
	ok(foreign_at(dir) == 1, "pyvenv.cfg: a virtualenv");
	unlink(p);
	rmdir(dir);
}

int main(void)
{
	struct store_ignore *ig = NULL;

	store_ignore_new(&ig);
	store_ignore_add_defaults(ig);
	ok(!store_ignore_match(ig, "src/a.c", 0), "plain source file kept");
	ok(!store_ignore_match(ig, "b.c", 0), "top-level file kept");
	ok(!store_ignore_match(ig, "link", 0), "name without dot kept");
	ok(store_ignore_match(ig, "node_modules", 1), "node_modules/ excluded");
	ok(store_ignore_match(ig, "web/node_modules/x/y.js", 0), "file under nested node_modules");
	ok(!store_ignore_match(ig, "node_modules", 0), "a file named node_modules is not a dir");
	ok(store_ignore_match(ig, ".env", 0), ".env excluded");
	ok(store_ignore_match(ig, "cfg/.env.local", 0), ".env.local excluded at depth");
	ok(store_ignore_match(ig, "app.log", 0), "*.log excluded");
	ok(store_ignore_match(ig, "a/b/lib.so", 0), "*.so excluded at depth");
	ok(store_ignore_match(ig, "x.tar.gz", 0), "*.tar.gz excluded");
	ok(!store_ignore_match(ig, "environment.c", 0), "env/ does not catch environment.c");
	ok(store_ignore_match(ig, "env", 1), "env/ dir excluded");
	ok(store_ignore_match(ig, ".git", 0), ".git file excluded");
	ok(store_ignore_match(ig, "sub/.git/config", 0), "nested .git dir content excluded");
	ok(store_ignore_match(ig, "__pycache__/m.pyc", 0), "__pycache__ excluded");
	ok(!store_ignore_match(ig, "build.c", 0), "build/ does not catch build.c");
	ok(store_ignore_match(ig, "src/.f.txt.swp", 0), "vim swap file excluded");
	ok(store_ignore_match(ig, ".f.txt.swo", 0), "vim second swap file excluded");
	ok(store_ignore_match(ig, "notes.txt~", 0), "backup file excluded");
	ok(store_ignore_match(ig, "src/.#main.c", 0), "emacs lock file excluded");
	ok(store_ignore_match(ig, "src/#main.c#", 0), "emacs auto-save file excluded");
	ok(!store_ignore_match(ig, "src/#main.c", 0), "a name starting with # is kept");
	ok(!store_ignore_match(ig, "swp", 0), "a name ending in swp is kept");
	store_ignore_free(ig);

	ig = rules("# comment\n\n/top.txt\ndocs/*.md\n**/gen/**\nfoo/**/bar\n*.tmp\n!keep.tmp\n"
		   "data/\n\\#hash\nsp\\ \nq?.txt\n[abc]x\n[!0-9]y\n");
	ok(store_ignore_match(ig, "top.txt", 0), "anchored /top.txt at root");
	ok(!store_ignore_match(ig, "sub/top.txt", 0), "anchored /top.txt not below");
	ok(store_ignore_match(ig, "docs/a.md", 0), "docs/*.md");
	ok(!store_ignore_match(ig, "docs/x/a.md", 0), "* does not cross /");
	ok(!store_ignore_match(ig, "sub/docs/a.md", 0), "pattern with / is anchored");
	ok(store_ignore_match(ig, "gen/x", 0), "**/gen/** at root");
	ok(store_ignore_match(ig, "a/b/gen/c/d", 0), "**/gen/** deep");
	ok(store_ignore_match(ig, "foo/bar", 0), "foo/**/bar with zero dirs");
	ok(store_ignore_match(ig, "foo/a/b/bar", 0), "foo/**/bar with two dirs");
	ok(!store_ignore_match(ig, "foo/barx", 0), "foo/**/bar is not a prefix match");
	ok(store_ignore_match(ig, "x/y.tmp", 0), "*.tmp");
	ok(!store_ignore_match(ig, "x/keep.tmp", 0), "negation re-includes");
	ok(store_ignore_match(ig, "data", 1), "data/ as dir");
	ok(!store_ignore_match(ig, "data", 0), "data/ not a file");
	ok(store_ignore_match(ig, "data/in/f", 0), "inside excluded dir");
	ok(store_ignore_match(ig, "#hash", 0), "escaped # is a pattern");
	ok(store_ignore_match(ig, "sp ", 0), "escaped trailing space kept");
	ok(store_ignore_match(ig, "q1.txt", 0), "? matches one char");
	ok(!store_ignore_match(ig, "q12.txt", 0), "? matches only one char");
	ok(store_ignore_match(ig, "bx", 0), "[abc] class");
	ok(!store_ignore_match(ig, "dx", 0), "[abc] class miss");
	ok(store_ignore_match(ig, "ay", 0), "[!0-9] negated class");
	ok(!store_ignore_match(ig, "5y", 0), "[!0-9] negated class miss");
	store_ignore_free(ig);

	ig = rules("logs/\n!logs/keep.txt\n");
	ok(store_ignore_match(ig, "logs/keep.txt", 0),
	   "a file in an excluded dir cannot be re-included (as git)");
	store_ignore_free(ig);

	foreign_dirs();
	return done_testing();
}
