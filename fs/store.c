/* The store itself: creating and opening the bare repository of a tree,
 * isolating libgit2 from every user or system git setting, committing a
 * tree as a checkpoint with its trailers, and the exclusion rules in use. */
#include "store_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "quote.h"
#include "config.h"
#include "log.h"

static pthread_once_t store_once = PTHREAD_ONCE_INIT;
static int store_init_rc;

static void store_global_init(void)
{
	static const int levels[] = { GIT_CONFIG_LEVEL_PROGRAMDATA, GIT_CONFIG_LEVEL_SYSTEM,
				      GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL };
	char empty[PATH_MAX];
	int r;

	if (git_libgit2_init() < 0) {
		store_init_rc = -EIO;
		return;
	}
	/* our trees only name objects we just wrote or found in the previous
	 * tree: checking each entry's existence made a checkpoint O(tree) */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
	/* objects are verified when written; re-hashing every read (SHA-1
	 * with collision detection) doubled the cost of counting lines */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	/* Keep the trees and text-sized blobs a checkpoint reads or builds
	 * parsed in memory: the next checkpoint reads the same trees again
	 * (as its base) and, for a file edited twice, the same blob; from
	 * the newest pack each such read missed and cost a rescan of the
	 * pack directory. git's defaults cache only objects under 4 KiB.
	 * Trees of any size the cache can hold: a directory's tree is ~35
	 * bytes an entry, and one over the limit is read and parsed again by
	 * each step of a checkpoint and by every later one (a directory of
	 * 100,000 entries is 3.5 MB, and with a 1 MiB limit one changed file
	 * in it cost a checkpoint three reads of it). */
	git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_TREE, (size_t)64 << 20);
	git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_BLOB, (size_t)256 << 10);
	git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)64 << 20);
	/* A daemon lives for days, and every collection deletes packs that
	 * libgit2 keeps open and mapped (it never forgets a pack it loaded):
	 * the disk space of each stayed taken, against the disk cap, and its
	 * pages in memory (1,500 deleted packs, 2.7 GB, after ten minutes of
	 * the torture test). Bounded, the least recently used are closed. */
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_FILE_LIMIT, (size_t)64);
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, (size_t)256 << 20);
	/* an empty directory of our own: no system, global or xdg config */
	r = paths_state_dir("checkpoints/.noconfig", 1, empty, sizeof(empty));
	if (r < 0) {
		store_init_rc = r;
		return;
	}
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], empty) < 0)
			store_init_rc = -EIO;
}

int store_git_err(struct herr *e, int rc, const char *what)
{
	const git_error *ge = git_error_last();

	(void)rc;
	return err_set(e, -EIO, "%s: %s", what, ge && ge->message ? ge->message : "git error");
}

const git_oid store_empty_tree = { { 0x4b, 0x82, 0x5d, 0xc6, 0x42, 0xcb, 0x6e, 0xb9, 0xa0, 0x60,
				      0xe5, 0x4b, 0xf8, 0xd6, 0x92, 0x88, 0xfb, 0xee, 0x49, 0x04 } };

int store_read_small(const char *dir, const char *name, char *out, size_t size)
{
	char path[PATH_MAX + 64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, out, size - 1);
	if (n < 0)
		return -errno;
	out[n] = '\0';
	while (n > 0 && out[n - 1] == '\n')
		out[--n] = '\0';
	return 0;
}

int store_write_marker(struct store *st, const char *name, const char *text)
{
	char path[PATH_MAX + 64], tmp[PATH_MAX + 80];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", st->dir, name);
	if (!text)
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", text);
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		int r = -errno;
		unlink(tmp);
		return r;
	}
	return 0;
}

/* Small state files rewritten on every checkpoint are kept open and
 * overwritten in place (fixed width), not replaced: one pwrite each. */
static int store_state_open(struct store *st, int *fd, const char *name)
{
	char path[PATH_MAX + 32];

	if (*fd < 0) {
		snprintf(path, sizeof(path), "%s/%s", st->dir, name);
		*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (*fd < 0)
			return -errno;
	}
	return 0;
}

