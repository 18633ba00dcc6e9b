/* Danger rules over a split shell command: the floor (wiping / or a home,
 * mkfs, raw block-device writes, fork bombs, power-off, kill -1) and the
 * families that need approval (recursive rm, fetch-and-run, writes to
 * protected paths, world-writable chmod, find -delete, SQL drops, ...). */
#include "rules.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "paths.h"
#include "shword.h"

#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define RULES_MAX_DEPTH 3

static const char *const rules_ask_ids[] = {
	"rm-recursive", "protected-write", "chmod-world", "chown-root", "dd",
	"sql-drop", "sql-truncate", "sql-delete-all", "systemctl", "kill-force",
	"pipe-to-shell", "decode-to-shell", "find-delete", "xargs-rm",
	"cloud-metadata",
};

/* rm -r of these (or of a home) is the floor. */
static const char *const rules_critical_dirs[] = {
	"/", "/home", "/root", "/etc", "/usr", "/var", "/bin", "/sbin", "/boot",
	"/lib", "/lib32", "/lib64", "/opt", "/srv", "/dev", "/proc", "/sys",
	"/run", "/mnt", "/media", "/snap", "/var/lib", "/var/log",
};

static const char *const rules_blockdev_prefixes[] = {
	"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "loop", "dm-", "md", "sr",
	"nbd", "zd", "disk/", "mapper/", "rbd", "bcache",
};

static const char *const rules_shells[] = {
	"sh", "bash", "zsh", "ksh", "dash", "fish", "mksh", "ash", "python",
	"python3", "perl", "ruby", "node",
};

int rules_is_ask_id(const char *id)
{
	for (size_t i = 0; i < N_(rules_ask_ids); i++)
		if (strcmp(rules_ask_ids[i], id) == 0)
			return 1;
	return 0;
}

static void rules_add(struct rules_report *rep, enum rules_level level, const char *id,
		      const char *what, const char *arg)
{
	for (size_t i = 0; i < rep->n_hits; i++)
		if (strcmp(rep->hits[i].id, id) == 0)
			return;
	if (level > rep->level)
		rep->level = level;
	if (rep->n_hits == RULES_MAX_HITS) {
		/* Keep a floor hit visible even when the list is full. */
		if (level != RULES_FLOOR)
			return;
		rep->n_hits--;
	}
	struct rules_hit *h = &rep->hits[rep->n_hits++];
	h->level = level;
	h->id = id;
	h->what = what;
	snprintf(h->arg, sizeof(h->arg), "%s", arg ? arg : "");
}

static const char *rules_base(const char *w)
{
	const char *s = strrchr(w, '/');

	return s ? s + 1 : w;
}

static int rules_in(const char *w, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(w, list[i]) == 0)
			return 1;
	return 0;
}

static int rules_is_shell(const char *name)
{
	return rules_in(name, rules_shells, N_(rules_shells));
}

static int rules_is_blockdev(const char *path)
{
	char norm[PATH_MAX];
	struct stat st;

	if (guard_normalize(path, "/", NULL, norm, sizeof(norm)) < 0 ||
	    strncmp(norm, "/dev/", 5) != 0)
		return 0;
	if (stat(norm, &st) == 0 && S_ISBLK(st.st_mode))
		return 1;
	for (size_t i = 0; i < N_(rules_blockdev_prefixes); i++)
		if (strncmp(norm + 5, rules_blockdev_prefixes[i],
			    strlen(rules_blockdev_prefixes[i])) == 0)
			return 1;
	return 0;
}

