/* Shared pieces of the posix_ops transcript tool: one normalized output
 * line per check, state formatting that never shows inode numbers or raw
 * times, and running a check as another user in a forked child. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Users the root battery switches to; the unprivileged battery runs as
 * PO_UID_A when started as root, as the caller otherwise. */
#define PO_UID_A 1234
#define PO_GID_A 1234
#define PO_UID_B 1235
#define PO_GID_B 1235
#define PO_GROUP_X 4321 /* a supplementary group of user A only */

/* A syscall's result as 0/positive or -errno, read right after the call. */
static inline long po_sys(long r)
{
	return r < 0 ? -errno : r;
}

/* "name -> RESULT [state]": RESULT is the value, or the errno name. */
void po_line(const char *name, long ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Evaluate the operation first, then the state arguments: C leaves the
 * order of a call's arguments open, and the state must be observed after
 * the operation. */
#define PO_CHECK(name, op, ...)                          \
	do {                                             \
		long po_check_ret_ = (op);               \
		po_line(name, po_check_ret_, __VA_ARGS__); \
	} while (0)
/* A line with only state, no call result. */
void po_note(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Formatting of observed state into a caller buffer. */
const char *po_errname(int err);
/* type, mode, nlink, size, uid, gid of path (lstat), or the errno name. */
const char *po_lstat_str(const char *path, char *buf, size_t size);
const char *po_fstat_str(int fd, char *buf, size_t size);
/* FNV-1a 64 of a file's bytes as hex, or the errno name. */
const char *po_hash_path(const char *path, char *buf, size_t size);
uint64_t po_hash_bytes(const void *p, size_t n);
/* open(), close at once: 0 or -errno (never an fd number). */
long po_open_ret(const char *path, int flags, ...);
/* Whole-file helpers; return 0 or -errno. */
int po_write_file(const char *path, const void *data, size_t n, mode_t mode);
int po_read_file(const char *path, char *buf, size_t size, size_t *got);
/* Fill a buffer with a deterministic pattern that depends on seed. */
void po_pattern(void *buf, size_t n, unsigned seed);
/* The filesystem clock, for "advanced"/"unchanged" relations. */
struct timespec po_now(void);
int po_ts_cmp(struct timespec a, struct timespec b);
/* Set atime and mtime of path to a fixed old value (2001-09-09). */
int po_age(const char *path);

/* Run fn in a forked child with these credentials (ngroups may be 0) and
 * wait for it. Returns the child's exit status or -errno. */
int po_as_user(uid_t uid, gid_t gid, int ngroups, const gid_t *groups,
	       void (*fn)(void *), void *arg);
/* Fork, run fn in the child, wait; no credential change. */
int po_in_child(void (*fn)(void *), void *arg);

int po_is_root(void);

/* The batteries, each in its own file; each works in the current
 * directory, in a subdirectory named after it. */
void po_files_run(void);
void po_io_run(void);
void po_names_run(void);
void po_meta_run(void);
void po_locks_run(void);
void po_special_run(void);
void po_users_run(void);
void po_times_run(void);
void po_acl_run(void);
void po_edge_run(void);
/* Root-owned fixtures the unprivileged checks try to touch. */
int po_users_fixtures(const char *dir);