int store_state_put(struct store *st, int *fd, const char *name, const char *text)
{
	char buf[64];
	int n, r;

	if ((r = store_state_open(st, fd, name)) < 0)
		return r;
	if (!text)
		return ftruncate(*fd, 0) < 0 ? -errno : 0;
	n = snprintf(buf, sizeof(buf), "%-40s\n", text);
	return pwrite(*fd, buf, (size_t)n, 0) != n ? -EIO : 0;
}

/* Under our lock nobody else moves the chain: a ref lock file is what a
 * process killed in the middle of a checkpoint left behind, and would
 * refuse every later checkpoint. */
static void store_drop_stale_lock(struct store *st)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s.lock", st->dir, STORE_REF);
	if (unlink(path) == 0)
		log_warn("checkpoint store %s: removed a stale %s.lock", st->dir, STORE_REF);
	/* half-written packs of killed writers: only the lock holder writes.
	 * Once per open store (a readdir of objects/pack per checkpoint was a
	 * measurable share of one); collections remove the rest. */
	if (st->stale_swept)
		return;
	st->stale_swept = 1;
	char dir[PATH_MAX + 64], mine[64];
	snprintf(dir, sizeof(dir), "%s/objects/pack", st->dir);
	snprintf(mine, sizeof(mine), "tmp_hermes_%d_", (int)getpid());
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "tmp_hermes_", 11) != 0 ||
		    strncmp(de->d_name, mine, strlen(mine)) == 0)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			log_warn("checkpoint store %s: removed a stale %s", st->dir, de->d_name);
	}
}

/* libgit2 never forgets a pack it loaded: after a collection deleted
 * some, their index maps, and the disk space behind them, stayed with the
 * daemon for good (3,465 deleted files after 30 minutes of the torture
 * test). When a collection has ended since the last look (it rewrites
 * hermes-size), open the objects anew: the old odb and its packs go with
 * their last reference. */
static void store_odb_renew(struct store *st)
{
	char path[PATH_MAX + 32];
	struct herr e = HERR_INIT;
	struct stat sb;

	snprintf(path, sizeof(path), "%s/hermes-size", st->dir);
	if (stat(path, &sb) < 0 ||
	    (sb.st_ino == st->collected_ino && sb.st_mtim.tv_sec == st->collected_mtime.tv_sec &&
	     sb.st_mtim.tv_nsec == st->collected_mtime.tv_nsec))
		return;
	int first = st->collected_ino == 0;
	st->collected_ino = sb.st_ino;
	st->collected_mtime = sb.st_mtim;
	if (first)
		return; /* just opened */
	if (store_reopen_odb(st, &e) < 0)
		log_warn("after a collection of %s: %s", st->dir, e.msg);
}

void store_inflight(struct store *st, int begin)
{
	char buf[32];

	/* the flock also serialises two processes checkpointing one tree
	 * (each would otherwise fail the other's compare-and-swap of the ref) */
	if (begin && st->inflight++ == 0) {
		snprintf(buf, sizeof(buf), "%lld", (long long)time(NULL));
		/* opened, not written: while we wait, the holder's start time
		 * is what keeps a collection off its objects */
		store_state_open(st, &st->inflight_fd, "hermes-inflight");
		if (st->inflight_fd >= 0)
			while (flock(st->inflight_fd, LOCK_EX) < 0 && errno == EINTR)
				;
		store_state_put(st, &st->inflight_fd, "hermes-inflight", buf);
		store_drop_stale_lock(st);
		store_odb_renew(st);
	} else if (!begin && --st->inflight == 0) {
		store_state_put(st, &st->inflight_fd, "hermes-inflight", NULL);
		if (st->inflight_fd >= 0)
			flock(st->inflight_fd, LOCK_UN);
	}
}

int store_dir_for_tree(const char *tree_abspath, char *out, size_t size)
{
	char sub[64], id[TREE_ID_LEN + 1];

	paths_tree_id(tree_abspath, id);
	snprintf(sub, sizeof(sub), "checkpoints/%s", id);
	return paths_state_dir(sub, 0, out, size);
}

int store_exists_for_tree(const char *tree_abspath)
{
	char dir[PATH_MAX], rec[PATH_MAX];

	if (store_dir_for_tree(tree_abspath, dir, sizeof(dir)) < 0)
		return 0;
	if (store_read_small(dir, "hermes-tree", rec, sizeof(rec)) < 0)
		return 0;
	return strcmp(rec, tree_abspath) == 0;
}

