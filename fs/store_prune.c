/* Retention: trimming the chain to max_snapshots (the oldest kept commit
 * becomes its end, store_chain.c), dropping the oldest checkpoints while the
 * store is over max_total_size_mb, and reclaiming the objects with `git gc`
 * run in the background (or in the foreground for an explicit prune). */
#define _XOPEN_SOURCE 700
#include "store_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

extern char **environ;

/* Written objects (raw bytes) after which a collection is worth it. */
#define PRUNE_GC_BYTES (32LL << 20)
/* Checkpoints (one small pack each) between two collections at most. */
#define PRUNE_GC_PACKS 32

/* Background collections run while checkpoints go on: loose objects
 * younger than this many seconds, or than the start of a checkpoint in
 * flight (hermes-inflight), are kept because it may be about to reference
 * them. */
#define PRUNE_GRACE_S 10

/* HERMES_GC_GRACE (seconds) shortens the grace for tests. */
static int prune_grace(void)
{
	const char *g = getenv("HERMES_GC_GRACE");
	return g ? atoi(g) : PRUNE_GRACE_S;
}

static long long prune_read_num(const struct store *st, const char *name)
{
	char path[PATH_MAX + 32];
	FILE *f;
	long long v = -1;

	snprintf(path, sizeof(path), "%s/%s", st->dir, name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void prune_write_num(struct store *st, const char *name, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	store_write_marker(st, name, v < 0 ? NULL : buf);
}

/* Keep the newest `keep` checkpoints (at least one): the keep-th becomes
 * the oldest, and what lies beyond it is left for the next collection.
 * No commit is rewritten, so every kept checkpoint keeps its hash. */
static int prune_trim(struct store *st, size_t keep, size_t *dropped, struct herr *e)
{
	git_commit *c = NULL;
	git_oid oldest;
	size_t n = 0;
	int rc = store_chain_head(st, &c, e);

	*dropped = 0;
	while (rc == 0 && c) {
		git_commit *p = NULL;
		if (++n == keep)
			git_oid_cpy(&oldest, git_commit_id(c));
		rc = store_chain_parent(st, c, &p, e);
		git_commit_free(c);
		c = p;
	}
	if (rc < 0 || n <= keep || keep == 0)
		return rc;
	rc = store_chain_cut(st, &oldest, e);
	if (rc == -EAGAIN)
		return 0; /* trimmed by another process, or the next checkpoint trims */
	if (rc == 0)
		*dropped = n - keep;
	return rc;
}

static size_t prune_count(struct store *st, size_t stop)
{
	git_commit *c = NULL;
	struct herr e = HERR_INIT;
	size_t n = 0;

	if (store_chain_head(st, &c, &e) < 0)
		return 0;
	while (c && n < stop) {
		git_commit *p = NULL;
		n++;
		store_chain_parent(st, c, &p, &e);
		git_commit_free(c);
		c = p;
	}
	git_commit_free(c);
	return n;
}

/* Reclaim space with git in a child: detached in the background (wait=0;
 * a lock keeps two from overlapping and a busy lock skips the run) or in
 * the foreground (waits for the lock). full=1 repacks everything so that
 * dropped checkpoints' packed objects go; full=0 only packs new loose
 * objects and prunes unreachable loose ones. The reachable size on disk is
 * then recorded in hermes-size. */
/* Bytes of the biggest pack of the store (0 if none). */
static long long prune_biggest_pack(struct store *st)
{
	char path[PATH_MAX + 32];
	struct dirent *d;
	long long best = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/objects/pack", st->dir);
	if (!(dir = opendir(path)))
		return 0;
	while ((d = readdir(dir))) {
		struct stat sb;
		size_t n = strlen(d->d_name);
		if (n < 6 || strcmp(d->d_name + n - 5, ".pack") != 0)
			continue;
		if (fstatat(dirfd(dir), d->d_name, &sb, 0) == 0 && sb.st_size > best)
			best = sb.st_size;
	}
	closedir(dir);
	return best;
}

/* How a collection repacks: small packs rolled into bigger ones (light:
 * reclaims nothing held in packs), everything rewritten (full: needs as
 * much free space again as the store takes), or everything but the
 * biggest pack, usually the first baseline (keep: reclaims what the
 * dropped checkpoints alone held, needs only the size of the rest). */
enum prune_mode { PRUNE_LIGHT, PRUNE_FULL, PRUNE_KEEP };

static int prune_gc(struct store *st, int wait, int mode, struct herr *e)
{
	/* $1 store, $2 grace seconds or "now", $3 wait|bg, $4 full|keep|light.
	 * A request that finds a collection running leaves gc.again with its
	 * mode, and the running one goes round once more in that mode instead
	 * of losing it (always full, it passed the disk cap: a request that
	 * found no room for a full one had asked for keep). */
	static const char script[] =
		"D=$1; G=\"git --git-dir=$D -c gc.auto=0 -c gc.packRefs=false\"\n"
		/* in the background one core is the collection's, the other
		 * the user's (and the next checkpoint's) */
		"[ \"$3\" = bg ] && G=\"$G -c pack.threads=1\"\n"
		"expiry() {\n"
		"  [ \"$1\" = now ] && { echo now; return; }\n"
		"  P=$(( $(date +%s) - $1 )); F=$(cat \"$D/hermes-inflight\" 2>/dev/null); F=${F%% *}\n"
		"  [ \"$F\" -lt \"$P\" ] 2>/dev/null && P=$(( F - 2 )); echo @$P\n"
		"}\n"
		"run() {\n"
		/* in the background fd 9 holds the lock, taken by our caller */
		"  if [ \"$3\" = wait ]; then exec 9>>\"$D/gc.lock\"; flock 9; fi\n"
		"  M=$4\n"
		"  while :; do\n"
		"    rm -f \"$D/gc.again\"; P=$(expiry \"$2\")\n"
		"    if [ \"$M\" = full ]; then $G gc --quiet --prune=\"$P\" || exit 1\n"
		"    elif [ \"$M\" = keep ]; then\n"
		"      K=$(ls -S \"$D/objects/pack/\" 2>/dev/null | grep '\\.pack$' | head -n 1)\n"
		"      $G prune --expire=\"$P\" && $G repack -A -d -q --unpack-unreachable=\"$P\" ${K:+--keep-pack=$K} &&\n"
		"        $G prune-packed -q || exit 1\n"
		/* light: the biggest pack is kept out of the geometric roll-up
		 * too (which takes it in once the rest passes half of it), so
		 * it writes no more than its budget, the rest */
		"    else\n"
		"      K=$(ls -S \"$D/objects/pack/\" 2>/dev/null | grep '\\.pack$' | head -n 1)\n"
		"      $G prune --expire=\"$P\" && $G repack -d -q -F --geometric=2 ${K:+--keep-pack=$K} &&\n"
		"      $G prune-packed -q || exit 1\n"
		"    fi\n"
		"    $G rev-list --disk-usage --objects --all >\"$D/hermes-size.tmp\" &&\n"
		"      mv \"$D/hermes-size.tmp\" \"$D/hermes-size\"\n"
		"    [ -e \"$D/gc.again\" ] || break\n"
		"    M=$(cat \"$D/gc.again\" 2>/dev/null)\n"
		"    case $M in full|keep|light) ;; *) M=light ;; esac\n"
		"  done\n"
		"}\n"
		"if [ \"$3\" = wait ]; then run \"$@\"; else (run \"$@\") </dev/null >/dev/null 2>&1 & fi\n";
	char home[PATH_MAX + 16], grace[16];
	char *argv[] = { "sh", "-c", (char *)script, "hermes-gc", st->dir,
			 wait ? "now" : grace, wait ? "wait" : "bg",
			 mode == PRUNE_FULL ? "full" : mode == PRUNE_KEEP ? "keep" : "light",
			 NULL };
	char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", home, "GIT_CONFIG_NOSYSTEM=1",
			 "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
			 NULL };
	posix_spawnattr_t attr;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, r, lockfd = -1;

	snprintf(home, sizeof(home), "HOME=%s", st->dir);
	snprintf(grace, sizeof(grace), "%d", prune_grace());
	long long budget = 0;

	if (!wait) {
		/* what it may write before it deletes, for make_room: all of
		 * the store for a full one, all but the biggest pack else */
		long long disk = st->disk > 0 ? st->disk : store_disk_usage(st->dir);
		budget = mode == PRUNE_FULL ? disk : disk - prune_biggest_pack(st);
	}
	if (!wait) {
		/* The lock is taken here and handed to the collection as fd 9:
		 * taken by the script, it left a moment in which the next
		 * checkpoint saw no collection running, wrote its pack without
		 * waiting, and the collection's new pack beside the old ones
		 * then passed the cap (store_disk_cap.sh, under load). */
		char lock[PATH_MAX + 16];
		snprintf(lock, sizeof(lock), "%s/gc.lock", st->dir);
		lockfd = open(lock, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (lockfd < 0)
			return err_sys(e, -errno, "cannot open %s", lock);
		if (flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
			/* one runs: it goes round once more, in our mode, and
			 * may write what the bigger of the two budgets says */
			long long running = prune_read_num(st, "hermes-gc-budget");
			close(lockfd);
			if (running > budget)
				budget = running;
			prune_write_num(st, "hermes-gc-budget", budget);
			store_write_marker(st, "gc.again",
					   mode == PRUNE_FULL ? "full"
					   : mode == PRUNE_KEEP ? "keep" : "light");
			st->written_since_gc = 0;
			return 0;
		}
		prune_write_num(st, "hermes-gc-budget", budget);
	}
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (lockfd >= 0)
		posix_spawn_file_actions_adddup2(&fa, lockfd, 9);
	if (!wait) {
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
	}
	/* a background collection yields the CPU and the disk to the user's
	 * own work (the daemon's foreground never waits for it anyway) */
	char *bg_argv[8 + sizeof(argv) / sizeof(argv[0])] = {
		"nice", "-n", "19", "ionice", "-c", "2", "-n", "7",
	};
	const char *prog = "/bin/sh";
	char **av = argv;
	if (!wait && access("/usr/bin/nice", X_OK) == 0 &&
	    access("/usr/bin/ionice", X_OK) == 0) {
		memcpy(bg_argv + 8, argv, sizeof(argv)); /* with its NULL */
		bg_argv[8] = "/bin/sh";
		prog = "/usr/bin/nice";
		av = bg_argv;
	}
	r = posix_spawn(&pid, prog, &fa, &attr, av, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (lockfd >= 0)
		close(lockfd); /* the collection's fd 9 holds the lock now */
	if (r != 0)
		return err_sys(e, -r, "cannot start git gc");
	st->written_since_gc = 0;
	/* in the background case sh exits at once, leaving the job detached */
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_sys(e, -errno, "cannot wait for git gc");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return err_set(e, -EIO, "git gc failed on %s", st->dir);
	return 0;
}

/* hermes-state: "<checkpoints> <bytes written> <checkpoints dropped>",
 * the last two since the last collection, so a checkpoint never walks the
 * chain to count it. */
struct prune_state {
	long long count, written, dropped;
	long long full_at; /* a full collection ran then and spared young garbage */
};

static void prune_state_read(struct store *st, struct prune_state *ps)
{
	char path[PATH_MAX + 32];
	FILE *f;

	ps->count = ps->written = ps->dropped = -1;
	ps->full_at = 0;
	snprintf(path, sizeof(path), "%s/hermes-state", st->dir);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fscanf(f, "%lld %lld %lld %lld", &ps->count, &ps->written, &ps->dropped,
		   &ps->full_at) < 3)
		ps->count = ps->written = ps->dropped = -1;
	fclose(f);
}

static void prune_state_write(struct store *st, const struct prune_state *ps)
{
	char buf[96];

	snprintf(buf, sizeof(buf), "%lld %lld %lld %lld", ps->count, ps->written, ps->dropped,
		 ps->full_at);
	store_state_put(st, &st->state_fd, "hermes-state", buf);
}

int store_prune_after_commit(struct store *st, struct herr *e)
{
	long long size = prune_read_num(st, "hermes-size");
	struct prune_state ps;
	size_t dropped = 0;
	int rc = 0, gc = 0, full = 0;

	prune_state_read(st, &ps);
	if (ps.count < 1)
		ps.count = (long long)prune_count(st, SIZE_MAX);
	else
		ps.count++;
	if (ps.written < 0)
		ps.written = 0;
	if (ps.dropped < 0)
		ps.dropped = 0;
	/* trim to 90%: the checkpoints dropped together, every max/10
	 * checkpoints, are reclaimed by one collection */
	if (ps.count > st->max_snapshots) {
		long long keep = st->max_snapshots - st->max_snapshots / 10;
		rc = prune_trim(st, (size_t)(keep > 0 ? keep : 1), &dropped, e);
		ps.count = (long long)prune_count(st, SIZE_MAX);
		ps.dropped += (long long)dropped;
	}
	if (rc == 0 && size > st->max_total_bytes && ps.count > 1) {
		/* over the cap at the last measure: drop the oldest share */
		long long drop = (long long)((double)ps.count *
					     (double)(size - st->max_total_bytes) / (double)size) + 1;
		rc = prune_trim(st, (size_t)(drop < ps.count ? ps.count - drop : 1), &dropped, e);
		ps.count = (long long)prune_count(st, SIZE_MAX);
		prune_write_num(st, "hermes-size", -1); /* stale until measured */
		full = gc = 1;
	}
	ps.written += st->written_since_gc;
	st->written_since_gc = 0;
	/* a full repack only once half the history has turned over */
	if (ps.dropped * 2 >= st->max_snapshots)
		full = gc = 1;
	/* every checkpoint adds a small pack: roll them up now and then */
	if (ps.count % PRUNE_GC_PACKS == 0)
		gc = 1;
	if (ps.written > PRUNE_GC_BYTES || ps.written > st->max_total_bytes / 8 ||
	    (size < 0 && ps.written > (4LL << 20)))
		gc = 1;
	/* what the last full collection had to spare is old enough now (a
	 * light one would only roll it into a pack) */
	int followup = ps.full_at && time(NULL) > ps.full_at + prune_grace() + 1;
	if (followup)
		full = gc = 1;
	/* A collection writes its new pack before deleting the old ones:
	 * past half the cap a full one could pass the cap. Then rewrite
	 * everything but the biggest pack, if that fits, in the background
	 * still; else the next checkpoint collects in the foreground, when
	 * it must (store_prune_make_room). */
	int mode = full ? PRUNE_FULL : PRUNE_LIGHT;
	if (gc && st->disk > st->max_total_bytes / 2) {
		long long rest = st->disk - prune_biggest_pack(st);
		if (st->disk + rest > st->max_total_bytes / 20 * 19)
			gc = 0;
		else if (full)
			mode = PRUNE_KEEP;
	}
	if (rc == 0 && gc) {
		rc = prune_gc(st, 0, mode, e);
		ps.written = 0;
		/* a full one is followed by another once its grace is over */
		if (full)
			ps.full_at = followup ? 0 : (long long)time(NULL);
		if (full)
			ps.dropped = 0;
	}
	prune_state_write(st, &ps);
	return rc;
}

/* Disk blocks a file of this size takes (4 KiB blocks). */
static long long prune_blocks(long long bytes)
{
	return (bytes + 4095) / 4096 * 4096;
}

static int prune_reopen_odb(struct store *st, struct herr *e);

#define PRUNE_META_BYTES (16 * 4096)

/* Is a collection holding gc.lock (prune_gc's script) after waiting up to
 * wait_s seconds for it to end? */
static int prune_gc_busy(struct store *st, int wait_s)
{
	char path[PATH_MAX + 16];
	int fd, busy;

	snprintf(path, sizeof(path), "%s/gc.lock", st->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (int i = 0;; i++) {
		busy = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
		if (!busy || i >= wait_s * 10)
			break;
		struct timespec d = { 0, 100 * 1000 * 1000 };
		nanosleep(&d, NULL);
	}
	close(fd);
	return busy;
}

int store_reopen_odb(struct store *st, struct herr *e)
{
	void *saved = store_sink_stash(st);
	int rc;

	if (!saved)
		return err_set(e, -ENOMEM, "out of memory");
	rc = prune_reopen_odb(st, e);
	store_sink_unstash(st, saved);
	return rc;
}

static int prune_reopen_odb(struct store *st, struct herr *e)
{
	char path[PATH_MAX + 16];
	git_odb *odb = NULL;
	int rc;

	snprintf(path, sizeof(path), "%s/objects", st->dir);
	rc = git_odb_open(&odb, path);
	if (rc == 0)
		rc = git_repository_set_odb(st->repo, odb);
	git_odb_free(odb);
	if (rc < 0)
		return store_git_err(e, rc, "cannot reopen the checkpoint store");
	st->sink = NULL; /* the old one went with the old odb */
	rc = store_sink_install(st);
	return rc < 0 ? err_sys(e, rc, "cannot set up the object sink") : 0;
}

int store_prune_make_room(struct store *st, long long need, int *trimmed, struct herr *e)
{
	long long cap = st->max_total_bytes;
	void *saved;
	int rc = 0;

	*trimmed = 0;
	/* one pack and its index, and the small files a checkpoint rewrites
	 * beside them (ref, reflog, state files: a few blocks) */
	need = prune_blocks(need + 64) + prune_blocks(2048 + need / 100) + PRUNE_META_BYTES;
	/* far below the cap the running estimate is enough; near it, measure
	 * (a background collection may have written or deleted since) */
	int gc_running = prune_gc_busy(st, 0);
	if (st->disk > 0) {
		/* a collection running writes at most its budget before it
		 * deletes; with that still far below the cap there is no
		 * need to walk the store (the walk was half of a checkpoint
		 * while one ran, and they run often in a busy store) */
		long long budget = gc_running ? prune_read_num(st, "hermes-gc-budget") : 0;
		if (budget >= 0 && st->disk + need + budget <= cap / 4 * 3) {
			st->disk += need;
			return 0;
		}
	}
	st->disk = store_disk_usage(st->dir);
	if (st->disk < 0) {
		/* never trim history on a measure that failed */
		log_warn("checkpoint store %s: cannot measure its size; nothing trimmed", st->dir);
		st->disk = 0;
		return 0;
	}
	/* A collection running writes its new pack before it deletes the old
	 * ones, at most its budget (prune_gc). If that could pass the cap,
	 * let it finish first (rare: it starts only with room for it). */
	if (gc_running) {
		long long budget = prune_read_num(st, "hermes-gc-budget");
		if (st->disk + need + (budget >= 0 ? budget : st->disk) > cap) {
			prune_gc_busy(st, 600);
			st->disk = store_disk_usage(st->dir);
		}
	}
	if (st->disk >= 0 && st->disk + need <= cap) {
		st->disk += need;
		return 0;
	}
	/* over: the oldest checkpoints go first, and their space now (this
	 * checkpoint's objects wait aside: the collection must not see them
	 * as garbage) */
	saved = store_sink_stash(st);
	if (!saved)
		return err_set(e, -ENOMEM, "out of memory");
	for (int round = 0; round < 16 && rc == 0; round++) {
		size_t have = prune_count(st, SIZE_MAX), dropped = 0;
		if (have <= 1)
			break;
		/* a quarter of the history per round, and at least one */
		rc = prune_trim(st, have - (have + 3) / 4, &dropped, e);
		/* cheapest first: the biggest pack may be all that is left
		 * of the baseline, or may hold what was just dropped */
		if (rc == 0)
			rc = prune_gc(st, 1, PRUNE_KEEP, e);
		*trimmed = 1;
		st->disk = store_disk_usage(st->dir);
		if (rc == 0 && st->disk + need > cap) {
			rc = prune_gc(st, 1, PRUNE_FULL, e);
			st->disk = store_disk_usage(st->dir);
		}
		if (st->disk + need <= cap)
			break;
	}
	/* the collection replaced the packs libgit2 has open */
	if (*trimmed && rc == 0)
		rc = prune_reopen_odb(st, e);
	store_sink_unstash(st, saved);
	if (rc == 0 && st->disk + need > cap)
		rc = err_set(e, -ENOSPC,
			     "this checkpoint needs %.1f MB and the store holds %.1f MB with only "
			     "its newest checkpoint left: over checkpoints.max_total_size_mb (%lld); "
			     "raise it or exclude big files",
			     (double)need / 1048576, (double)st->disk / 1048576, cap >> 20);
	if (rc == 0)
		st->disk += need;
	return rc;
}

static int prune_run(struct store *st, int wait, struct herr *e)
{
	size_t dropped = 0;
	int rc;

	rc = prune_trim(st, (size_t)st->max_snapshots, &dropped, e);
	if (rc == 0 && !wait)
		rc = prune_gc(st, 0, PRUNE_FULL, e);
	for (int round = 0; rc == 0 && wait && round < 64; round++) {
		long long size;
		size_t have;

		rc = prune_gc(st, 1, PRUNE_FULL, e);
		size = prune_read_num(st, "hermes-size");
		have = prune_count(st, SIZE_MAX);
		if (rc < 0 || size <= st->max_total_bytes || have <= 1)
			break;
		size_t drop = (size_t)((double)have * (double)(size - st->max_total_bytes) /
				       (double)size) + 1;
		rc = prune_trim(st, drop < have ? have - drop : 1, &dropped, e);
	}
	{
		struct prune_state ps = { (long long)prune_count(st, SIZE_MAX), 0, 0, 0 };
		prune_state_write(st, &ps);
	}
	return rc;
}

int store_prune(struct store *st, int wait, struct herr *e)
{
	int rc;

	if (!wait)
		return prune_run(st, 0, e);
	/* a collection in the foreground expires everything unreachable now:
	 * not while another process has written objects its ref does not
	 * name yet (the lock waits for that checkpoint to end) */
	store_inflight(st, 1);
	rc = prune_run(st, 1, e);
	store_inflight(st, 0);
	return rc;
}

/* What `du -b` and what `du` would count of one file, whichever is more. */
static long long prune_du_file(const struct stat *sb)
{
	long long blocks = (long long)sb->st_blocks * 512;
	return blocks > (long long)sb->st_size ? blocks : (long long)sb->st_size;
}

/* The bytes below the open directory fd (closed here). A file or directory
 * that goes meanwhile counts nothing: a collection running beside us
 * removes packs, loose objects and the objects/xx directories emptied, and
 * a walk that gave up on one (nftw does) was once taken for a store over
 * its cap, and history was trimmed for it. */
static long long prune_du_dir(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	long long total = 0;

	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		struct stat sb;

		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone */
		total += prune_du_file(&sb);
		if (S_ISDIR(sb.st_mode) && depth < 16) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				total += prune_du_dir(sub, depth + 1);
		}
	}
	closedir(d);
	return total;
}

long long store_disk_usage(const char *store_dir)
{
	int fd = open(store_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat sb;

	if (fd < 0 || fstat(fd, &sb) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return prune_du_file(&sb) + prune_du_dir(fd, 0);
}

static int prune_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 ? -1 : 0;
}

int store_destroy(const char *store_dir, struct herr *e)
{
	if (nftw(store_dir, prune_rm_one, 32, FTW_DEPTH | FTW_PHYS) < 0)
		return err_sys(e, -errno, "cannot remove %s", store_dir);
	return 0;
}
