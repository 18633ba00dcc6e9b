/* Exclusions: which paths of a tree never enter a checkpoint. A small
 * matcher for the gitignore subset we need (negation, dir/, anchored /x,
 * **, *, ?, [classes], escapes), the default list and .hermesignore; and
 * directories excluded for what they hold (git repositories, virtualenvs). */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum ignore_kind {
	IGNORE_GLOB,    /* the general matcher */
	IGNORE_LITERAL, /* no wildcard: string equality */
	IGNORE_SUFFIX,  /* "*.ext": a suffix (most of the defaults) */
};

struct ignore_rule {
	char *pat;
	size_t len;
	unsigned negate : 1;
	unsigned dir_only : 1;
	unsigned anchored : 1;
	unsigned kind : 2;
};

struct store_ignore {
	struct ignore_rule *rules;
	size_t n, cap;
};

/* hermes.md section 1 "Excludes", plus .git of any type, editors' swap,
 * backup and lock files (a restore that brought back a stale .f.swp, or
 * removed the one of a vim still open, would make vim offer to "recover"
 * old text; #f# is escaped, as "#" opens a comment), and our own temporary
 * files. */
static const char *const ignore_defaults[] = {
	"node_modules/", "dist/", "build/", "target/", "out/", ".next/", ".nuxt/",
	"__pycache__/", "*.pyc", "*.pyo", ".cache/", ".pytest_cache/", ".mypy_cache/",
	".ruff_cache/", "coverage/", ".coverage",
	".venv/", "venv/", "env/", ".git", ".hg/", ".svn/", ".worktrees/",
	"*.so", "*.dylib", "*.dll", "*.o", "*.a", "*.jar", "*.class", "*.exe", "*.obj",
	"*.mp4", "*.mov", "*.mkv", "*.webm", "*.zip", "*.tar", "*.tar.gz", "*.tgz",
	"*.7z", "*.rar", "*.iso",
	".env", ".env.*", ".env.local", ".env.*.local", ".DS_Store", "Thumbs.db", "*.log",
	"*.swp", "*.swo", ".*.sw[a-p]", "*~", ".#*", "\\#*#",
	STORE_TMP_PREFIX "*",
};

int store_ignore_new(struct store_ignore **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void store_ignore_free(struct store_ignore *ig)
{
	if (!ig)
		return;
	for (size_t i = 0; i < ig->n; i++)
		free(ig->rules[i].pat);
	free(ig->rules);
	free(ig);
}

int store_ignore_add_rule(struct store_ignore *ig, const char *rule)
{
	struct ignore_rule r = { 0 };
	size_t len;
	char *p;

	if (rule[0] == '#' || rule[0] == '\0')
		return 0;
	if (rule[0] == '!') {
		r.negate = 1;
		rule++;
	} else if (rule[0] == '\\' && (rule[1] == '#' || rule[1] == '!')) {
		rule++;
	}
	p = strdup(rule);
	if (!p)
		return -ENOMEM;
	len = strlen(p);
	/* trailing blanks go unless escaped */
	while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t') &&
	       !(len > 1 && p[len - 2] == '\\'))
		p[--len] = '\0';
	if (len > 0 && p[len - 1] == '/') {
		r.dir_only = 1;
		p[--len] = '\0';
	}
	if (len == 0) {
		free(p);
		return 0;
	}
	if (strchr(p, '/'))
		r.anchored = 1;
	if (p[0] == '/')
		memmove(p, p + 1, len--);
	if (ig->n == ig->cap) {
		size_t cap = ig->cap ? ig->cap * 2 : 64;
		struct ignore_rule *v = realloc(ig->rules, cap * sizeof(*v));
		if (!v) {
			free(p);
			return -ENOMEM;
		}
		ig->rules = v;
		ig->cap = cap;
	}
	r.pat = p;
	r.len = len;
	/* a scan asks about every entry of the tree: most rules need no glob */
	if (!strpbrk(p, "*?[\\"))
		r.kind = IGNORE_LITERAL;
	else if (p[0] == '*' && p[1] && !strpbrk(p + 1, "*?[\\") && !r.anchored)
		r.kind = IGNORE_SUFFIX;
	ig->rules[ig->n++] = r;
	return 0;
}