static int store_write_config(git_repository *repo, const char *tree, struct herr *e)
{
	git_config *cfg = NULL;
	int rc;

	rc = git_repository_config(&cfg, repo);
	if (rc < 0)
		return store_git_err(e, rc, "cannot open the store config");
	if ((rc = git_config_set_bool(cfg, "core.logallrefupdates", 0)) < 0 ||
	    (rc = git_config_set_bool(cfg, "core.filemode", 1)) < 0 ||
	    (rc = git_config_set_int32(cfg, "gc.auto", 0)) < 0 ||
	    (rc = git_config_set_bool(cfg, "gc.autodetach", 0)) < 0 ||
	    (rc = git_config_set_bool(cfg, "commit.gpgsign", 0)) < 0 ||
	    (rc = git_config_set_bool(cfg, "tag.gpgsign", 0)) < 0 ||
	    (rc = git_config_set_string(cfg, "user.name", STORE_SIG_NAME)) < 0 ||
	    (rc = git_config_set_string(cfg, "user.email", STORE_SIG_EMAIL)) < 0 ||
	    (rc = git_config_set_string(cfg, "hermes.tree", tree)) < 0)
		store_git_err(e, rc, "cannot write the store config");
	git_config_free(cfg);
	return rc < 0 ? e->code : 0;
}

static void store_apply_config(struct store *st, const struct config *cfg)
{
	free(st->cfg_rules);
	st->cfg_rules = NULL;
	const cJSON *ex = cfg ? config_list(cfg, "checkpoints.exclude") : NULL;
	const cJSON *it;
	size_t len = 0;

	st->max_snapshots = cfg ? config_int(cfg, "checkpoints.max_snapshots", 50) : 50;
	st->max_total_bytes =
		(cfg ? config_int(cfg, "checkpoints.max_total_size_mb", 500) : 500) << 20;
	st->max_file_bytes =
		(cfg ? config_int(cfg, "checkpoints.max_file_size_mb", 10) : 10) << 20;
	st->max_files = cfg ? config_int(cfg, "checkpoints.max_files", 50000) : 50000;
	if (st->max_snapshots < 1)
		st->max_snapshots = 1;
	cJSON_ArrayForEach(it, ex)
		if (cJSON_IsString(it))
			len += strlen(it->valuestring) + 1;
	st->cfg_rules = calloc(1, len + 1);
	if (!st->cfg_rules)
		return;
	cJSON_ArrayForEach(it, ex)
		if (cJSON_IsString(it)) {
			strcat(st->cfg_rules, it->valuestring);
			strcat(st->cfg_rules, "\n");
		}
}

static int store_alloc(const struct config *cfg, struct store **out, struct herr *e)
{
	struct store *st;

	pthread_once(&store_once, store_global_init);
	if (store_init_rc < 0)
		return err_sys(e, store_init_rc, "cannot initialise libgit2");
	st = calloc(1, sizeof(*st));
	if (!st)
		return err_set(e, -ENOMEM, "out of memory");
	st->inflight_fd = st->state_fd = -1;
	if (store_big_init(st) < 0) {
		free(st);
		return err_set(e, -ENOMEM, "out of memory");
	}
	store_apply_config(st, cfg);
	st->umask = umask(022);
	umask(st->umask);
	*out = st;
	return 0;
}

int store_open_dir(const char *store_dir, const struct config *cfg, struct store **out,
		   struct herr *e)
{
	struct store *st = NULL;
	int rc = store_alloc(cfg, &st, e);

