/* Turning a tree object into a checkpoint: the commit on top of the chain
 * with reason, counts and processes as trailers; and reading them back for
 * the listing and for resolving "N" or a hash prefix. */
#include "store_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

static int store_sig(git_signature **sig, long long when)
{
	struct tm tm;
	time_t t = (time_t)when;

	localtime_r(&t, &tm);
	return git_signature_new(sig, STORE_SIG_NAME, STORE_SIG_EMAIL, (git_time_t)when,
				 (int)(tm.tm_gmtoff / 60));
}

/* One line, printable, bounded. */
static void store_clean_line(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	for (; src && *src && n + 1 < size; src++)
		dst[n++] = (*src == '\n' || *src == '\r' || *src == '\t') ? ' ' : *src;
	dst[n] = '\0';
}

static void store_format_procs(char *out, size_t size, const struct ckpt_meta *m)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; m && i < m->nprocs && len + 48 < size; i++) {
		char comm[32];
		store_clean_line(comm, sizeof(comm), m->procs[i].comm);
		len += (size_t)snprintf(out + len, size - len, "%s%s[%d] uid=%u",
					i ? ", " : "", comm, (int)m->procs[i].pid,
					(unsigned)m->procs[i].uid);
	}
}

struct store_stats {
	git_repository *repo;
	struct store_counts *n;
};

/* git's test: a NUL in the first 8000 bytes makes a blob binary. */
static int stats_binary(const char *p, size_t len)
{
	return memchr(p, 0, len < 8000 ? len : 8000) != NULL;
}

/* Lines added and removed between two texts, diffing only what lies
 * between their common first and last lines: an edit touches a few lines
 * of a file, and xdiff hashes every line of both sides otherwise. Without
 * a repository (git_patch_from_buffers) no attributes are looked up. */
static void stats_text(struct store_stats *ss, const char *a, size_t na, const char *b, size_t nb)
{
	size_t pre = 0, suf = 0, max = na < nb ? na : nb;
	git_patch *patch = NULL;
	size_t adds = 0, dels = 0;

	while (pre < max && a[pre] == b[pre])
		pre++;
	while (pre > 0 && a[pre - 1] != '\n')
		pre--; /* back to the start of a line */
	while (suf < max - pre && a[na - 1 - suf] == b[nb - 1 - suf])
		suf++;
	/* the kept tail starts after a newline that is itself common */
	{
		size_t k = 0;
		while (k < suf && a[na - suf + k] != '\n')
			k++;
		suf = k < suf ? suf - k - 1 : 0;
	}
	if (git_patch_from_buffers(&patch, a + pre, na - pre - suf, NULL, b + pre,
				   nb - pre - suf, NULL, NULL) == 0 &&
	    git_patch_line_stats(NULL, &adds, &dels, patch) == 0) {
		ss->n->ins += adds;
		ss->n->del += dels;
	}
	git_patch_free(patch);
}

/* Lines added and removed between two blobs (either may be absent). */
static int stats_blob(struct store_stats *ss, const git_oid *a, const git_oid *b)
{
	git_blob *ba = NULL, *bb = NULL;
	const char *pa = "", *pb = "";
	size_t na = 0, nb = 0;
	int rc = 0;

	ss->n->files++;
	if (a && b && git_oid_equal(a, b))
		return 0; /* mode only */
	if (a && git_blob_lookup(&ba, ss->repo, a) < 0)
		rc = -1;
	if (rc == 0 && b && git_blob_lookup(&bb, ss->repo, b) < 0)
		rc = -1;
	if (ba) {
		pa = git_blob_rawcontent(ba);
		na = (size_t)git_blob_rawsize(ba);
	}
	if (bb) {
		pb = git_blob_rawcontent(bb);
		nb = (size_t)git_blob_rawsize(bb);
	}
	/* big or binary blobs count no lines, as git diff --stat would */
	if (rc == 0 && na <= (8 << 20) && nb <= (8 << 20) && !stats_binary(pa, na) &&
	    !stats_binary(pb, nb))
		stats_text(ss, pa, na, pb, nb);
	git_blob_free(ba);
	git_blob_free(bb);
	return rc;
}

static int stats_tree(struct store_stats *ss, const git_tree *a, const git_tree *b);

static int stats_sub(struct store_stats *ss, const git_oid *a, const git_oid *b)
{
	git_tree *ta = NULL, *tb = NULL;
	int rc = 0;

	if (a && git_tree_lookup(&ta, ss->repo, a) < 0)
		rc = -1;
	if (rc == 0 && b && git_tree_lookup(&tb, ss->repo, b) < 0)
		rc = -1;
	if (rc == 0)
		rc = stats_tree(ss, ta, tb);
	git_tree_free(ta);
	git_tree_free(tb);
	return rc;
}