/* Would rm -r of word wipe / , a system directory or a home? */
static int rules_is_critical(const char *word, const struct guard *g, const char *cwd)
{
	char w[PATH_MAX], norm[PATH_MAX];
	size_t nh = g->n_homes ? g->n_homes : 1;

	snprintf(w, sizeof(w), "%s", word);
	/* a trailing "*" glob removes everything in its directory */
	for (;;) {
		size_t l = strlen(w);
		if (l >= 2 && strcmp(w + l - 2, "/*") == 0)
			w[l - 2] = '\0';
		else if (l >= 3 && strcmp(w + l - 3, "/.*") == 0)
			w[l - 3] = '\0';
		else if (l > 1 && w[l - 1] == '/')
			w[l - 1] = '\0';
		else if (strcmp(w, "*") == 0 || strcmp(w, ".*") == 0)
			snprintf(w, sizeof(w), ".");
		else
			break;
	}
	if (!w[0])
		snprintf(w, sizeof(w), "/");
	for (size_t h = 0; h < nh; h++) {
		const char *home = g->n_homes ? g->homes[h] : NULL;
		if (guard_normalize(w, cwd, home, norm, sizeof(norm)) < 0)
			continue;
		if (rules_in(norm, rules_critical_dirs, N_(rules_critical_dirs)) ||
		    guard_is_home(g, norm))
			return 1;
		if (strncmp(norm, "/usr/", 5) == 0 && !strchr(norm + 5, '/'))
			return 1;
	}
	return 0;
}

/* Skip assignments and wrappers (sudo, env, nice, ...); index of the
 * real command word or n when there is none. */
