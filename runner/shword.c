/* Splitting shell text into simple commands, words and redirections for
 * the danger gate (see shword.h for what it does and does not model). */
#include "shword.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct shword_buf {
	char *s;
	size_t len, cap;
};

static int shword_buf_put(struct shword_buf *b, char c)
{
	if (b->len + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		char *n = realloc(b->s, cap);
		if (!n)
			return -ENOMEM;
		b->s = n;
		b->cap = cap;
	}
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
	return 0;
}

struct shword_parse {
	struct sh_line *line;
	struct sh_cmd cur;
	struct shword_buf word;
	int in_word;
	int redir_next; /* the next word is a redirection target */
	int skip_next;  /* the next word is an input file */
	int tag_next;   /* the next word is a here-document's tag */
	int tag_tabs;   /* <<- : the tag line may be indented with tabs */
	char *tag;      /* a here-document body starts at the next newline */
	int here_next;  /* the next word is a <<< string */
	int depth;      /* ( and $( open around the current command */
	int in_bt;      /* inside `...` */
	int tag_owner_cur; /* the here-document belongs to cur (not yet pushed) */
	size_t tag_owner;  /* else to line->cmds[tag_owner] */
};

/* Append text (len bytes) and a newline to *input. */
static int shword_input_add(char **input, const char *text, size_t len)
{
	size_t have = *input ? strlen(*input) : 0;
	char *n = realloc(*input, have + len + 2);

	if (!n)
		return -ENOMEM;
	memcpy(n + have, text, len);
	n[have + len] = '\n';
	n[have + len + 1] = '\0';
	*input = n;
	return 0;
}

static int shword_push_ptr(void *arrp, size_t *n, size_t elem, const void *item)
{
	char **arr = arrp;
	char *na = realloc(*arr, (*n + 2) * elem);

	if (!na)
		return -ENOMEM;
	memcpy(na + *n * elem, item, elem);
	memset(na + (*n + 1) * elem, 0, elem);
	*arr = na;
	(*n)++;
	return 0;
}

static int shword_end_word(struct shword_parse *p)
{
	char *w;
	int r;

	if (!p->in_word)
		return 0;
	p->in_word = 0;
	w = p->word.s ? p->word.s : strdup("");
	p->word.s = NULL;
	p->word.len = p->word.cap = 0;
	if (!w)
		return -ENOMEM;
	if (p->here_next) {
		p->here_next = 0;
		r = shword_input_add(&p->cur.input, w, strlen(w));
		free(w);
		return r;
	}
	if (p->skip_next) {
		p->skip_next = 0;
		free(w);
		return 0;
	}
	if (p->tag_next) {
		p->tag_next = 0;
		free(p->tag);
		p->tag = w;
		return 0;
	}
	if (p->redir_next) {
		struct sh_redir rd = { w };
		p->redir_next = 0;
		r = shword_push_ptr(&p->cur.redirs, &p->cur.n_redirs, sizeof(rd), &rd);
	} else {
		r = shword_push_ptr(&p->cur.words, &p->cur.n_words, sizeof(char *), &w);
	}
	if (r < 0)
		free(w);
	return r;
}

static int shword_end_cmd(struct shword_parse *p, int pipes)
{
	int r;

	if ((r = shword_end_word(p)) < 0)
		return r;
	if (p->cur.n_words == 0 && p->cur.n_redirs == 0 && !p->cur.input)
		return 0;
	p->cur.pipes_next = pipes;
	p->cur.depth = p->depth;
	r = shword_push_ptr(&p->line->cmds, &p->line->n_cmds, sizeof(p->cur), &p->cur);
	if (r == 0 && p->tag_owner_cur) {
		p->tag_owner_cur = 0;
		p->tag_owner = p->line->n_cmds - 1;
	}
	memset(&p->cur, 0, sizeof(p->cur));
	return r;
}

static int shword_add_char(struct shword_parse *p, char c)
{
	p->in_word = 1;
	return shword_buf_put(&p->word, c);
}