int store_ignore_add_text(struct store_ignore *ig, const char *text, size_t len)
{
	const char *end = text + len;

	while (text < end) {
		const char *nl = memchr(text, '\n', (size_t)(end - text));
		size_t l = nl ? (size_t)(nl - text) : (size_t)(end - text);
		char line[4096];
		int r;

		if (l > 0 && text[l - 1] == '\r')
			l--;
		if (l < sizeof(line)) {
			memcpy(line, text, l);
			line[l] = '\0';
			r = store_ignore_add_rule(ig, line);
			if (r < 0)
				return r;
		}
		text = nl ? nl + 1 : end;
	}
	return 0;
}

void store_ignore_add_defaults(struct store_ignore *ig)
{
	for (size_t i = 0; i < sizeof(ignore_defaults) / sizeof(ignore_defaults[0]); i++)
		store_ignore_add_rule(ig, ignore_defaults[i]);
}

/* [abc], [!a-z], [^x]: *pp points after '['; returns 1/0, or -1 when the
 * class is not closed (then '[' is a literal). */
static int ignore_class(const char **pp, char c)
{
	const char *p = *pp;
	int neg = 0, hit = 0;

	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	if (*p == ']') {
		hit |= c == ']';
		p++;
	}
	for (; *p && *p != ']'; p++) {
		char lo = *p;
		if (lo == '\\' && p[1])
			lo = *++p;
		if (p[1] == '-' && p[2] && p[2] != ']') {
			char hi = p[2];
			p += 2;
			if (hi == '\\' && p[1])
				hi = *++p;
			hit |= c >= lo && c <= hi;
		} else {
			hit |= c == lo;
		}
	}
	if (*p != ']')
		return -1;
	*pp = p + 1;
	return hit ^ neg;
}

/* Glob match where '*' and '?' stop at '/', and a whole "**" component
 * spans directories. */
static int ignore_wild(const char *pat, const char *p, const char *s)
{
	while (*p) {
		if (p[0] == '*' && p[1] == '*' && (p == pat || p[-1] == '/') &&
		    (p[2] == '/' || p[2] == '\0')) {
			if (p[2] == '\0')
				return 1;
			p += 3;
			for (;;) {
				if (ignore_wild(pat, p, s))
					return 1;
				s = strchr(s, '/');
				if (!s)
					return 0;
				s++;
			}
		}
		if (*p == '*') {
			while (*p == '*')
				p++;
			for (;;) {
				if (ignore_wild(pat, p, s))
					return 1;
				if (!*s || *s == '/')
					return 0;
				s++;
			}
		}
		if (*p == '?') {
			if (!*s || *s == '/')
				return 0;
			p++;
			s++;
			continue;
		}
		if (*p == '[') {
			const char *q = p + 1;
			int m;
			if (!*s || *s == '/')
				return 0;
			m = ignore_class(&q, *s);
			if (m >= 0) {
				if (!m)
					return 0;
				p = q;
				s++;
				continue;
			}
		}
		if (*p == '\\' && p[1])
			p++;
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
	return *s == '\0';
}

/* The rules alone on one path: 1 excluded, 0 not. */
int store_ignore_match_leaf(const struct store_ignore *ig, const char *path, int is_dir)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	size_t blen = strlen(base);
	for (size_t i = ig->n; i-- > 0;) {
		const struct ignore_rule *r = &ig->rules[i];
		const char *s = r->anchored ? path : base;
		int hit;

		if (r->dir_only && !is_dir)
			continue;
		if (r->kind == IGNORE_LITERAL)
			hit = strcmp(r->pat, s) == 0;
		else if (r->kind == IGNORE_SUFFIX)
			hit = blen >= r->len - 1 && memcmp(base + blen - (r->len - 1), r->pat + 1,
							   r->len - 1) == 0;
		else
			hit = ignore_wild(r->pat, r->pat, s);
		if (hit)
			return !r->negate;
	}
	return 0;
}

int store_ignore_match(const struct store_ignore *ig, const char *relpath, int is_dir)
{
	char buf[4096];
	size_t len = strlen(relpath);

	if (!ig || len >= sizeof(buf))
		return 0;
	memcpy(buf, relpath, len + 1);
	/* a file inside an excluded directory cannot be re-included */
	for (char *s = buf; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (store_ignore_match_leaf(ig, buf, 1))
			return 1;
		*s = '/';
	}
	return store_ignore_match_leaf(ig, buf, is_dir);
}

