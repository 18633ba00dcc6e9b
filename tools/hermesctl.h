/* hermesctl subcommands: each lives in cmd_<name>.c and returns the
 * process exit code (see EXIT CODES in `hermesctl --help`). */
#pragma once

#include <stddef.h>
#include <cjson/cJSON.h>

struct mount_info;

enum hctl_exit {
	HCTL_OK = 0,
	HCTL_FAIL = 1,      /* the operation failed; the message says why */
	HCTL_USAGE = 2,     /* bad command line */
	HCTL_NOTFOUND = 3,  /* no such tree, mount or checkpoint */
	HCTL_BLOCKED = 4,   /* refused by policy (danger gate, refused path) */
	HCTL_DEAD = 5,      /* a mount whose daemon died (status) */
	HCTL_TIMEOUT = 124, /* a command ran out of time (run) */
};

int cmd_mount(int argc, char **argv);
int cmd_umount(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_turn(int argc, char **argv);
int cmd_checkpoint(int argc, char **argv);
int cmd_checkpoints(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_code(int argc, char **argv);
/* cmd_run.c, shared with cmd_code.c: can a person answer the gate on the
 * terminal (why not, into *why); the crontab stand-in's path. */
int hctl_can_ask(int json, int ask, const char **why);
const char *hctl_crontab_shim(void);
/* The HOME and approval modes (*hm, *am: the flags, or NULL for the
 * environment, then config) into job; -1 after saying what is wrong. */
struct config;
struct runner_job;
int hctl_job_modes(const char *cmd, const char **hm, const char **am, const struct config *cfg,
		   struct runner_job *job);
/* terminal.env_passthrough into pass (at most max), then our own initial
 * environment rid of every secret not passed through; the count, or
 * (size_t)-1 after saying why it failed. */
size_t hctl_scrub_self(const char *cmd, char **argv, const struct config *cfg, const char **pass,
		       size_t max);

/* Print "hermesctl: <msg>" to stderr. */
void hctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hctl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message of the last hctl_error ("" if none). */
const char *hctl_last_error(void);
/* Is argv[i] a help flag? */
int hctl_is_help(const char *arg);
/* The process's umask (read without changing it for good). */
unsigned hctl_umask(void);
/* Directory holding the hermesctl binary (to find hermesfs beside it). */
const char *hctl_self_dir(void);

/* mountutil.c */
/* Lexically absolute path (no realpath: a dead FUSE mount answers ENOTCONN). */
int hctl_abspath(const char *in, char *out, size_t size);
/* The registered mount holding path arg (exact: whose mountpoint or source
 * it is). The lexical path is tried first, then the path with its symlinks
 * resolved (a link to a tree). path gets the form that matched, else the
 * resolved one if any, else the lexical one. 0, -ENOENT, or another -errno. */
struct mount_info;
int hctl_find_mount(const char *arg, int exact, char *path, size_t size, struct mount_info *m);
/* Detach a mount whose daemon is gone and forget its record. */
int hctl_cleanup_dead(const struct mount_info *m);
cJSON *hctl_mount_json(const struct mount_info *m);
/* Print unformatted on one line and free. */
void hctl_print_json(cJSON *o);