/* Handle a redirection operator at s; returns how many bytes it used. */
static size_t shword_redir_op(struct shword_parse *p, const char *s)
{
	size_t i = 0;

	if (s[0] == '&' && s[1] == '>')
		i = 1;
	if (s[i] == '<') {
		if (s[i + 1] == '(')
			return 0; /* process substitution: a separator */
		if (s[i + 1] == '>') { /* <> opens for reading and writing */
			p->redir_next = 1;
			return i + 2;
		}
		while (s[i] == '<')
			i++;
		/* <file reads, <<TAG opens a here-document, <<<word is a string */
		p->skip_next = i == 1 || i > 3;
		p->here_next = i == 3;
		p->tag_next = i == 2;
		if (i == 2)
			p->tag_owner_cur = 1;
		p->tag_tabs = 0;
		if (i == 2 && s[i] == '-') {
			p->tag_tabs = 1;
			i++;
		}
		return i;
	}
	i++; /* '>' */
	if (s[i] == '(')
		return 0;
	if (s[i] == '>' || s[i] == '|')
		i++;
	if (s[i] == '&') {
		/* >&N duplicates a descriptor; >&file writes a file */
		size_t j = i + 1;
		while (isdigit((unsigned char)s[j]) || s[j] == '-')
			j++;
		if (j > i + 1 && (s[j] == '\0' || strchr(" \t\n;&|)", s[j])))
			return j;
		i++;
	}
	p->redir_next = 1;
	return i;
}

/* Skip a here-document body starting at t[i]: lines up to the tag line.
 * Returns the index just past the tag line (or the end of t). */
static size_t shword_skip_body(struct shword_parse *p, const char *t, size_t i)
{
	size_t taglen = strlen(p->tag);
	char **input = p->tag_owner_cur ? &p->cur.input
		       : p->tag_owner < p->line->n_cmds ? &p->line->cmds[p->tag_owner].input
							 : NULL;

	while (t[i]) {
		size_t start = i, len;
		if (p->tag_tabs)
			while (t[start] == '\t')
				start++;
		len = strcspn(t + start, "\n");
		i = start + len + (t[start + len] == '\n');
		if (len == taglen && strncmp(t + start, p->tag, taglen) == 0)
			break;
		/* the body is what the command reads: keep it for the gate */
		if (input && shword_input_add(input, t + start, len) < 0)
			input = NULL;
	}
	free(p->tag);
	p->tag = NULL;
	return i;
}

