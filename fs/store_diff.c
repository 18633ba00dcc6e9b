/* What changed since a checkpoint: the tree as it is now (a scan, or the
 * newest checkpoint) against the checkpoint's tree, printed as a --stat
 * summary and a unified diff, optionally coloured like git. */
#include "store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "quote.h"

#define C_RESET "\033[m"
#define C_BOLD "\033[1m"
#define C_CYAN "\033[36m"
#define C_RED "\033[31m"
#define C_GREEN "\033[32m"

struct diff_out {
	FILE *f;
	int color;
};

static int diff_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
		     const git_diff_line *l, void *payload)
{
	struct diff_out *o = payload;
	const char *col = NULL;

	(void)delta;
	(void)hunk;
	switch (l->origin) {
	case GIT_DIFF_LINE_FILE_HDR:
		col = C_BOLD;
		break;
	case GIT_DIFF_LINE_HUNK_HDR:
		col = C_CYAN;
		break;
	case GIT_DIFF_LINE_ADDITION:
	case GIT_DIFF_LINE_ADD_EOFNL:
		col = C_GREEN;
		break;
	case GIT_DIFF_LINE_DELETION:
	case GIT_DIFF_LINE_DEL_EOFNL:
		col = C_RED;
		break;
	default:
		break;
	}
	if (o->color && col)
		fputs(col, o->f);
	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		fputc(l->origin, o->f);
	if (o->color && col && l->content_len > 0 &&
	    l->content[l->content_len - 1] == '\n') {
		fwrite(l->content, 1, l->content_len - 1, o->f);
		fputs(C_RESET "\n", o->f);
	} else {
		fwrite(l->content, 1, l->content_len, o->f);
		if (o->color && col)
			fputs(C_RESET, o->f);
	}
	return ferror(o->f) ? -1 : 0;
}

/* The --stat part, like git's, but each name quoted when it holds a
 * control byte (an agent picks file names: an escape or a newline must
 * neither reach the terminal nor break the table). */
static int diff_stat_print(git_diff *diff, git_diff_stats *stats, FILE *out)
{
	size_t n = git_diff_num_deltas(diff), namew = 0, maxch = 0;
	struct row {
		char *name; /* quoted */
		size_t add, del;
		int binary;
	} *rows = calloc(n ? n : 1, sizeof(*rows));
	git_buf sum = { 0 };
	int rc = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		git_patch *p = NULL;
		size_t ctx = 0;
		const char *path = d->status == GIT_DELTA_DELETED ? d->old_file.path
								  : d->new_file.path;
		size_t qlen = quote_str(path, NULL, 0) + 1;
		if (!(rows[i].name = malloc(qlen))) {
			rc = -ENOMEM;
			break;
		}
		quote_str(path, rows[i].name, qlen);
		rows[i].binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
		if ((rc = git_patch_from_diff(&p, diff, i)) == 0 && p) {
			git_patch_line_stats(&ctx, &rows[i].add, &rows[i].del, p);
			rows[i].binary |= (git_patch_get_delta(p)->flags & GIT_DIFF_FLAG_BINARY) != 0;
		}
		git_patch_free(p);
		if (strlen(rows[i].name) > namew)
			namew = strlen(rows[i].name);
		if (rows[i].add + rows[i].del > maxch)
			maxch = rows[i].add + rows[i].del;
	}
	if (namew > 50)
		namew = 50;
	int numw = snprintf(NULL, 0, "%zu", maxch);
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct row *r = &rows[i];
		size_t tot = r->add + r->del, width = 80 - namew - (size_t)numw - 6;
		size_t plus = r->add, minus = r->del;
		if (width < 10)
			width = 10;
		if (maxch > width) { /* scale the bar, at least one sign each */
			plus = r->add ? (r->add * width + maxch - 1) / maxch : 0;
			minus = r->del ? (r->del * width + maxch - 1) / maxch : 0;
		}
		fprintf(out, " %-*s | ", (int)namew, r->name);
		if (r->binary) {
			fputs("Bin\n", out);
			continue;
		}
		fprintf(out, "%*zu ", numw, tot);
		for (size_t k = 0; k < plus; k++)
			fputc('+', out);
		for (size_t k = 0; k < minus; k++)
			fputc('-', out);
		fputc('\n', out);
	}
	if (rc == 0 && (rc = git_diff_stats_to_buf(&sum, stats, GIT_DIFF_STATS_SHORT, 80)) == 0)
		fwrite(sum.ptr, 1, sum.size, out);
	git_buf_dispose(&sum);
	for (size_t i = 0; i < n; i++)
		free(rows[i].name);
	free(rows);
	return rc;
}

int store_diff(struct store *st, int rootfd, const char *oid,
	       const struct store_diff_opts *opt, FILE *out, struct herr *e)
{
	git_diff_options o;
	struct diff_out dout = { out, opt && opt->color };
	git_commit *c = NULL, *head = NULL;
	git_tree *old = NULL, *now = NULL;
	git_diff *diff = NULL;
	git_diff_stats *stats = NULL;
	git_oid id, now_id;
	int rc, files = 0;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	if (git_oid_fromstr(&id, oid) < 0 || git_commit_lookup(&c, st->repo, &id) < 0 ||
	    git_commit_tree(&old, c) < 0) {
		rc = err_set(e, -ENOENT, "checkpoint %.8s cannot be read", oid);
		goto out;
	}
	if (rootfd >= 0) {
		rc = store_scan_tree(st, rootfd, 0, NULL, NULL, &now_id, NULL, e);
		if (rc == 0 && git_tree_lookup(&now, st->repo, &now_id) < 0)
			rc = store_git_err(e, -EIO, "cannot read the scanned tree");
	} else {
		rc = store_head(st, &head, &now, e);
	}
	if (rc < 0)
		goto out;
	if (opt && opt->npaths) {
		o.pathspec.strings = (char **)opt->paths;
		o.pathspec.count = opt->npaths;
		o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	}
	o.flags |= GIT_DIFF_INCLUDE_TYPECHANGE;
	rc = git_diff_tree_to_tree(&diff, st->repo, old, now, &o);
	if (rc == 0)
		rc = git_diff_get_stats(&stats, diff);
	if (rc < 0) {
		rc = store_git_err(e, rc, "cannot compare with the checkpoint");
		goto out;
	}
	files = (int)git_diff_stats_files_changed(stats);
	if (files > 0) {
		if ((rc = diff_stat_print(diff, stats, out)) < 0) {
			rc = rc == -ENOMEM ? err_set(e, rc, "out of memory")
					   : store_git_err(e, rc, "cannot compare with the checkpoint");
			goto out;
		}
		if (!(opt && opt->stat_only)) {
			fputc('\n', out);
			rc = git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, diff_line, &dout);
			if (rc < 0) {
				rc = err_set(e, -EPIPE, "cannot write the diff");
				goto out;
			}
		}
	}
	rc = files;
out:
	git_diff_stats_free(stats);
	git_diff_free(diff);
	git_tree_free(now);
	git_tree_free(old);
	git_commit_free(head);
	git_commit_free(c);
	return rc;
}
