/* Danger-gate policy: applies the floor, the deny list, the mode, the
 * allowlist and the terminal prompt to what rules.c found. Never approves
 * silently when nobody can answer. */
#include "gate.h"
#include "quote.h"
#include "shword.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cleanup.h"
#include "log.h"
#include "rules.h"

#define GATE_ASK_TIMEOUT_MS 120000

int gate_mode_parse(const char *s, enum runner_approval *out)
{
	static const struct {
		const char *name;
		enum runner_approval mode;
	} modes[] = {
		{ "manual", RUNNER_APPROVAL_MANUAL }, { "ask", RUNNER_APPROVAL_MANUAL },
		{ "prompt", RUNNER_APPROVAL_MANUAL }, { "smart", RUNNER_APPROVAL_MANUAL },
		{ "deny", RUNNER_APPROVAL_DENY },     { "never", RUNNER_APPROVAL_DENY },
		{ "off", RUNNER_APPROVAL_OFF },       { "yolo", RUNNER_APPROVAL_OFF },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcasecmp(s, modes[i].name) == 0) {
			*out = modes[i].mode;
			return 0;
		}
	return -EINVAL;
}

static int gate_list_has(const cJSON *list, const char *id, const char *command,
			 const char **which)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, list) {
		if (!cJSON_IsString(it))
			continue;
		if ((id && strcmp(it->valuestring, id) == 0) ||
		    (command && fnmatch(it->valuestring, command, 0) == 0)) {
			if (which)
				*which = it->valuestring;
			return 1;
		}
	}
	return 0;
}

static void gate_describe(const struct rules_report *rep, enum rules_level level, char *buf,
			  size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < rep->n_hits && o < size; i++) {
		const struct rules_hit *h = &rep->hits[i];
		if (h->level != level)
			continue;
		o += (size_t)snprintf(buf + o, size - o, "%s%s [%s]%s%s", o ? "; " : "",
				      h->what, h->id, h->arg[0] ? ": " : "", h->arg);
	}
}

/* Is command one simple command (no ; && || | & or newline, no $(...),
 * no here-document)? Only such a command can be approved by a command
 * glob of the allowlist: "git status*" must not approve
 * "git status; rm -rf x". */
static int gate_simple(const char *command)
{
	struct sh_line l;
	int one;

	if (strstr(command, "$(") || strchr(command, '`') || shword_split(command, &l) < 0)
		return 0;
	one = l.n_cmds == 1 && !l.cmds[0].input;
	shword_free(&l);
	return one;
}

/* Ask on the controlling terminal. 1: approved once, 0: denied. */
static int gate_prompt(const char *command, const char *what)
{
	_cleanup_close_ int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	char answer[32] = "";
	struct pollfd pfd;
	ssize_t n;

	if (fd < 0)
		return 0;
	/* control characters could hide what runs (\r, cursor moves) */
	size_t qlen = quote_str(command, NULL, 0) + 1, wlen = quote_str(what, NULL, 0) + 1;
	_cleanup_free_ char *qc = malloc(qlen), *qw = malloc(wlen);
	if (!qc || !qw)
		return 0;
	quote_str(command, qc, qlen);
	quote_str(what, qw, wlen);
	dprintf(fd, "hermesctl: this command needs approval:\n  %s\n  why: %s\n"
		    "run it? [o]nce / [d]eny: ", qc, qw);
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, GATE_ASK_TIMEOUT_MS) <= 0) {
		dprintf(fd, "\nno answer: denied\n");
		return 0;
	}
	n = read(fd, answer, sizeof(answer) - 1);
	if (n <= 0)
		return 0;
	answer[n] = '\0';
	answer[strcspn(answer, "\r\n")] = '\0';
	return strcasecmp(answer, "o") == 0 || strcasecmp(answer, "once") == 0 ||
	       strcasecmp(answer, "y") == 0 || strcasecmp(answer, "yes") == 0;
}

int gate_decide(const char *command, const struct gate_policy *pol, const struct guard *g,
		const char *cwd, char *reason, size_t size)
{
	struct rules_report rep;
	const char *which = NULL, *cfg = pol->config_path && pol->config_path[0] ?
					pol->config_path : "config.yaml";
	char what[2048];
	int r;

	if ((r = rules_scan(command, g, cwd, &rep)) < 0)
		return r;
	if (rep.level == RULES_FLOOR) {
		gate_describe(&rep, RULES_FLOOR, what, sizeof(what));
		snprintf(reason, size, "refused: %s; this is never allowed, in any approval mode",
			 what);
		return -EPERM;
	}
	if (gate_list_has(pol->deny, NULL, command, &which)) {
		snprintf(reason, size, "refused: the command matches '%s' in approvals.deny of %s",
			 which, cfg);
		return -EPERM;
	}
	if (rep.level == RULES_PASS)
		return 0;
	if (pol->mode == RUNNER_APPROVAL_OFF) {
		log_debug("gate: approvals off, letting through: %s", command);
		return 0;
	}
	/* Every hit must be allowlisted, by rule id or by a command glob. */
	size_t pending = 0;
	const char *first_id = NULL;
	const char *glob_cmd = gate_simple(command) ? command : NULL;
	for (size_t i = 0; i < rep.n_hits; i++) {
		if (gate_list_has(pol->allowlist, rep.hits[i].id, glob_cmd, NULL))
			continue;
		pending++;
		if (!first_id)
			first_id = rep.hits[i].id;
	}
	if (pending == 0 && !rep.overflow)
		return 0;
	if (!first_id)
		first_id = rep.hits[0].id;
	gate_describe(&rep, RULES_ASK, what, sizeof(what));
	if (pol->mode == RUNNER_APPROVAL_DENY) {
		snprintf(reason, size,
			 "blocked: %s needs approval and approvals.mode is deny; to allow it, add "
			 "'%s' to approvals.allowlist in %s, or use --approval off",
			 what, first_id, cfg);
		return -EPERM;
	}
	if (!pol->can_ask) {
		snprintf(reason, size,
			 "blocked: %s needs approval, but nobody can answer (%s); to allow it, "
			 "add '%s' to approvals.allowlist in %s, or run with --approval off "
			 "(or HERMES_APPROVALS_MODE=off)",
			 what, pol->no_ask_why ? pol->no_ask_why : "no terminal", first_id, cfg);
		return -EPERM;
	}
	if (gate_prompt(command, what))
		return 0;
	snprintf(reason, size, "blocked: %s was not approved", what);
	return -EPERM;
}