/* Does the directory at dirfd belong to a tool that rebuilds or restores it
 * itself, whatever its name: a git repository (HEAD, objects/ and refs/, as
 * a bare "mirror.git" or the .git of a checkout holds) or a virtualenv
 * (pyvenv.cfg)? A checkpoint of one would copy a second history or an
 * interpreter, and a restore would tear it. Two or four lstats: a scan
 * asks once per directory. */
int store_ignore_foreign_dir(int dirfd)
{
	struct stat sb;

	if (fstatat(dirfd, "pyvenv.cfg", &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
		return 1;
	/* a symbolic link was git's HEAD once */
	if (fstatat(dirfd, "HEAD", &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !(S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode)))
		return 0;
	return fstatat(dirfd, "objects", &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode) &&
	       fstatat(dirfd, "refs", &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode);
}

int store_ignore_foreign_name(const char *name)
{
	return strcmp(name, "HEAD") == 0 || strcmp(name, "objects") == 0 ||
	       strcmp(name, "refs") == 0 || strcmp(name, "pyvenv.cfg") == 0;
}

/* The verdicts on the directories one checkpoint or restore met, by path:
 * the paths of a checkpoint share their parents, and the tree does not
 * change under one (the daemon holds the turn gate). */
struct store_foreign {
	struct foreign_slot {
		char *path; /* NULL: free */
		int foreign;
	} *slots;
	size_t n, cap; /* cap: a power of two */
};

struct store_foreign *store_foreign_new(void)
{
	return calloc(1, sizeof(struct store_foreign));
}

void store_foreign_free(struct store_foreign *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->cap; i++)
		free(f->slots[i].path);
	free(f->slots);
	free(f);
}

/* FNV-1a */
static size_t foreign_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)h;
}

static struct foreign_slot *foreign_find(struct store_foreign *f, const char *path)
{
	size_t i = foreign_hash(path) & (f->cap - 1);

	while (f->slots[i].path && strcmp(f->slots[i].path, path) != 0)
		i = (i + 1) & (f->cap - 1);
	return &f->slots[i];
}

/* Room for one more, at most half full; 0 or -ENOMEM. */
static int foreign_grow(struct store_foreign *f)
{
	struct store_foreign bigger = { .cap = f->cap ? f->cap * 2 : 64 };

	if ((f->n + 1) * 2 <= f->cap)
		return 0;
	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < f->cap; i++)
		if (f->slots[i].path)
			*foreign_find(&bigger, f->slots[i].path) = f->slots[i];
	free(f->slots);
	f->slots = bigger.slots;
	f->cap = bigger.cap;
	return 0;
}

/* One directory of the tree (not the root), judged once. A directory that
 * cannot be opened (absent, a file) holds nothing of a tool. */
static int foreign_dir(struct store_foreign *f, int rootfd, const char *dir)
{
	struct foreign_slot *s = f && f->cap ? foreign_find(f, dir) : NULL;
	int fd, foreign = 0;

	if (s && s->path)
		return s->foreign;
	fd = fsio_open(rootfd, dir, O_PATH | O_DIRECTORY);
	if (fd >= 0) {
		foreign = store_ignore_foreign_dir(fd);
		close(fd);
	}
	/* without memory it is judged again next time: slower, not wrong */
	if (f && foreign_grow(f) == 0) {
		char *copy = strdup(dir);
		if (copy) {
			s = foreign_find(f, copy);
			s->path = copy;
			s->foreign = foreign;
			f->n++;
		}
	}
	return foreign;
}

int store_foreign_match(struct store_foreign *f, int rootfd, const char *relpath, int is_dir,
			int parents_known)
{
	char buf[PATH_MAX];
	size_t len = strlen(relpath);

	if (len == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, relpath, len + 1);
	for (char *s = buf; !parents_known && (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (foreign_dir(f, rootfd, buf))
			return 1;
		*s = '/';
	}
	return is_dir && foreign_dir(f, rootfd, buf);
}
