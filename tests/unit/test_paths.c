/* Unit tests for tree ids and path predicates. */
#include <stdlib.h>
#include <string.h>

#include "paths.h"
#include "tap.h"

int main(void)
{
	char id[TREE_ID_LEN + 1], buf[4096];

	/* printf -n /tmp/project | sha256sum | cut -c1-16 */
	paths_tree_id("/tmp/project", id);
	ok(strlen(id) == 16, "tree id is 16 hex");
	paths_tree_id("/tmp/project2", buf);
	ok(strcmp(id, buf) != 0, "different paths, different ids");

	ok(paths_is_under("/a/b", "/a"), "/a/b under /a");
	ok(paths_is_under("/a", "/a"), "/a under /a");
	ok(!paths_is_under("/ab", "/a"), "/ab not under /a");
	ok(paths_is_under("/x", "/"), "everything under /");

	setenv("HERMES_HOME", "/tmp/hh/", 1);
	ok(paths_hermes_home(buf, sizeof(buf)) == 0 && strcmp(buf, "/tmp/hh") == 0,
	   "HERMES_HOME honoured, trailing slash dropped");
	unsetenv("HERMES_HOME");
	setenv("HOME", "/home/someone", 1);
	ok(paths_hermes_home(buf, sizeof(buf)) == 0 && strcmp(buf, "/home/someone/.hermes") == 0,
	   "default is ~/.hermes");
	ok(paths_refuse_tree("/") != NULL, "/ refused");
	ok(paths_refuse_tree("/home/someone") != NULL, "home refused");
	ok(paths_refuse_tree("/home") != NULL, "a tree holding HERMES_HOME refused");
	ok(paths_refuse_tree("/home/someone/project") == NULL, "a project is fine");
	return done_testing();
}
