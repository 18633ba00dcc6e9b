/* Unit tests for the inode table: lookups share one record per (dev, ino),
 * paths follow renames, and forgetting frees records (parents last). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hfs.h"
#include "tap.h"

static struct hfs_inode *look(struct hfs *fs, struct hfs_inode *dir, const char *name)
{
	struct fuse_entry_param e;

	if (inode_lookup(fs, dir, name, &e) < 0)
		return NULL;
	return inode_get(fs, e.ino);
}

int main(void)
{
	char tmpl[] = "/tmp/hfs-inode-XXXXXX", path[256], p[512];
	static struct hfs fs;
	struct fuse_entry_param e;
	struct hfs_inode *a, *b, *b2, *c;
	int root;

	if (!mkdtemp(tmpl))
		return 1;
	snprintf(p, sizeof(p), "mkdir -p %s/a %s/x && echo hi > %s/a/b && ln %s/a/b %s/x/hard",
		 tmpl, tmpl, tmpl, tmpl, tmpl);
	if (system(p) != 0)
		return 1;
	root = open(tmpl, O_PATH | O_DIRECTORY);
	ok(inode_table_init(&fs, root) == 0, "table set up on the root fd");
	ok(fs.table_count == 1, "the root is the only record");

	a = look(&fs, &fs.root, "a");
	b = look(&fs, a, "b");
	ok(a && b && a != b, "lookups give records");
	ok(inode_path(&fs, b, path, sizeof(path)) == 0 && strcmp(path, "a/b") == 0,
	   "path of a/b is '%s'", path);
	ok(inode_lookup(&fs, &fs.root, "missing", &e) == -ENOENT, "a missing name is -ENOENT");
	ok(fs.table_count == 3, "one record per inode (%zu)", fs.table_count);

	c = look(&fs, &fs.root, "x");
	b2 = look(&fs, c, "hard");
	ok(b2 == b, "a hard link is the same record");
	ok(inode_path(&fs, b, path, sizeof(path)) == 0 && strcmp(path, "x/hard") == 0,
	   "the latest lookup names it: '%s'", path);

	snprintf(p, sizeof(p), "%s/x/hard", tmpl);
	snprintf(path, sizeof(path), "%s/a/moved", tmpl);
	ok(rename(p, path) == 0, "rename on disk");
	inode_renamed(&fs, a, "moved");
	ok(inode_path(&fs, b, path, sizeof(path)) == 0 && strcmp(path, "a/moved") == 0,
	   "rename updates the name: '%s'", path);
	ok(inode_path(&fs, &fs.root, path, sizeof(path)) == 0 && path[0] == '\0',
	   "the root's path is empty");

	/* the kernel forgets a and x; b still names a as parent */
	inode_forget(&fs, a, 1);
	inode_forget(&fs, c, 1);
	ok(fs.table_count == 3, "a parent lives while a child needs it (%zu)", fs.table_count);
	ok(inode_path(&fs, b, path, sizeof(path)) == 0 && strcmp(path, "a/moved") == 0,
	   "path still complete after the parent's forget");
	inode_forget(&fs, b, 2);
	ok(fs.table_count == 1, "all records freed after the last forget (%zu)", fs.table_count);

	/* many inodes force the hash table to grow */
	for (int i = 0; i < 5000; i++) {
		snprintf(p, sizeof(p), "%s/a/f%d", tmpl, i);
		close(open(p, O_CREAT | O_WRONLY, 0600));
	}
	a = look(&fs, &fs.root, "a");
	int found = 0;
	for (int i = 0; i < 5000; i++) {
		snprintf(p, sizeof(p), "f%d", i);
		found += look(&fs, a, p) != NULL;
	}
	ok(found == 5000 && fs.table_count == 5002, "5000 lookups after growth (%zu)",
	   fs.table_count);
	ok(look(&fs, a, "f42") == look(&fs, a, "f42"), "found again after growth");
	/* past the fd budget files keep a handle and are reopened from it */
	fs.mount_fd = open(tmpl, O_RDONLY | O_DIRECTORY);
	fs.use_handles = geteuid() == 0;
	fs.fd_budget = 0;
	if (fs.use_handles) {
		struct inode_fd f;
		struct stat st1, st2;
		char buf[8] = { 0 };
		snprintf(p, sizeof(p), "%s/a/moved", tmpl);
		b = look(&fs, a, "moved");
		ok(b && b->fd < 0 && b->handle, "a new file past the budget keeps only a handle");
		ok(b && inode_fd_get(&fs, b, &f) == 0 && f.lease == b && fstat(f.fd, &st1) == 0 &&
			   stat(p, &st2) == 0 && st1.st_ino == st2.st_ino,
		   "the handle reopens the same inode, and the fd is kept");
		int kept = f.fd;
		inode_fd_put(&f);
		ok(b && inode_fd_get(&fs, b, &f) == 0 && f.fd == kept && b->hfd_users == 1,
		   "the next op leases the kept fd");
		inode_fd_put(&f);
		ok(b && b->hfd_users == 0 && fcntl(kept, F_GETFD) >= 0,
		   "the kept fd stays open after its lease ends");
		/* an unlink that succeeds leaves the record an fd of its own;
		 * one that fails pins nothing */
		struct hfs_inode *v = NULL;
		struct inode_pin pin;
		snprintf(p, sizeof(p), "%s/a/victim", tmpl);
		close(open(p, O_CREAT | O_WRONLY, 0600));
		v = look(&fs, a, "victim");
		long handles = atomic_load(&fs.handle_recs);
		inode_pin_prepare(&fs, a, "victim", &pin);
		inode_pin_commit(&fs, &pin, 0);
		ok(v && v->fd < 0 && atomic_load(&fs.handle_recs) == handles,
		   "a removal that failed pins nothing");
		inode_pin_prepare(&fs, a, "victim", &pin);
		unlink(p);
		inode_pin_commit(&fs, &pin, 1);
		ok(v && v->fd >= 0 && atomic_load(&fs.handle_recs) == handles - 1,
		   "a file unlinked gets an fd opened before");
		int vfd = v ? v->fd : -1;
		ok(v && inode_fd_get(&fs, v, &f) == 0 && f.fd == vfd && !f.lease,
		   "the unlinked file is still reached through it");
		inode_fd_put(&f);
		/* one kept at most: the older, unleased one is closed */
		fs.hfd_cap = 1;
		snprintf(p, sizeof(p), "%s/a/f7", tmpl);
		struct hfs_inode *f7 = look(&fs, a, "f7"); /* known already: an fd */
		snprintf(p, sizeof(p), "%s/a/other", tmpl);
		close(open(p, O_CREAT | O_WRONLY, 0600));
		struct hfs_inode *o = look(&fs, a, "other");
		ok(f7 && o && o->hfd >= 0 && b->hfd < 0 && fs.hfd_count == 1,
		   "past the cap the least recently used kept fd is closed (%ld kept)",
		   fs.hfd_count);
		/* a leased fd is never closed under its user */
		ok(inode_fd_get(&fs, o, &f) == 0 && f.lease == o, "lease the one kept");
		struct inode_fd g;
		ok(inode_fd_get(&fs, b, &g) == 0 && g.lease == b && o->hfd == f.fd &&
			   fcntl(f.fd, F_GETFD) >= 0,
		   "a second file over the cap leaves the leased fd open");
		inode_fd_put(&g);
		inode_fd_put(&f);
		ok(fs.hfd_count == 1, "back within the cap once the leases end (%ld)", fs.hfd_count);
		/* with keeping off, every op gets an fd of its own */
		fs.hfd_cap = 0;
		struct hfs_inode *n = NULL;
		snprintf(p, sizeof(p), "%s/a/nokeep", tmpl);
		close(open(p, O_CREAT | O_WRONLY, 0600));
		n = look(&fs, a, "nokeep");
		ok(n && n->hfd < 0 && inode_fd_get(&fs, n, &f) == 0 && f.owned && !f.lease,
		   "handle_fds=0: an fd of its own per op");
		inode_fd_put(&f);
		fs.hfd_cap = HFS_HFD_CAP;
		int fd = b ? inode_open(&fs, b, O_RDONLY) : -1;
		ok(fd >= 0 && read(fd, buf, sizeof(buf) - 1) == 3 && strcmp(buf, "hi\n") == 0,
		   "inode_open reads the file through its handle");
		if (fd >= 0)
			close(fd);
		/* directories too: a tree of a million needs no million fds */
		char late[PATH_MAX];
		snprintf(late, sizeof(late), "%s/late", tmpl);
		snprintf(p, sizeof(p), "%s/late/y", tmpl);
		ok(mkdir(late, 0700) == 0 && mkdir(p, 0700) == 0, "mkdir late/y");
		c = look(&fs, &fs.root, "late");
		ok(c && c->fd < 0 && c->handle, "directories keep a handle past the budget");
		struct hfs_inode *below = c ? look(&fs, c, "y") : NULL;
		ok(below != NULL, "a lookup inside a handle-only directory works");
	} else {
		printf("# not root: file-handle checks skipped\n");
	}
	close(fs.mount_fd);
	inode_table_free(&fs);
	snprintf(p, sizeof(p), "rm -rf %s", tmpl);
	if (system(p) != 0)
		return 1;
	return done_testing();
}