/* One name: a and b are the old and new ids (either NULL: absent) with
 * their modes. */
static int stats_pair(struct store_stats *ss, const git_oid *a, git_filemode_t ma,
		      const git_oid *b, git_filemode_t mb)
{
	int at = a && ma == GIT_FILEMODE_TREE;
	int bt = b && mb == GIT_FILEMODE_TREE;

	if (a && b && git_oid_equal(a, b) && ma == mb)
		return 0;
	if (at || bt) {
		if (at && bt)
			return stats_sub(ss, a, b);
		if (at && stats_sub(ss, a, NULL) < 0)
			return -1;
		if (bt && stats_sub(ss, NULL, b) < 0)
			return -1;
		if ((at && b) || (bt && a))
			return stats_blob(ss, at ? NULL : a, bt ? NULL : b);
		return 0;
	}
	return stats_blob(ss, a, b);
}

static int stats_entry(struct store_stats *ss, const git_tree_entry *a, const git_tree_entry *b)
{
	return stats_pair(ss, a ? git_tree_entry_id(a) : NULL, a ? git_tree_entry_filemode(a) : 0,
			  b ? git_tree_entry_id(b) : NULL, b ? git_tree_entry_filemode(b) : 0);
}

int store_count_change(struct store *st, struct store_counts *n, const git_oid *a,
		       git_filemode_t ma, const git_oid *b, git_filemode_t mb)
{
	struct store_stats ss = { .repo = st->repo, .n = n };

	return stats_pair(&ss, a, ma, b, mb);
}

/* git's order of two entries: a tree sorts as if its name ended in '/'. */
static int stats_cmp(const git_tree_entry *a, const git_tree_entry *b)
{
	const char *x = git_tree_entry_name(a), *y = git_tree_entry_name(b);
	size_t lx = strlen(x), ly = strlen(y), n = lx < ly ? lx : ly;
	int c = memcmp(x, y, n);
	unsigned cx, cy;

	if (c)
		return c;
	cx = lx > n ? (unsigned char)x[n] : (git_tree_entry_type(a) == GIT_OBJECT_TREE ? '/' : 0);
	cy = ly > n ? (unsigned char)y[n] : (git_tree_entry_type(b) == GIT_OBJECT_TREE ? '/' : 0);
	return (int)cx - (int)cy;
}

/* Counts like git diff --shortstat, descending only into subtrees whose
 * ids differ: O(changed), where git_diff_tree_to_tree walks both trees.
 * Both trees are in git's order, so one merge pass pairs their entries;
 * a name that turned from file to tree (or back) comes as two entries,
 * one gone and one new, which counts the same as a pair would. */
static int stats_tree(struct store_stats *ss, const git_tree *a, const git_tree *b)
{
	size_t na = a ? git_tree_entrycount(a) : 0, nb = b ? git_tree_entrycount(b) : 0;
	size_t i = 0, j = 0;

	while (i < na || j < nb) {
		const git_tree_entry *ea = i < na ? git_tree_entry_byindex(a, i) : NULL;
		const git_tree_entry *eb = j < nb ? git_tree_entry_byindex(b, j) : NULL;
		int c;

		/* mostly the same name on both sides: one strcmp decides */
		if (!ea || !eb)
			c = !ea ? 1 : -1;
		else if (strcmp(git_tree_entry_name(ea), git_tree_entry_name(eb)) == 0 &&
			 git_tree_entry_type(ea) == git_tree_entry_type(eb))
			c = 0;
		else
			c = stats_cmp(ea, eb);

		if (stats_entry(ss, c <= 0 ? ea : NULL, c >= 0 ? eb : NULL) < 0)
			return -1;
		i += c <= 0;
		j += c >= 0;
	}
	return 0;
}

static int store_diff_stats(struct store *st, git_tree *old, git_tree *new_tree,
			    struct store_counts *n)
{
	struct store_stats ss = { .repo = st->repo, .n = n };

	*n = (struct store_counts){ 0 };
	return stats_tree(&ss, old, new_tree);
}

static int store_count_blob(const char *root, const git_tree_entry *entry, void *payload)
{
	(void)root;
	if (git_tree_entry_type(entry) == GIT_OBJECT_BLOB)
		(*(size_t *)payload)++;
	return 0;
}

int store_commit_write(struct store *st, git_oid *oid, const git_signature *author,
		       const git_signature *committer, const char *msg, const git_tree *tree,
		       size_t nparents, const git_commit *parents[])
{
	git_buf buf = { 0 };
	int rc = git_commit_create_buffer(&buf, st->repo, author, committer, NULL, msg, tree,
					  nparents, parents);

	if (rc == 0 && store_sink_put(st, GIT_OBJECT_COMMIT, buf.ptr, buf.size, oid) < 0) {
		git_error_set_str(GIT_ERROR_NOMEMORY, "out of memory");
		rc = -1;
	}
	git_buf_dispose(&buf);
	return rc;
}