	if (rc < 0)
		return rc;
	snprintf(st->dir, sizeof(st->dir), "%s", store_dir);
	if (store_read_small(store_dir, "hermes-tree", st->tree, sizeof(st->tree)) < 0) {
		store_close(st);
		return err_set(e, -ENOENT, "%s: not a checkpoint store", store_dir);
	}
	rc = git_repository_open_ext(&st->repo, store_dir, GIT_REPOSITORY_OPEN_NO_SEARCH |
				     GIT_REPOSITORY_OPEN_BARE | GIT_REPOSITORY_OPEN_NO_DOTGIT, NULL);
	if (rc < 0) {
		store_git_err(e, rc, "cannot open the checkpoint store");
		err_prefix(e, "%s", store_dir);
		store_close(st);
		return e->code;
	}
	rc = store_sink_install(st);
	if (rc < 0) {
		store_close(st);
		return err_sys(e, rc, "cannot set up the object sink");
	}
	rc = store_durable_init(st);
	if (rc == 0)
		rc = store_durable_check(st, e);
	if (rc < 0) {
		store_close(st);
		return rc == -ENOMEM ? err_set(e, rc, "out of memory") : rc;
	}
	if (store_read_small(store_dir, "hermes-disabled", st->disabled, sizeof(st->disabled)) < 0)
		st->disabled[0] = '\0';
	*out = st;
	return 0;
}

int store_open(const char *tree_abspath, const struct config *cfg, struct store **out,
	       struct herr *e)
{
	char dir[PATH_MAX], rec[PATH_MAX], head[PATH_MAX + 8];
	const char *why = paths_refuse_tree(tree_abspath);
	git_repository *repo = NULL;
	int rc;

