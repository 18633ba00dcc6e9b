/* The danger rules: what a shell command would do that is never allowed
 * (the floor) or needs a person's approval. Classification only; the
 * policy (modes, allowlist, asking) is in gate.c. */
#pragma once

#include <stddef.h>

#include "guard.h"

enum rules_level { RULES_PASS = 0, RULES_ASK = 1, RULES_FLOOR = 2 };

#define RULES_MAX_HITS 32

struct rules_hit {
	enum rules_level level;
	const char *id;   /* stable name, usable in approvals.allowlist */
	const char *what; /* what a person reads */
	char arg[256];    /* the word or path that matched */
};

struct rules_report {
	enum rules_level level; /* the most severe hit */
	struct rules_hit hits[RULES_MAX_HITS];
	size_t n_hits;
	int overflow; /* more hits than fit: an allowlist cannot cover what is unseen */
};

/* Classify command (shell text) run in cwd; g names the protected homes. */
int rules_scan(const char *command, const struct guard *g, const char *cwd,
	       struct rules_report *rep);
/* Is id the name of a rule that needs approval? */
int rules_is_ask_id(const char *id);