int store_commit_tree(struct store *st, const git_oid *tree_oid,
		      const struct ckpt_meta *meta, const struct store_skips *skips,
		      const struct store_counts *counts, char out_oid[STORE_OID_HEX],
		      struct herr *e)
{
	git_commit *head = NULL;
	git_tree *old = NULL, *tree = NULL;
	git_signature *sig = NULL;
	git_oid oid;
	struct store_counts n = { 0 };
	char reason[256], procs[STORE_WHO_MAX], *msg = NULL;
	long long when = meta && meta->time ? meta->time : (long long)time(NULL);
	int rc;

	rc = store_head(st, &head, &old, e);
	if (rc < 0)
		return rc;
	if (old && git_oid_equal(git_tree_id(old), tree_oid)) {
		st->room_made = 0;
		/* everything the tree names is stored already */
		store_sink_discard(st);
		if (out_oid)
			git_oid_tostr(out_oid, STORE_OID_HEX, git_commit_id(head));
		rc = STORE_UNCHANGED;
		goto out;
	}
	if (head && !st->room_made) {
		int trimmed = 0;
		rc = store_prune_make_room(st, (long long)store_sink_bytes(st) + 1024, &trimmed, e);
		if (rc < 0) {
			store_sink_discard(st);
			goto out;
		}
		if (trimmed) {
			git_commit_free(head);
			git_tree_free(old);
			rc = store_head(st, &head, &old, e);
			if (rc < 0)
				goto out;
		}
	}
	st->room_made = 0;
	rc = git_tree_lookup(&tree, st->repo, tree_oid);
	/* the first checkpoint counts files only: diffing a whole tree
	 * against nothing would read every blob a second time */
	if (rc == 0 && old && counts) {
		n = *counts;
	} else if (rc == 0 && old) {
		rc = store_diff_stats(st, old, tree, &n);
		/* a background collection may have deleted a pack under us */
		if (rc < 0 && store_reopen_odb(st, e) == 0)
			rc = store_diff_stats(st, old, tree, &n);
	} else if (rc == 0) {
		rc = git_tree_walk(tree, GIT_TREEWALK_PRE, store_count_blob, &n.files);
	}
	if (rc < 0) {
		rc = store_git_err(e, rc, "cannot count the changes");
		goto out;
	}
	store_clean_line(reason, sizeof(reason), meta && meta->reason ? meta->reason : "");
	if (!reason[0])
		strcpy(reason, "checkpoint");
	store_format_procs(procs, sizeof(procs), meta);
	if (asprintf(&msg,
		     "%s\n\nHermes-Files: %zu\nHermes-Insertions: %zu\nHermes-Deletions: %zu\n"
		     "%s%s%s%s%s%s",
		     reason, n.files, n.ins, n.del, procs[0] ? "Hermes-Processes: " : "", procs,
		     procs[0] ? "\n" : "", skips && skips->n ? "Hermes-Skipped: " : "",
		     skips && skips->n ? skips->text : "", skips && skips->n ? "\n" : "") < 0) {
		msg = NULL;
		rc = err_set(e, -ENOMEM, "out of memory");
		goto out;
	}
	rc = store_sig(&sig, when);
	if (rc == 0) {
		const git_commit *parents[1] = { head };
		rc = store_commit_write(st, &oid, sig, sig, msg, tree, head ? 1 : 0, parents);
	}
	if (rc < 0) {
		rc = store_git_err(e, rc, "cannot commit the checkpoint");
		goto out;
	}
	/* parsed now, from memory, the commit is in the object cache when
	 * the next checkpoint reads the head, not a miss in the new pack */
	{
		git_commit *c = NULL;
		if (git_commit_lookup(&c, st->repo, &oid) == 0)
			git_commit_free(c);
	}
	/* the objects reach the disk before the ref names them */
	rc = store_sink_flush(st, e);
	if (rc == 0) {
		git_reference *ref = NULL;
		rc = head ? git_reference_create_matching(&ref, st->repo, STORE_REF, &oid, 1,
							  git_commit_id(head), "hermes: checkpoint")
			  : git_reference_create(&ref, st->repo, STORE_REF, &oid, 0,
						 "hermes: checkpoint");
		git_reference_free(ref);
		if (rc < 0)
			rc = store_git_err(e, rc, "cannot move the checkpoint chain");
		else
			store_durable_committed(st, &oid);
	}
	if (rc < 0)
		goto out;
	if (out_oid)
		git_oid_tostr(out_oid, STORE_OID_HEX, &oid);
	{
		struct herr pe = HERR_INIT;
		if (store_prune_after_commit(st, &pe) < 0)
			log_warn("checkpoint retention: %s", pe.msg);
	}
	rc = 0;
out:
	free(msg);
	git_signature_free(sig);
	git_tree_free(tree);
	git_tree_free(old);
	git_commit_free(head);
	return rc;
}

