/* Write guard: system paths and the sensitive files of every home (process,
 * real, subprocess, profile) are protected; ordinary paths are not. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "tap.h"

static struct guard g;

static void protected(const char *path, const char *cwd)
{
	char why[512] = "";

	ok(guard_check_write(&g, path, cwd, why, sizeof(why)) == -EACCES, "protected: %s (%s)",
	   path, why);
}

static void writable(const char *path, const char *cwd)
{
	char why[512] = "";

	ok(guard_check_write(&g, path, cwd, why, sizeof(why)) == 0, "writable: %s", path);
	if (why[0])
		printf("#   %s\n", why);
}

int main(void)
{
	char hh[] = "/tmp/hermes-test-guard.XXXXXX";
	char p[PATH_MAX + 64], link[PATH_MAX + 16], norm[PATH_MAX];

	if (!mkdtemp(hh))
		return 1;
	setenv("HERMES_HOME", hh, 1);
	setenv("HOME", "/home/proc", 1);
	guard_init(&g, "/home/sub", "/home/real", NULL);
	ok(g.n_homes == 4, "four distinct homes (%zu)", g.n_homes);

	ok(guard_normalize("/a/./b//c/../d/", "/", NULL, norm, sizeof(norm)) == 0 &&
	   strcmp(norm, "/a/b/d") == 0, "normalise . .. // (%s)", norm);
	ok(guard_normalize("x/../../..", "/srv/p", NULL, norm, sizeof(norm)) == 0 &&
	   strcmp(norm, "/") == 0, "relative .. stops at / (%s)", norm);
	ok(guard_normalize("~/.ssh", "/", "/home/u", norm, sizeof(norm)) == 0 &&
	   strcmp(norm, "/home/u/.ssh") == 0, "~ expands (%s)", norm);
	ok(guard_normalize("${HOME}/x", "/", "/home/u", norm, sizeof(norm)) == 0 &&
	   strcmp(norm, "/home/u/x") == 0, "${HOME} expands (%s)", norm);

	protected("/etc/passwd", "/");
	protected("/etc/../etc/shadow", "/");
	protected("/boot/grub/grub.cfg", "/");
	protected("/usr/lib/systemd/system/x.service", "/");
	protected("/var/run/docker.sock", "/");
	protected("/dev/sda", "/");
	protected("/", "/");
	protected("/home/proc/.ssh/authorized_keys", "/");
	protected("/home/real/.bashrc", "/");
	protected("/home/sub/.profile", "/");
	snprintf(p, sizeof(p), "%s/home/.zshrc", hh);
	protected(p, "/");
	protected("~/.ssh/id_rsa", "/");
	protected("$HOME/.netrc", "/");
	protected(".bashrc", "/home/real");
	protected("../real/.gitconfig", "/home/sub");
	snprintf(p, sizeof(p), "%s/config.yaml", hh);
	protected(p, "/");
	snprintf(p, sizeof(p), "%s/.env", hh);
	protected(p, "/");

	writable("/tmp/x", "/");
	writable("/dev/null", "/");
	writable("/home/real/project/main.c", "/");
	writable("~/notes.txt", "/");
	writable("out.txt", "/srv/project");
	writable("/srv/project/.bashrc-notes", "/");
	writable("/usr/local/bin/tool", "/");
	writable("/home/real", "/"); /* cp f ~ : into the home, not over it */

	/* A symlink that leads into a protected place is followed. */
	snprintf(link, sizeof(link), "%s/etc-link", hh);
	ok(symlink("/etc", link) == 0, "make a link to /etc");
	snprintf(p, sizeof(p), "%s/hosts", link);
	protected(p, "/");
	snprintf(p, sizeof(p), "%s/new-file", link);
	protected(p, "/");
	unlink(link);
	rmdir(hh);
	return done_testing();
}