int shword_split(const char *t, struct sh_line *out)
{
	struct shword_parse p = { .line = out };
	int r = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; t[i] && r == 0; i++) {
		char c = t[i];
		if (c == '\\' && t[i + 1]) {
			if (t[i + 1] != '\n')
				r = shword_add_char(&p, t[i + 1]);
			i++;
		} else if (c == '\'') {
			p.in_word = 1;
			while (t[++i] && t[i] != '\'' && r == 0)
				r = shword_add_char(&p, t[i]);
			if (!t[i])
				break;
		} else if (c == '"') {
			p.in_word = 1;
			while (t[++i] && t[i] != '"' && r == 0) {
				if (t[i] == '\\' && t[i + 1] && strchr("\"\\$`", t[i + 1]))
					i++;
				r = shword_add_char(&p, t[i]);
			}
			if (!t[i])
				break;
		} else if (c == '#' && !p.in_word) {
			while (t[i + 1] && t[i + 1] != '\n')
				i++;
		} else if (c == ' ' || c == '\t') {
			r = shword_end_word(&p);
		} else if (c == '|') {
			r = shword_end_cmd(&p, t[i + 1] != '|');
			if (t[i + 1] == '|' || t[i + 1] == '&')
				i++;
		} else if (c == '\n') {
			/* the tag word ends here, so the body is known only now */
			r = shword_end_cmd(&p, 0);
			if (r == 0 && p.tag)
				i = shword_skip_body(&p, t, i + 1) - 1;
		} else if (c == '`') {
			/* like $( ... ): its commands run in a subshell */
			if (!p.in_bt && (p.in_word || p.cur.n_words))
				p.cur.subst = 1;
			r = shword_end_cmd(&p, 0);
			if (!p.in_bt)
				p.depth++;
			else if (p.depth > 0)
				p.depth--;
			p.in_bt = !p.in_bt;
		} else if (c == ';' || c == '(' || c == ')' || c == '{' || c == '}') {
			/* a brace in a word, or one not followed by a blank
			 * ({a,b}, {/,x}), is brace expansion, not a group */
			if ((c == '{' || c == '}') &&
			    (p.in_word || (c == '{' && t[i + 1] && !strchr(" \t\n", t[i + 1])))) {
				r = shword_add_char(&p, c);
				continue;
			}
			r = shword_end_cmd(&p, 0);
			if (c == '(')
				p.depth++;
			else if (c == ')' && p.depth > 0)
				p.depth--;
		} else if (c == '$' && t[i + 1] == '(') {
			if (p.in_word || p.cur.n_words)
				p.cur.subst = 1;
			r = shword_end_cmd(&p, 0);
			p.depth++;
			i++;
		} else if (c == '&' && t[i + 1] != '>') {
			r = shword_end_cmd(&p, 0);
			if (t[i + 1] == '&')
				i++;
		} else if (c == '>' || c == '<' || (c == '&' && t[i + 1] == '>')) {
			/* "2>" : a word of digits right before is the fd number */
			if (p.in_word && p.word.s && strspn(p.word.s, "0123456789") == p.word.len) {
				free(p.word.s);
				p.word.s = NULL;
				p.word.len = p.word.cap = 0;
				p.in_word = 0;
			}
			if ((r = shword_end_word(&p)) < 0)
				break;
			size_t used = shword_redir_op(&p, t + i);
			if (used == 0) {
				r = shword_end_cmd(&p, 0);
				i++;
			} else {
				i += used - 1;
			}
		} else {
			r = shword_add_char(&p, c);
		}
	}
	if (r == 0)
		r = shword_end_cmd(&p, 0);
	free(p.word.s);
	free(p.tag);
	if (r < 0) {
		for (size_t k = 0; k < p.cur.n_words; k++)
			free(p.cur.words[k]);
		free(p.cur.words);
		for (size_t k = 0; k < p.cur.n_redirs; k++)
			free(p.cur.redirs[k].target);
		free(p.cur.redirs);
		free(p.cur.input);
		shword_free(out);
	}
	return r;
}

void shword_free(struct sh_line *l)
{
	for (size_t i = 0; i < l->n_cmds; i++) {
		struct sh_cmd *c = &l->cmds[i];
		for (size_t k = 0; k < c->n_words; k++)
			free(c->words[k]);
		free(c->words);
		for (size_t k = 0; k < c->n_redirs; k++)
			free(c->redirs[k].target);
		free(c->redirs);
		free(c->input);
	}
	free(l->cmds);
	memset(l, 0, sizeof(*l));
}

char *shword_join(char *const *argv)
{
	struct shword_buf b = { 0 };

	for (size_t i = 0; argv[i]; i++) {
		if (i > 0 && shword_buf_put(&b, ' ') < 0)
			goto fail;
		int plain = argv[i][0] != '\0' &&
			    strspn(argv[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					    "0123456789_-./=:,+@%") == strlen(argv[i]);
		if (plain) {
			for (const char *s = argv[i]; *s; s++)
				if (shword_buf_put(&b, *s) < 0)
					goto fail;
			continue;
		}
		if (shword_buf_put(&b, '\'') < 0)
			goto fail;
		for (const char *s = argv[i]; *s; s++) {
			if (*s == '\'') {
				if (shword_buf_put(&b, '\'') < 0 || shword_buf_put(&b, '\\') < 0 ||
				    shword_buf_put(&b, '\'') < 0 || shword_buf_put(&b, '\'') < 0)
					goto fail;
			} else if (shword_buf_put(&b, *s) < 0) {
				goto fail;
			}
		}
		if (shword_buf_put(&b, '\'') < 0)
			goto fail;
	}
	if (!b.s)
		return strdup("");
	return b.s;
fail:
	free(b.s);
	return NULL;
}