/* The value of "Key: value" in a commit message, into out. */
static void store_trailer(const char *msg, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);

	out[0] = '\0';
	for (const char *l = msg; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, key, klen) == 0 && l[klen] == ':') {
			const char *v = l + klen + 1, *end;
			while (*v == ' ')
				v++;
			end = strchr(v, '\n');
			size_t n = end ? (size_t)(end - v) : strlen(v);
			if (n >= size)
				n = size - 1;
			memcpy(out, v, n);
			out[n] = '\0';
			return;
		}
	}
}

static void store_info_from(git_commit *c, struct ckpt_info *ci)
{
	const char *msg = git_commit_message(c);
	const char *sum = git_commit_summary(c);
	char num[32];

	memset(ci, 0, sizeof(*ci));
	git_oid_tostr(ci->oid, sizeof(ci->oid), git_commit_id(c));
	ci->time = (long long)git_commit_time(c);
	snprintf(ci->reason, sizeof(ci->reason), "%s", sum ? sum : "");
	store_trailer(msg, "Hermes-Files", num, sizeof(num));
	ci->files = atoi(num);
	store_trailer(msg, "Hermes-Insertions", num, sizeof(num));
	ci->insertions = atoi(num);
	store_trailer(msg, "Hermes-Deletions", num, sizeof(num));
	ci->deletions = atoi(num);
	store_trailer(msg, "Hermes-Processes", ci->who, sizeof(ci->who));
	store_trailer(msg, "Hermes-Skipped", ci->skipped, sizeof(ci->skipped));
}

int store_list(struct store *st, struct ckpt_info **out, size_t *n, struct herr *e)
{
	git_commit *c = NULL;
	struct ckpt_info *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc = store_chain_head(st, &c, e);

	*out = NULL;
	*n = 0;
	if (rc < 0)
		return rc;
	while (c) {
		git_commit *parent = NULL;
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct ckpt_info *nv = realloc(v, ncap * sizeof(*nv));
			if (!nv) {
				git_commit_free(c);
				free(v);
				return err_set(e, -ENOMEM, "out of memory");
			}
			v = nv;
			cap = ncap;
		}
		store_info_from(c, &v[cnt++]);
		rc = store_chain_parent(st, c, &parent, e);
		if (rc < 0) {
			git_commit_free(c);
			free(v);
			return rc;
		}
		git_commit_free(c);
		c = parent;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int store_resolve(struct store *st, const char *spec, char out_oid[STORE_OID_HEX],
		  struct herr *e)
{
	struct ckpt_info *v = NULL;
	size_t n = 0, len = strlen(spec), hits = 0, all_digits = len > 0;
	int rc;

	for (size_t i = 0; i < len; i++)
		all_digits &= isdigit((unsigned char)spec[i]) != 0;
	if (!all_digits && (len < 4 || len > 64 || spec[0] == '-'))
		return err_set(e, -EINVAL,
			       "'%s' is neither a checkpoint number nor a 4-64 digit hex hash", spec);
	for (size_t i = 0; !all_digits && i < len; i++)
		if (!isxdigit((unsigned char)spec[i]))
			return err_set(e, -EINVAL,
				       "'%s' is neither a checkpoint number nor a 4-64 digit hex hash",
				       spec);
	rc = store_list(st, &v, &n, e);
	if (rc < 0)
		return rc;
	if (n == 0) {
		free(v);
		return err_set(e, -ENOENT, "no checkpoints yet");
	}
	/* a number in range is a list position; other digit strings may be hashes */
	if (all_digits && len <= 9) {
		long k = strtol(spec, NULL, 10);
		if (k >= 1 && (size_t)k <= n) {
			memcpy(out_oid, v[k - 1].oid, STORE_OID_HEX);
			free(v);
			return 0;
		}
		if (len < 4) {
			free(v);
			return err_set(e, -ERANGE, "no checkpoint %s: use 1-%zu", spec, n);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (len <= 40 && strncasecmp(v[i].oid, spec, len) == 0) {
			if (hits++ == 0)
				memcpy(out_oid, v[i].oid, STORE_OID_HEX);
		}
	if (hits == 0 && all_digits && len <= 9) {
		rc = err_set(e, -ERANGE, "no checkpoint %s: use 1-%zu", spec, n);
		free(v);
		return rc;
	}
	free(v);
	if (hits == 0)
		return err_set(e, -ENOENT, "checkpoint '%s' not found", spec);
	if (hits > 1)
		return err_set(e, -EEXIST, "checkpoint '%s' is ambiguous: give more digits", spec);
	return 0;
}
