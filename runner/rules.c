/* Danger rules over a split shell command: the floor (wiping / or a home,
 * mkfs, raw block-device writes, fork bombs, power-off, kill -1) and the
 * families that need approval (recursive rm, fetch-and-run, writes to
 * protected paths, world-writable chmod, find -delete, SQL drops, ...). */
#include "rules.h"

#include <errno.h>
#include <pwd.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "paths.h"
#include "shword.h"

#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define RULES_MAX_DEPTH 6
/* the working directory after a cd we cannot follow: relative paths under
 * it are no system directory and no home */
#define RULES_CWD_UNKNOWN "/.hermes-unknown-cwd"

static const char *const rules_ask_ids[] = {
	"rm-recursive", "protected-write", "chmod-world", "chown-root", "dd",
	"sql-drop", "sql-truncate", "sql-delete-all", "systemctl", "kill-force",
	"pipe-to-shell", "decode-to-shell", "find-delete", "xargs-rm",
	"cloud-metadata", "nested-shell", "sysctl-write", "mkfs-image",
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

/* Shells: their -c text and standard input are shell code. */
static const char *const rules_shells[] = {
	"sh", "bash", "zsh", "ksh", "dash", "fish", "mksh", "ash",
};

/* Other interpreters: what is piped into them runs too, but not as shell. */
static const char *const rules_interpreters[] = {
	"python", "python3", "perl", "ruby", "node", "php",
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
		rep->overflow = 1;
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
	return rules_in(name, rules_shells, N_(rules_shells)) ||
	       rules_in(name, rules_interpreters, N_(rules_interpreters));
}

static int rules_is_sh(const char *name)
{
	return rules_in(name, rules_shells, N_(rules_shells));
}

static int rules_is_blockdev(const char *path, const char *cwd)
{
	char norm[PATH_MAX];
	struct stat st;

	if (guard_normalize(path, cwd ? cwd : "/", NULL, norm, sizeof(norm)) < 0 ||
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
		/* anybody's home: /home/NAME */
		if (strncmp(norm, "/home/", 6) == 0 && norm[6] && !strchr(norm + 6, '/'))
			return 1;
	}
	return 0;
}

/* Commands that run the rest of their words as a command, with their
 * options: short ones that take a value (vals), long ones that take the
 * next word as their value (longs, " --a --b "), the short option whose
 * value is shell text run by a shell (text: su -c, env -S, flock -c,
 * script -c), and how many words come before the command (pos: the file
 * of flock, the duration of timeout, the priority of chrt). */
struct rules_wrapper {
	const char *name, *vals;
	char text;
	int pos;
	const char *longs;
};

static const struct rules_wrapper rules_wrappers[] = {
	{ "sudo", "ugCDhprtUT", 0, 0,
	  " --user --group --chdir --close-from --host --prompt --role --type --other-user "
	  "--command-timeout " },
	{ "doas", "uC", 0, 0, "" },
	{ "env", "uC", 'S', 0, " --unset --chdir " },
	{ "nice", "n", 0, 0, " --adjustment " },
	{ "ionice", "cnpPu", 0, 0, " --class --classdata --pid --pgid --uid " },
	{ "stdbuf", "ioe", 0, 0, " --input --output --error " },
	{ "setsid", "", 0, 0, "" },
	{ "nohup", "", 0, 0, "" },
	{ "time", "fo", 0, 0, " --format --output " },
	{ "command", "", 0, 0, "" },
	{ "builtin", "", 0, 0, "" },
	{ "exec", "a", 0, 0, "" },
	{ "busybox", "", 0, 0, "" },
	{ "timeout", "sk", 0, 1, " --signal --kill-after " },
	{ "flock", "wE", 'c', 1, " --wait --timeout --conflict-exit-code " },
	{ "taskset", "", 0, 1, "" },
	{ "chrt", "TPD", 0, 1, " --sched-runtime --sched-period --sched-deadline " },
	{ "strace", "oeEpPsSuXIab", 0, 0, " --output --expr --env --attach --user --string-limit " },
	{ "ltrace", "oeEpPsuXIab", 0, 0, " --output " },
	{ "unshare", "SGRw", 0, 0, " --setuid --setgid " },
	{ "watch", "n", 0, 0, " --interval " },
	{ "su", "sgG", 'c', 0, " --shell --group --supp-group --whitelist-environment " },
	{ "runuser", "sgGu", 'c', 0, " --user --group --supp-group --shell " },
	{ "script", "EIOTmB", 'c', 0, " --log-out --log-in --log-io --log-timing --output-limit " },
	{ "chroot", "", 0, 1, " --userspec --groups " },
	{ "nsenter", "tSG", 0, 0, " --target --setuid --setgid " },
	{ "caffeinate", "", 0, 0, "" },
	{ "xvfb-run", "efnpsw", 0, 0, " --error-file --server-args --server-num --xauth-protocol " },
	{ "systemd-run", "pEu", 0, 0,
	  " --unit --property --setenv --uid --gid --working-directory --description --slice " },
	{ "firejail", "", 0, 0, "" },
	{ "proot", "rbw", 0, 0, "" },
	{ "faketime", "", 0, 1, "" },
	{ "catchsegv", "", 0, 0, "" },
	{ "valgrind", "", 0, 0, "" },
	{ "gdb", "", 0, 0, "" },
	{ "torsocks", "", 0, 0, "" },
	{ "pkexec", "", 0, 0, " --user " },
	{ "fakeroot", "is", 0, 0, " --lib --faked " },
	{ "gosu", "", 0, 1, "" },
	{ "su-exec", "", 0, 1, "" },
	{ "setpriv", "", 0, 0, "" },
	{ "sg", "", 'c', 1, "" },
	{ "prlimit", "p", 0, 0, " --pid " },
	{ "numactl", "NmCPpiw", 0, 0, "" },
	{ "nocache", "", 0, 0, "" },
	{ "eatmydata", "", 0, 0, "" },
	{ "unbuffer", "", 0, 0, "" },
	{ "systemd-inhibit", "", 0, 0, " --what --who --why --mode " },
	{ "dbus-run-session", "", 0, 0, " --config-file --dbus-daemon " },
	{ "setarch", "", 0, 1, "" },
	{ "linux32", "", 0, 0, "" },
	{ "linux64", "", 0, 0, "" },
	{ "chpst", "uUe/nlLmdop", 0, 0, "" },
	{ "cgexec", "g", 0, 0, "" },
	{ "direnv", "", 0, 2, "" }, /* direnv exec DIR CMD */
	{ "nix-shell", "p", 0, 0, "" },
	{ "parallel", "jSP", 0, 0, " --jobs " },
};

/* Shell words that start a clause: what follows them is a command. */
static const char *const rules_reserved[] = {
	"if", "then", "else", "elif", "do", "while", "until", "!", "coproc",
};

/* Does long option o of wrapper wr take the next word as its value? */
static int rules_long_takes(const struct rules_wrapper *wr, const char *o)
{
	char key[64];

	if (strlen(o) > 60)
		return 0;
	snprintf(key, sizeof(key), " %s ", o);
	return strstr(wr->longs, key) != NULL;
}

static const struct rules_wrapper *rules_wrapper_of(const char *b)
{
	for (size_t i = 0; i < N_(rules_wrappers); i++)
		if (strcmp(rules_wrappers[i].name, b) == 0)
			return &rules_wrappers[i];
	return NULL;
}

/* Skip assignments, clause words and wrappers (sudo, env, nice, ...);
 * index of the real command word or n when there is none. Shell text a
 * wrapper runs (su -c TEXT) goes to *texts (up to 4). */
static size_t rules_skip_wrappers_t(char *const *w, size_t n, const char **texts,
				    size_t *ntexts)
{
	size_t i = 0;

	if (ntexts)
		*ntexts = 0;
	while (i < n) {
		const char *b = rules_base(w[i]);
		const char *eq = strchr(w[i], '=');
		const struct rules_wrapper *wr;

		if (eq && eq != w[i] && strspn(w[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"
					       "nopqrstuvwxyz0123456789_") == (size_t)(eq - w[i])) {
			i++;
			continue;
		}
		if (rules_in(w[i], rules_reserved, N_(rules_reserved))) {
			i++;
			continue;
		}
		/* uv run, poetry run, pipenv run, pdm run CMD */
		if (i + 1 < n && strcmp(w[i + 1], "run") == 0 &&
		    rules_in(b, (const char *const[]){ "uv", "poetry", "pipenv", "pdm", "hatch", "rye" },
			     6)) {
			i += 2;
			while (i < n && w[i][0] == '-' && strcmp(w[i], "--") != 0)
				i++;
			if (i < n && strcmp(w[i], "--") == 0)
				i++;
			continue;
		}
		if (!(wr = rules_wrapper_of(b)))
			break;
		int saw_user = 0;
		i++;
		/* options: clusters of short ones (a value ends a cluster),
		 * long ones (--opt=value, or --opt alone) */
		while (i < n && w[i][0] == '-' && w[i][1]) {
			const char *o = w[i++];
			if (strcmp(o, "--") == 0)
				break;
			if (o[1] == '-') {
				if (strncmp(o, "--split-string=", 15) == 0 && texts && *ntexts < 4)
					texts[(*ntexts)++] = o + 15;
				else if (strncmp(o, "--command=", 10) == 0 && wr->text && texts &&
					 *ntexts < 4)
					texts[(*ntexts)++] = o + 10;
				else if ((strcmp(o, "--command") == 0 ||
					  strcmp(o, "--split-string") == 0) && i < n) {
					if (texts && *ntexts < 4)
						texts[(*ntexts)++] = w[i];
					i++;
				} else if (strcmp(o, "--run") == 0 && i < n) {
					if (texts && *ntexts < 4) /* nix-shell --run TEXT */
						texts[(*ntexts)++] = w[i];
					i++;
				} else if (!strchr(o, '=') && i < n && rules_long_takes(wr, o)) {
					if (strcmp(o, "--user") == 0)
						saw_user = 1;
					i++; /* --user root: the value is the next word */
				}
				continue;
			}
			for (const char *c = o + 1; *c; c++) {
				int is_text = wr->text && *c == wr->text;
				if (!is_text && !strchr(wr->vals, *c))
					continue;
				if (*c == 'u')
					saw_user = 1;
				const char *val = c[1] ? c + 1 : i < n ? w[i++] : NULL;
				if (is_text && val && texts && *ntexts < 4)
					texts[(*ntexts)++] = val;
				break;
			}
		}
		/* runuser -u USER [--] COMMAND: a command follows */
		if (strcmp(b, "runuser") == 0 && saw_user)
			continue;
		if (strcmp(b, "su") == 0 || strcmp(b, "runuser") == 0 || strcmp(b, "script") == 0 ||
		    strcmp(b, "sg") == 0) {
			/* su [USER] [-c TEXT]: no command words of its own */
			while (i < n) {
				if (w[i][0] == '-' && w[i][1] == 'c' && !w[i][2] && i + 1 < n && texts &&
				    *ntexts < 4)
					texts[(*ntexts)++] = w[i + 1];
				i++;
			}
			return n;
		}
		if (strcmp(b, "taskset") == 0 && i > 0 && strcmp(w[i - 1], "-p") == 0)
			return n; /* taskset -p MASK PID: no command */
		for (int k = 0; k < wr->pos && i < n; k++)
			i++;
		/* watch 'TEXT': one word goes to sh -c as it is */
		if (strcmp(b, "watch") == 0 && i + 1 == n) {
			if (texts && *ntexts < 4)
				texts[(*ntexts)++] = w[i];
			return n;
		}
		/* flock FILE -c TEXT */
		if (strcmp(b, "flock") == 0 && i + 1 < n && strcmp(w[i], "-c") == 0) {
			if (texts && *ntexts < 4)
				texts[(*ntexts)++] = w[i + 1];
			return n;
		}
	}
	return i;
}

static size_t rules_skip_wrappers(char *const *w, size_t n)
{
	return rules_skip_wrappers_t(w, n, NULL, NULL);
}

static int rules_scan_text(const char *text, const struct guard *g, const char *cwd,
			   struct rules_report *rep, int depth);

static void rules_write_target(const char *path, const struct guard *g, const char *cwd,
			       struct rules_report *rep)
{
	char why[512];

	char norm[PATH_MAX];

	if (rules_is_blockdev(path, cwd)) {
		rules_add(rep, RULES_FLOOR, "block-device", "raw write to a block device", path);
		return;
	}
	if (guard_normalize(path, cwd, NULL, norm, sizeof(norm)) == 0) {
		if (strcmp(norm, "/proc/sysrq-trigger") == 0) {
			rules_add(rep, RULES_FLOOR, "power",
				  "writing the magic SysRq trigger (reboot, crash, kill all)", path);
			return;
		}
		if (strncmp(norm, "/proc/sys/", 10) == 0 || strncmp(norm, "/sys/", 5) == 0) {
			rules_add(rep, RULES_ASK, "sysctl-write", "changing kernel settings", path);
			return;
		}
	}
	if (guard_check_write(g, path, cwd, why, sizeof(why)) < 0) {
		rules_add(rep, RULES_ASK, "protected-write", "write to a protected path", why);
		return;
	}
	/* a project's .env holds its secrets (as the reference treats it),
	 * also .env.local, .env.production */
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strcmp(base, ".env") == 0 ||
	    (strncmp(base, ".env.", 5) == 0 &&
	     !rules_in(base + 5, (const char *const[]){ "example", "sample", "template", "dist" },
		       4)))
		rules_add(rep, RULES_ASK, "protected-write", "write to a .env file (secrets)", path);
}

/* One target of rm, with its brace expansions ({a,b} and /{etc,usr}
 * name several targets: each is checked). */
static void rules_rm_target(const char *t, int recursive, const struct guard *g,
			    const char *cwd, struct rules_report *rep, int depth)
{
	const char *open = strchr(t, '{'), *close = open ? strchr(open, '}') : NULL;

	if (open && close && depth < 4 && memchr(open, ',', (size_t)(close - open))) {
		const char *alt = open + 1;
		while (alt <= close) {
			size_t len = strcspn(alt, ",}");
			char buf[PATH_MAX];
			if (alt + len > close)
				len = (size_t)(close - alt);
			snprintf(buf, sizeof(buf), "%.*s%.*s%s", (int)(open - t), t, (int)len, alt,
				 close + 1);
			rules_rm_target(buf, recursive, g, cwd, rep, depth + 1);
			alt += len + 1;
		}
		return;
	}
	if (recursive && rules_is_critical(t, g, cwd))
		rules_add(rep, RULES_FLOOR, "rm-root",
			  "recursive rm of /, a system directory or a home", t);
	else
		rules_write_target(t, g, cwd, rep);
}

static void rules_rm(char *const *a, size_t n, const struct guard *g, const char *cwd,
		     struct rules_report *rep)
{
	int recursive = 0, opts = 1;

	for (size_t i = 1; i < n; i++) {
		if (opts && strcmp(a[i], "--") == 0)
			opts = 0;
		else if (opts && strlen(a[i]) >= 3 && strncmp("--recursive", a[i], strlen(a[i])) == 0)
			recursive = 1; /* getopt takes any unique prefix: --r, --rec, ... */
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
		rules_rm_target(a[i], recursive, g, cwd, rep, 0);
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

/* Filesystem makers: mkfs, mkfs.*, mke2fs, mkdosfs, mkntfs, ... */
static int rules_is_mkfs(const char *name)
{
	return strncmp(name, "mkfs", 4) == 0 || strcmp(name, "mke2fs") == 0 ||
	       strcmp(name, "mkdosfs") == 0 || strcmp(name, "mkntfs") == 0 ||
	       strcmp(name, "mkexfatfs") == 0 || strcmp(name, "mkswap") == 0;
}

/* Tools that rewrite a disk given as an argument: the floor when one is a
 * block device. */
static const char *const rules_disk_tools[] = {
	"parted", "sfdisk", "fdisk", "gdisk", "cfdisk", "cryptsetup", "badblocks",
	"ddrescue", "nvme", "mdadm", "pvcreate", "vgcreate", "zpool", "bmaptool",
	"qemu-img", "dcfldd", "dc3dd",
};

static int rules_has_any(char *const *a, size_t n, const char *const *words, size_t nw)
{
	for (size_t i = 1; i < n; i++)
		if (rules_in(a[i], words, nw))
			return 1;
	return 0;
}

/* Does this disk tool write the disk (not fdisk -l, parted DEV print)? */
static int rules_disk_writes(const char *name, char *const *a, size_t n)
{
	static const char *const lists[] = { "-l", "--list", "-d", "--dump", "-s",
					      "--show-size", "-J", "--json", "-V", "--verify",
					      "--help", "-h" };
	if (rules_in(name, (const char *const[]){ "fdisk", "gdisk", "cfdisk" }, 3) &&
	    rules_has_any(a, n, lists, 2))
		return 0;
	if (strcmp(name, "sfdisk") == 0 && rules_has_any(a, n, lists, N_(lists)))
		return 0;
	if (strcmp(name, "parted") == 0)
		return rules_has_any(a, n, (const char *const[]){ "mklabel", "mktable", "mkpart",
								 "rm", "resizepart" }, 5);
	if (strcmp(name, "nvme") == 0)
		return rules_has_any(a, n, (const char *const[]){ "format", "sanitize" }, 2);
	if (strcmp(name, "cryptsetup") == 0)
		return rules_has_any(a, n, (const char *const[]){ "luksFormat", "format", "erase",
								 "luksErase", "reencrypt" }, 5);
	if (strcmp(name, "mdadm") == 0)
		return rules_has_any(a, n, (const char *const[]){ "--zero-superblock", "--create",
								 "-C" }, 3);
	if (strcmp(name, "zpool") == 0)
		return rules_has_any(a, n, (const char *const[]){ "create", "labelclear" }, 2);
	if (strcmp(name, "badblocks") == 0)
		return rules_has_any(a, n, (const char *const[]){ "-w" }, 1);
	return 1;
}

/* Is a[0] the system's command, not ./init or build/reboot of a project? */
static int rules_system_cmd(const char *w)
{
	if (!strchr(w, '/'))
		return 1;
	return strncmp(w, "/sbin/", 6) == 0 || strncmp(w, "/usr/sbin/", 10) == 0 ||
	       strncmp(w, "/bin/", 5) == 0 || strncmp(w, "/usr/bin/", 9) == 0 ||
	       strncmp(w, "/usr/local/", 11) == 0;
}

/* Does a[] hold a word starting with prefix? */
static int rules_has_prefix(char *const *a, size_t n, const char *prefix)
{
	for (size_t i = 1; i < n; i++)
		if (strncmp(a[i], prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

/* Does a[] hold word x followed by y (or x=y)? */
static int rules_has_seq(char *const *a, size_t n, const char *x, const char *y)
{
	size_t lx = strlen(x);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(a[i], x) == 0 && i + 1 < n && strcmp(a[i + 1], y) == 0)
			return 1;
		if (strncmp(a[i], x, lx) == 0 && a[i][lx] == '=' && strcmp(a[i] + lx + 1, y) == 0)
			return 1;
	}
	return 0;
}

static void rules_nested(const char *text, const struct guard *g, const char *cwd,
			 struct rules_report *rep, int depth);

/* Words another command runs as a command (find -exec, xargs): checked
 * like a command line of their own. */
static void rules_subcmd(char *const *w, size_t n, const struct guard *g, const char *cwd,
			 struct rules_report *rep, int depth)
{
	char **v = calloc(n + 1, sizeof(*v));
	char *text;

	if (!v)
		return;
	memcpy(v, w, n * sizeof(*v));
	text = shword_join(v);
	free(v);
	if (text)
		rules_nested(text, g, cwd, rep, depth);
	free(text);
}

/* Shell text the command runs, looked into like the command itself; past
 * the depth limit it needs approval rather than passing unseen. */
static void rules_nested(const char *text, const struct guard *g, const char *cwd,
			 struct rules_report *rep, int depth)
{
	if (depth + 1 >= RULES_MAX_DEPTH) {
		rules_add(rep, RULES_ASK, "nested-shell",
			  "shell code nested too deep to check", NULL);
		return;
	}
	if (rules_scan_text(text, g, cwd, rep, depth + 1) < 0)
		rules_add(rep, RULES_ASK, "nested-shell", "shell code that could not be checked",
			  NULL);
}

/* Words a[from..n) joined by spaces (eval, echo ... | sh). */
static char *rules_join(char *const *a, size_t from, size_t n)
{
	size_t len = 1;
	char *s;

	for (size_t i = from; i < n; i++)
		len += strlen(a[i]) + 1;
	if (!(s = calloc(1, len)))
		return NULL;
	for (size_t i = from; i < n; i++) {
		if (i > from)
			strcat(s, " ");
		strcat(s, a[i]);
	}
	return s;
}

/* A shell's command line: the text of -c (also in a cluster: -ec, -xc, or
 * -c given before other options), or the here-document / <<< string it
 * reads when it runs no script. */
static void rules_shell(const struct sh_cmd *c, char *const *a, size_t n, const struct guard *g,
			const char *cwd, struct rules_report *rep, int depth)
{
	int want_text = 0, script = 0;

	for (size_t i = 1; i < n; i++) {
		const char *w = a[i];
		if (strcmp(w, "-") == 0 && !want_text)
			break; /* bash - : the script comes on standard input */
		if (strcmp(w, "--") == 0) {
			script = i + 1 < n && !want_text;
			if (want_text && i + 1 < n)
				rules_nested(a[i + 1], g, cwd, rep, depth);
			return;
		}
		if ((w[0] == '-' || w[0] == '+') && w[1] && w[1] != '-') {
			if (strchr(w + 1, 'c'))
				want_text = 1;
			if (strcmp(w + 1, "o") == 0 || strcmp(w + 1, "O") == 0)
				i++; /* -o OPTION takes a value */
			continue;
		}
		if (w[0] == '-' && w[1] == '-') {
			if (strcmp(w, "--rcfile") == 0 || strcmp(w, "--init-file") == 0)
				i++;
			continue;
		}
		/* the first operand: the text with -c, else a script file
		 * (/dev/stdin: the standard input again) */
		if (want_text)
			rules_nested(w, g, cwd, rep, depth);
		else
			script = strcmp(w, "/dev/stdin") != 0 && strcmp(w, "/proc/self/fd/0") != 0;
		break;
	}
	if (!script && !want_text && c->input)
		rules_nested(c->input, g, cwd, rep, depth);
}

static void rules_cmd(const struct sh_line *line, size_t ci, const struct guard *g,
		      const char *cwd, struct rules_report *rep, int depth)
{
	const struct sh_cmd *c = &line->cmds[ci];
	const char *texts[4];
	size_t ntexts;
	size_t s = rules_skip_wrappers_t(c->words, c->n_words, texts, &ntexts);
	char *const *a = c->words + s;
	size_t n = c->n_words - s;

	for (size_t i = 0; i < c->n_redirs; i++)
		rules_write_target(c->redirs[i].target, g, cwd, rep);
	for (size_t i = 0; i < ntexts; i++)
		rules_nested(texts[i], g, cwd, rep, depth);
	/* sudo -s, sudo -i, su: a wrapper left with no command starts a shell,
	 * which runs what it reads */
	if (n == 0 && s > 0 && c->input && rules_wrapper_of(rules_base(c->words[0])))
		rules_nested(c->input, g, cwd, rep, depth);
	if (n == 0)
		return;
	const char *name = rules_base(a[0]);

	if (strcmp(name, "rm") == 0) {
		rules_rm(a, n, g, cwd, rep);
	} else if (rules_is_mkfs(name)) {
		/* on a device: the floor; into an image file: approval; only
		 * options (--help, -V) or sizes: nothing */
		int dev = 0, file = 0;
		for (size_t i = 1; i < n; i++) {
			if (a[i][0] == '-')
				continue;
			if (rules_is_blockdev(a[i], cwd))
				dev = 1;
			else if (strspn(a[i], "0123456789") != strlen(a[i]))
				file = 1; /* (a bare number is a size: mkfs.vfat -C f.img 65536) */
		}
		if (dev)
			rules_add(rep, RULES_FLOOR, "mkfs", "making a filesystem", name);
		else if (file)
			rules_add(rep, RULES_ASK, "mkfs-image", "making a filesystem in a file", name);
	} else if (rules_in(name, rules_disk_tools, N_(rules_disk_tools)) ||
		   strcmp(name, "wipefs") == 0 || strcmp(name, "sgdisk") == 0 ||
		   strcmp(name, "blkdiscard") == 0 || strcmp(name, "shred") == 0) {
		for (size_t i = 1; i < n && rules_disk_writes(name, a, n); i++) {
			const char *t = strncmp(a[i], "of=", 3) == 0 ? a[i] + 3 : a[i];
			if (rules_is_blockdev(t, cwd))
				rules_add(rep, RULES_FLOOR, "block-device",
					  "wiping a block device", a[i]);
		}
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
	} else if (rules_system_cmd(a[0]) &&
		   (strcmp(name, "shutdown") == 0 || strcmp(name, "reboot") == 0 ||
		    strcmp(name, "halt") == 0 || strcmp(name, "poweroff") == 0 ||
		    strcmp(name, "openrc-shutdown") == 0)) {
		int cancel = 0; /* shutdown -c cancels a pending shutdown */
		for (size_t i = 1; i < n; i++)
			cancel |= strcmp(a[i], "-c") == 0 || strcmp(a[i], "--cancel") == 0 ||
				  strcmp(a[i], "--help") == 0;
		if (!cancel)
			rules_add(rep, RULES_FLOOR, "power", "shutting the machine down", name);
	} else if (rules_system_cmd(a[0]) &&
		   (strcmp(name, "init") == 0 || strcmp(name, "telinit") == 0) && n > 1 &&
		   (strcmp(a[1], "0") == 0 || strcmp(a[1], "6") == 0)) {
		rules_add(rep, RULES_FLOOR, "power", "shutting the machine down", a[1]);
	} else if ((strcmp(name, "kexec") == 0 && n > 1 && strstr(a[1], "e")) ||
		   (strcmp(name, "loginctl") == 0 && n > 1 &&
		    rules_in(a[1], (const char *const[]){ "poweroff", "reboot", "halt", "kexec" }, 4)) ||
		   (strcmp(name, "rtcwake") == 0 && rules_has_seq(a, n, "-m", "off"))) {
		rules_add(rep, RULES_FLOOR, "power", "shutting the machine down", name);
	} else if (strcmp(name, "killall5") == 0) {
		rules_add(rep, RULES_FLOOR, "kill-every", "killall5 (every process)", name);
	} else if (strcmp(name, "systemctl") == 0) {
		for (size_t i = 1; i < n; i++) {
			if (rules_in(a[i], (const char *const[]){ "poweroff", "reboot", "halt",
								 "kexec", "soft-reboot", "rescue",
								 "emergency", "reboot.target",
								 "poweroff.target", "halt.target",
								 "kexec.target", "rescue.target",
								 "emergency.target" }, 13))
				rules_add(rep, RULES_FLOOR, "power",
					  "shutting the machine down", a[i]);
			if (rules_in(a[i], (const char *const[]){ "stop", "restart", "disable",
								 "mask", "kill", "try-restart",
								 "reload-or-restart", "isolate" }, 8))
				rules_add(rep, RULES_ASK, "systemctl", "stopping or disabling services",
					  a[i]);
		}
	} else if (strcmp(name, "kill") == 0) {
		rules_kill(a, n, rep);
	} else if (strcmp(name, "pkill") == 0 || strcmp(name, "killall") == 0) {
		for (size_t i = 1; i < n; i++) {
			/* -9, -KILL, -kill, -SIGKILL, -s KILL, --signal 9, --signal=KILL */
			const char *sig = NULL;
			if (a[i][0] == '-' && a[i][1] != '-' && a[i][1] != 's')
				sig = a[i] + 1;
			else if ((strcmp(a[i], "-s") == 0 || strcmp(a[i], "--signal") == 0) && i + 1 < n)
				sig = a[i + 1];
			else if (strncmp(a[i], "--signal=", 9) == 0)
				sig = a[i] + 9;
			else if (strcasecmp(a[i], "-sigkill") == 0)
				sig = "KILL";
			if (sig && (strcmp(sig, "9") == 0 || strcasecmp(sig, "KILL") == 0 ||
				    strcasecmp(sig, "SIGKILL") == 0))
				rules_add(rep, RULES_ASK, "kill-force", "force-killing by name", name);
		}
	} else if (strcmp(name, "chmod") == 0) {
		for (size_t i = 1; i < n; i++)
			if (a[i][0] != '-' && rules_mode_world_writable(a[i])) {
				rules_add(rep, RULES_ASK, "chmod-world",
					  "making files writable by everyone", a[i]);
				break;
			}
	} else if (strcmp(name, "chown") == 0) {
		int rec = 0;
		for (size_t i = 1; i < n; i++) /* -R, -Rv, -hR, --recursive */
			rec |= (a[i][0] == '-' && a[i][1] != '-' && strchr(a[i], 'R')) ||
			       strcmp(a[i], "--recursive") == 0;
		for (size_t i = 1; i < n && rec; i++)
			if ((strncmp(a[i], "root", 4) == 0 && strchr(":.", a[i][4]) ) ||
			    (a[i][0] == '0' && (a[i][1] == '\0' || strchr(":.", a[i][1]))))
				rules_add(rep, RULES_ASK, "chown-root",
					  "recursive chown to root", a[i]);
	} else if (strcmp(name, "find") == 0) {
		for (size_t i = 1; i < n; i++) {
			if (strcmp(a[i], "-delete") == 0)
				rules_add(rep, RULES_ASK, "find-delete", "find deleting files", a[i]);
			if (!rules_in(a[i], (const char *const[]){ "-exec", "-execdir", "-ok", "-okdir" },
				      4) || i + 1 >= n)
				continue;
			if (strcmp(rules_base(a[i + 1]), "rm") == 0)
				rules_add(rep, RULES_ASK, "find-delete", "find deleting files",
					  a[i + 1]);
			/* the command it runs, up to ; or + */
			size_t e = i + 1;
			while (e < n && strcmp(a[e], ";") != 0 && strcmp(a[e], "+") != 0)
				e++;
			rules_subcmd(a + i + 1, e - i - 1, g, cwd, rep, depth);
			i = e;
		}
	} else if (strcmp(name, "xargs") == 0 || strcmp(name, "parallel") == 0) {
		size_t i = 1;
		for (size_t k = 1; k < n; k++)
			if (strcmp(rules_base(a[k]), "rm") == 0)
				rules_add(rep, RULES_ASK, "xargs-rm", "xargs rm", a[k]);
		/* options (-I R, -n N, -P N, -d D, -L N, -s N, -E S, -a F), then
		 * the command it runs */
		while (i < n && a[i][0] == '-' && strcmp(a[i], "--") != 0) {
			const char *o = a[i++];
			if (o[1] != '-' && !o[2] && strchr("ILnPsdEaj", o[1]) && i < n)
				i++;
		}
		if (i < n && strcmp(a[i], "--") == 0)
			i++;
		if (i < n)
			rules_subcmd(a + i, n - i, g, cwd, rep, depth);
	} else if ((strcmp(name, "sponge") == 0 || strcmp(name, "patch") == 0) && n > 1) {
		/* sponge FILE, patch FILE < diff: the first operand is written */
		for (size_t i = 1; i < n; i++)
			if (a[i][0] != '-') {
				rules_write_target(a[i], g, cwd, rep);
				break;
			}
	} else if (strcmp(name, "unlink") == 0 && n > 1) {
		rules_write_target(a[n - 1], g, cwd, rep);
	} else if ((strcmp(name, "curl") == 0 || strcmp(name, "wget") == 0 ||
		    strcmp(name, "gpg") == 0) && n > 1) {
		/* curl -o FILE (-fsSLo), wget -O FILE (-qO), gpg -o FILE: a write */
		char opt = strcmp(name, "wget") == 0 ? 'O' : 'o';
		for (size_t i = 1; i + 1 < n; i++)
			if (strcmp(a[i], "--output") == 0 || strcmp(a[i], "--output-document") == 0 ||
			    (a[i][0] == '-' && a[i][1] != '-' && a[i][strlen(a[i]) - 1] == opt))
				rules_write_target(a[i + 1], g, cwd, rep);
	} else if ((strcmp(name, "tar") == 0 || strcmp(name, "unzip") == 0) && n > 1) {
		/* extracting into a directory: tar -C DIR, unzip -d DIR */
		for (size_t i = 1; i + 1 < n; i++)
			if ((strcmp(name, "tar") == 0 &&
			     (strcmp(a[i], "-C") == 0 || strcmp(a[i], "--directory") == 0)) ||
			    (strcmp(name, "unzip") == 0 && strcmp(a[i], "-d") == 0))
				rules_write_target(a[i + 1], g, cwd, rep);
	} else if ((strcmp(name, "service") == 0 && n > 2 &&
		    rules_in(a[2], (const char *const[]){ "stop", "restart", "force-reload" }, 3)) ||
		   (strncmp(a[0], "/etc/init.d/", 12) == 0 && n > 1 &&
		    rules_in(a[1], (const char *const[]){ "stop", "restart", "force-reload" }, 3))) {
		rules_add(rep, RULES_ASK, "systemctl", "stopping or disabling services", a[n - 1]);
	} else if (strcmp(name, "sysctl") == 0) {
		for (size_t i = 1; i < n; i++)
			if (strcmp(a[i], "-w") == 0 || strcmp(a[i], "-p") == 0 ||
			    strcmp(a[i], "--load") == 0 || strcmp(a[i], "--write") == 0 ||
			    (a[i][0] != '-' && strchr(a[i], '=')))
				rules_add(rep, RULES_ASK, "sysctl-write", "changing kernel settings",
					  a[i]);
	} else if (strcmp(name, "tee") == 0 || strcmp(name, "truncate") == 0) {
		for (size_t i = 1; i < n; i++)
			if (a[i][0] != '-')
				rules_write_target(a[i], g, cwd, rep);
	} else if (strcmp(name, "cp") == 0 || strcmp(name, "mv") == 0 ||
		   strcmp(name, "install") == 0 || strcmp(name, "ln") == 0 ||
		   strcmp(name, "rsync") == 0) {
		int dir_opt = 0;
		for (size_t i = 1; i < n; i++) {
			/* -t DIR, --target-directory=DIR */
			if ((strcmp(a[i], "-t") == 0 || strcmp(a[i], "--target-directory") == 0) &&
			    i + 1 < n && strcmp(name, "rsync") != 0) {
				rules_write_target(a[i + 1], g, cwd, rep);
				dir_opt = 1;
			} else if (strncmp(a[i], "--target-directory=", 19) == 0) {
				rules_write_target(a[i] + 19, g, cwd, rep);
				dir_opt = 1;
			} else if (strcmp(name, "rsync") != 0 && a[i][0] == '-' && a[i][1] != '-' &&
				   a[i][strlen(a[i]) - 1] == 't' && i + 1 < n) {
				/* -t DIR of cp/mv/install/ln (rsync's -t is --times) */
				rules_write_target(a[i + 1], g, cwd, rep);
				dir_opt = 1;
			}
		}
		/* the last operand (options may follow it: cp x /etc/hosts -f) */
		size_t last = n;
		for (size_t i = n - 1; i >= 1 && last == n; i--)
			if (a[i][0] != '-')
				last = i;
		if (!dir_opt && last < n && last >= 2)
			rules_write_target(a[last], g, cwd, rep);
		/* mv /etc elsewhere, or rsync --delete into /usr: as bad as rm -r */
		int del = strcmp(name, "rsync") == 0 && rules_has_prefix(a, n, "--delete");
		for (size_t i = 1; i < n; i++) {
			if (a[i][0] == '-')
				continue;
			if (((strcmp(name, "mv") == 0 && i != last) || (del && i == last)) &&
			    rules_is_critical(a[i], g, cwd))
				rules_add(rep, RULES_FLOOR, "rm-root",
					  "moving away or emptying /, a system directory or a home",
					  a[i]);
			else if (strcmp(name, "mv") == 0 && i != last)
				rules_write_target(a[i], g, cwd, rep); /* ~/.ssh moved away */
		}
	} else if ((strcmp(name, "sed") == 0 || strcmp(name, "perl") == 0) && n > 2) {
		/* in-place edits write every file operand */
		int inplace = 0, script_seen = strcmp(name, "perl") == 0;
		for (size_t i = 1; i < n; i++) {
			const char *w = a[i];
			/* perl's -I DIR, -M MODULE, -m, -x, -d, -C take the rest
			 * of the word: an 'i' there is not -i */
			if (w[0] == '-' && w[1] != '-' && strchr(w, 'i') &&
			    !(name[0] == 'p' && strchr("IMmxdDC", w[1])))
				inplace = 1;
			if (strncmp(w, "--in-place", 10) == 0)
				inplace = 1;
		}
		for (size_t i = 1; i < n && inplace; i++) {
			const char *w = a[i];
			if (w[0] == '-') {
				/* -e SCRIPT / -f FILE: the script is not an operand */
				if ((strcmp(w, "-e") == 0 || strcmp(w, "-f") == 0 ||
				     (w[1] != '-' && w[strlen(w) - 1] == 'e')) && i + 1 < n) {
					i++;
					script_seen = 1;
				}
				continue;
			}
			if (!script_seen) {
				script_seen = 1; /* sed's first operand is its script */
				continue;
			}
			rules_write_target(w, g, cwd, rep);
		}
	} else if (strcmp(name, "eval") == 0 && n > 1) {
		/* eval joins its words into one line of shell */
		char *text = rules_join(a, 1, n);
		if (text)
			rules_nested(text, g, cwd, rep, depth);
		free(text);
	} else if (rules_is_sh(name)) {
		rules_shell(c, a, n, g, cwd, rep, depth);
	} else if (strcmp(name, "source") == 0 || strcmp(name, ".") == 0) {
		/* source <(...) / . /dev/stdin: code it reads */
		if (c->input)
			rules_nested(c->input, g, cwd, rep, depth);
	}
}

/* Does a shell with these words read its code from standard input (no
 * -c, no script operand)? */
static int rules_shell_reads_stdin(char *const *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (strcmp(a[i], "-s") == 0 || strcmp(a[i], "--") == 0 || strcmp(a[i], "-") == 0 ||
		    strcmp(a[i], "/dev/stdin") == 0 || strcmp(a[i], "/proc/self/fd/0") == 0)
			return 1;
		if (a[i][0] != '-' && a[i][0] != '+')
			return 0;
		if (a[i][1] != '-' && strchr(a[i] + 1, 'c'))
			return 0;
	}
	return 1;
}

/* Fetchers or decoders piped into an interpreter; echo/printf TEXT piped
 * into a shell is TEXT run as shell code. */
static void rules_pipelines(const struct sh_line *line, const struct guard *g, const char *cwd,
			    struct rules_report *rep, int depth)
{
	int fetch = 0, decode = 0;

	for (size_t i = 0; i < line->n_cmds; i++) {
		const struct sh_cmd *c = &line->cmds[i];
		size_t s = rules_skip_wrappers(c->words, c->n_words);
		const char *name = s < c->n_words ? rules_base(c->words[s]) : "";
		int piped_in = i > 0 && line->cmds[i - 1].pipes_next;

		if (!piped_in)
			fetch = decode = 0;
		/* a shell reading stdin: bash, bash -s, bash -, or a wrapper with
		 * no command of its own (echo … | sudo -s) */
		int shell_in = s < c->n_words
				       ? rules_is_sh(name) &&
						 rules_shell_reads_stdin(c->words + s, c->n_words - s)
				       : c->n_words > 0 && rules_wrapper_of(rules_base(c->words[0]));
		if (piped_in && shell_in) {
			const struct sh_cmd *pc = &line->cmds[i - 1];
			size_t ps = rules_skip_wrappers(pc->words, pc->n_words);
			const char *pn = ps < pc->n_words ? rules_base(pc->words[ps]) : "";
			if (strcmp(pn, "echo") == 0 || strcmp(pn, "printf") == 0) {
				size_t k = ps + 1;
				while (k < pc->n_words && pc->words[k][0] == '-' &&
				       strcmp(pn, "echo") == 0)
					k++;
				char *text = rules_join(pc->words, k, pc->n_words);
				if (text)
					rules_nested(text, g, cwd, rep, depth);
				free(text);
			} else if (pc->input) {
				rules_nested(pc->input, g, cwd, rep, depth); /* cat <<EOF | sh */
			}
		}
		if (piped_in && (fetch || decode) && rules_is_shell(name)) {
			if (fetch)
				rules_add(rep, RULES_ASK, "pipe-to-shell",
					  "downloaded code piped into an interpreter", name);
			else
				rules_add(rep, RULES_ASK, "decode-to-shell",
					  "decoded data piped into an interpreter", name);
		}
		if (strcmp(name, "curl") == 0 || strcmp(name, "wget") == 0 ||
		    strcmp(name, "http") == 0 || strcmp(name, "https") == 0 ||
		    strcmp(name, "xh") == 0 || strcmp(name, "aria2c") == 0 ||
		    strcmp(name, "fetch") == 0)
			fetch = 1;
		for (size_t k = s + 1; k < c->n_words; k++) {
			const char *w = c->words[k];
			if ((strcmp(name, "base64") == 0 &&
			     ((w[0] == '-' && w[1] != '-' && strpbrk(w + 1, "dD")) ||
			      strcmp(w, "--decode") == 0)) ||
			    (strcmp(name, "xxd") == 0 && w[0] == '-' && strchr(w, 'r')) ||
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

/* A function that starts itself more than once, in the background or a
 * pipe: NAME() { NAME | NAME & }; NAME, also with "function NAME". */
static int rules_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == ':' || c == '.' || c == '-';
}

static void rules_fork_bomb(const char *text, struct rules_report *rep)
{
	for (const char *p = text; *p; p++) {
		const char *name = NULL, *after = NULL;
		size_t len = 0;
		if (p[0] == '(' && p[1 + strspn(p + 1, " \t")] == ')') {
			const char *e = p;
			while (e > text && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			const char *b = e;
			while (b > text && rules_name_char(b[-1]))
				b--;
			if (b == e)
				continue;
			name = b;
			len = (size_t)(e - b);
			after = p + 1 + strspn(p + 1, " \t") + 1;
		} else if (strncmp(p, "function", 8) == 0 && (p == text || !rules_name_char(p[-1])) &&
			   (p[8] == ' ' || p[8] == '\t')) {
			const char *b = p + 8 + strspn(p + 8, " \t"), *e = b;
			while (rules_name_char(*e))
				e++;
			if (e == b)
				continue;
			name = b;
			len = (size_t)(e - b);
			after = e;
			if (*after == '(' && after[1] == ')')
				after += 2;
		} else {
			continue;
		}
		after += strspn(after, " \t\n");
		if (*after != '{' && *after != '(')
			continue;
		/* the body, to its matching brace or parenthesis; quoted text is
		 * no call. A self-call counts as spawning when a lone | or &
		 * (not ||, &&, >&, &>) stands right before or after it, past
		 * blanks and parentheses: f | f &, (f|f)&, f & f & */
		char open = *after, close = open == '{' ? '}' : ')', quote = 0;
		int nest = 0, calls = 0, spawning = 0;
		for (const char *q = after; *q; q++) {
			if (quote) {
				if (*q == quote)
					quote = 0;
				else if (*q == '\\' && quote == '"' && q[1])
					q++;
				continue;
			}
			if (*q == '\'' || *q == '"') {
				quote = *q;
				continue;
			}
			nest += *q == open ? 1 : *q == close ? -1 : 0;
			if (nest == 0)
				break;
			if (strncmp(q, name, len) != 0 || rules_name_char(q[len]) ||
			    (q > text && rules_name_char(q[-1])))
				continue;
			/* a call is in command position: after {, (, ;, |, &, !,
			 * a newline or the body's start (docker compose logs | …
			 * names "logs" as an argument, not a call) */
			const char *pb = q;
			while (pb > after && (pb[-1] == ' ' || pb[-1] == '\t'))
				pb--;
			if (pb > after && !strchr("{(;|&!\n", pb[-1])) {
				q += len - 1;
				continue;
			}
			calls++;
			const char *f = q + len;
			while (*f == ' ' || *f == '\t' || *f == ')')
				f++;
			if ((*f == '|' && f[1] != '|') || (*f == '&' && f[1] != '&' && f[1] != '>'))
				spawning = 1;
			const char *b = q;
			while (b > after && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '('))
				b--;
			if (b > after && b[-1] == '|' && (b - 1 == after || b[-2] != '|'))
				spawning = 1;
			q += len - 1;
		}
		if (calls >= 2 && spawning) {
			char arg[64];
			snprintf(arg, sizeof(arg), "%.*s", (int)(len < 60 ? len : 60), name);
			rules_add(rep, RULES_FLOOR, "fork-bomb", "a fork bomb", arg);
			return;
		}
	}
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
	rules_fork_bomb(text, rep);
	if ((r = shword_split(text, &line)) < 0)
		return r;
	/* cd moves the later commands of the line (cd / && rm -rf *), but
	 * not out of a subshell: one directory per ( level */
	enum { RULES_CD_LEVELS = 8 };
	char here[RULES_CD_LEVELS][PATH_MAX];
	int level = 0;
	snprintf(here[0], sizeof(here[0]), "%s", cwd ? cwd : "/");
	for (size_t i = 0; i < line.n_cmds; i++) {
		const struct sh_cmd *c = &line.cmds[i];
		int d = c->depth < RULES_CD_LEVELS ? c->depth : RULES_CD_LEVELS - 1;
		for (; level < d; level++) /* entering: the subshell starts where we are */
			memcpy(here[level + 1], here[level], sizeof(here[level]));
		level = d;
		rules_cmd(&line, i, g, here[level], rep, depth);
		/* cd or pushd, also after if/while/builtin */
		size_t w0 = rules_skip_wrappers(c->words, c->n_words);
		if (w0 < c->n_words &&
		    (strcmp(c->words[w0], "cd") == 0 || strcmp(c->words[w0], "pushd") == 0)) {
			size_t k = w0 + 1;
			while (k < c->n_words && c->words[k][0] == '-' && c->words[k][1])
				k++; /* -P, -L, -e: options, not the directory */
			const char *to = k < c->n_words ? c->words[k] : "~";
			char norm[PATH_MAX];
			if (c->subst || strcmp(to, "-") == 0 ||
			    (strchr(to, '$') && !guard_is_home_word(to)))
				/* cd $(mktemp -d), cd "$DIR": somewhere we cannot know */
				snprintf(here[level], sizeof(here[level]), "%s", RULES_CWD_UNKNOWN);
			else if (guard_normalize(to, here[level], g->n_homes ? g->homes[0] : NULL,
						 norm, sizeof(norm)) == 0)
				snprintf(here[level], sizeof(here[level]), "%s", norm);
		}
	}
	rules_pipelines(&line, g, here[0], rep, depth);
	shword_free(&line);
	return 0;
}

int rules_scan(const char *command, const struct guard *g, const char *cwd,
	       struct rules_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	return rules_scan_text(command, g, cwd, rep, 0);
}
