/* The registry of live hermesfs mounts: $HERMES_HOME/run/<id>.json, written
 * by each daemon once its mount is live, read by hermesctl and the runner. */
#pragma once

#include <limits.h>
#include <sys/types.h>
#include "err.h"
#include "paths.h"

struct mount_info {
	char id[TREE_ID_LEN + 1];
	char source[PATH_MAX];     /* the protected tree */
	char mountpoint[PATH_MAX]; /* == source when mounted in place */
	char sock[PATH_MAX];       /* control socket */
	char log[PATH_MAX];
	pid_t pid;
	long long started; /* unix seconds */
	/* filled by mounts_list/mounts_find: */
	int alive;   /* daemon process exists */
	int mounted; /* the kernel still has a hermesfs mount there */
};

/* A fuse.hermesfs mount in the kernel's table, whether or not a record of
 * this $HERMES_HOME explains it (fstab mounts, another HERMES_HOME). */
struct kernel_mount {
	char mountpoint[PATH_MAX];
	char source[PATH_MAX]; /* the fsname hermesfs gives the mount: its tree */
};

/* Paths of a tree's run files: ext is "json" or "sock". */
int mounts_run_path(const char *id, const char *ext, char *out, size_t size);
int mounts_write(const struct mount_info *m);
int mounts_remove(const char *id);
/* All registered mounts (caller frees *out). */
int mounts_list(struct mount_info **out, size_t *n);
/* The registered mount whose mountpoint or source contains path (absolute,
 * resolved); -ENOENT when none. */
int mounts_find(const char *path, struct mount_info *out);
/* Is pid a running process (not a zombie waiting to be reaped)? */
int mounts_pid_alive(pid_t pid);
/* Does /proc/self/mountinfo show a FUSE mount at this exact path? If fstype
 * is non-NULL it receives the filesystem type ("fuse.hermesfs"). */
int mounts_kernel_has(const char *mountpoint, char *fstype, size_t size);
/* The same, also giving the device minor: the FUSE connection's number in
 * /sys/fs/fuse/connections. */
int mounts_kernel_dev(const char *mountpoint, char *fstype, size_t size, unsigned *minor);
/* Abort FUSE connection minor (/sys/fs/fuse/connections, mounted first if
 * need be): its requests fail, and so does every later one. 0 or -errno
 * (EACCES: not root; ENOENT: no such connection). */
int mounts_fuse_abort(unsigned minor);
/* Is the FUSE mount at mountpoint dead (its daemon gone: ENOTCONN)? Asks
 * with statfs, which the kernel never answers from its caches, unlike stat
 * (a dead mount's root keeps its cached attributes); not while requests
 * are in flight on its connection (a busy or stuck daemon: 0). */
int mounts_fuse_dead(const char *mountpoint);
/* Every fuse.hermesfs mount of /proc/self/mountinfo (caller frees *out). */
int mounts_kernel_hermesfs(struct kernel_mount **out, size_t *n);
