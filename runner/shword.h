/* A small shell-command splitter for the danger gate: simple commands,
 * their words with quotes removed, their output redirections, and whether
 * each one pipes into the next. Not a shell: good enough to recognise what
 * a command would do, never used to run anything. */
#pragma once

#include <stddef.h>

struct sh_redir {
	char *target; /* file written by >, >>, &>, >| */
};

struct sh_cmd {
	char **words;  /* NULL-terminated */
	size_t n_words;
	struct sh_redir *redirs;
	size_t n_redirs;
	int pipes_next; /* followed by | or |& */
	char *input;    /* here-document bodies and <<< strings it reads, or NULL */
	int depth;      /* how many ( or $( it runs inside: a subshell's cd stays there */
	int subst;      /* a $(...) or `...` stood among its words (cd $(mktemp -d)) */
};

struct sh_line {
	struct sh_cmd *cmds;
	size_t n_cmds;
};

/* Split text into simple commands. Subshells, $(...), `...`, <(...) are
 * split into their own simple commands. Returns 0 or -ENOMEM. */
int shword_split(const char *text, struct sh_line *out);
void shword_free(struct sh_line *l);
/* Shell-quote argv into one command line (for gating an argv job). */
char *shword_join(char *const *argv);