static size_t rules_skip_wrappers(char *const *w, size_t n)
{
	size_t i = 0;

	while (i < n) {
		const char *b = rules_base(w[i]);
		const char *eq = strchr(w[i], '=');
		if (eq && eq != w[i] && strspn(w[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"
					       "nopqrstuvwxyz0123456789_") == (size_t)(eq - w[i])) {
			i++;
		} else if (strcmp(b, "sudo") == 0 || strcmp(b, "doas") == 0 ||
			   strcmp(b, "env") == 0 || strcmp(b, "nice") == 0 ||
			   strcmp(b, "ionice") == 0 || strcmp(b, "stdbuf") == 0 ||
			   strcmp(b, "setsid") == 0 || strcmp(b, "nohup") == 0 ||
			   strcmp(b, "time") == 0 || strcmp(b, "command") == 0 ||
			   strcmp(b, "builtin") == 0 || strcmp(b, "exec") == 0 ||
			   strcmp(b, "busybox") == 0 || strcmp(b, "timeout") == 0) {
			int takes_arg = strcmp(b, "sudo") == 0 || strcmp(b, "nice") == 0 ||
					strcmp(b, "ionice") == 0 || strcmp(b, "env") == 0;
			i++;
			while (i < n && w[i][0] == '-') {
				/* options that take a value: sudo -u X, nice -n X, env -u X */
				int val = takes_arg && strlen(w[i]) == 2 &&
					  strchr("ugCDhprtUnc", w[i][1]);
				i += 1 + (val && i + 1 < n);
			}
			if (strcmp(b, "timeout") == 0 && i < n)
				i++; /* the duration */
		} else {
			break;
		}
	}
	return i;
}

static int rules_scan_text(const char *text, const struct guard *g, const char *cwd,
			   struct rules_report *rep, int depth);

static void rules_write_target(const char *path, const struct guard *g, const char *cwd,
			       struct rules_report *rep)
{
	char why[512];

	if (rules_is_blockdev(path)) {
		rules_add(rep, RULES_FLOOR, "block-device", "raw write to a block device", path);
		return;
	}
	if (guard_check_write(g, path, cwd, why, sizeof(why)) < 0)
		rules_add(rep, RULES_ASK, "protected-write", "write to a protected path", why);
}

static void rules_rm(char *const *a, size_t n, const struct guard *g, const char *cwd,
		     struct rules_report *rep)
{
	int recursive = 0, opts = 1;

	for (size_t i = 1; i < n; i++) {
		if (opts && strcmp(a[i], "--") == 0)
			opts = 0;
		else if (opts && strcmp(a[i], "--recursive") == 0)
			recursive = 1;
		else if (opts && a[i][0] == '-' && a[i][1] != '-' &&
			 (strchr(a[i], 'r') || strchr(a[i], 'R')))
			recursive = 1;
	}
	opts = 1;
	for (size_t i = 1; i < n; i++) {
		if (opts && strcmp(a[i], "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && a[i][0] == '-' && a[i][1])
			continue;
		if (recursive && rules_is_critical(a[i], g, cwd))
			rules_add(rep, RULES_FLOOR, "rm-root",
				  "recursive rm of /, a system directory or a home", a[i]);
		else
			rules_write_target(a[i], g, cwd, rep);
	}
	if (recursive)
		rules_add(rep, RULES_ASK, "rm-recursive", "recursive rm", a[0]);
}

static void rules_kill(char *const *a, size_t n, struct rules_report *rep)
{
	size_t i = 1;

	if (n == 2 && strcmp(a[1], "-1") == 0) {
		rules_add(rep, RULES_FLOOR, "kill-every", "kill -1 (every process)", a[1]);
		return;
	}
	if (i < n && (strcmp(a[i], "-s") == 0 || strcmp(a[i], "-n") == 0))
		i += 2;
	else if (i + 1 < n && a[i][0] == '-' && strcmp(a[i], "--") != 0)
		i++;
	if (i < n && strcmp(a[i], "--") == 0)
		i++;
	for (; i < n; i++)
		if (strcmp(a[i], "-1") == 0)
			rules_add(rep, RULES_FLOOR, "kill-every", "kill -1 (every process)",
				  a[i]);
}

/* Does a chmod mode make files writable by others? */
static int rules_mode_world_writable(const char *m)
{
	if (strspn(m, "01234567") == strlen(m) && *m)
		return (m[strlen(m) - 1] - '0') & 2;
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", m);
	for (char *save = NULL, *c = strtok_r(buf, ",", &save); c;
	     c = strtok_r(NULL, ",", &save)) {
		size_t who = strspn(c, "ugoa");
		char op = c[who];
		if ((op == '+' || op == '=') && strchr(c + who, 'w') &&
		    (who == 0 ? 0 : (memchr(c, 'o', who) || memchr(c, 'a', who))))
			return 1;
	}
	return 0;
}

static void rules_cmd(const struct sh_line *line, size_t ci, const struct guard *g,
		      const char *cwd, struct rules_report *rep, int depth)
{
	const struct sh_cmd *c = &line->cmds[ci];
	size_t s = rules_skip_wrappers(c->words, c->n_words);
	char *const *a = c->words + s;
	size_t n = c->n_words - s;

	for (size_t i = 0; i < c->n_redirs; i++)
		rules_write_target(c->redirs[i].target, g, cwd, rep);
	if (n == 0)
		return;
	const char *name = rules_base(a[0]);

	if (strcmp(name, "rm") == 0) {
		rules_rm(a, n, g, cwd, rep);
	} else if (strncmp(name, "mkfs", 4) == 0 || strcmp(name, "mke2fs") == 0) {
		rules_add(rep, RULES_FLOOR, "mkfs", "making a filesystem", name);
	} else if (strcmp(name, "wipefs") == 0 || strcmp(name, "sgdisk") == 0 ||
		   strcmp(name, "blkdiscard") == 0 || strcmp(name, "shred") == 0 ||
		   strcmp(name, "mkswap") == 0) {
		for (size_t i = 1; i < n; i++)
			if (rules_is_blockdev(a[i]))
				rules_add(rep, RULES_FLOOR, "block-device",
					  "wiping a block device", a[i]);
		if (strcmp(name, "shred") == 0)
			for (size_t i = 1; i < n; i++)
				if (a[i][0] != '-')
					rules_write_target(a[i], g, cwd, rep);
	} else if (strcmp(name, "dd") == 0) {
		for (size_t i = 1; i < n; i++) {
			if (strncmp(a[i], "of=", 3) == 0)
				rules_write_target(a[i] + 3, g, cwd, rep);
			if (strncmp(a[i], "if=", 3) == 0)
				rules_add(rep, RULES_ASK, "dd", "dd copying raw data", a[i]);
		}
	} else if (strcmp(name, "shutdown") == 0 || strcmp(name, "reboot") == 0 ||
		   strcmp(name, "halt") == 0 || strcmp(name, "poweroff") == 0) {
		rules_add(rep, RULES_FLOOR, "power", "shutting the machine down", name);
	} else if ((strcmp(name, "init") == 0 || strcmp(name, "telinit") == 0) && n > 1 &&
		   (strcmp(a[1], "0") == 0 || strcmp(a[1], "6") == 0)) {
		rules_add(rep, RULES_FLOOR, "power", "shutting the machine down", a[1]);
	} else if (strcmp(name, "systemctl") == 0) {
		for (size_t i = 1; i < n; i++) {
			if (rules_in(a[i], (const char *const[]){ "poweroff", "reboot", "halt",
								 "kexec", "soft-reboot" }, 5))
				rules_add(rep, RULES_FLOOR, "power",
					  "shutting the machine down", a[i]);
			if (rules_in(a[i], (const char *const[]){ "stop", "restart", "disable",
								 "mask", "kill" }, 5))
				rules_add(rep, RULES_ASK, "systemctl", "stopping or disabling services",
					  a[i]);
		}
	} else if (strcmp(name, "kill") == 0) {
		rules_kill(a, n, rep);
	} else if (strcmp(name, "pkill") == 0 || strcmp(name, "killall") == 0) {
		for (size_t i = 1; i < n; i++)
			if (strcmp(a[i], "-9") == 0 || strcmp(a[i], "-KILL") == 0 ||
			    strcmp(a[i], "-SIGKILL") == 0)
				rules_add(rep, RULES_ASK, "kill-force", "force-killing by name", name);
	} else if (strcmp(name, "chmod") == 0) {
		for (size_t i = 1; i < n; i++)
			if (a[i][0] != '-' && rules_mode_world_writable(a[i])) {
				rules_add(rep, RULES_ASK, "chmod-world",
					  "making files writable by everyone", a[i]);
				break;
			}
	} else if (strcmp(name, "chown") == 0) {
		int rec = 0;
		for (size_t i = 1; i < n; i++)
			rec |= strcmp(a[i], "-R") == 0 || strcmp(a[i], "--recursive") == 0;
		for (size_t i = 1; i < n && rec; i++)
			if (strncmp(a[i], "root", 4) == 0 && (a[i][4] == '\0' || a[i][4] == ':'))
				rules_add(rep, RULES_ASK, "chown-root",
					  "recursive chown to root", a[i]);
	} else if (strcmp(name, "find") == 0) {
		for (size_t i = 1; i < n; i++) {
			if (strcmp(a[i], "-delete") == 0)
				rules_add(rep, RULES_ASK, "find-delete", "find deleting files", a[i]);
			if ((strcmp(a[i], "-exec") == 0 || strcmp(a[i], "-execdir") == 0 ||
			     strcmp(a[i], "-ok") == 0) && i + 1 < n &&
			    strcmp(rules_base(a[i + 1]), "rm") == 0)
				rules_add(rep, RULES_ASK, "find-delete", "find deleting files",
					  a[i + 1]);
		}
	} else if (strcmp(name, "xargs") == 0) {
		for (size_t i = 1; i < n; i++)
			if (strcmp(rules_base(a[i]), "rm") == 0)
				rules_add(rep, RULES_ASK, "xargs-rm", "xargs rm", a[i]);
	} else if (strcmp(name, "tee") == 0 || strcmp(name, "truncate") == 0) {
		for (size_t i = 1; i < n; i++)
			if (a[i][0] != '-')
				rules_write_target(a[i], g, cwd, rep);
	} else if (strcmp(name, "cp") == 0 || strcmp(name, "mv") == 0 ||
		   strcmp(name, "install") == 0 || strcmp(name, "ln") == 0 ||
		   strcmp(name, "rsync") == 0) {
		if (n > 2 && a[n - 1][0] != '-')
			rules_write_target(a[n - 1], g, cwd, rep);
	} else if ((rules_is_shell(name) || strcmp(name, "eval") == 0) &&
		   depth < RULES_MAX_DEPTH) {
		/* bash -c 'TEXT' and eval TEXT: look inside */
		for (size_t i = 1; i < n; i++) {
			if (strcmp(name, "eval") == 0)
				rules_scan_text(a[i], g, cwd, rep, depth + 1);
			else if (strcmp(a[i], "-c") == 0 && i + 1 < n &&
				 strncmp(name, "python", 6) != 0)
				rules_scan_text(a[++i], g, cwd, rep, depth + 1);
		}
	}
}

/* Fetchers or decoders piped into an interpreter. */
static void rules_pipelines(const struct sh_line *line, struct rules_report *rep)
{
	int fetch = 0, decode = 0;

	for (size_t i = 0; i < line->n_cmds; i++) {
		const struct sh_cmd *c = &line->cmds[i];
		size_t s = rules_skip_wrappers(c->words, c->n_words);
		const char *name = s < c->n_words ? rules_base(c->words[s]) : "";
		int piped_in = i > 0 && line->cmds[i - 1].pipes_next;

		if (!piped_in)
			fetch = decode = 0;
		if (piped_in && (fetch || decode) && rules_is_shell(name)) {
			if (fetch)
				rules_add(rep, RULES_ASK, "pipe-to-shell",
					  "downloaded code piped into an interpreter", name);
			else
				rules_add(rep, RULES_ASK, "decode-to-shell",
					  "decoded data piped into an interpreter", name);
		}
		if (strcmp(name, "curl") == 0 || strcmp(name, "wget") == 0 ||
		    strcmp(name, "fetch") == 0)
			fetch = 1;
		for (size_t k = s + 1; k < c->n_words; k++) {
			const char *w = c->words[k];
			if ((strcmp(name, "base64") == 0 &&
			     (strcmp(w, "-d") == 0 || strcmp(w, "--decode") == 0)) ||
			    (strcmp(name, "xxd") == 0 && strcmp(w, "-r") == 0) ||
			    (strcmp(name, "openssl") == 0 && strcmp(w, "-d") == 0))
				decode = 1;
		}
		if (strcmp(name, "tr") == 0 || strcmp(name, "rev") == 0)
			decode |= fetch;
	}
}

struct rules_regex {
	const char *hint; /* "a|b": text with none of these (any case) cannot match */
	const char *re;
	int icase;
	enum rules_level level;
	const char *id, *what;
};

static const struct rules_regex rules_text[] = {
	{ "()", "([A-Za-z_:.][A-Za-z0-9_:.]*)[[:space:]]*\\(\\)[[:space:]]*\\{[^}]*\\1[[:space:]]*"
	  "\\|[[:space:]]*\\1[[:space:]]*&", 0, RULES_FLOOR, "fork-bomb", "a fork bomb" },
	{ "<(", "(^|[^A-Za-z0-9_])(ba|z|k|da)?sh[[:space:]]+(-[a-z]+[[:space:]]+)*<\\([[:space:]]*"
	  "(curl|wget)", 0, RULES_ASK, "pipe-to-shell",
	  "downloaded code run by an interpreter" },
	{ "curl|wget", "(eval|source|\\.)[[:space:]]+[\"']?(\\$\\(|<\\(|`)[[:space:]]*(curl|wget)", 0,
	  RULES_ASK, "pipe-to-shell", "downloaded code run by an interpreter" },
	{ "curl|wget", "(sh|bash|zsh)[[:space:]]+-c[[:space:]]+[\"']?(\\$\\(|`)[[:space:]]*(curl|wget)", 0,
	  RULES_ASK, "pipe-to-shell", "downloaded code run by an interpreter" },
	{ "drop", "\\bdrop[[:space:]]+(table|database|schema)\\b", 1, RULES_ASK, "sql-drop",
	  "SQL DROP" },
	{ "truncate", "\\btruncate[[:space:]]+(table[[:space:]]+)?[A-Za-z_\"`]", 1, RULES_ASK,
	  "sql-truncate", "SQL TRUNCATE" },
	{ "169.254|metadata.google|100.100.100|fd00:ec2", "169\\.254\\.169\\.254|metadata\\.google\\.internal|100\\.100\\.100\\.200|"
	  "fd00:ec2::254", 0, RULES_ASK, "cloud-metadata", "cloud metadata endpoint" },
};

static int rules_hinted(const char *text, const char *hints)
{
	char one[64];

	for (const char *h = hints; *h; h += strcspn(h, "|") + (h[strcspn(h, "|")] == '|')) {
		size_t n = strcspn(h, "|");
		snprintf(one, sizeof(one), "%.*s", (int)n, h);
		if (strcasestr(text, one))
			return 1;
	}
	return 0;
}

/* DELETE FROM without a WHERE in the same statement. */
static void rules_sql_delete(const char *text, struct rules_report *rep)
{
	for (const char *p = strcasestr(text, "delete"); p; p = strcasestr(p + 1, "delete")) {
		const char *q = p + 6;
		if (!strchr(" \t\n", *q))
			continue;
		q += strspn(q, " \t\n");
		if (strncasecmp(q, "from", 4) != 0 || !strchr(" \t\n", q[4]))
			continue;
		size_t stmt = strcspn(q, ";\"'");
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s", (int)(stmt < 1023 ? stmt : 1023), q);
		if (!strcasestr(buf, "where"))
			rules_add(rep, RULES_ASK, "sql-delete-all",
				  "SQL DELETE without WHERE", "DELETE FROM");
	}
}

/* Command substitutions run even inside double quotes: scan each
 * $(...) and `...` of text on its own. */
static void rules_substitutions(const char *text, const struct guard *g, const char *cwd,
				struct rules_report *rep, int depth)
{
	for (const char *p = text; *p; p++) {
		const char *start, *end = NULL;
		if (p[0] == '$' && p[1] == '(') {
			int nest = 1;
			start = p + 2;
			for (end = start; *end && nest; end++)
				nest += *end == '(' ? 1 : *end == ')' ? -1 : 0;
			if (nest)
				return;
			end--; /* at the closing ')' */
		} else if (p[0] == '`') {
			start = p + 1;
			end = strchr(start, '`');
			if (!end)
				return;
		} else {
			continue;
		}
		char *inner = strndup(start, (size_t)(end - start));
		if (!inner)
			return;
		rules_scan_text(inner, g, cwd, rep, depth + 1);
		free(inner);
		p = end;
	}
}

static int rules_scan_text(const char *text, const struct guard *g, const char *cwd,
			   struct rules_report *rep, int depth)
{
	struct sh_line line;
	int r;

	if (depth < RULES_MAX_DEPTH)
		rules_substitutions(text, g, cwd, rep, depth);

	for (size_t i = 0; i < N_(rules_text); i++) {
		regex_t re;
		if (!rules_hinted(text, rules_text[i].hint))
			continue; /* compiling costs more than this check */
		int flags = REG_EXTENDED | REG_NOSUB | (rules_text[i].icase ? REG_ICASE : 0);
		if (regcomp(&re, rules_text[i].re, flags) != 0)
			return -EINVAL;
		if (regexec(&re, text, 0, NULL, 0) == 0)
			rules_add(rep, rules_text[i].level, rules_text[i].id, rules_text[i].what,
				  NULL);
		regfree(&re);
	}
	rules_sql_delete(text, rep);
	if ((r = shword_split(text, &line)) < 0)
		return r;
	for (size_t i = 0; i < line.n_cmds; i++)
		rules_cmd(&line, i, g, cwd, rep, depth);
	rules_pipelines(&line, rep);
	shword_free(&line);
	return 0;
}

int rules_scan(const char *command, const struct guard *g, const char *cwd,
	       struct rules_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	return rules_scan_text(command, g, cwd, rep, 0);
}