	if (tree_abspath[0] != '/')
		return err_set(e, -EINVAL, "%s: not an absolute path", tree_abspath);
	if (why)
		return err_set(e, -EPERM, "%s", why);
	rc = store_dir_for_tree(tree_abspath, dir, sizeof(dir));
	if (rc < 0)
		return err_sys(e, rc, "cannot find the checkpoint directory");
	if (store_read_small(dir, "hermes-tree", rec, sizeof(rec)) == 0) {
		if (strcmp(rec, tree_abspath) != 0)
			return err_set(e, -EEXIST, "%s: store belongs to %s", dir, rec);
		return store_open_dir(dir, cfg, out, e);
	}
	/* first use: create it */
	pthread_once(&store_once, store_global_init);
	rc = paths_mkdir_p(dir, 0700);
	if (rc < 0)
		return err_sys(e, rc, "cannot create %s", dir);
	snprintf(head, sizeof(head), "%s/HEAD", dir);
	if (access(head, F_OK) != 0) {
		git_repository_init_options o;
		git_repository_init_options_init(&o, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
		o.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
		o.initial_head = "main";
		o.description = "hermes checkpoints";
		rc = git_repository_init_ext(&repo, dir, &o);
	} else {
		rc = git_repository_open_bare(&repo, dir);
	}
	if (rc < 0)
		return store_git_err(e, rc, "cannot create the checkpoint store");
	rc = store_write_config(repo, tree_abspath, e);
	git_repository_free(repo);
	if (rc < 0)
		return rc;
	{
		struct store tmp = { 0 };
		snprintf(tmp.dir, sizeof(tmp.dir), "%s", dir);
		rc = store_write_marker(&tmp, "hermes-tree", tree_abspath);
		if (rc < 0)
			return err_sys(e, rc, "cannot write %s/hermes-tree", dir);
		/* from the first checkpoint on, an open can tell what a power
		 * cut left unsynced */
		rc = store_durable_new(dir);
		if (rc < 0)
			return err_sys(e, rc, "cannot write %s/hermes-synced", dir);
	}
	return store_open_dir(dir, cfg, out, e);
}

void store_close(struct store *st)
{
	if (!st)
		return;
	store_durable_close(st);
	git_repository_free(st->repo);
	store_big_free(st);
	if (st->inflight_fd >= 0)
		close(st->inflight_fd);
	if (st->state_fd >= 0)
		close(st->state_fd);
	store_ignore_free(st->ignore);
	free(st->cfg_rules);
	free(st);
}

const char *store_tree_path(const struct store *st)
{
	return st->tree;
}

const char *store_dir(const struct store *st)
{
	return st->dir;
}

int store_recheck(struct store *st, int rootfd, const struct config *cfg, struct herr *e)
{
	int r;

	if (cfg) {
		store_apply_config(st, cfg);
		/* its excludes too: the rules are built again from them */
		st->ignore_loaded = -1;
	}
	store_inflight(st, 1);
	r = store_baseline_check(st, rootfd, e);
	/* the first checkpoint's scan need not count again */
	st->counted_ok = r == 0;
	store_inflight(st, 0);
	return r;
}

const char *store_disabled_reason(const struct store *st)
{
	return st->disabled[0] ? st->disabled : NULL;
}

int store_mount_begin(struct store *st)
{
	char path[PATH_MAX + 32], pid[32];
	struct stat sb;
	int died, r;

	snprintf(path, sizeof(path), "%s/hermes-mounted", st->dir);
	died = stat(path, &sb) == 0;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	r = store_write_marker(st, "hermes-mounted", pid);
	return r < 0 ? r : died;
}

void store_mount_end(struct store *st)
{
	store_write_marker(st, "hermes-mounted", NULL);
}

int store_ignore_refresh(struct store *st, int rootfd, struct herr *e)
{
	struct stat sb;
	int have = fstatat(rootfd, ".hermesignore", &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		   S_ISREG(sb.st_mode);
	struct store_ignore *ig = NULL;

	if (st->ignore && st->ignore_loaded == have &&
	    (!have || (sb.st_ino == st->ignore_ino &&
		       sb.st_mtim.tv_sec == st->ignore_mtime.tv_sec &&
		       sb.st_mtim.tv_nsec == st->ignore_mtime.tv_nsec)))
		return 0;
	if (store_ignore_new(&ig) < 0)
		return err_set(e, -ENOMEM, "out of memory");
	store_ignore_add_defaults(ig);
	if (st->cfg_rules)
		store_ignore_add_text(ig, st->cfg_rules, strlen(st->cfg_rules));
	if (have) {
		_cleanup_close_ int fd = openat(rootfd, ".hermesignore",
						O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_free_ char *buf = NULL;
		size_t len = (size_t)sb.st_size;
		ssize_t n;

		if (fd < 0 || len > (1 << 20)) {
			store_ignore_free(ig);
			return err_set(e, -EINVAL, "cannot read .hermesignore");
		}
		buf = malloc(len + 1);
		n = buf ? read(fd, buf, len) : -1;
		if (n < 0) {
			store_ignore_free(ig);
			return err_sys(e, -errno, "cannot read .hermesignore");
		}
		store_ignore_add_text(ig, buf, (size_t)n);
		st->ignore_ino = sb.st_ino;
		st->ignore_mtime = sb.st_mtim;
	}
	store_ignore_free(st->ignore);
	st->ignore = ig;
	st->ignore_loaded = have;
	return 0;
}

int store_is_excluded(struct store *st, int rootfd, const char *relpath, int is_dir)
{
	struct herr e = HERR_INIT;

	if (store_ignore_refresh(st, rootfd, &e) < 0)
		return 0;
	return store_ignore_match(st->ignore, relpath, is_dir);
}

void store_skip_note(struct store_skips *sk, const char *relpath, long long size)
{
	size_t len = strlen(sk->text);
	char name[PATH_MAX + 64];

	/* the note becomes a commit trailer: a newline in a name would end
	 * it, an escape would reach a terminal */
	quote_str(relpath, name, sizeof(name));
	if (sk->n++ == 0)
		snprintf(sk->text, sizeof(sk->text), "%s (%.1f MB)", name, (double)size / 1048576);
	else if (len + 16 < sizeof(sk->text))
		snprintf(sk->text + len, sizeof(sk->text) - len, ", %s (%.1f MB)", name,
			 (double)size / 1048576);
	log_warn("checkpoint: %s skipped: %lld bytes is over checkpoints.max_file_size_mb",
		 relpath, size);
}

int store_head(struct store *st, git_commit **commit, git_tree **tree, struct herr *e)
{
	git_reference *ref = NULL;
	int rc;

	*commit = NULL;
	if (tree)
		*tree = NULL;
	rc = git_reference_lookup(&ref, st->repo, STORE_REF);
	if (rc == GIT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return store_git_err(e, rc, "cannot read the checkpoint chain");
	rc = git_commit_lookup(commit, st->repo, git_reference_target(ref));
	git_reference_free(ref);
	if (rc < 0)
		return store_git_err(e, rc, "cannot read the newest checkpoint");
	if (tree) {
		rc = git_commit_tree(tree, *commit);
		if (rc < 0) {
			git_commit_free(*commit);
			*commit = NULL;
			return store_git_err(e, rc, "cannot read the newest checkpoint's tree");
		}
	}
	return 0;
}
